"""`session UID`: one thread's ordered timeline — messages, tool calls (with outcome), sub-agent
spawns, compactions and git events.

Order is physical, never by timestamp (docs/design.md §5): by source file (first indexed first, as a
resumed session's copy lives in a later file), then ``byte_offset``, then a fixed kind order for
events read from the same line (compaction, message, tool call, spawn, git event), then the
row id. Events are numbered 1…N in that order (the web UI's numbers too); ``start``/``end``
(``--from``/``--to``, or a page of `PAGE_EVENTS`) select an inclusive range of those numbers,
so a slice is stable however it is cut, and only the slice's texts are read. Long texts are cut
to `max_chars` (the cut is marked with an ellipsis and ``truncated``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

import psycopg

from agent_history.read.requests import SessionRequest
from agent_history.read.sessions import SessionSummary, summary_of
from agent_history.read.shared import SharedRows, shared_elsewhere
from agent_history.session.refs import SessionRef, resolve_session


@dataclass(slots=True)
class TimelineEvent:
    """One event. ``kind``: message | tool_call | spawn | compaction | git. ``label``: message
    class, tool name, subagent type, compaction trigger or git op. ``detail`` holds the
    kind-specific fields (tool outcome/error class/exit code/duration, git sha/branch/subject,
    spawn child session, compaction token counts)."""

    seq: int
    kind: str
    ts: datetime | None
    byte_offset: int | None
    line_number: int | None
    label: str | None
    text: str | None
    truncated: bool = False
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)


@dataclass(slots=True)
class SessionTimeline:
    """A session, its summary and the selected slice of its `total` events; `shared` the rows
    its transcript holds that other sessions own and count (`read.shared.shared_elsewhere`)."""

    session: SessionRef
    summary: SessionSummary | None
    total: int
    events: list[TimelineEvent]
    shared: list[SharedRows] = field(default_factory=list)

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "session": self.session.as_dict(),
            "summary": self.summary.as_dict() if self.summary else None,
            "total": self.total,
            "events": [e.as_dict() for e in self.events],
            "shared_elsewhere": [x.as_dict() for x in self.shared],
        }


PAGE_EVENTS = 200
"""Events per page of `agent-history session` (as the web UI's session page)."""

# Every event's key, numbered in timeline order (`k` orders events read from the same line; the
# id breaks the last ties, so numbers are stable). Only the keys: the texts of the selected
# slice are read afterwards (`_CONTENT_SQL`), so a page of a 100,000-event session reads 200.
NUMBERED_KEYS_SQL = """
WITH keys AS (
    SELECT 1 AS k, 'compaction' AS kind, id, source_id, byte_offset, ts FROM ah.compaction WHERE session_id = %(sid)s
    UNION ALL
    SELECT 2, 'message', id, source_id, byte_offset, ts FROM ah.message WHERE session_id = %(sid)s
    UNION ALL
    SELECT 3, 'tool_call', id, source_id, byte_offset, started_at FROM ah.tool_call WHERE session_id = %(sid)s
    UNION ALL
    SELECT 4, 'spawn', id, source_id, byte_offset, ts FROM ah.subagent_spawn WHERE session_id = %(sid)s
    UNION ALL
    SELECT 5, 'git', id, source_id, byte_offset, ts FROM ah.git_event WHERE session_id = %(sid)s
), numbered AS (
    SELECT row_number() OVER (ORDER BY source_id, byte_offset NULLS LAST, k, ts NULLS LAST, id) AS seq,
           count(*) OVER () AS total, kind, id
    FROM keys
)
"""
"""`numbered`: every event key of session ``%(sid)s`` (kind, id) with its ``seq`` in timeline
order and the ``total``; shared with `read.timeline_pages`."""

_KEYS_SQL = (
    NUMBERED_KEYS_SQL
    + """
SELECT seq, total, kind, id FROM numbered
WHERE seq >= %(lo)s AND (%(hi)s::bigint IS NULL OR seq <= %(hi)s)
ORDER BY seq
"""
)

_COUNT_SQL = """
SELECT (SELECT count(*) FROM ah.compaction WHERE session_id = %(sid)s)
     + (SELECT count(*) FROM ah.message WHERE session_id = %(sid)s)
     + (SELECT count(*) FROM ah.tool_call WHERE session_id = %(sid)s)
     + (SELECT count(*) FROM ah.subagent_spawn WHERE session_id = %(sid)s)
     + (SELECT count(*) FROM ah.git_event WHERE session_id = %(sid)s)
"""

# Per kind: (id, ts, byte_offset, line_number, label, text, detail) of the selected ids; texts
# are read one character beyond `chars` so a cut can be marked.
_CONTENT_SQL: dict[str, str] = {
    "compaction": "SELECT id, ts, byte_offset, line_number, trigger, NULL::text, "
    "jsonb_build_object('tokens_before', tokens_before, 'tokens_after', tokens_after) "
    "FROM ah.compaction WHERE id = ANY(%(ids)s)",
    "message": "SELECT id, ts, byte_offset, line_number, message_class, left(text, %(chars)s + 1), "
    "jsonb_strip_nulls(jsonb_build_object('role', role, 'model', model, 'on_active_branch', on_active_branch)) "
    "FROM ah.message WHERE id = ANY(%(ids)s)",
    "tool_call": "SELECT id, started_at, byte_offset, line_number, name, left(input, %(chars)s + 1), "
    "jsonb_strip_nulls(jsonb_build_object('outcome', outcome, 'is_error', is_error, 'exit_code', exit_code, "
    "'error_class', error_class, 'error_excerpt', error_excerpt, 'duration_ms', duration_ms, "
    "'output', left(output, %(chars)s), 'output_chars', length(output))) "
    "FROM ah.tool_call WHERE id = ANY(%(ids)s)",
    "spawn": "SELECT p.id, p.ts, p.byte_offset, p.line_number, p.subagent_type, left(p.brief, %(chars)s + 1), "
    "jsonb_strip_nulls(jsonb_build_object('description', p.description, 'child_session_uid', ch.session_uid, "
    "'child_agent_id', ch.agent_id)) FROM ah.subagent_spawn AS p "
    "LEFT JOIN ah.session AS ch ON ch.id = p.child_session_id WHERE p.id = ANY(%(ids)s)",
    "git": "SELECT id, ts, byte_offset, line_number, op, left(subject, %(chars)s + 1), "
    "jsonb_strip_nulls(jsonb_build_object('sha', sha, 'old_sha', old_sha, 'branch', branch, 'remote_ref', remote_ref)) "
    "FROM ah.git_event WHERE id = ANY(%(ids)s)",
}

UNLIMITED_CHARS = 2_000_000_000
"""`max_chars` None reads texts whole (a bound PostgreSQL's ``left`` accepts)."""


def _cut(text: str | None, max_chars: int | None) -> tuple[str | None, bool]:
    if text is None or max_chars is None or len(text) <= max_chars:
        return text, False
    return text[:max_chars] + "…", True


def session_timeline(
    conn: psycopg.Connection,
    uid: str,
    *,
    agent_id: str | None = None,
    start: int | None = None,
    end: int | None = None,
    max_chars: int | None = 2000,
) -> SessionTimeline:
    """The timeline of session `uid` (exact or unique prefix; `agent_id` picks a sub-agent
    thread), events `start`…`end` (1-based, inclusive; None = open), texts cut at `max_chars`
    characters (None: whole). Reads the texts of the selected events only. Raises
    SessionNotFound / AmbiguousSession (see `session.refs.resolve_session`)."""
    ref = resolve_session(conn, uid, agent_id)
    keys = conn.execute(_KEYS_SQL, {"sid": ref.id, "lo": max(1, start or 1), "hi": end}).fetchall()
    total = keys[0][1] if keys else conn.execute(_COUNT_SQL, {"sid": ref.id}).fetchone()[0]
    chars = max_chars if max_chars is not None else UNLIMITED_CHARS
    ids: dict[str, list[int]] = {}
    for _seq, _total, kind, event_id in keys:
        ids.setdefault(kind, []).append(event_id)
    content: dict[tuple[str, int], tuple] = {}
    for kind, kind_ids in ids.items():
        for row in conn.execute(_CONTENT_SQL[kind], {"ids": kind_ids, "chars": chars}):
            content[(kind, row[0])] = row
    events = []
    for seq, _total, kind, event_id in keys:
        _id, ts, off, line, label, text, detail = content[(kind, event_id)]
        text, cut = _cut(text, max_chars)
        detail = dict(detail or {})
        if "output" in detail and max_chars and detail.get("output_chars", 0) > max_chars:
            detail["output"] += "…"
        events.append(TimelineEvent(seq, kind, ts, off, line, label, text, cut, detail))
    return SessionTimeline(ref, summary_of(conn, ref.id), total, events, shared_elsewhere(conn, ref.id))


def timeline_of(conn: psycopg.Connection, req: SessionRequest) -> SessionTimeline:
    """The answer to a `read.requests.SessionRequest` (`session_timeline`). Raises
    SessionNotFound / AmbiguousSession (`session.refs`)."""
    return session_timeline(conn, req.uid, agent_id=req.agent_id, start=req.start, end=req.end, max_chars=req.max_chars)
