"""`search` and `find_sessions`: thin handlers over `agent_history.search.hybrid.run_search`.

`search` returns hits with provenance (session uid, thread, agent, namespace, time, class or tool
name, file and byte offset, snippet) and a ready-made ``cite`` string. `find_sessions` runs the
same search with a wider net (`HITS_PER_SESSION` × limit hits), groups hits by the **root**
session (a sub-agent's hit counts for the session that spawned it), ranks sessions by
`session_score` (best hit first, further hits with halving weight), and names the root to
resume (``resume``: uid and the agent's resume command). Its ``health`` and ``hosts`` filters go
through `read.requests.sessions_request` (the `sessions` tool's builder), so an unknown host reads
as it does there; they keep the root sessions of that grade / indexed by those machines.

Modes go through `search.hybrid.run_search`: ``keyword`` never calls an embedding endpoint;
``hybrid`` (the default once the catalogue has vectors for the configured model) falls back to
keyword-only with a ``note`` when the query embedding is slow or fails; ``vector`` fails with a
one-line error when it cannot run (docs/design.md §8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg

from agent_history.classify.health import GRADE_LETTERS
from agent_history.harnesses import ACCEPTED_NAMES, ALIASES, HARNESSES, products
from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import SINCE, UNTIL, ToolEnv, ToolFailure, ToolSpec, limit_schema
from agent_history.model import classes
from agent_history.model.classes import CLASS_GROUPS
from agent_history.read.catalog import check_filter_values
from agent_history.read.loops import loops_by_session
from agent_history.read.requests import cancelled, search_request, sessions_request
from agent_history.read.resume import resume_dict
from agent_history.read.sessions import check_hosts, health_by_session, hosts_by_session
from agent_history.search import hybrid
from agent_history.search.request import SearchHit, SearchRequest
from agent_history.search.summaries import summaries_for_sessions
from agent_history.session.refs import AmbiguousSession, SessionNotFound, resolve_session

HITS_PER_SESSION = 20
MAIN_THREAD = "main"
SNIPPET_CHARS = 320


def build_request(scope: Scope, args: dict[str, Any], limit: int) -> SearchRequest:
    """The `SearchRequest` for tool arguments (already schema-checked), through
    `read.requests.search_request` — the CLI's and the web UI's builder, so a bad date or an
    unknown agent reads the same everywhere. Raises RequestError (a ValueError)."""
    params = {
        "query": args["query"],
        "limit": limit,
        "in": args.get("in"),
        "agents": args.get("agents"),
        "exclude_agents": args.get("exclude_agent"),
        "namespaces": list(scope.searched) if scope.namespaces is not None else [],
        "classes": args.get("classes"),
        "since": args.get("since"),
        "until": args.get("until"),
        "project": args.get("project"),
        "session": args.get("session"),
        "source_types": args.get("source_type"),
        "context_project": args.get("context_project"),
        "rank": args.get("rank"),
    }
    return search_request(params, limit_max=max(limit, 1), flags=False)


def run_search(
    conn: psycopg.Connection, req: SearchRequest, mode: str | None, env: ToolEnv
) -> tuple[list[SearchHit], str, str | None]:
    """(hits, mode used, note) from `search.hybrid.run_search`; mode None = hybrid when the
    catalogue has embeddings for the configured model, else keyword. Raises ToolFailure when
    vector mode cannot run or the session prefix names several sessions."""
    try:
        result = hybrid.run_search(conn, req, mode, env.embedding)
    except hybrid.VectorUnavailable as exc:
        raise ToolFailure(f"vector search unavailable: {exc}") from None
    except AmbiguousSession as exc:
        raise ToolFailure(str(exc)) from None
    return result.hits, str(result.mode), result.note


def cite(hit: SearchHit) -> str:
    """``<session uid>[/<agent id>] <file>@<byte offset>`` — how to point at a hit."""
    thread = f"{hit.session_uid}/{hit.agent_id}" if hit.agent_id else hit.session_uid
    return f"{thread} {hit.source_path}@{hit.byte_offset}"


def hit_dict(hit: SearchHit) -> dict[str, Any]:
    """A compact hit: provenance, score, snippet (≤ SNIPPET_CHARS), cite."""
    d = hit.as_dict()
    for key in ("id", "highlights", "backend", "extra"):
        d.pop(key, None)
    if d.get("root_session_uid") == hit.session_uid and not hit.agent_id:
        d.pop("root_session_uid")
    snippet = d.get("snippet") or ""
    if len(snippet) > SNIPPET_CHARS:
        d["snippet"] = snippet[:SNIPPET_CHARS] + "…"
    d["cite"] = cite(hit)
    return {k: v for k, v in d.items() if v is not None}


def cancelled_note(req: SearchRequest) -> str | None:
    """The note for a request whose ``agents`` are all in ``exclude_agents`` (nothing to search)."""
    if names := cancelled(req):
        return f"nothing searched: agents and exclude_agent both name {', '.join(names)}"
    return None


def search_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`search` tool: ``{"mode", "note"?, "hits": [hit…]}``."""
    req = build_request(scope, args, args["limit"])
    check_filter_values(conn, (), req.session, flags=False)  # a session naming none: the CLI's line
    if cancelled_note(req):
        return {"query": args["query"], "in": args["in"], "note": cancelled_note(req), "hits": []}
    hits, mode, note = run_search(conn, req, args.get("mode"), env)
    out: dict[str, Any] = {"query": args["query"], "mode": mode, "in": args["in"]}
    if note:
        out["note"] = note
    out["hits"] = [hit_dict(h) for h in hits]
    return out


@dataclass
class SessionMatch:
    """Hits of one root session, accumulated."""

    agent: str
    root_uid: str
    scores: list[float] = field(default_factory=list)
    threads: dict[str, int] = field(default_factory=dict)  # "main" | agent id | "uid[/agent id]" → hits
    first_ts: Any = None
    last_ts: Any = None
    best: SearchHit | None = None


def group_by_root(hits: list[SearchHit]) -> list[SessionMatch]:
    """Hits grouped by (agent, root session uid), best `session_score` first (pure)."""
    groups: dict[tuple[str, str], SessionMatch] = {}
    for h in hits:
        root = h.root_session_uid or h.session_uid
        g = groups.setdefault((h.agent, root), SessionMatch(h.agent, root))
        g.scores.append(h.score)
        if h.session_uid == root:
            thread = h.agent_id or MAIN_THREAD
        else:
            thread = f"{h.session_uid}/{h.agent_id}" if h.agent_id else h.session_uid
        g.threads[thread] = g.threads.get(thread, 0) + 1
        if h.ts is not None:
            g.first_ts = h.ts if g.first_ts is None else min(g.first_ts, h.ts)
            g.last_ts = h.ts if g.last_ts is None else max(g.last_ts, h.ts)
        if g.best is None or h.score > g.best.score:
            g.best = h
    return sorted(groups.values(), key=lambda g: (-session_score(g.scores), -len(g.scores), g.root_uid))


def session_score(scores: list[float]) -> float:
    """A session's rank score from its hits' scores: Σ sᵢ / 2ⁱ over the scores best first, so the
    best hit counts fully, further strong hits add less and less, and many weak hits cannot
    outrank one strong match (the sum stays below twice the best)."""
    return sum(s / 2**i for i, s in enumerate(sorted(scores, reverse=True)))


def find_sessions_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`find_sessions` tool: ``{"sessions": [{root session, matches, threads, best hit, resume}…]}``."""
    limit = args["limit"]
    req = build_request(scope, args, min(200, limit * HITS_PER_SESSION))
    filters = sessions_request({"health": args.get("health"), "hosts": args.get("hosts")}, flags=False)
    check_hosts(conn, filters.hosts, flags=False)
    hits, mode, note = run_search(conn, req, args.get("mode"), env)
    sessions = []
    groups = group_by_root(hits)
    wanted, hosts = set(filters.health), set(filters.hosts)
    roots = {}
    for g in groups if wanted or hosts else groups[:limit]:
        try:
            roots[g.root_uid] = resolve_session(conn, g.root_uid, "")
        except SessionNotFound:
            roots[g.root_uid] = None
    ids = [r.id for r in roots.values() if r is not None]
    health = health_by_session(conn, ids)
    if wanted:  # only roots graded one of these (an ungraded or unknown root is left out)
        groups = [
            g for g in groups if roots[g.root_uid] and health.get(roots[g.root_uid].id, {}).get("grade") in wanted
        ]
    if hosts:  # only roots indexed by one of these machines (an unrecorded host is left out)
        origin = hosts_by_session(conn, ids)
        groups = [g for g in groups if roots[g.root_uid] and origin.get(roots[g.root_uid].id) in hosts]
    groups = groups[:limit]
    journal = summaries_for_sessions(conn, [r.id for r in roots.values() if r is not None])
    for g in groups:
        root = roots[g.root_uid]
        resume = resume_dict(g.agent, g.root_uid, root.cwd if root else None, root.source_path if root else None)
        sub_hits = sum(n for t, n in g.threads.items() if t != MAIN_THREAD)
        sessions.append(
            {
                "session_uid": g.root_uid,
                "agent": g.agent,
                "namespace": root.namespace if root else g.best.namespace,
                "title": (root.title if root else None) or g.best.title,
                "cwd": root.cwd if root else g.best.cwd,
                "matches": len(g.scores),
                "subagent_matches": sub_hits,
                "threads": g.threads,
                "score": round(session_score(g.scores), 4),
                "first_match_ts": g.first_ts,
                "last_match_ts": g.last_ts,
                "best_hit": hit_dict(g.best),
                "resume": resume,
                "health": health.get(root.id) if root else None,
            }
        )
        if root is not None and root.id in journal:  # the journal's summary (journal-sync)
            sessions[-1]["journal_summary"] = journal[root.id]
    # The loops (issue 12) a root session belongs to, as root or through a lane.
    roots = {}
    for entry in sessions:
        try:
            roots[entry["session_uid"]] = resolve_session(conn, entry["session_uid"], "").id
        except SessionNotFound:
            pass
    in_loops = loops_by_session(conn, list(roots.values()))
    for entry in sessions:
        if in_loops.get(roots.get(entry["session_uid"])):
            entry["loop_ids"] = in_loops[roots[entry["session_uid"]]]
    out: dict[str, Any] = {"query": args["query"], "mode": mode, "hits_considered": len(hits)}
    if note:
        out["note"] = note
    out["sessions"] = sessions
    return out


_COMMON = {
    "query": {
        "type": "string",
        "minLength": 1,
        "description": 'What to look for: words, a "quoted phrase", an identifier, a path, an error message '
        "or a plain question. Stop words are dropped; more matched (rarer) words rank higher.",
    },
    "mode": {
        "type": "string",
        "enum": ["keyword", "hybrid", "vector"],
        "description": "keyword (BM25), vector (embeddings) or hybrid (both, fused). Default: hybrid when "
        "embeddings are configured and indexed, else keyword; a hybrid search whose embedding is slow or "
        "unavailable answers keyword-only with a `note`.",
    },
    "in": {
        "type": "string",
        "enum": ["messages", "tools", "all"],
        "default": "messages",
        "description": "messages = conversation text; tools = tool-call input/output; all = both.",
    },
    "classes": {
        "type": "array",
        "items": {"type": "string", "enum": [*CLASS_GROUPS, *classes.ALL]},
        "default": ["conversational"],
        "description": "Message classes to search (messages only): groups 'conversational' (default: prompts, "
        "replies, sub-agent briefs/reports, compaction summaries), 'prompts' (what a person typed), 'all', "
        "or class names.",
    },
    "agents": {
        "type": "array",
        "items": {"type": "string", "enum": list(ACCEPTED_NAMES)},
        "description": "Only these agents.",
    },
    "since": SINCE,
    "until": UNTIL,
    "project": {"type": "string", "description": "Only sessions whose cwd is this directory or below it."},
    "session": {"type": "string", "description": "Only this session (uid, or a unique prefix of ≥ 6 characters)."},
    "exclude_agent": {
        "type": "array",
        "items": {"type": "string", "enum": list(ACCEPTED_NAMES)},
        "description": "Agents to leave out before retrieval — pass your own product name ("
        + ", ".join(dict.fromkeys([*ALIASES, *(h.name for h in HARNESSES)]))
        + ") after searching your own native memory, to get what the other agents know.",
    },
    "source_type": {
        "type": "array",
        "items": {"type": "string", "enum": ["session", "memory"]},
        "description": "Only session transcripts and/or memory files (Markdown memories indexed as one-document "
        "sessions). Default: both.",
    },
    "context_project": {
        "type": "string",
        "description": "Your current project directory: its sessions rank higher (score × 1.5); others still appear.",
    },
    "rank": {
        "type": "string",
        "enum": ["default", "blend"],
        "default": "default",
        "description": "default = relevance; blend = 0.7 × relevance (normalised over the candidates) + 0.2 × "
        "recency (linear to 0 at 365 days) + 0.1 × session depth (turns, capped at 50).",
    },
}

SEARCH = ToolSpec(
    name="search",
    title="Search agent history",
    description=(
        f"Search past coding-agent sessions ({products()}): prompts, replies, sub-agent briefs and "
        "reports, compaction summaries, and with in='tools' tool inputs/outputs and errors. Use it before "
        "re-deriving something that may have been decided or fixed before. Search your own native memory "
        "first, then call this with exclude_agent = your own product name (e.g. ['claude-code']) to learn "
        "what other agents did. Distinct turns come first. Each hit has session_uid, agent, "
        "namespace, ts, label (message class or tool name), cwd, source_path, byte_offset, snippet and a "
        "`cite` string to quote."
    ),
    properties={**_COMMON, "limit": limit_schema(10, 50, "hits")},
    required=("query",),
    handler=search_handler,
)

FIND_SESSIONS = ToolSpec(
    name="find_sessions",
    title="Find sessions by content",
    description=(
        "Which past sessions talked about something: searches like `search`, then groups hits by root "
        "session (sub-agent hits count for the session that spawned them) and ranks sessions by their "
        "best hits. Each session has matches, the threads that matched, its best hit, `health` (grade A–F "
        "with reasons) and `resume` (the root session uid and the agent's resume command)."
    ),
    properties={
        **_COMMON,
        "health": {
            "type": "array",
            "items": {"type": "string", "enum": list(GRADE_LETTERS)},
            "description": "Only root sessions with one of these health grades (A best … F worst; e.g. "
            "['D', 'F'] for sessions that went badly). Each session's `health` gives its grade, score, the "
            "reasons and the signals its harness does not record ('unknown', never graded).",
        },
        "hosts": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Only root sessions indexed by these machines (their `[host] name`, `origin_host`).",
        },
        "limit": limit_schema(10, 30, "sessions"),
    },
    required=("query",),
    handler=find_sessions_handler,
)

TOOLS = (SEARCH, FIND_SESSIONS)
