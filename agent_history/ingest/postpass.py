"""Post-passes over dirty sessions only (set-based SQL in `sql/30_postpass.sql`).

The price rows of model names seen for the first time (`db.prices.resolve_new_models`), then
lineage (parent/root), spawn → child session, repository from cwd, per-session rollups; then
the loop post-pass (`ingest.loops.refresh_loops`: launches, lanes, closeouts, status), then thread
roles and model-call triggers (`sql/35_efficiency.sql`, issue 11) — all over the same dirty
sessions, in the same transaction (roles read the loops: a loop's root is a `root`).
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from agent_history.db.bm25 import ensure_bm25_indexes
from agent_history.db.prices import resolve_new_models
from agent_history.ingest.loops import refresh_loops


def run_postpasses(conn: psycopg.Connection, *, now: datetime | None = None) -> int:
    """Roll up every dirty session and clear the marks, in one transaction; returns the count.
    `now` is the loop post-pass's clock (default: the current time; tests pass their own)."""
    with conn.transaction():
        exists = conn.execute("SELECT to_regprocedure('ah.refresh_sessions(bigint[])')").fetchone()[0]
        if exists is None:
            return 0
        ids = conn.execute(
            "WITH d AS (DELETE FROM ah.dirty_session RETURNING session_id) "
            "SELECT coalesce(array_agg(session_id), '{}') FROM d"
        ).fetchone()[0]
        # model names first seen in these sessions get their price row before the rollup prices them
        resolve_new_models(conn, ids)
        rolled = int(conn.execute("SELECT ah.refresh_sessions(%s::bigint[])", (ids,)).fetchone()[0] or 0)
        refresh_loops(conn, list(ids), now=now)
        # Efficiency (issue 11): roles and per-call triggers, after lineage (sql/35_efficiency.sql)
        if conn.execute("SELECT to_regprocedure('ah.refresh_efficiency(bigint[])')").fetchone()[0] is not None:
            conn.execute("SELECT ah.refresh_efficiency(%s::bigint[])", (ids,))
        # journal summaries synced before their session was indexed (sql/50_journal.sql)
        if rolled and conn.execute("SELECT to_regprocedure('ah.link_session_summaries()')").fetchone()[0]:
            conn.execute("SELECT ah.link_session_summaries()")
    # ParadeDB: BM25 indexes are built after the first bulk load (docs/design.md §7); no-op on FTS
    ensure_bm25_indexes(conn)
    return rolled
