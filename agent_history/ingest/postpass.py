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

DIRTY_IN_SCOPE = (
    "SELECT d.session_id FROM ah.dirty_session d LEFT JOIN ah.session s ON s.id = d.session_id "
    "WHERE %(ns)s::text[] IS NULL OR s.id IS NULL OR s.namespace = ANY(%(ns)s::text[])"
)
"""The dirty sessions a pass over namespaces ``ns`` rolls up (every one when NULL): those of its
namespaces, and marks whose session is gone (a purge). Another host's pass, running at the same
time over its own namespaces, rolls up its own."""


def run_postpasses(
    conn: psycopg.Connection, *, now: datetime | None = None, namespaces: list[str] | None = None
) -> int:
    """Roll up every dirty session and clear the marks, in one transaction; returns the count.
    `now` is the loop post-pass's clock (default: the current time; tests pass their own).
    `namespaces`: only the dirty sessions of these namespaces (`DIRTY_IN_SCOPE`; None = all).

    If that fails on a live connection (a value derived from one session that no column holds),
    it is rolled back and run again one session at a time: a session that still fails loses its
    rollups — its dirty mark is cleared and a ``postpass_error`` issue is recorded on its source
    file at its byte offset — and every other session is rolled up, so one transcript never
    blocks the pass, nor every pass after it (issue 25). Losing the connection raises.
    """
    try:
        with conn.transaction():
            rolled = _roll_up(conn, None, now, namespaces)
    except Exception as exc:  # noqa: BLE001 - sorted out: lost connection raises, else one by one
        raise_if_lost(exc, conn)
        rolled = _one_session_at_a_time(conn, now, namespaces)
    # ParadeDB: BM25 indexes are built after the first bulk load (docs/design.md §7); no-op on FTS
    ensure_bm25_indexes(conn)
    return rolled


def _roll_up(
    conn: psycopg.Connection, only: int | None, now: datetime | None, namespaces: list[str] | None = None
) -> int:
    """The post-passes over the dirty sessions (`only` that one; else those `DIRTY_IN_SCOPE` of
    `namespaces`), clearing their marks; runs in the caller's transaction; returns the sessions
    rolled up."""
    exists = conn.execute("SELECT to_regprocedure('ah.refresh_sessions(bigint[])')").fetchone()[0]
    if exists is None:
        return 0
    moved: list[int] = []
    if only is None:  # shared rows to their owner first: both sessions are then rolled up
        resolve_owners(conn)
        if namespaces is not None and conn.execute("SELECT to_regclass('ah.row_claim')").fetchone()[0]:
            # a dirty session of another namespace (another host's) sharing a row with one of
            # ours is rolled up now, not at that host's next pass: the rows it lost or gained
            # never disagree with its figures meanwhile
            moved = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT c2.session_id FROM ah.row_claim c1 JOIN ah.row_claim c2 "
                    "ON c2.row_table = c1.row_table AND c2.row_id = c1.row_id "
                    "JOIN ah.dirty_session d ON d.session_id = c2.session_id "
                    f"WHERE c1.session_id IN ({DIRTY_IN_SCOPE})",
                    {"ns": namespaces},
                )
            ]
    ids = conn.execute(
        "WITH d AS (DELETE FROM ah.dirty_session WHERE CASE WHEN %(only)s::bigint IS NULL "
        f"THEN session_id IN ({DIRTY_IN_SCOPE}) OR session_id = ANY(%(moved)s::bigint[]) "
        "ELSE session_id = %(only)s END RETURNING session_id) "
        "SELECT coalesce(array_agg(session_id), '{}') FROM d",
        {"only": only, "ns": namespaces, "moved": moved},
    ).fetchone()[0]
    # each session is its source file's host's (migration 0024; NULL = unknown stays unknown)
    conn.execute(
        "UPDATE ah.session s SET origin_host = sf.origin_host FROM ah.source_file sf WHERE s.id = ANY(%s) "
        "AND sf.id = s.source_id AND sf.origin_host IS NOT NULL AND s.origin_host IS DISTINCT FROM sf.origin_host",
        (ids,),
    )
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


def _one_session_at_a_time(conn: psycopg.Connection, now: datetime | None, namespaces: list[str] | None) -> int:
    rolled = 0
    for (session_id,) in conn.execute(DIRTY_IN_SCOPE + " ORDER BY 1", {"ns": namespaces}).fetchall():
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
