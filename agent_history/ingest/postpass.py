"""Post-passes over dirty sessions only (set-based SQL in `sql/30_postpass.sql`).

Shared rows go to their owner first (`db.tables.claims`: a row two sessions' files hold, e.g. a
Claude Code resume's copies). The price rows of model names seen for the first time (`db.prices.resolve_new_models`), then
lineage (parent/root), spawn → child session, repository from cwd, per-session rollups; then
the loop post-pass (`ingest.loops.refresh_loops`: launches, lanes, closeouts, status), then thread
roles and model-call triggers (`sql/35_efficiency.sql`, issue 11) — all over the same dirty
sessions, in the same transaction (roles read the loops: a loop's root is a `root`). A failure
costs the failing session's rollups, not the pass (`run_postpasses`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime

import psycopg

from agent_history.db.bm25 import ensure_bm25_indexes
from agent_history.db.prices import resolve_new_models
from agent_history.db.tables import parse_issues, sessions
from agent_history.db.tables.claims import resolve_owners
from agent_history.ingest.isolate import raise_if_lost
from agent_history.ingest.loops import refresh_loops


def run_postpasses(
    conn: psycopg.Connection,
    *,
    now: datetime | None = None,
    namespaces: list[str] | None = None,
    on_issues: Callable[[Counter], None] | None = None,
) -> int:
    """Roll up every dirty session and clear the marks, in one transaction; returns the count.
    `now` is the loop post-pass's clock (default: the current time; tests pass their own).
    `namespaces`: only the dirty sessions of these namespaces (`sessions.DIRTY_IN_SCOPE`; None = all).
    `on_issues` is called with the parse issues the post-pass added, per kind (``rows_shared``,
    ``postpass_error``; an issue that replaces the same one's earlier detail is not counted), when
    there are any (the loader counts them in its pass summary).

    If that fails on a live connection (a value derived from one session that no column holds),
    it is rolled back and run again one session at a time: a session that still fails loses its
    rollups — its dirty mark is cleared and a ``postpass_error`` issue is recorded on its source
    file at its byte offset — and every other session is rolled up, so one transcript never
    blocks the pass, nor every pass after it (issue 25). Losing the connection raises.
    """
    added: Counter = Counter()
    try:
        with conn.transaction():
            rolled = _roll_up(conn, None, now, namespaces, added)
    except Exception as exc:  # noqa: BLE001 - sorted out: lost connection raises, else one by one
        raise_if_lost(exc, conn)
        added.clear()  # rolled back with the transaction
        rolled = _one_session_at_a_time(conn, now, namespaces, added)
    if on_issues is not None and +added:
        on_issues(+added)
    # ParadeDB: BM25 indexes are built after the first bulk load (docs/design.md §7); no-op on FTS
    ensure_bm25_indexes(conn)
    return rolled


def _roll_up(
    conn: psycopg.Connection,
    only: int | None,
    now: datetime | None,
    namespaces: list[str] | None = None,
    added: Counter | None = None,
) -> int:
    """The post-passes over the dirty sessions (`only` that one; else those `sessions.DIRTY_IN_SCOPE` of
    `namespaces`), clearing their marks; runs in the caller's transaction; returns the sessions
    rolled up."""
    if not sessions.can_roll_up(conn):
        return 0
    moved: list[int] = []
    if only is None:  # shared rows to their owner first: both sessions are then rolled up
        shared = resolve_owners(conn)
        if added is not None:
            added["rows_shared"] += shared
        if namespaces is not None and sessions.has_claims(conn):
            # a dirty session of another namespace (another host's) sharing a row with one of
            # ours is rolled up now, not at that host's next pass: the rows it lost or gained
            # never disagree with its figures meanwhile
            moved = sessions.dirty_sharing_rows(conn, namespaces)
    ids = sessions.take_dirty(conn, only, namespaces, moved)
    # each session is its source file's host's (migration 0024; NULL = unknown stays unknown)
    sessions.inherit_hosts(conn, ids)
    # model names first seen in these sessions get their price row before the rollup prices them
    resolve_new_models(conn, ids)
    rolled = sessions.refresh_sessions(conn, ids)
    refresh_loops(conn, list(ids), now=now)
    # Efficiency (issue 11): roles and per-call triggers, after lineage (sql/35_efficiency.sql)
    sessions.refresh_efficiency(conn, ids)
    # journal summaries synced before their session was indexed (sql/50_journal.sql)
    if rolled:
        sessions.link_session_summaries(conn)
    return rolled


def _one_session_at_a_time(
    conn: psycopg.Connection, now: datetime | None, namespaces: list[str] | None, added: Counter
) -> int:
    rolled = 0
    for session_id in sessions.dirty_in_scope(conn, namespaces):
        try:
            with conn.transaction():
                rolled += _roll_up(conn, session_id, now)
        except Exception as exc:  # noqa: BLE001 - this session's own failure
            raise_if_lost(exc, conn)
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            sqlstate = getattr(exc, "sqlstate", None)
            detail = f"{type(exc).__name__}" + (f" [SQLSTATE {sqlstate}]" if sqlstate else "") + f": {first}"
            with conn.transaction():
                sessions.clear_dirty(conn, [session_id])
                added["postpass_error"] += parse_issues.record_postpass_error(
                    conn, session_id, f"session {session_id} not rolled up: {detail}"
                )
    return rolled
