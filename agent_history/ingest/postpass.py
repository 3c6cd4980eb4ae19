"""Post-passes over dirty sessions only (set-based SQL in `sql/30_postpass.sql`).

Lineage (parent/root), spawn → child session, repository from cwd, per-session rollups.
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
        row = conn.execute(
            "WITH d AS (DELETE FROM ah.dirty_session RETURNING session_id) "
            "SELECT ah.refresh_sessions(coalesce(array_agg(session_id), '{}')) FROM d"
        ).fetchone()
        rolled = int(row[0] or 0)
        # journal summaries synced before their session was indexed (sql/50_journal.sql)
        if rolled and conn.execute("SELECT to_regprocedure('ah.link_session_summaries()')").fetchone()[0]:
            conn.execute("SELECT ah.link_session_summaries()")
    # ParadeDB: BM25 indexes are built after the first bulk load (DESIGN §7); no-op on FTS.
    ensure_bm25_indexes(conn)
    return rolled
