"""Search over journal session summaries without ParadeDB (issue 15): full-text with English stemming.

Summaries are prose written for people, so unlike message text (code-aware tokens) they are
indexed with the ``english`` text-search configuration: "decisions" finds "decided". The
stored ``ah.session_summary.search_tsv`` (migration 0008) weighs the title most (A), then
objective and outcomes (B), then the narrative (C).

Snowball stems inflections, not derivations: "decisions" → ``decis`` but "decided" → ``decid``.
So a query stem of at least :data:`LOOSE_MIN_STEM` characters also matches, at
:data:`LOOSE_WEIGHT`, any stem sharing all but its last character (``deci:*``: decided, decision,
decides). The exact stem always ranks above its loose relatives.

Ranking: OR over the query's stems (a missing word never empties the result); each matched stem
adds ``idf × max(ts_rank(exact), LOOSE_WEIGHT × ts_rank(loose))`` — idf as in BM25,
``ln(1 + (N − df + 0.5) / (df + 0.5))`` over the summaries, so rarer words count more;
``ts_rank`` carries the field weight.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.search.request import HL_END, HL_START, SearchHit, SearchRequest
from agent_history.session.exclusions import key_not_excluded, not_excluded

#: Stems this long or longer also match their derivational family by prefix (issue 15: a summary
#: must be found by "decisions" when it says "decided").
LOOSE_MIN_STEM = 5
#: What a loose (prefix) match is worth against an exact stem match.
LOOSE_WEIGHT = 0.5

#: ts_headline options: matched words marked like every other snippet (request.HL_START/END).
HEADLINE_OPTIONS = f"StartSel={HL_START}, StopSel={HL_END}, MaxWords=45, MinWords=20, MaxFragments=2"

#: The filters of a summary search over ``ah.session_summary ss`` LEFT JOIN ``ah.session s`` (the
#: FTS query here and the BM25 one of search.summaries_bm25): agents, namespaces, since/until on
#: analysed_at, project (cwd of the linked session), session uid or prefix.
FILTERS_SQL = (
    """(cardinality(%(agents)s::text[]) = 0 OR ss.agent = ANY(%(agents)s))
  AND (cardinality(%(namespaces)s::text[]) = 0 OR coalesce(ss.namespace, s.namespace) = ANY(%(namespaces)s))
  AND (%(since)s::timestamptz IS NULL OR ss.analysed_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR ss.analysed_at < %(until)s)
  AND (%(project)s::text IS NULL OR s.cwd = %(project)s OR starts_with(s.cwd, %(project)s || '/'))
  AND (%(session)s::text IS NULL OR ss.session_uid = %(session)s
       OR (length(%(session)s) >= 8 AND starts_with(ss.session_uid, %(session)s)))
  AND """
    + key_not_excluded("ss")
    + """
  AND """
    + not_excluded("s")
)  # curated out: by natural key, and through the linked session's root

_SQL = """
WITH terms AS (
    SELECT lexeme, plainto_tsquery('simple', lexeme) AS exact,
           CASE WHEN length(lexeme) >= %(loose_min)s
                THEN to_tsquery('simple', quote_literal(left(lexeme, -1)) || ':*') END AS loose
    FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(q)s))) l
), stats AS (
    SELECT t.lexeme, t.exact, t.loose,
           ln(1 + ((SELECT count(*) FROM ah.session_summary) - count(ss.id) + 0.5) / (count(ss.id) + 0.5)) AS idf
    FROM terms t LEFT JOIN ah.session_summary ss
      ON ss.search_tsv @@ t.exact OR (t.loose IS NOT NULL AND ss.search_tsv @@ t.loose)
    GROUP BY t.lexeme, t.exact, t.loose
), anyq AS (
    SELECT string_agg(coalesce(exact || loose, exact)::text, ' | ')::tsquery AS q FROM stats
), scored AS (
    SELECT ss.id,
           sum(st.idf * greatest(
               CASE WHEN ss.search_tsv @@ st.exact THEN ts_rank(ss.search_tsv, st.exact) ELSE 0 END,
               CASE WHEN st.loose IS NOT NULL AND ss.search_tsv @@ st.loose
                    THEN %(loose_w)s * ts_rank(ss.search_tsv, st.loose) ELSE 0 END)) AS score,
           count(*) AS matched
    FROM ah.session_summary ss JOIN stats st
      ON ss.search_tsv @@ st.exact OR (st.loose IS NOT NULL AND ss.search_tsv @@ st.loose)
    GROUP BY ss.id
)
SELECT ss.id, sc.score, ss.session_uid, ss.agent_id, ss.agent, coalesce(ss.namespace, s.namespace),
       ss.analysed_at, ss.classification, ss.title, s.cwd,
       ts_headline('english', concat_ws(' · ', ss.objective, ss.outcomes, ss.narrative), anyq.q, %(opts)s),
       r.session_uid, sc.matched, ss.journal_conversation_id, ss.session_id IS NOT NULL, ss.project, ss.model,
       ARRAY(SELECT t.topic FROM ah.session_topic t WHERE t.summary_id = ss.id ORDER BY t.position)
FROM scored sc
JOIN ah.session_summary ss ON ss.id = sc.id
CROSS JOIN anyq
LEFT JOIN ah.session s ON s.id = ss.session_id
LEFT JOIN ah.session r ON r.id = s.root_session_id
WHERE {filters}
ORDER BY sc.score DESC, ss.id DESC
LIMIT %(limit)s
""".replace("{filters}", FILTERS_SQL)


def search_summaries_fts(conn: psycopg.Connection, req: SearchRequest) -> list[SearchHit]:
    """The top ``req.limit`` summaries for ``req.query`` by the ranking above, best first
    (`search.summaries.search_summaries` gives the contract). Empty for a query of stop words only."""
    if req.limit <= 0:
        return []
    project = req.project.rstrip("/") if req.project else None
    rows = conn.execute(
        _SQL,
        {
            "q": req.query,
            "opts": HEADLINE_OPTIONS,
            "loose_min": LOOSE_MIN_STEM,
            "loose_w": LOOSE_WEIGHT,
            "agents": list(req.agents),
            "namespaces": list(req.namespaces),
            "since": req.since,
            "until": req.until,
            "project": project,
            "session": req.session,
            "limit": req.limit,
        },
    ).fetchall()
    return [_hit(r) for r in rows]


def _hit(r: tuple[Any, ...]) -> SearchHit:
    (
        id_,
        score,
        uid,
        agent_id,
        agent,
        ns,
        ts,
        cls,
        title,
        cwd,
        snippet,
        root,
        matched,
        conv,
        linked,
        project,
        model,
        topics,
    ) = r
    return SearchHit(
        kind="summary",
        id=id_,
        score=float(score),
        session_uid=uid,
        agent_id=agent_id,
        agent=agent,
        namespace=ns,
        ts=ts,
        label=cls or "summary",
        title=title,
        cwd=cwd,
        source_path=None,
        byte_offset=None,
        line_number=None,
        snippet=snippet or "",
        root_session_uid=root,
        matched_terms=matched,
        backend="fts",
        extra={
            "journal_conversation_id": conv,
            "topics": list(topics),
            "linked": linked,
            "project": project,
            "model": model,
        },
    )


#: One row of the summary query (FTS, or BM25 in search.summaries_bm25) as a SearchHit (backend ``fts``).
hit_of_row = _hit
