"""`efficiency`: model calls per thread by trigger, poll share and tokens (issue 11).

Same filters and result shape as ``agent-history efficiency --json``:
``{"threads": [{session_uid, agent_id, agent, role, calls, triggers, unclassified, poll_share,
tokens}], "totals": {...}}``, newest threads first.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.classify.rules import TRIGGERS
from agent_history.harnesses import ACCEPTED_NAMES
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, ToolEnv, ToolSpec, limit_schema
from agent_history.read.efficiency import ROLES, efficiency_of
from agent_history.read.requests import efficiency_request

MAX_THREADS = 500


def efficiency_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`efficiency` tool → ``{"threads": [...], "totals": {...}}`` (totals over the returned threads)."""
    namespaces = list(scope.searched) if scope.namespaces is not None else []
    req = efficiency_request({**args, "namespaces": namespaces}, limit_max=MAX_THREADS, flags=False)
    return efficiency_of(conn, req).as_dict()


EFFICIENCY = ToolSpec(
    name="efficiency",
    title="What triggered the model calls",
    description=(
        "Per thread (session or sub-agent), the model calls by what triggered them: "
        + ", ".join(TRIGGERS)
        + "; poll_share = (wait + status) / classified calls (null when none is classified). A root whose "
        "calls are mostly wait/status is polling instead of waiting on events. Filter by session uid, agent, "
        "start time and role (root | worker | solo)."
    ),
    properties={
        "session_uid": {"type": "string", "description": "Only this session's threads (and threads rooted in it)."},
        "agents": {
            "type": "array",
            "items": {"type": "string", "enum": list(ACCEPTED_NAMES)},
            "description": "Only these harnesses.",
        },
        "since": SINCE,
        "role": {"type": "string", "enum": list(ROLES), "description": "Only threads with this role."},
        "limit": limit_schema(50, MAX_THREADS, "threads"),
    },
    handler=efficiency_handler,
)

TOOLS = (EFFICIENCY,)
