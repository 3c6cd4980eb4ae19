"""Curation's statements (issue 17): ``ah.session_exclusion`` (exclude, restore, export,
import) and the rows a session delete reads and purges (``ah.session``, ``ah.source_file``,
``ah.dirty_session``). `ingest.curation` decides what to exclude or delete and owns the
transaction; every function here runs in the caller's transaction and commits nothing."""

from __future__ import annotations

from datetime import datetime

import psycopg

from agent_history.db.tables import sessions


def add_exclusion(conn: psycopg.Connection, agent: str, session_uid: str, reason: str | None) -> bool:
    """Record the exclusion of (`agent`, `session_uid`); False when it was already recorded."""
    row = conn.execute(
        "INSERT INTO ah.session_exclusion (agent, session_uid, reason) VALUES (%s, %s, %s) "
        "ON CONFLICT (agent, session_uid) DO NOTHING RETURNING 1",
        (agent, session_uid, reason),
    ).fetchone()
    return row is not None


def remove_exclusion(conn: psycopg.Connection, agent: str, session_uid: str) -> bool:
    """Drop the exclusion of (`agent`, `session_uid`); False when there was none."""
    row = conn.execute(
        "DELETE FROM ah.session_exclusion WHERE agent = %s AND session_uid = %s RETURNING 1", (agent, session_uid)
    ).fetchone()
    return row is not None


def exclusions_like(conn: psycopg.Connection, uid: str, min_prefix: int, pattern: str) -> list[tuple[str, str]]:
    """(agent, session uid) of the exclusions whose uid is `uid`, or matches the LIKE `pattern`
    when `uid` has at least `min_prefix` characters; sorted."""
    return conn.execute(
        "SELECT agent, session_uid FROM ah.session_exclusion WHERE session_uid = %(u)s "
        "OR (length(%(u)s) >= %(n)s AND session_uid LIKE %(p)s) ORDER BY 1, 2",
        {"u": uid, "n": min_prefix, "p": pattern},
    ).fetchall()


def all_exclusions(conn: psycopg.Connection) -> list[tuple[str, str, str | None, datetime]]:
    """Every exclusion as (agent, session uid, reason, excluded_at), oldest first."""
    return conn.execute(
        "SELECT agent, session_uid, reason, excluded_at FROM ah.session_exclusion ORDER BY excluded_at, agent, session_uid"
    ).fetchall()


def import_exclusion(
    conn: psycopg.Connection, agent: str, session_uid: str, reason: str | None, excluded_at: datetime | None
) -> int:
    """Add one exclusion (`excluded_at` None: now); returns 1 when new, 0 when already there."""
    return conn.execute(
        "INSERT INTO ah.session_exclusion (agent, session_uid, reason, excluded_at) "
        "VALUES (%s, %s, %s, coalesce(%s, now())) ON CONFLICT DO NOTHING",
        (agent, session_uid, reason, excluded_at),
    ).rowcount


def thread_ids(conn: psycopg.Connection, agent: str, session_uid: str) -> list[int]:
    """``ah.session.id`` of every thread of the session (`agent`, `session_uid`)."""
    return [r[0] for r in conn.execute(
        "SELECT id FROM ah.session WHERE agent = %s AND session_uid = %s", (agent, session_uid)
    ).fetchall()]  # fmt: skip


def source_ids_of(conn: psycopg.Connection, ids: list[int]) -> list[int]:
    """``ah.source_file.id`` of every file holding a row (the session record, a message, a tool
    call) of threads `ids`."""
    return [r[0] for r in conn.execute(
        "SELECT source_id FROM ah.session WHERE id = ANY(%(ids)s) AND source_id IS NOT NULL "
        "UNION SELECT source_id FROM ah.message WHERE session_id = ANY(%(ids)s) "
        "UNION SELECT source_id FROM ah.tool_call WHERE session_id = ANY(%(ids)s)",
        {"ids": ids},
    ).fetchall()]  # fmt: skip


def events_of(conn: psycopg.Connection, files: list[int]) -> int:
    """Messages plus tool calls read from the source files `files`."""
    return conn.execute(
        "SELECT (SELECT count(*) FROM ah.message WHERE source_id = ANY(%(f)s)) "
        "+ (SELECT count(*) FROM ah.tool_call WHERE source_id = ANY(%(f)s))",
        {"f": files},
    ).fetchone()[0]


def delete_files_and_threads(conn: psycopg.Connection, files: list[int], ids: list[int]) -> None:
    """Delete the source records `files`, the threads `ids` and their dirty marks (their other
    rows are purged first by `ingest.writer.purge_source`)."""
    conn.execute("DELETE FROM ah.source_file WHERE id = ANY(%s)", (files,))
    conn.execute("DELETE FROM ah.session WHERE id = ANY(%s)", (ids,))
    sessions.clear_dirty(conn, ids)
