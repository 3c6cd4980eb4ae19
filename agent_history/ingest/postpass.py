"""Post-passes over dirty sessions only (set-based SQL in `sql/30_postpass.sql`).

Lineage (parent/root), spawn → child session, repository from cwd, per-session rollups; then
the loop post-pass (`ingest.loops.refresh_loops`: launches, lanes, closeouts, status) over the
same dirty sessions, in the same transaction.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from agent_history.ingest.loops import refresh_loops
from agent_history.search.bm25 import ensure_bm25_indexes


def run_postpasses(conn: psycopg.Connection, *, now: datetime | None = None) -> int:
    """Roll up every dirty session and clear the marks, in one transaction; returns the count.
    `now` is the loop post-pass's clock (default: the current time; tests pass their own)."""
    with conn.transaction():
        exists = conn.execute("SELECT to_regprocedure('ah.refresh_sessions(bigint[])')").fetchone()[0]
        if exists is None:
            return 0
        row = conn.execute(
            "WITH d AS (DELETE FROM ah.dirty_session RETURNING session_id) "
            "SELECT ah.refresh_sessions(coalesce(array_agg(session_id), '{}')), "
            "coalesce(array_agg(session_id), '{}') FROM d"
        ).fetchone()
        rolled = int(row[0] or 0)
        refresh_loops(conn, list(row[1]), now=now)
    # ParadeDB: BM25 indexes are built after the first bulk load (DESIGN §7); no-op on FTS.
    ensure_bm25_indexes(conn)
    return rolled
