"""What an agent asks first (issue 17): the recent sessions with their first and last human
prompt, and the state of the index (counts, last pass, embedding coverage, open issues by kind).

Curated-out sessions (``ah.session_exclusion``) are left out of both.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.read.requests import RecentSessionsRequest
from agent_history.session.exclusions import EXCLUDED_SESSION_IDS
from agent_history.session.filters import like_prefix

PROMPT_CHARS = 300
"""First/last prompts are cut to this many characters."""


def recent_sessions(
    conn: psycopg.Connection, n: int = 10, *, project: str | None = None, agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
) -> list[dict[str, Any]]:  # fmt: skip
    """The `n` newest main threads (by start, else end), each ``{session_uid, agent, namespace,
    title, cwd, started_at, ended_at, prompts, first_prompt, last_prompt}`` — prompts are
    ``human_prompt`` messages in file order, cut to `PROMPT_CHARS`; None when there is none.
    `project` is a cwd prefix."""
    conds = ["s.agent_id = ''", "NOT coalesce(s.is_subagent, false)", f"s.id <> ALL(ARRAY({EXCLUDED_SESSION_IDS}))"]
    params: dict[str, Any] = {"n": n, "chars": PROMPT_CHARS}
    if project:
        conds.append("(s.cwd = %(project)s OR s.cwd LIKE %(project_like)s)")
        params["project"] = project.rstrip("/") or "/"
        params["project_like"] = like_prefix(project.rstrip("/") + "/")
    if agents:
        conds.append("s.agent = ANY(%(agents)s)")
        params["agents"] = list(agents)
    if namespaces:
        conds.append("s.namespace = ANY(%(namespaces)s)")
        params["namespaces"] = list(namespaces)
    rows = conn.execute(
        f"""
        SELECT s.session_uid, s.agent, s.namespace, s.title, s.cwd, s.started_at, s.ended_at, s.prompt_count,
               (SELECT left(m.text, %(chars)s) FROM ah.message AS m WHERE m.session_id = s.id
                  AND m.message_class = 'human_prompt' ORDER BY m.source_id, m.byte_offset LIMIT 1),
               (SELECT left(m.text, %(chars)s) FROM ah.message AS m WHERE m.session_id = s.id
                  AND m.message_class = 'human_prompt' ORDER BY m.source_id DESC, m.byte_offset DESC LIMIT 1)
        FROM ah.session AS s
        WHERE {" AND ".join(conds)}
        ORDER BY coalesce(s.started_at, s.ended_at) DESC NULLS LAST, s.id DESC
        LIMIT %(n)s
        """,
        params,
    ).fetchall()
    keys = ("session_uid", "agent", "namespace", "title", "cwd", "started_at", "ended_at", "prompts",
            "first_prompt", "last_prompt")  # fmt: skip
    return [dict(zip(keys, r, strict=True)) for r in rows]


def recent_of(conn: psycopg.Connection, req: RecentSessionsRequest) -> list[dict[str, Any]]:
    """The answer to a `read.requests.RecentSessionsRequest` (`recent_sessions`)."""
    return recent_sessions(conn, req.limit, project=req.project, agents=req.agents, namespaces=req.namespaces)


def index_stats(conn: psycopg.Connection) -> dict[str, Any]:
    """``{counts: {sessions, subagent_threads, messages, tool_calls, source_files, excluded_sessions},
    sessions_by_agent, last_pass: {started_at, finished_at, status, files_scanned, files_changed} | None,
    embeddings: [{model, dimensions, chunks, embedded, coverage}], open_issues: {kind: n}}``.
    ``coverage`` is embedded chunks / chunks (None when there are no chunks)."""
    counts = conn.execute(
        """
        SELECT (SELECT count(*) FROM ah.session WHERE agent_id = '' AND NOT coalesce(is_subagent, false)),
               (SELECT count(*) FROM ah.session WHERE agent_id <> '' OR coalesce(is_subagent, false)),
               (SELECT count(*) FROM ah.message), (SELECT count(*) FROM ah.tool_call),
               (SELECT count(*) FROM ah.source_file), (SELECT count(*) FROM ah.session_exclusion)
        """
    ).fetchone()
    by_agent = dict(
        conn.execute(
            "SELECT agent, count(*) FROM ah.session WHERE agent_id = '' GROUP BY agent ORDER BY agent"
        ).fetchall()
    )
    last = conn.execute(
        "SELECT started_at, finished_at, status, files_scanned, files_changed FROM ah.index_run "
        "ORDER BY started_at DESC, id DESC LIMIT 1"
    ).fetchone()
    embeddings = [
        {"model": m, "dimensions": d, "chunks": c, "embedded": e, "coverage": round(e / c, 4) if c else None}
        for m, d, c, e in conn.execute(
            """
            SELECT em.model, em.dimensions, (SELECT count(*) FROM ah.chunk),
                   (SELECT count(*) FROM ah.chunk AS c
                    WHERE EXISTS (SELECT 1 FROM ah.embedding AS e WHERE e.model = em.model
                                  AND e.input_sha256 = c.input_sha256))
            FROM ah.embedding_model AS em ORDER BY em.model
            """
        ).fetchall()
    ]
    issues = dict(conn.execute("SELECT kind, count(*) FROM ah.parse_issue GROUP BY kind ORDER BY kind").fetchall())
    keys = ("sessions", "subagent_threads", "messages", "tool_calls", "source_files", "excluded_sessions")
    return {
        "counts": dict(zip(keys, counts, strict=True)),
        "sessions_by_agent": by_agent,
        "last_pass": dict(
            zip(("started_at", "finished_at", "status", "files_scanned", "files_changed"), last, strict=True)
        )
        if last
        else None,  # fmt: skip
        "embeddings": embeddings,
        "open_issues": issues,
    }
