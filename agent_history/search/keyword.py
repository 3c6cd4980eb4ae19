"""Keyword search: one interface over two backends, chosen by feature detection (docs/design.md §8).

``ah.meta.keyword_backend`` is ``bm25`` where ParadeDB ``pg_search`` was installable at
migration time, else ``fts``. `search()` analyses the query once (`search.query`), runs the
backend per corpus the scope asks for (messages, tool calls or both) and merges by score.

On ``bm25`` the FTS columns still exist (migration 0002 creates them everywhere), so a BM25
query that fails — e.g. its indexes are not built yet (`bm25.ensure_bm25_indexes` runs after
the first bulk load) — falls back to FTS for that search and says so in the hits' ``backend``.
"""

from __future__ import annotations

import psycopg

from agent_history.search import bm25, fts
from agent_history.search.fts_corpus import tie_key
from agent_history.search.query import analyze
from agent_history.search.request import Scope, SearchHit, SearchRequest

CORPORA = {Scope.MESSAGES: ("message",), Scope.TOOLS: ("tool_call",), Scope.ALL: ("message", "tool_call")}


def keyword_backend(conn: psycopg.Connection) -> str:
    """``bm25`` or ``fts`` as recorded in ``ah.meta`` (``fts`` when unset)."""
    row = conn.execute("SELECT value FROM ah.meta WHERE key = 'keyword_backend'").fetchone()
    return row[0] if row and row[0] == "bm25" else "fts"


def search(conn: psycopg.Connection, req: SearchRequest) -> list[SearchHit]:
    """The top `req.limit` hits, best first (score, then newest id). Empty for a query with
    nothing searchable (only stop words or punctuation). Raises psycopg errors unchanged."""
    analysis = analyze(req.query)
    if analysis.is_empty or req.limit <= 0:
        return []
    backend = keyword_backend(conn)
    hits: list[SearchHit] = []
    for corpus in CORPORA[Scope(req.scope)]:
        if backend == "bm25":
            try:
                with conn.transaction():
                    hits.extend(bm25.search_corpus(conn, req, analysis, corpus))
                continue
            except psycopg.Error:
                pass  # BM25 index missing or unusable: answer from FTS
        hits.extend(fts.search_corpus(conn, req, analysis, corpus))
    hits.sort(key=lambda h: (-tie_key(h.score), h.kind, -h.id))
    return hits[: req.limit]
