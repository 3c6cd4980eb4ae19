"""`thread_recall`, `recent_sessions` and `index_stats` (issue 17): thin handlers over
`read.recall` and `read.overview` (`recent_sessions` builds `read.requests.RecentSessionsRequest`)."""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.harnesses import ACCEPTED_NAMES
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import ToolEnv, ToolFailure, ToolSpec, limit_schema
from agent_history.mcp.tools.search import _COMMON, build_request, cancelled_note
from agent_history.read.overview import index_stats, recent_of
from agent_history.read.recall import RecallBounds, thread_recall
from agent_history.read.requests import recent_sessions_request
from agent_history.search import hybrid
from agent_history.session.refs import AmbiguousSession

BOUNDS = RecallBounds()
MAX_RECENT = 50


def thread_recall_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`thread_recall` tool: `read.recall.Recall.as_dict`."""
    bounds = RecallBounds(hits=args["hits"])
    req = build_request(scope, args, bounds.hits)
    if cancelled_note(req):
        return {"query": args["query"], "note": cancelled_note(req), "steps": []}
    try:
        return thread_recall(conn, req, args.get("mode"), env.embedding, bounds).as_dict()
    except hybrid.VectorUnavailable as exc:
        raise ToolFailure(f"vector search unavailable: {exc}") from None
    except AmbiguousSession as exc:
        raise ToolFailure(str(exc)) from None


def recent_sessions_handler(
    conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv
) -> dict[str, Any]:
    """`recent_sessions` tool: ``{"sessions": [...]}`` (`read.overview.recent_of`)."""
    params = {
        "limit": args["n"],
        "project": args.get("project"),
        "agents": [args["agent"]] if args.get("agent") else [],
        "namespaces": list(scope.searched) if scope.namespaces is not None else [],
    }
    return {"sessions": recent_of(conn, recent_sessions_request(params, limit_max=MAX_RECENT, flags=False))}


def index_stats_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`index_stats` tool: `read.overview.index_stats`."""
    return index_stats(conn)


_RECALL_PROPS = {k: v for k, v in _COMMON.items() if k != "in"}

THREAD_RECALL = ToolSpec(
    name="thread_recall",
    title="Recall the thread around the best matches",
    description=(
        "Like `search`, but returns the story instead of scattered rows: the best hits (default 3) expanded "
        f"into their turn plus {BOUNDS.turns_before} turn before and {BOUNDS.turns_after} after (prompt → "
        "replies → tool calls and results, in file order), and into sessions linked by lineage (parent, "
        "sub-agents, the session resumed or forked from and into), ordered by position. Each step has "
        "session_uid, agent_id, agent, namespace, ts, label, text (≤ 600 chars), source_path, line_number, "
        f"byte_offset, turn, relation and is_hit. At most {BOUNDS.max_steps} steps. Use it for 'what did we "
        "try before X worked'. Pass exclude_agent = your own product name after checking your own memory."
    ),
    properties={**_RECALL_PROPS, "in": {**_COMMON["in"]}, "hits": limit_schema(3, 10, "hits expanded")},
    required=("query",),
    handler=thread_recall_handler,
)

RECENT_SESSIONS = ToolSpec(
    name="recent_sessions",
    title="Recent sessions",
    description=(
        "The newest sessions (main threads) with title, cwd, start/end, prompt count and the first and last "
        "human prompt (≤ 300 chars each) — where did we leave off?"
    ),
    properties={
        "n": limit_schema(10, MAX_RECENT, "sessions"),
        "project": {"type": "string", "description": "Only sessions whose cwd is this directory or below it."},
        "agent": {"type": "string", "enum": list(ACCEPTED_NAMES), "description": "Only this agent."},
    },
    handler=recent_sessions_handler,
)

INDEX_STATS = ToolSpec(
    name="index_stats",
    title="Index statistics",
    description=(
        "What the catalogue holds: sessions, sub-agent threads, messages, tool calls, files, excluded "
        "sessions, sessions per agent, the last index pass, embedding coverage per model and parse issues "
        "by kind."
    ),
    properties={},
    handler=index_stats_handler,
    scoped=False,
)

TOOLS = (THREAD_RECALL, RECENT_SESSIONS, INDEX_STATS)
