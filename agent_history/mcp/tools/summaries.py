"""MCP tool `search_summaries`: journal session summaries by content (issue 15).

Summaries come from an external journal (journal-sync) and are searched with English stemming
(`search.summaries`); each hit names the session it summarises so an agent can open it with
`session`.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.harnesses import ACCEPTED_NAMES
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, UNTIL, ToolEnv, ToolFailure, ToolSpec, limit_schema
from agent_history.read.requests import search_request
from agent_history.search.hybrid import VectorUnavailable
from agent_history.search.summaries_vector import run_summary_search

SNIPPET_CHARS = 400  # characters of a hit's snippet sent back (the rest is in `session`)


def _hit(h) -> dict[str, Any]:
    d = h.as_dict()
    extra = d.pop("extra", {})
    out = {
        "session_uid": h.session_uid,
        "agent_id": h.agent_id or None,
        "agent": h.agent,
        "namespace": h.namespace,
        "analysed_at": h.ts,
        "classification": h.label if h.label != "summary" else None,
        "title": h.title,
        "cwd": h.cwd,
        "score": d["score"],
        "snippet": d["snippet"][:SNIPPET_CHARS] + ("…" if len(d["snippet"]) > SNIPPET_CHARS else ""),
        "topics": extra.get("topics") or None,
        "project": extra.get("project"),
        "indexed": extra.get("linked"),
        "journal_conversation_id": extra.get("journal_conversation_id"),
    }
    return {k: v for k, v in out.items() if v is not None}


def search_summaries_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict:
    """`search_summaries` tool: ``{"query", "mode", "note"?, "hits": [summary hit…]}``; mode as the
    `search` tool's (keyword, vector or hybrid over the summary chunks). Raises ToolFailure when
    vector mode cannot run."""
    params = {
        "query": args["query"],
        "limit": args["limit"],
        "in": "summaries",
        "agents": args.get("agents"),
        "namespaces": list(scope.searched) if scope.namespaces is not None else [],
        "since": args.get("since"),
        "until": args.get("until"),
        "project": args.get("project"),
    }
    req = search_request(params, limit_max=args["limit"], flags=False)
    try:
        result = run_summary_search(conn, req, args.get("mode"), env.embedding)
    except VectorUnavailable as exc:
        raise ToolFailure(f"vector search unavailable: {exc}") from None
    out: dict[str, Any] = {"query": args["query"], "mode": str(result.mode)}
    if result.note:
        out["note"] = result.note
    return out | {"hits": [_hit(h) for h in result.hits]}


SEARCH_SUMMARIES = ToolSpec(
    name="search_summaries",
    title="Search session summaries",
    description=(
        "Search the written summaries of past sessions (title, objective, narrative, outcomes; English "
        "stemming, so 'decisions' also finds 'decided'). Summaries come from a journal and say what a "
        "session set out to do and what came of it — a quick way to find the session to read with "
        "`session`. Each hit has session_uid, agent, analysed_at, title, snippet, topics and `indexed` "
        "(false when the transcript itself is not in the catalogue)."
    ),
    properties={
        "query": {"type": "string", "minLength": 1, "description": "Words or a plain question."},
        "mode": {
            "type": "string",
            "enum": ["keyword", "hybrid", "vector"],
            "description": "keyword (English full text), vector (summary embeddings) or hybrid (both, fused). "
            "Default: hybrid when embeddings are configured and indexed, else keyword.",
        },
        "agents": {
            "type": "array",
            "items": {"type": "string", "enum": list(ACCEPTED_NAMES)},
            "description": "Only these agents.",
        },
        "since": SINCE,
        "until": UNTIL,
        "project": {"type": "string", "description": "Only sessions whose cwd is this directory or below it."},
        "limit": limit_schema(10, 50, "summaries"),
    },
    required=("query",),
    handler=search_summaries_handler,
)

TOOLS = (SEARCH_SUMMARIES,)
