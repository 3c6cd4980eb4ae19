"""Summary search on ParadeDB ``pg_search`` 0.25 (issue 15, docs/design.md §8): a BM25 index over the
journal summaries' prose, English-stemmed, and the top-K query over it.

Used only where ``ah.meta.keyword_backend = 'bm25'``; elsewhere `search.summaries_fts` answers with
PostgreSQL full-text search. Summaries are prose written for people, so their four text fields
use ParadeDB's ``simple`` tokenizer with the English Snowball stemmer ("decisions" and
"decision" share a token) and accent folding, unlike the code-aware message text. Agent and
namespace are literals (equality filters pushed into the index scan), ``analysed_at`` a fast
field (range pushdown). The DDL and the match clauses are the ones the official
``sqlalchemy-paradedb`` package compiles (tests/test_summaries_bm25_sql.py); ParadeDB itself
cannot run in the test environment.

Stemming joins inflections only: "decided" (``decid``) and "decisions" (``decis``) are different
tokens here; the FTS fallback's prefix match of long stems has no BM25 counterpart yet.
"""

from __future__ import annotations

import dataclasses

import psycopg

from agent_history.db.bm25 import SUMMARY_INDEX, SUMMARY_TEXT_FIELDS
from agent_history.search.query import analyze
from agent_history.search.request import SearchHit, SearchRequest
from agent_history.search.summaries_fts import FILTERS_SQL, HEADLINE_OPTIONS, hit_of_row

TEXT_FIELDS: tuple[str, ...] = SUMMARY_TEXT_FIELDS
"""The summary text fields, each matched by the query (the indexed fields of `db.bm25`)."""

INDEX_NAME = SUMMARY_INDEX
"""The BM25 index over ``ah.session_summary`` (`db.bm25.SUMMARY_INDEX_DDL`, built by
`db.bm25.ensure_bm25_indexes`)."""

SQL = (
    """
WITH top AS MATERIALIZED (
    SELECT ss.id, pdb.score(ss.id) AS score
    FROM ah.session_summary AS ss
    LEFT JOIN ah.session AS s ON s.id = ss.session_id
    WHERE ("""
    + " OR ".join(f"ss.{f} ||| %(q)s" for f in TEXT_FIELDS)
    + ") AND "
    + FILTERS_SQL
    + """
    ORDER BY pdb.score(ss.id) DESC, ss.id
    LIMIT %(limit)s
)
SELECT ss.id, top.score, ss.session_uid, ss.agent_id, ss.agent, coalesce(ss.namespace, s.namespace),
       ss.analysed_at, ss.classification, ss.title, s.cwd,
       ts_headline('english', concat_ws(' · ', ss.objective, ss.outcomes, ss.narrative),
                   plainto_tsquery('english', %(q)s), %(opts)s),
       r.session_uid, NULL::int, ss.journal_conversation_id, ss.session_id IS NOT NULL, ss.project, ss.model,
       ARRAY(SELECT t.topic FROM ah.session_topic t WHERE t.summary_id = ss.id ORDER BY t.position)
FROM top
JOIN ah.session_summary AS ss ON ss.id = top.id
LEFT JOIN ah.session AS s ON s.id = ss.session_id
LEFT JOIN ah.session AS r ON r.id = s.root_session_id
ORDER BY top.score DESC, ss.id
"""
)
"""The top-K query: any analysed term in any text field (``|||``), filters as the FTS query's,
``ORDER BY pdb.score(ss.id) DESC, ss.id LIMIT n`` (ParadeDB's top-K path); the columns of
`search.summaries` rows (matched-term count unknown: NULL)."""


def search_params(req: SearchRequest) -> dict | None:
    """The parameters of :data:`SQL` for `req`, or None when the query has no searchable terms
    (stop words and punctuation only). ``q`` holds the analysed terms, never the raw query."""
    terms = analyze(req.query).term_texts()
    if not terms or req.limit <= 0:
        return None
    return {
        "q": " ".join(terms),
        "opts": HEADLINE_OPTIONS,
        "agents": list(req.agents),
        "namespaces": list(req.namespaces),
        "since": req.since,
        "until": req.until,
        "project": req.project.rstrip("/") if req.project else None,
        "session": req.session,
        "limit": req.limit,
    }


def search_summaries_bm25(conn: psycopg.Connection, req: SearchRequest) -> list[SearchHit]:
    """Top ``req.limit`` summaries by BM25, best first (SearchHits as `search.summaries` gives,
    backend ``bm25``, ``matched_terms`` None). Raises psycopg errors of the server (e.g. no
    ``pg_search``)."""
    params = search_params(req)
    if params is None:
        return []
    return [dataclasses.replace(hit_of_row(r), backend="bm25") for r in conn.execute(SQL, params)]
