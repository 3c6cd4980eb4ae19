"""`sessions` and `usage`: the CLI's ``sessions --json`` and ``usage --json`` as tools — the same
request objects (`read.requests.sessions_request`, `usage_request`) answered by the same read
functions (`read.sessions.sessions_of`, `read.usage.usage_report`), so the three front ends give
the same result for the same question.

- `sessions` — recent sessions newest first: title, agent, tokens, list-price cost, duration,
  sub-agents (totals include them) and health grade A–F; null = unknown, never 0.
- `usage` — tokens by bucket and list-price cost per day, week, month, session or 5-hour block
  (or per loop, repo, project, branch, host, model or agent with ``by``), in ccusage's JSON shape.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg

from agent_history.harnesses import ACCEPTED_NAMES
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, UNTIL, ToolEnv, ToolSpec, limit_schema
from agent_history.read.requests import USAGE_BY, sessions_request, usage_request
from agent_history.read.sessions import sessions_of
from agent_history.read.usage import usage_report
from agent_history.usage.periods import VIEWS
from agent_history.usage.plans import WINDOWS

MAX_SESSIONS = 200


def _namespaces(scope: Scope) -> list[str]:
    return list(scope.searched) if scope.namespaces is not None else []


def sessions_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`sessions` tool: ``{"sessions": [`read.sessions.SessionSummary.as_dict` …]}``."""
    req = sessions_request({**args, "namespaces": _namespaces(scope)}, flags=False)
    return {"sessions": [r.as_dict() for r in sessions_of(conn, req)]}


def usage_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`usage` tool: `read.usage.usage_report` (ccusage's field names, plus ``timezone``)."""
    req = usage_request({**args, "namespaces": _namespaces(scope)}, flags=False)
    return usage_report(conn, req, datetime.now(UTC))


_AGENTS = {
    "type": "array",
    "items": {"type": "string", "enum": list(ACCEPTED_NAMES)},
    "description": "Only these harnesses (product names such as claude-code work too).",
}

SESSIONS = ToolSpec(
    name="sessions",
    title="List sessions",
    description=(
        "Recent sessions, newest first: title, agent, namespace, cwd, model, start/end, duration, message, "
        "prompt and tool-call counts, tokens and list-price cost (own, and with sub-agents), sub-agent count "
        "and health grade A-F with its reasons. Unknown values are null, never 0. The same listing as "
        "`agent-history sessions --json`."
    ),
    properties={
        "agents": _AGENTS,
        "since": SINCE,
        "until": UNTIL,
        "project": {"type": "string", "description": "Only sessions whose cwd is this directory or below it."},
        "subagents": {"type": "boolean", "default": False, "description": "List sub-agent threads too."},
        "health": {
            "type": "string",
            "description": "Only sessions of this health grade: a letter (F), a range (C-F) or a list (A,F).",
        },
        "hosts": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Only sessions indexed by these machines (their `[host] name`, `origin_host`).",
        },
        "limit": limit_schema(20, MAX_SESSIONS, "sessions"),
    },
    handler=sessions_handler,
)

USAGE = ToolSpec(
    name="usage",
    title="Token usage and list-price cost",
    description=(
        "Tokens by bucket (input, output, cache creation, cache read) and list-price cost in USD per day, "
        "week, month, session or 5-hour billing block, or grouped by loop, repo, project, branch, host, "
        "model or agent (`by`), with per-model breakdowns and totals. A cost is null when a model has no "
        "list price (the models are named). The same report as `agent-history usage --json`."
    ),
    properties={
        "view": {"type": "string", "enum": list(VIEWS), "description": "The period (default daily)."},
        "by": {"type": "string", "enum": list(USAGE_BY), "description": "Group by this instead of a period."},
        "since": {**SINCE, "description": "From this day (YYYY-MM-DD, in `timezone`) or a relative/ISO time."},
        "until": {**UNTIL, "description": "Up to and including this day (in `timezone`), or a timestamp."},
        "agents": _AGENTS,
        "project": {"type": "string", "description": "Only sessions whose working directory contains this."},
        "model": {"type": "string", "description": "Only models whose id contains this."},
        "timezone": {"type": "string", "description": "IANA zone of the periods (default: the server's)."},
        "window": {"type": "string", "enum": list(WINDOWS), "description": "blocks view: block (5 h) or week."},
    },
    handler=usage_handler,
)

TOOLS = (SESSIONS, USAGE)
