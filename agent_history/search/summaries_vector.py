"""Vector search over journal session summaries (issue 15): nearest summary chunks to a query vector.

The twin of `search.vector` for ``ah.summary_chunk`` (migration ``0013_summary_chunks``), with
one deliberate difference: an **exact** scan. Summaries are few (one per journal conversation)
while the model's HNSW index holds every message chunk too, so an index scan would walk message
neighbours first and could give up (pgvector's ``hnsw.max_scan_tuples``) before reaching a
summary. The distance is therefore written as ``e.vector <=> q::vector`` — not the index's
``vector::vector(N)`` expression — so the planner computes it for the summary chunks only,
joined summary chunk → cache ``(model, input_sha256)`` → summary → its session (LEFT: a summary
may arrive before its session), under the filters of the keyword summary search
(`search.summaries_fts.FILTERS_SQL`). Chunks collapse to their summary (best
chunk wins); the snippet is the start of the best chunk's span of the summary text
(`embed.store.SUMMARY_TEXT_SQL`); the score is cosine similarity. Hits have the shape of
`search.summaries.search_summaries` hits (kind ``summary``), backend ``vector``.
"""

from __future__ import annotations

import dataclasses

import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.embed.store import SUMMARY_TEXT_SQL, vector_literal
from agent_history.search.hybrid import SearchResult, _run_search
from agent_history.search.request import SearchHit, SearchRequest
from agent_history.search.summaries import search_summaries
from agent_history.search.summaries_fts import FILTERS_SQL, hit_of_row

SNIPPET_CHARS = 240
OVERFETCH = 4
"""Chunks fetched per wanted summary (several chunks of one summary collapse into one hit)."""

_SQL = """
WITH nn AS MATERIALIZED (
    SELECT c.summary_id, c.char_start, c.char_end, e.vector <=> %(q)s::vector AS distance
    FROM ah.summary_chunk AS c
    JOIN ah.embedding AS e ON e.model = %(model)s AND e.input_sha256 = c.input_sha256
    JOIN ah.session_summary AS ss ON ss.id = c.summary_id
    LEFT JOIN ah.session AS s ON s.id = ss.session_id
    WHERE vector_dims(e.vector) = %(dims)s AND {filters}
    ORDER BY distance
    LIMIT %(k)s
), best AS (
    SELECT DISTINCT ON (summary_id) * FROM nn ORDER BY summary_id, distance
)
SELECT ss.id, 1 - b.distance, ss.session_uid, ss.agent_id, ss.agent, coalesce(ss.namespace, s.namespace),
       ss.analysed_at, ss.classification, ss.title, s.cwd,
       left(substr({text}, b.char_start + 1, b.char_end - b.char_start), {snippet}),
       r.session_uid, NULL::int, ss.journal_conversation_id, ss.session_id IS NOT NULL, ss.project, ss.model,
       ARRAY(SELECT t.topic FROM ah.session_topic t WHERE t.summary_id = ss.id ORDER BY t.position)
FROM best AS b
JOIN ah.session_summary AS ss ON ss.id = b.summary_id
LEFT JOIN ah.session AS s ON s.id = ss.session_id
LEFT JOIN ah.session AS r ON r.id = s.root_session_id
ORDER BY b.distance, ss.id
LIMIT %(limit)s
"""


def search(
    conn: psycopg.Connection, req: SearchRequest, model: str, dims: int, query_vector: list[float]
) -> list[SearchHit]:
    """Top `req.limit` summaries nearest `query_vector` (a `dims`-long list of floats) for the
    model key `model`, best first, score = cosine similarity. Filters as `search_summaries`
    (agents, namespaces, since/until on analysed_at, project, session). Raises psycopg errors."""
    if req.limit <= 0:
        return []
    query = _SQL.replace("{filters}", FILTERS_SQL).replace("{text}", SUMMARY_TEXT_SQL)
    query = query.replace("{snippet}", str(SNIPPET_CHARS))
    k = max(req.limit * OVERFETCH, 40)
    params = {
        "q": vector_literal(query_vector),
        "model": model,
        "dims": dims,
        "k": k,
        "limit": req.limit,
        "agents": list(req.agents),
        "namespaces": list(req.namespaces),
        "since": req.since,
        "until": req.until,
        "project": req.project.rstrip("/") if req.project else None,
        "session": req.session,
    }
    rows = conn.execute(query, params).fetchall()
    return [
        dataclasses.replace(hit_of_row(r), snippet=(r[10] or "").strip(), backend="vector", matched_terms=None)
        for r in rows
    ]


def run_summary_search(
    conn: psycopg.Connection, req: SearchRequest, mode: str | None, settings: EmbeddingSettings | None
) -> SearchResult:
    """Summary search in `mode` ('keyword' | 'vector' | 'hybrid'; None → `hybrid.default_mode`)
    for the CLI and MCP: keyword = `search_summaries` (FTS, or BM25 on ParadeDB), vector = `search`
    above, hybrid = both fused by RRF exactly as message search fuses (`search.hybrid`).
    `settings` is the `EmbeddingSettings` or None (embeddings off). Returns a
    `hybrid.SearchResult`; raises `hybrid.VectorUnavailable` for a vector search that cannot run
    (hybrid falls back to keyword results with a note)."""
    return _run_search(conn, req, mode, settings, keyword_search=search_summaries, vector_search=search)
