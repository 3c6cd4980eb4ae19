"""Post-passes over dirty sessions only (set-based SQL in `sql/30_postpass.sql`).

Shared rows go to their owner first (`ingest.owners`: a row two sessions' files hold, e.g. a
Claude Code resume's copies). The price rows of model names seen for the first time (`db.prices.resolve_new_models`), then
lineage (parent/root), spawn → child session, repository from cwd, per-session rollups; then
the loop post-pass (`ingest.loops.refresh_loops`: launches, lanes, closeouts, status), then thread
roles and model-call triggers (`sql/35_efficiency.sql`, issue 11) — all over the same dirty
sessions, in the same transaction (roles read the loops: a loop's root is a `root`). A failure
costs the failing session's rollups, not the pass (`run_postpasses`).
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from agent_history.db.bm25 import ensure_bm25_indexes
from agent_history.db.prices import resolve_new_models
from agent_history.ingest.isolate import raise_if_lost
from agent_history.ingest.loops import refresh_loops
from agent_history.ingest.owners import resolve_owners


def run_postpasses(conn: psycopg.Connection, *, now: datetime | None = None) -> int:
    """Roll up every dirty session and clear the marks, in one transaction; returns the count.
    `now` is the loop post-pass's clock (default: the current time; tests pass their own).

    If that fails on a live connection (a value derived from one session that no column holds),
    it is rolled back and run again one session at a time: a session that still fails loses its
    rollups — its dirty mark is cleared and a ``postpass_error`` issue is recorded on its source
    file at its byte offset — and every other session is rolled up, so one transcript never
    blocks the pass, nor every pass after it (issue 25). Losing the connection raises.
    """
    try:
        with conn.transaction():
            rolled = _roll_up(conn, None, now)
    except Exception as exc:  # noqa: BLE001 - sorted out: lost connection raises, else one by one
        raise_if_lost(exc, conn)
        rolled = _one_session_at_a_time(conn, now)
    # ParadeDB: BM25 indexes are built after the first bulk load (docs/design.md §7); no-op on FTS
    ensure_bm25_indexes(conn)
    return rolled


def _roll_up(conn: psycopg.Connection, only: int | None, now: datetime | None) -> int:
    """The post-passes over the dirty sessions (`only` that one), clearing their marks; runs in
    the caller's transaction; returns the sessions rolled up."""
    exists = conn.execute("SELECT to_regprocedure('ah.refresh_sessions(bigint[])')").fetchone()[0]
    if exists is None:
        return 0
    if only is None:  # shared rows to their owner first: both sessions are then rolled up
        resolve_owners(conn)
    ids = conn.execute(
        "WITH d AS (DELETE FROM ah.dirty_session WHERE %s::bigint IS NULL OR session_id = %s RETURNING session_id) "
        "SELECT coalesce(array_agg(session_id), '{}') FROM d",
        (only, only),
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
    return rolled


def _one_session_at_a_time(conn: psycopg.Connection, now: datetime | None) -> int:
    rolled = 0
    for (session_id,) in conn.execute("SELECT session_id FROM ah.dirty_session ORDER BY 1").fetchall():
        try:
            with conn.transaction():
                rolled += _roll_up(conn, session_id, now)
        except Exception as exc:  # noqa: BLE001 - this session's own failure
            raise_if_lost(exc, conn)
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            sqlstate = getattr(exc, "sqlstate", None)
            detail = f"{type(exc).__name__}" + (f" [SQLSTATE {sqlstate}]" if sqlstate else "") + f": {first}"
            with conn.transaction():
                conn.execute("DELETE FROM ah.dirty_session WHERE session_id = %s", (session_id,))
                conn.execute(
                    "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, line_number, detail) "
                    "SELECT s.source_id, 'postpass_error', coalesce(s.byte_offset, 0), s.line_number, %s "
                    "FROM ah.session s WHERE s.id = %s AND s.source_id IS NOT NULL "
                    "ON CONFLICT (source_id, kind, byte_offset) DO UPDATE SET detail = EXCLUDED.detail, "
                    "created_at = now()",
                    (f"session {session_id} not rolled up: {detail}", session_id),
                )
    return rolled
