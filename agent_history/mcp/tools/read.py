"""`session`, `why`, `touched`: thin handlers over `agent_history.read` — each builds its
question's request (`read.requests`: `session_request`, `why_request`, `touched_request`), so a
bad argument reads as it does on the command line and in the web UI.

- `session` — one thread's timeline slice (`read.timeline.session_timeline`): events are numbered
  1…total in physical order; at most `MAX_EVENTS` per call, with ``next_from`` to continue.
- `why` — the session, tool call, prompt and sub-agent brief behind a commit (`read.why.why`),
  filtered to the scope's namespaces, and the commit as `collect` read it from a repository
  (`read.why.collected_commits`) with the CLI's sentence: "in <repo>, authored by you/someone
  else at T; no session made it" (or "made in session <uid>", "made in 2 sessions: <uid>, <uid>"),
  one entry per commit naming the other repositories that hold it ("(also the worktree <path>)").
- `touched` — sessions that read/created/edited/deleted files matching a path or glob
  (`read.touched.touched`), newest first.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, ToolEnv, ToolSpec, limit_schema
from agent_history.read.loops import loops_by_session
from agent_history.read.requests import session_request, touched_request, why_request
from agent_history.read.resume import resume_of_ref
from agent_history.read.sessions import is_excluded
from agent_history.read.timeline import timeline_of
from agent_history.read.touched import touched_of
from agent_history.read.why import one_per_commit, why_of
from agent_history.search.summaries import summaries_for_sessions

MAX_EVENTS = 100
MAX_TOUCHED = 50


def _in_scope(scope: Scope, namespace: str | None) -> bool:
    return scope.namespaces is None or namespace in scope.searched


def _namespaces(scope: Scope) -> list[str]:
    """The scope's namespaces as a request's ``namespaces`` ([]: every one)."""
    return list(scope.searched) if scope.namespaces is not None else []


def session_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`session` tool: ``{"session", "resume", "summary", "total", "from", "to", "events", "next_from"?}``;
    ``resume`` is the root session's resume (and fork) command (`read.resume.resume_dict`)."""
    start = args["from"]
    end = min(args.get("to") or start + args["limit"] - 1, start + MAX_EVENTS - 1)
    req = session_request(
        {
            "uid": args["uid"],
            "agent_id": args.get("agent_id"),
            "from": start,
            "to": end,
            "max_chars": args["max_chars"],
        },
        flags=False,
    )
    timeline = timeline_of(conn, req)
    if not _in_scope(scope, timeline.session.namespace):
        raise LookupError(f"session {args['uid']} is in namespace {timeline.session.namespace}, outside this scope")
    if is_excluded(conn, timeline.session.id):
        raise LookupError(f"session {args['uid']} is excluded (sessions exclude); it is not served")
    out = timeline.as_dict()
    out["resume"] = resume_of_ref(conn, timeline.session)
    journal = summaries_for_sessions(conn, [timeline.session.id]).get(timeline.session.id)
    if journal:  # the journal's written summary of this thread (journal-sync)
        out["journal_summary"] = journal
    loop_ids = loops_by_session(conn, [timeline.session.id]).get(timeline.session.id)
    if loop_ids:  # the loops (issue 12) this thread is the root or a lane of
        out["loop_ids"] = loop_ids
    for event in out["events"]:
        if not event.get("detail"):
            event.pop("detail", None)
        if not event.get("truncated"):
            event.pop("truncated", None)
    last = out["events"][-1]["seq"] if out["events"] else start - 1
    out["from"], out["to"] = start, last
    if last < timeline.total:
        out["next_from"] = last + 1
    return out


def why_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`why` tool: ``{"sha", "origins": [{op, sha, branch, subject, ts, session, command, prompt, brief…}],
    "collected": [{repository, sha, subject, committed_at, authored_by_me, …, sentence, also}]}``:
    one entry per commit (`read.why.one_per_commit`), its main repository's, ``also`` holding the
    other repositories' entries (a linked worktree, a clone)."""
    req = why_request({**args, "namespaces": _namespaces(scope)}, flags=False)
    found, commits = why_of(conn, req)
    origins = [o.as_dict() for o in found]
    uids = [o["session"]["session_uid"] for o in origins]
    collected = [
        {**c.as_dict(), "sentence": c.sentence(sessions=uids, also=also), "also": [x.as_dict() for x in also]}
        for c, *also in one_per_commit(commits)
    ]
    return {"sha": args["sha"], "origins": origins, "collected": collected}


def touched_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`touched` tool: ``{"pattern", "sessions": [{session, first_ts, last_ts, ops, paths, touches}]}``."""
    req = touched_request({**args, "namespaces": _namespaces(scope)}, limit_max=MAX_TOUCHED, flags=False)
    sessions = touched_of(conn, req)
    return {"pattern": args["pattern"], "sessions": [s.as_dict() for s in sessions]}


SESSION = ToolSpec(
    name="session",
    title="Read a session's timeline",
    description=(
        "Read part of one past session in order: messages, tool calls with outcome, sub-agent spawns, "
        "compactions, git events. Events are numbered 1..total; pass from/to (or limit) to page, and "
        "follow `next_from`. Use agent_id to read a sub-agent thread of the session. `resume` gives the "
        "agent's own command to resume (or fork) the session, run in its cwd."
    ),
    properties={
        "uid": {"type": "string", "minLength": 6, "description": "Session uid (or a unique prefix of ≥ 6 characters)."},
        "agent_id": {"type": "string", "description": "A sub-agent thread of the session ('' = main thread)."},
        "from": {"type": "integer", "minimum": 1, "default": 1, "description": "First event number (1-based)."},
        "to": {"type": "integer", "minimum": 1, "description": "Last event number (inclusive)."},
        "limit": limit_schema(40, MAX_EVENTS, "events when `to` is not given"),
        "max_chars": {
            "type": "integer",
            "minimum": 100,
            "maximum": 4000,
            "default": 800,
            "description": "Cut each event's text to this many characters.",
        },
    },
    required=("uid",),
    handler=session_handler,
)

WHY = ToolSpec(
    name="why",
    title="Why does this commit exist",
    description=(
        "Which session, tool call, human prompt and (for sub-agents) brief produced a git commit or push. "
        "Pass a sha of 7-40 hex digits (abbreviated works). `collected` gives the commit as read from its "
        "repository by `agent-history collect` (who authored it, when, whether a session made it), also for "
        "commits no agent printed."
    ),
    properties={
        # no schema pattern: `why_request` says what is wrong, in the words of the CLI and the web UI
        "sha": {"type": "string", "description": "Commit sha, 7-40 hex digits."},
    },
    required=("sha",),
    handler=why_handler,
)

TOUCHED = ToolSpec(
    name="touched",
    title="Sessions that touched a file",
    description=(
        "Sessions that read, created, edited, moved or deleted files matching a path or glob "
        "(e.g. 'src/db/pool.py', '**/*.sql', '/abs/dir/'), newest first, with the ops and paths per session."
    ),
    properties={
        "pattern": {"type": "string", "minLength": 1, "description": "A path (relative = any directory) or a glob."},
        "ops": {
            "type": "array",
            "items": {"type": "string", "enum": ["read", "create", "edit", "delete", "move"]},
            "description": "Only these operations.",
        },
        "since": SINCE,
        "limit": limit_schema(20, MAX_TOUCHED, "sessions"),
        "touches_per_session": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": 10,
            "description": "Individual touches listed per session.",
        },
    },
    required=("pattern",),
    handler=touched_handler,
)

TOOLS = (SESSION, WHY, TOUCHED)
