"""The ``activity`` collector's statements (`telemetry.activity`, the ``agent_efficiency_*``
families): every thread with its change marker, the model calls, tool calls and messages of a
batch of threads, and the threads a loop owns. Read-only; rows in the order the statements
return them (the collector sorts what it needs)."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from agent_history.classify.activity import TOKEN_BUCKETS

THREADS_SQL = """
SELECT s.id, s.agent, coalesce(s.is_subagent, s.agent_id <> ''), s.thread_role,
       (s.rolled_up_at, s.source_id, f.indexed_offset)::text
FROM ah.session AS s LEFT JOIN ah.source_file AS f ON f.id = s.source_id
"""
CALLS_SQL = f"""
SELECT session_id, call_uid, source_id, byte_offset, extract(epoch FROM ts)::float8, trigger, is_api_error,
       {", ".join(TOKEN_BUCKETS)}
FROM ah.model_call WHERE session_id = ANY(%s)
"""
TOOLS_SQL = """
SELECT session_id, tool_call_uid, name, input, output, is_error, exit_code, error_class,
       extract(epoch FROM started_at)::float8, extract(epoch FROM ended_at)::float8, duration_ms,
       source_id, output_byte_offset
FROM ah.tool_call WHERE session_id = ANY(%s)
"""
MESSAGES_SQL = """
SELECT session_id, message_uid, message_class, role, text, record_type, record_origin,
       extract(epoch FROM ts)::float8, source_id, byte_offset
FROM ah.message WHERE session_id = ANY(%s)
"""


def threads(conn: psycopg.Connection) -> list[tuple[int, str, bool, str | None, str]]:
    """Every thread: (id, agent, in a worker — sub-agent —, thread role or None, change marker:
    (rolled_up_at, source id, indexed offset) as text)."""
    return conn.execute(THREADS_SQL).fetchall()


def calls_of(conn: psycopg.Connection, ids: Sequence[int]) -> list[tuple]:
    """Model calls of threads `ids`: (session_id, call_uid, source_id, byte_offset, ts in Unix
    seconds — ±inf for an infinite time —, trigger, is_api_error, then the `TOKEN_BUCKETS`)."""
    return conn.execute(CALLS_SQL, (list(ids),)).fetchall()


def tools_of(conn: psycopg.Connection, ids: Sequence[int]) -> list[tuple]:
    """Tool calls of threads `ids`: (session_id, tool_call_uid, name, input, output, is_error,
    exit_code, error_class, started and ended in Unix seconds, duration_ms, source_id,
    output_byte_offset)."""
    return conn.execute(TOOLS_SQL, (list(ids),)).fetchall()


def messages_of(conn: psycopg.Connection, ids: Sequence[int]) -> list[tuple]:
    """Messages of threads `ids`: (session_id, message_uid, message_class, role, text,
    record_type, record_origin, ts in Unix seconds, source_id, byte_offset)."""
    return conn.execute(MESSAGES_SQL, (list(ids),)).fetchall()


def thread_loops(conn: psycopg.Connection) -> list[tuple[int, int, object, str]]:
    """(thread id, loop id, loop started_at or None, loop name) of the threads a loop owns
    (view ``ah.thread_loop``)."""
    return conn.execute("SELECT session_id, loop_id, started_at, loop FROM ah.thread_loop").fetchall()
