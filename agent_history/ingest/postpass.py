"""Post-passes over dirty sessions only (set-based SQL in `sql/30_postpass.sql`).

Lineage (parent/root), spawn → child session, repository from cwd, per-session rollups;
then thread roles and model-call triggers (`sql/35_efficiency.sql`, issue 11).
"""

from __future__ import annotations

import psycopg

from agent_history.search.bm25 import ensure_bm25_indexes


def run_postpasses(conn: psycopg.Connection) -> int:
    """Roll up every dirty session and clear the marks, in one transaction; returns the count."""
    with conn.transaction():
        exists = conn.execute("SELECT to_regprocedure('ah.refresh_sessions(bigint[])')").fetchone()[0]
        if exists is None:
            return 0
        ids = conn.execute(
            "WITH d AS (DELETE FROM ah.dirty_session RETURNING session_id) "
            "SELECT coalesce(array_agg(session_id), '{}') FROM d"
        ).fetchone()[0]
        rolled = int(conn.execute("SELECT ah.refresh_sessions(%s::bigint[])", (ids,)).fetchone()[0] or 0)
        # Efficiency (issue 11): roles and per-call triggers, after lineage (sql/35_efficiency.sql)
        if conn.execute("SELECT to_regprocedure('ah.refresh_efficiency(bigint[])')").fetchone()[0] is not None:
            conn.execute("SELECT ah.refresh_efficiency(%s::bigint[])", (ids,))
    # ParadeDB: BM25 indexes are built after the first bulk load (DESIGN §7); no-op on FTS.
    ensure_bm25_indexes(conn)
    return rolled
