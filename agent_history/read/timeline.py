"""`session UID`: one thread's ordered timeline — messages, tool calls (with outcome), sub-agent
spawns, compactions and git events.

Order is physical, never by timestamp (docs/design.md §5): by source file (first indexed first, as a
resumed session's copy lives in a later file), then ``byte_offset``, then a fixed kind order for
events read from the same line (compaction, message, tool call, spawn, git event). Events are
numbered 1…N in that order; ``start``/``end`` (``--from``/``--to``) select an inclusive range
of those numbers, so a slice is stable however it is cut. Long texts are cut to `max_chars`
(the cut is marked with an ellipsis and ``truncated``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

import psycopg

from agent_history.read.sessions import SessionSummary, summary_of
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
    """A session, its summary and the selected slice of its `total` events."""

    session: SessionRef
    summary: SessionSummary | None
    total: int
    events: list[TimelineEvent]

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "session": self.session.as_dict(),
            "summary": self.summary.as_dict() if self.summary else None,
            "total": self.total,
            "events": [e.as_dict() for e in self.events],
        }


# One UNION over the event tables; `k` orders events read from the same line.
_EVENTS_SQL = """
SELECT * FROM (
    SELECT 1 AS k, 'compaction' AS kind, c.source_id, c.byte_offset, c.line_number, c.ts, c.trigger AS label,
           NULL::text AS text,
           jsonb_build_object('tokens_before', c.tokens_before, 'tokens_after', c.tokens_after) AS detail
    FROM ah.compaction AS c WHERE c.session_id = %(sid)s
    UNION ALL
    SELECT 2, 'message', m.source_id, m.byte_offset, m.line_number, m.ts, m.message_class, m.text,
           jsonb_strip_nulls(jsonb_build_object('role', m.role, 'model', m.model,
                                                'on_active_branch', m.on_active_branch))
    FROM ah.message AS m WHERE m.session_id = %(sid)s
    UNION ALL
    SELECT 3, 'tool_call', t.source_id, t.byte_offset, t.line_number, t.started_at, t.name, t.input,
           jsonb_strip_nulls(jsonb_build_object(
               'outcome', t.outcome, 'is_error', t.is_error, 'exit_code', t.exit_code,
               'error_class', t.error_class, 'error_excerpt', t.error_excerpt,
               'duration_ms', t.duration_ms, 'output', left(t.output, %(max_chars)s),
               'output_chars', length(t.output)))
    FROM ah.tool_call AS t WHERE t.session_id = %(sid)s
    UNION ALL
    SELECT 4, 'spawn', p.source_id, p.byte_offset, p.line_number, p.ts, p.subagent_type, p.brief,
           jsonb_strip_nulls(jsonb_build_object(
               'description', p.description, 'child_session_uid', ch.session_uid,
               'child_agent_id', ch.agent_id))
    FROM ah.subagent_spawn AS p LEFT JOIN ah.session AS ch ON ch.id = p.child_session_id
    WHERE p.session_id = %(sid)s
    UNION ALL
    SELECT 5, 'git', g.source_id, g.byte_offset, g.line_number, g.ts, g.op, g.subject,
           jsonb_strip_nulls(jsonb_build_object('sha', g.sha, 'old_sha', g.old_sha, 'branch', g.branch,
                                                'remote_ref', g.remote_ref))
    FROM ah.git_event AS g WHERE g.session_id = %(sid)s
) AS e
ORDER BY e.source_id, e.byte_offset NULLS LAST, e.k, e.ts NULLS LAST
"""


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
    thread), events `start`…`end` (1-based, inclusive; None = open). Raises SessionNotFound /
    AmbiguousSession (see `session.refs.resolve_session`)."""
    ref = resolve_session(conn, uid, agent_id)
    rows = conn.execute(_EVENTS_SQL, {"sid": ref.id, "max_chars": max_chars or 2_000_000_000}).fetchall()
    lo = max(1, start or 1)
    hi = min(len(rows), end if end is not None else len(rows))
    events = []
    for seq in range(lo, hi + 1):
        _k, kind, _src, off, line, ts, label, text, detail = rows[seq - 1]
        text, cut = _cut(text, max_chars)
        detail = dict(detail or {})
        if "output" in detail and detail.get("output_chars", 0) > (max_chars or 0) and max_chars:
            detail["output"] += "…"
        events.append(TimelineEvent(seq, kind, ts, off, line, label, text, cut, detail))
    return SessionTimeline(ref, summary_of(conn, ref.id), len(rows), events)
