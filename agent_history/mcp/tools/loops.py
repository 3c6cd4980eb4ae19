"""`loops`: loop runs (issue 12) as compact rows, over `read.loops.list_loops`.

Each row: id, status (and waiting_until), repo, loop number, closeout path, root session uid,
started/ended, lanes, model calls, tokens, list-price cost, errors, commits, pushes,
landed/parked — NULL (omitted) when unknown, never 0. Filtered to the scope's namespaces by
the root session's namespace.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.loops.rules import STATUSES
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, ToolEnv, ToolSpec, limit_schema
from agent_history.read.loops import loops_of
from agent_history.read.requests import loops_request

MAX_LOOPS = 100

COMPACT_KEYS = (
    "id", "status", "waiting_until", "repo", "loop_number", "closeout_path", "root_session_uid", "started_at",
    "ended_at", "lanes", "model_calls", "tokens", "cost_usd", "errors", "commits", "pushes", "landed", "parked",
    "progress_sources",
)  # fmt: skip
"""The keys of a compact row, in order; a key whose value is unknown (None) is left out."""


def loops_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`loops` tool: ``{"loops": [compact rows], "note"?}``."""
    namespaces = list(scope.searched) if scope.namespaces is not None else []
    rows = loops_of(conn, loops_request({**args, "namespaces": namespaces}, limit_max=MAX_LOOPS, flags=False))
    out: dict[str, Any] = {
        "loops": [{k: v for k, v in r.as_dict().items() if k in COMPACT_KEYS and v is not None} for r in rows]
    }
    if not rows:
        out["note"] = "no loops: no prompt with 'You are the root' and one codex/closeout-<date>-loop<N>.md path"
    return out


LOOPS = ToolSpec(
    name="loops",
    title="Loop runs",
    description=(
        "Long-running agent loops (a root launched with 'You are the root' and a closeout path): status "
        "(finished, waiting, paused, running, stale), repo, loop number, lanes, model calls, tokens, list-price "
        "cost, errors, commits, pushes, tasks landed/parked. Unknown values are omitted, never 0. Newest first."
    ),
    properties={
        "status": {"type": "string", "enum": list(STATUSES), "description": "Only loops with this status."},
        "since": SINCE,
        "repo": {"type": "string", "description": "Only this repository (directory name or owner/name)."},
        "limit": limit_schema(20, MAX_LOOPS, "loops"),
    },
    handler=loops_handler,
)

TOOLS = (LOOPS,)
