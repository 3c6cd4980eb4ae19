"""Keyword search on ParadeDB ``pg_search`` 0.25: the queries over the BM25 indexes (docs/design.md §8).

Runs only where ``ah.meta.keyword_backend = 'bm25'`` (migration 0001 sets it when ``pg_search``
is installable). The SQL is generated here and unit-tested by parsing it (pglast); ParadeDB
itself cannot run in the test environment. The indexes themselves (DDL, `is_bm25`,
`ensure_bm25_indexes`) are `agent_history.db.bm25`'s. Facts relied on
(ParadeDB docs, 0.25):

- ``col ||| 'text'`` matches any token of the (field-tokenized) text, ``&&&`` all of them,
  ``###`` the phrase; ``pdb.score(key)`` is the BM25 score; ``pdb.snippet(col, start_tag =>,
  end_tag =>, max_num_chars =>)`` highlights; ``ORDER BY pdb.score(id) DESC, id LIMIT n`` takes
  the top-K path;
- raw user text never reaches ``@@@`` (its query syntax would need escaping): the operators
  above tokenize their right-hand side as plain text, and they receive the analysed terms
  (stop words and punctuation removed), not the raw query.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from agent_history.analysis.scripts import cjk_bigrams, is_symbol
from agent_history.search.filters import build_filter
from agent_history.search.query import QueryAnalysis
from agent_history.search.request import HL_END, HL_START, SearchHit, SearchRequest

SNIPPET_CHARS = 240

MAX_SCRIPT_CLAUSES = 16
"""CJK bigram phrases plus symbol terms queried on the ``unicode_words`` alias, at most."""


def script_clauses(analysis: QueryAnalysis) -> tuple[list[str], str]:
    """What the query asks of the ``unicode_words`` alias (pure): the CJK bigrams of its terms,
    each to be matched as a two-token phrase (CJK characters are single tokens there, so a
    phrase of two adjacent ones is a bigram — the FTS fallback's matching), and its symbol terms
    as one space-separated ``|||`` text ('' when none)."""
    bigrams: list[str] = []
    symbols: list[str] = []
    for term in analysis.terms:
        bigrams.extend(cjk_bigrams(term.text))
        symbols.extend(c for c in term.text if is_symbol(c))
    bigrams = list(dict.fromkeys(bigrams))[:MAX_SCRIPT_CLAUSES]
    symbols = list(dict.fromkeys(symbols))[: max(0, MAX_SCRIPT_CLAUSES - len(bigrams))]
    return bigrams, " ".join(symbols)


_CORPUS = {
    "message": {
        "table": "message",
        "match": "d.text ||| %(q)s",
        "phrase": "d.text ### %(p{i})s",
        "bigram": "d.text::pdb.alias('text_words') ### %(b{i})s",
        "symbols": "d.text::pdb.alias('text_words') ||| %(sym)s",
        "snippet": "pdb.snippet(d.text, start_tag => %(hl_start)s, end_tag => %(hl_end)s, max_num_chars => %(chars)s)",
        "namespace": "d.namespace",
        "ts": "d.ts",
        "label": "d.message_class",
        "outcome": "NULL::text",
    },
    "tool_call": {
        "table": "tool_call",
        "match": "(d.input ||| %(q)s OR d.output ||| %(q)s)",
        "phrase": "(d.input ### %(p{i})s OR d.output ### %(p{i})s)",
        "bigram": "(d.input::pdb.alias('input_words') ### %(b{i})s OR d.output::pdb.alias('output_words') ### %(b{i})s)",
        "symbols": "(d.input::pdb.alias('input_words') ||| %(sym)s OR d.output::pdb.alias('output_words') ||| %(sym)s)",
        "snippet": (
            "coalesce(nullif(pdb.snippet(d.output, start_tag => %(hl_start)s, end_tag => %(hl_end)s, "
            "max_num_chars => %(chars)s), ''), nullif(pdb.snippet(d.input, start_tag => %(hl_start)s, "
            "end_tag => %(hl_end)s, max_num_chars => %(chars)s), ''), left(d.output, %(chars)s))"
        ),
        "namespace": "s.namespace",
        "ts": "d.started_at",
        "label": "d.name",
        "outcome": "coalesce(d.error_class, d.outcome)",
    },
}


def search_sql(req: SearchRequest, analysis: QueryAnalysis, corpus: str) -> tuple[sql.Composed, dict]:
    """The BM25 query for one corpus and its parameters.

    Shape: a MATERIALIZED top-K CTE (match operators + filters, ``ORDER BY pdb.score(d.id)
    DESC, d.id LIMIT n``, snippet computed there where ParadeDB can highlight) joined to the
    session, root session and source file for provenance. Any term matches (``|||``); each
    quoted phrase is an extra OR-ed ``###`` clause whose score adds to the documents matching it;
    so is each CJK bigram and the symbol terms, on the ``unicode_words`` alias (`script_clauses`).
    """
    c = _CORPUS[corpus]
    flt = build_filter(req, corpus)
    params: dict = dict(flt.params)
    params.update(
        q=" ".join(analysis.term_texts()), limit=req.limit, hl_start=HL_START, hl_end=HL_END, chars=SNIPPET_CHARS
    )
    clauses = [sql.SQL(c["match"])]
    for i, phrase in enumerate(analysis.phrases):
        params[f"p{i}"] = phrase
        clauses.append(sql.SQL(c["phrase"].format(i=i)))
    bigrams, symbols = script_clauses(analysis)
    for i, bigram in enumerate(bigrams):
        params[f"b{i}"] = bigram
        clauses.append(sql.SQL(c["bigram"].format(i=i)))
    if symbols:
        params["sym"] = symbols
        clauses.append(sql.SQL(c["symbols"]))
    match = sql.SQL("({})").format(sql.SQL(" OR ").join(clauses)) if len(clauses) > 1 else clauses[0]
    stmt = sql.SQL(
        """
        WITH top AS MATERIALIZED (
            SELECT d.id, pdb.score(d.id) AS score, {snippet} AS snippet
            FROM ah.{table} AS d
            WHERE {match} AND {filters}
            ORDER BY pdb.score(d.id) DESC, d.id
            LIMIT %(limit)s
        )
        SELECT d.id, top.score, s.session_uid, s.agent_id, d.agent, {namespace}, {ts}, {label},
               coalesce(s.title, r.title), s.cwd, f.path, d.byte_offset, d.line_number,
               top.snippet, r.session_uid, {outcome}
        FROM top
        JOIN ah.{table} AS d ON d.id = top.id
        JOIN ah.session AS s ON s.id = d.session_id
        LEFT JOIN ah.session AS r ON r.id = s.root_session_id
        LEFT JOIN ah.source_file AS f ON f.id = d.source_id
        ORDER BY top.score DESC, d.id
        """
    ).format(
        snippet=sql.SQL(c["snippet"]),
        table=sql.Identifier(c["table"]),
        match=match,
        filters=flt.sql,
        namespace=sql.SQL(c["namespace"]),
        ts=sql.SQL(c["ts"]),
        label=sql.SQL(c["label"]),
        outcome=sql.SQL(c["outcome"]),
    )
    return stmt, params


def search_corpus(
    conn: psycopg.Connection, req: SearchRequest, analysis: QueryAnalysis, corpus: str
) -> list[SearchHit]:
    """Top `req.limit` BM25 hits of one corpus ('message' | 'tool_call'), best first."""
    if not analysis.terms:
        return []
    stmt, params = search_sql(req, analysis, corpus)
    return [
        SearchHit(
            kind=corpus,
            id=r[0],
            score=float(r[1] or 0.0),
            session_uid=r[2],
            agent_id=r[3],
            agent=r[4],
            namespace=r[5],
            ts=r[6],
            label=r[7],
            title=r[8],
            cwd=r[9],
            source_path=r[10],
            byte_offset=r[11],
            line_number=r[12],
            snippet=r[13] or "",
            root_session_uid=r[14],
            outcome=r[15],
            backend="bm25",
        )
        for r in conn.execute(stmt, params)
    ]
