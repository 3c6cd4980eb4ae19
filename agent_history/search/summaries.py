"""Search over journal session summaries (issue 15): one entry point, two backends.

`search_summaries` answers with the BM25 index over the summaries where the catalogue runs on
ParadeDB (`search.summaries_bm25`), else with PostgreSQL full-text search and English stemming
(`search.summaries_fts`, whose docstring gives the ranking). `summaries_for_sessions` gives the
newest summary of given sessions (the MCP `session` tool, `session UID`).
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.db.bm25 import is_bm25
from agent_history.search.request import SearchHit, SearchRequest
from agent_history.search.summaries_bm25 import search_summaries_bm25
from agent_history.search.summaries_fts import search_summaries_fts


def search_summaries(conn: psycopg.Connection, req: SearchRequest) -> list[SearchHit]:
    """The top ``req.limit`` summaries for ``req.query``, best first, as SearchHits of kind
    ``summary`` (``ts`` = analysed_at, ``label`` = the journal's classification or "summary",
    ``extra`` = conversation id, topics, linked, project, model). Filters: agents, namespaces,
    since/until (on analysed_at), project (cwd of the linked session), session uid or prefix.
    ``req.classes`` does not apply. Empty for a query of stop words only."""
    if req.limit <= 0:
        return []
    if is_bm25(conn):  # ParadeDB: the BM25 index over the summaries
        return search_summaries_bm25(conn, req)
    return search_summaries_fts(conn, req)


def summaries_for_sessions(conn: psycopg.Connection, session_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The newest summary of each of ``session_ids`` (ah.session.id): ``{id: {"title",
    "objective", "outcomes", "unfinished", "classification", "analysed_at", "topics"}}``;
    sessions without a summary are absent. Empty when the schema predates journal-sync."""
    if not session_ids or conn.execute("SELECT to_regclass('ah.session_summary')").fetchone()[0] is None:
        return {}
    rows = conn.execute(
        "SELECT DISTINCT ON (ss.session_id) ss.session_id, ss.title, ss.objective, ss.outcomes, ss.unfinished, "
        "ss.classification, ss.analysed_at, "
        "ARRAY(SELECT t.topic FROM ah.session_topic t WHERE t.summary_id = ss.id ORDER BY t.position) "
        "FROM ah.session_summary ss WHERE ss.session_id = ANY(%s) ORDER BY ss.session_id, ss.analysed_at DESC",
        (list(session_ids),),
    ).fetchall()
    keys = ("title", "objective", "outcomes", "unfinished", "classification", "analysed_at", "topics")
    return {r[0]: {k: v for k, v in zip(keys, r[1:], strict=True) if v not in (None, [])} for r in rows}
