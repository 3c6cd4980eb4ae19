"""`active_sessions` and `infra_actions`: what is running now, and what was done to which host.

- `active_sessions(minutes, at)` — root sessions with events (messages or model calls; both
  ``ts``-indexed) in the window ``(at - minutes, at]``; a sub-agent's events count for its root.
  Per root: last event time, event count, active sub-agent threads, title, cwd, last human prompt.
- `infra_actions(host, since, until)` — tool calls whose command runs ``ssh``/``scp``/``rsync``/
  ``sftp`` against a host. Candidates come from the tool-call text index (``tool_call.terms``,
  GIN) and the time window on ``started_at``; `mcp.remote_commands` then reads the actual
  command and keeps calls with a remote invocation whose host contains `host`
  (case-insensitive). At most `MAX_CANDIDATES` candidate calls are read per request.

Both build their request (`read.requests.active_sessions_request`, `infra_actions_request`), so a
bad time or an out-of-range number reads as it does elsewhere.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg

from agent_history.mcp.remote_commands import PROGRAMS, command_of_input, remote_invocations
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, UNTIL, ToolEnv, ToolSpec, limit_schema
from agent_history.read.activity import active_roots, remote_candidates
from agent_history.read.requests import (
    ACTIVE_DEFAULT_MINUTES,
    ACTIVE_MAX_MINUTES,
    active_sessions_request,
    infra_actions_request,
)

MAX_CANDIDATES = 2_000
COMMAND_CHARS = 500
PROMPT_CHARS = 240


MAX_ACTIVE = 100
MAX_ACTIONS = 200


def _namespaces(scope: Scope) -> list[str]:
    """The scope's namespaces as a request's ``namespaces`` ([]: every one)."""
    return list(scope.searched) if scope.namespaces is not None else []


def active_sessions_handler(
    conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv
) -> dict[str, Any]:
    """`active_sessions` tool: ``{"window": {from, to}, "sessions": [...]}`` newest activity first."""
    params = {**args, "namespaces": _namespaces(scope)}
    req = active_sessions_request(params, now=datetime.now(UTC), limit_max=MAX_ACTIVE, flags=False)
    rows = active_roots(
        conn, req.since, req.until, namespaces=list(req.namespaces) or None, limit=req.limit, prompt_chars=PROMPT_CHARS
    )
    sessions = [
        {
            "session_uid": r[0],
            "agent": r[1],
            "namespace": r[2],
            "title": r[3],
            "cwd": r[4],
            "started_at": r[5],
            "last_event_at": r[6],
            "events_in_window": r[7],
            "active_subagents": sorted(r[8] or []),
            "last_prompt": r[9],
        }
        for r in rows
    ]
    return {"window": {"from": req.since, "to": req.until, "minutes": req.minutes}, "sessions": sessions}


def _host_matches(wanted: str | None, host: str) -> bool:
    return wanted is None or wanted.lower() in host.lower()


def infra_actions_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`infra_actions` tool: ``{"host", "window", "actions": [...], "hosts": {host: count}}``."""
    params = {**args, "namespaces": _namespaces(scope)}
    req = infra_actions_request(params, programs=PROGRAMS, limit_max=MAX_ACTIONS, flags=False)
    programs, since, until, host = list(req.programs), req.since, req.until, req.host
    rows = remote_candidates(
        conn,
        programs,
        since=since,
        until=until,
        host=host,
        namespaces=list(req.namespaces) or None,
        candidates=MAX_CANDIDATES,
    )
    actions: list[dict[str, Any]] = []
    hosts: dict[str, int] = {}
    for r in rows:
        command = command_of_input(r[2])
        remotes = [x for x in remote_invocations(command) if x.program in programs and _host_matches(host, x.host)]
        if not remotes:
            continue
        for x in remotes:
            hosts[x.host] = hosts.get(x.host, 0) + 1
        if len(actions) >= req.limit:
            continue
        thread = f"{r[7]}/{r[8]}" if r[8] else r[7]
        actions.append(
            {
                "ts": r[0],
                "tool": r[1],
                "remotes": [{"program": x.program, "host": x.host, "user": x.user} for x in remotes],
                "command": command if len(command) <= COMMAND_CHARS else command[:COMMAND_CHARS] + "…",
                "is_error": r[3],
                "exit_code": r[4],
                "outcome": r[5],
                "error_class": r[6],
                "session_uid": r[7],
                "agent_id": r[8] or None,
                "agent": r[9],
                "namespace": r[10],
                "root_session_uid": r[11] if r[11] != r[7] or r[8] else None,
                "cwd": r[12],
                "source_path": r[13],
                "byte_offset": r[14],
                "line_number": r[15],
                "cite": f"{thread} {r[13]}@{r[14]}",
            }
        )
    out: dict[str, Any] = {
        "host": host,
        "programs": programs,
        "window": {"from": since, "to": until},
        "hosts": dict(sorted(hosts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "actions": [{k: v for k, v in a.items() if v is not None} for a in actions],
    }
    if len(rows) == MAX_CANDIDATES:
        out["note"] = f"only the newest {MAX_CANDIDATES} candidate tool calls were read; narrow the time window"
    return out


ACTIVE_SESSIONS = ToolSpec(
    name="active_sessions",
    title="Sessions active now",
    description=(
        "Root sessions (any agent) with messages or model calls in the last `minutes` (before `at`, default "
        "now); sub-agent activity counts for its root. Shows last event time, events in the window, active "
        "sub-agent threads, title, cwd and the last human prompt. Use it to see what other agents are doing."
    ),
    properties={
        "minutes": {
            "type": "integer",
            "minimum": 1,
            "maximum": ACTIVE_MAX_MINUTES,
            "default": ACTIVE_DEFAULT_MINUTES,
            "description": "Window length in minutes (max 30 days).",
        },
        "at": {"type": "string", "description": "End of the window (ISO timestamp; default now)."},
        "limit": limit_schema(20, MAX_ACTIVE, "sessions"),
    },
    handler=active_sessions_handler,
)

INFRA_ACTIONS = ToolSpec(
    name="infra_actions",
    title="Commands run against hosts",
    description=(
        "Tool calls that ran ssh/scp/rsync/sftp against a host, newest first: when, which session, the "
        "command, remote host and user, outcome/exit code, and a `cite`. Filter by host (substring, e.g. "
        "'web1' or 'example.net') and a time window; `hosts` counts invocations per host."
    ),
    properties={
        "host": {"type": "string", "description": "Only invocations whose host contains this (case-insensitive)."},
        "since": {**SINCE, "default": "30d"},
        "until": UNTIL,
        "programs": {
            "type": "array",
            "items": {"type": "string", "enum": list(PROGRAMS)},
            "default": list(PROGRAMS),
            "minItems": 1,
            "description": "Which programs count.",
        },
        "limit": limit_schema(50, MAX_ACTIONS, "actions"),
    },
    handler=infra_actions_handler,
)

TOOLS = (ACTIVE_SESSIONS, INFRA_ACTIONS)
