"""A paginated timeline that never reads more than one page of text, and a hit's position in it
(the web UI's session page and its ``/hit`` links). Read-only.

Timeline order is the rule of `agent_history.read.timeline` (physical: source file, byte
offset, then compaction < message < tool call < spawn < git for one line), with the row id as
the last tie-breaker so a page boundary is stable. Numbering is computed over keys only (ids and
offsets), and text is fetched for the page's events alone, so a 10 k-event session costs one
sort of 10 k small rows plus one page of text.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg

from agent_history.read.timeline import NUMBERED_KEYS_SQL as _KEYS_SQL
from agent_history.read.timeline import PAGE_EVENTS

_CONTENT_SQL: dict[str, str] = {
    "compaction": "SELECT id, ts, byte_offset, line_number, trigger, NULL::text, "
    "jsonb_build_object('tokens_before', tokens_before, 'tokens_after', tokens_after) "
    "FROM ah.compaction WHERE id = ANY(%(ids)s)",
    "message": "SELECT id, ts, byte_offset, line_number, message_class, left(text, %(chars)s), "
    "jsonb_strip_nulls(jsonb_build_object('role', role, 'model', model, 'chars', length(text), "
    "'on_active_branch', on_active_branch)) FROM ah.message WHERE id = ANY(%(ids)s)",
    "tool_call": "SELECT id, started_at, byte_offset, line_number, name, left(input, %(chars)s), "
    "jsonb_strip_nulls(jsonb_build_object('outcome', outcome, 'is_error', is_error, 'exit_code', exit_code, "
    "'error_class', error_class, 'error_excerpt', error_excerpt, 'duration_ms', duration_ms, "
    "'output', left(output, %(chars)s), 'output_chars', length(output), 'input_chars', length(input))) "
    "FROM ah.tool_call WHERE id = ANY(%(ids)s)",
    "spawn": "SELECT p.id, p.ts, p.byte_offset, p.line_number, p.subagent_type, left(p.brief, %(chars)s), "
    "jsonb_strip_nulls(jsonb_build_object('description', p.description, 'child_session_uid', ch.session_uid, "
    "'child_agent_id', ch.agent_id)) FROM ah.subagent_spawn AS p "
    "LEFT JOIN ah.session AS ch ON ch.id = p.child_session_id WHERE p.id = ANY(%(ids)s)",
    "git": "SELECT id, ts, byte_offset, line_number, op, subject, "
    "jsonb_strip_nulls(jsonb_build_object('sha', sha, 'old_sha', old_sha, 'branch', branch, 'remote_ref', remote_ref)) "
    "FROM ah.git_event WHERE id = ANY(%(ids)s)",
}
"""Per event kind: (id, ts, byte_offset, line_number, label, text, detail) for the page's ids."""

TEXT_CHARS = 20_000
"""Longest text shown per event (characters; the rest is cut and marked)."""


@dataclass(slots=True)
class Event:
    """One timeline event of a page (see `agent_history.read.timeline.TimelineEvent`)."""

    seq: int
    kind: str
    id: int
    ts: datetime | None
    byte_offset: int | None
    line_number: int | None
    label: str | None
    text: str | None
    detail: dict


def timeline_page(
    conn: psycopg.Connection, session_id: int, page: int, size: int = PAGE_EVENTS
) -> tuple[int, list[Event]]:
    """(total events, the events of 1-based `page`) of session `session_id`, in timeline order."""
    lo = (max(1, page) - 1) * size + 1
    rows = conn.execute(
        _KEYS_SQL + "SELECT seq, total, kind, id FROM numbered WHERE seq BETWEEN %(lo)s AND %(hi)s ORDER BY seq",
        {"sid": session_id, "lo": lo, "hi": lo + size - 1},
    ).fetchall()
    total = (
        rows[0][1]
        if rows
        else conn.execute(_KEYS_SQL + "SELECT count(*) FROM numbered", {"sid": session_id}).fetchone()[0]
    )
    by_kind: dict[str, list[int]] = {}
    for _seq, _total, kind, eid in rows:
        by_kind.setdefault(kind, []).append(eid)
    content: dict[tuple[str, int], tuple] = {}
    for kind, ids in by_kind.items():
        for r in conn.execute(_CONTENT_SQL[kind], {"ids": ids, "chars": TEXT_CHARS}):
            content[(kind, r[0])] = r
    events = []
    for seq, _total, kind, eid in rows:
        _id, ts, off, line, label, text, detail = content[(kind, eid)]
        events.append(Event(seq, kind, eid, ts, off, line, label, text, dict(detail or {})))
    return total, events


def event_position(conn: psycopg.Connection, kind: str, event_id: int) -> tuple[int, int] | None:
    """(session id, 1-based timeline number) of a message or tool call; None if it does not exist."""
    table = {"message": "ah.message", "tool_call": "ah.tool_call"}.get(kind)
    if table is None:
        return None
    row = conn.execute(f"SELECT session_id FROM {table} WHERE id = %s", (event_id,)).fetchone()
    if row is None:
        return None
    seq = conn.execute(
        _KEYS_SQL + "SELECT seq FROM numbered WHERE kind = %(kind)s AND id = %(id)s",
        {"sid": row[0], "kind": kind, "id": event_id},
    ).fetchone()
    return (row[0], seq[0]) if seq else None
