"""Ranking after retrieval: context-project boost, ``blend`` and distinct-turn diversification
over a candidate set (issue 17). The math is `search.rank` (pure); this module reads what it
needs for the hits (their turn, their session's prompt count) in two queries.

Filters (agents, excluded agents, source type, curated-out sessions) are never applied here:
they are part of every backend's SQL (`search.filters.build_filter`), before retrieval.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import psycopg

from agent_history.search import rank
from agent_history.search.request import SearchHit, SearchRequest

CANDIDATE_EXTRA = 30
CANDIDATE_WIDE = 150
"""A search for `limit` hits retrieves max(limit + 30, min(3 × limit, 150)) candidates (at most
`request.MAX_LIMIT`) before re-ranking, so diversification and the blend have alternatives to
promote: 60 for the default 20, 31 for 1, 230 for 200 (the extra work stays bounded)."""


def candidate_limit(limit: int, max_limit: int) -> int:
    """How many hits to retrieve for a final list of `limit` (see `CANDIDATE_EXTRA`)."""
    return min(max_limit, max(limit + CANDIDATE_EXTRA, min(3 * limit, CANDIDATE_WIDE)))


def _turn_keys(conn: psycopg.Connection, hits: list[SearchHit]) -> dict[tuple[str, int], tuple]:
    out: dict[tuple[str, int], tuple] = {}
    for kind, table in (("message", "ah.message"), ("tool_call", "ah.tool_call")):
        ids = [h.id for h in hits if h.kind == kind]
        if not ids:
            continue
        for doc_id, agent, turn_uid in conn.execute(
            f"SELECT id, agent, turn_uid FROM {table} WHERE id = ANY(%s)", (ids,)
        ).fetchall():
            out[(kind, doc_id)] = ("turn", agent, turn_uid) if turn_uid else ("doc", kind, doc_id)
    return out


def session_turns(conn: psycopg.Connection, hits: list[SearchHit]) -> dict[tuple[str, str, str], int | None]:
    """(agent, session uid, agent id) → the thread's turn count: its human prompts
    (``ah.session.prompt_count``: human_prompt + queued_prompt messages) — one turn per prompt,
    whatever a format calls a turn (pi records one per model call); None when not rolled up."""
    keys = {(h.agent, h.session_uid, h.agent_id or "") for h in hits}
    if not keys:
        return {}
    agents, uids, aids = (list(x) for x in zip(*keys, strict=True))
    rows = conn.execute(
        """
        SELECT s.agent, s.session_uid, s.agent_id, s.prompt_count
        FROM ah.session AS s
        JOIN unnest(%s::text[], %s::text[], %s::text[]) AS k(agent, uid, aid)
          ON s.agent = k.agent AND s.session_uid = k.uid AND s.agent_id = k.aid
        """,
        (agents, uids, aids),
    ).fetchall()
    return {(a, u, i): prompts for a, u, i, prompts in rows}


def rerank(conn: psycopg.Connection, req: SearchRequest, hits: list[SearchHit]) -> list[SearchHit]:
    """The top `req.limit` of `hits` (a candidate set, best first): boosted toward
    `req.context_project`, re-scored by the blend when ``req.rank == 'blend'`` (``score`` becomes
    the blend score, ``extra`` keeps ``relevance``/``recency``/``depth``), then diversified so
    distinct turns come before further fragments of the same turn."""
    if not hits:
        return hits
    if req.context_project:
        boosted = rank.boost_project(hits, lambda h: h.score, lambda h: h.cwd, req.context_project)
        hits = [
            replace(h, score=s, extra={**h.extra, "context_project": True}) if s != h.score else h for h, s in boosted
        ]
    if req.rank == "blend":
        now = req.now or datetime.now(UTC)
        turns = session_turns(conn, hits)
        rel = dict(zip((id(h) for h in hits), rank.normalise([h.score for h in hits]), strict=True))

        def turns_of(h: SearchHit) -> int | None:
            return turns.get((h.agent, h.session_uid, h.agent_id or ""))

        blended = rank.blend(hits, lambda h: h.score, lambda h: h.ts, turns_of, now)
        hits = [
            replace(
                h,
                score=s,
                extra={
                    **h.extra,
                    "relevance": round(rel[id(h)], 4),
                    "recency": round(rank.recency(h.ts, now), 4),
                    "depth": round(rank.depth(turns_of(h)), 4),
                },
            )
            for h, s in blended
        ]
    keys = _turn_keys(conn, hits)
    hits = rank.diversify(hits, lambda h: keys.get((h.kind, h.id), ("doc", h.kind, h.id)))
    return hits[: req.limit]
