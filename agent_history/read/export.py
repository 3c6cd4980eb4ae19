"""`export UID`: one session as a shareable document — the data (`export_session`) the Markdown,
HTML and JSON renderings (`read.export_render`) are made from.

A document is the session's main thread in physical order (`read.timeline`, texts whole):
prompts, replies, reasoning, tool calls with input and output, compactions, git events — and
each sub-agent thread inline at the spawn that started it (depth-first, each thread once; threads
of the session no spawn links to follow at the end), with every thread's tokens and list-price
cost (`read.sessions.SessionSummary`). Secret-shaped spans are ``[REDACTED]`` by default through
the embeddings' scanner (`embed.redact`): every string of the document except the identifiers in
`embed.redact.IDENTIFIER_KEYS` (uids, names, paths, times, classes).
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.embed.redact import redact_tree
from agent_history.harnesses import BY_NAME
from agent_history.read.timeline import session_timeline
from agent_history.session.refs import resolve_session

FORMATS: tuple[str, ...] = ("md", "html", "json")
MAX_DEPTH = 8
"""Sub-agents nested deeper than this are listed, not inlined."""


def _thread(conn: psycopg.Connection, uid: str, agent_id: str | None, seen: set, depth: int) -> dict[str, Any]:
    t = session_timeline(conn, uid, agent_id=agent_id, max_chars=None)
    seen.add((t.session.session_uid, t.session.agent_id))
    events = []
    for e in t.events:
        ev = e.as_dict()
        ev.pop("truncated", None)
        if e.kind == "spawn":
            child = (e.detail.get("child_session_uid"), e.detail.get("child_agent_id") or "")
            if child[0] and child not in seen and depth < MAX_DEPTH:
                try:
                    ev["thread"] = _thread(conn, child[0], child[1], seen, depth + 1)
                except LookupError:
                    pass
        events.append(ev)
    return {
        "session": t.session.as_dict(),
        "summary": t.summary.as_dict() if t.summary else None,
        "events": events,
    }


def export_session(conn: psycopg.Connection, uid: str, *, redact: bool = True) -> dict[str, Any]:
    """The document of the session named by `uid` (exact or unique prefix; a sub-agent thread's
    uid exports that thread): ``{"format_version", "product", "redacted", "thread": {session,
    summary, events[, …, "thread" inside spawn events]}, "unlinked_threads": [...]}``.

    Raises SessionNotFound / AmbiguousSession."""
    ref = resolve_session(conn, uid)
    seen: set = set()
    main = _thread(conn, ref.session_uid, ref.agent_id, seen, 0)
    unlinked = []
    if ref.agent_id == "":
        for (agent_id,) in conn.execute(
            "SELECT agent_id FROM ah.session WHERE agent = %s AND session_uid = %s AND agent_id <> '' ORDER BY id",
            (ref.agent, ref.session_uid),
        ):
            if (ref.session_uid, agent_id) not in seen:
                unlinked.append(_thread(conn, ref.session_uid, agent_id, seen, 1))
    row = BY_NAME.get(ref.agent)
    doc = {
        "format_version": 1,
        "product": row.product if row else ref.agent,
        "redacted": redact,
        "thread": main,
        "unlinked_threads": unlinked,
    }
    return redact_tree(doc) if redact else doc
