"""Keyword search on plain PostgreSQL: GIN candidates, BM25 on the candidates only (docs/design.md §8).

The ranking lives in ``sql/40_search.sql`` (Okapi BM25 with IDF from ``ah.search_term`` and
length normalisation; Robertson & Zaragoza 2009); this backend chooses which documents to score
and reads the winners. Per corpus (``message`` | ``tool_call``), `search_corpus`:

1. The corpus' size, mean length and newest id (one small statement), and
   ``ah.search_lexemes``: the analysed terms as lexemes with df/idf (`search.fts_corpus`).
   Lexemes absent from the corpus (df = 0) are dropped, so a missing word never empties the
   result.
2. Candidate statements, each a GIN scan (or a walk of the newest ids) that scores what it
   fetches: every document of the rare lexemes, then coordination tiers of the common ones
   (`search.fts_candidates`, whose docstring gives the rules; the tsquery texts and their
   term-id forms are `search.tsquery`'s). Quoted phrases are not a tier of their own (GIN cannot
   check positions, so a phrase scan rechecks every document holding all its words): their
   words are terms, and the phrase bonus applies to whatever the tiers fetch
   (`score_candidates`; the bonus rules and the deferred check of a vector without positions:
   `search.fts_phrase`).
3. The top `limit` by score (then newest: `fts_corpus.tie_key`) are read with provenance and a
   ``ts_headline`` snippet around the rarest term (`SNIPPET_WIDTH`).
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from agent_history.analysis.scripts import has_script
from agent_history.search.filters import build_filter
from agent_history.search.fts_candidates import MAX_TIER_TERMS, Scorer, bitmap_scans_only, score_tiers, split_rare
from agent_history.search.fts_corpus import CORPUS_COLUMNS, CorpusStats, Lexeme, lexemes_for, query_lexemes, tie_key
from agent_history.search.fts_phrase import QUOTED_PHRASE_FLOOR, bonus_phrases, phrase_terms_held, resolve_phrase
from agent_history.search.query import QueryAnalysis, TermKind
from agent_history.search.request import SearchHit, SearchRequest, mark_terms

SNIPPET_WIDTH = 1200
"""Characters of a document handed to ts_headline (a window around the rarest term)."""


def _needles(analysis: QueryAnalysis, lexemes: list[Lexeme]) -> list[str]:
    """Strings to locate the snippet window: identifier-shaped terms and terms with CJK or
    symbol characters as typed (their lexemes — bigrams, parts — are not what the text shows),
    then lexemes from the rarest (highest idf) down."""
    first = [t.text for t in analysis.terms if t.kind is not TermKind.WORD or has_script(t.text)]
    rest = [x.lexeme for x in sorted(lexemes, key=lambda x: -x.idf)]
    return list(dict.fromkeys(first + rest))


def score_candidates(
    conn: psycopg.Connection,
    req: SearchRequest,
    analysis: QueryAnalysis,
    corpus: str,
    lexemes: list[Lexeme],
    stats: CorpusStats,
    *,
    decide_top: int | None = None,
) -> dict[int, tuple[float, int]]:
    """Candidate id → (BM25 score + phrase bonus, matched lexemes): the candidates of step 2 of the module docstring. In a corpus
    whose vectors hold no positions the implicit phrase bonus is decided only for the documents
    that could be among the first `decide_top` (default ``req.limit``; `resolve_phrase`)."""
    flt = build_filter(req, corpus, broad_class_index=False)
    bonus_parts: list[sql.Composable] = []
    bonus_params: dict = {}
    deferred: tuple[str, float] | None = None
    maybe: sql.Composable = sql.SQL("false")
    for i, (phrase, factor) in enumerate(bonus_phrases(analysis)):
        plex = query_lexemes(conn, corpus, [phrase], [1.0])
        value = factor * sum(x.idf for x in plex if x.df > 0)
        if value > 0 and analysis.phrases:
            value += QUOTED_PHRASE_FLOOR
        if value > 0:
            bonus_params[f"p{i}"], bonus_params[f"b{i}"] = phrase, value
            match = sql.SQL("m.tsv @@ phraseto_tsquery('ah.search', {p})").format(p=sql.Placeholder(f"p{i}"))
            if not CORPUS_COLUMNS[corpus]["positions"] and not analysis.phrases:
                # A term-frequency vector cannot check a phrase: the documents holding every word
                # of it may earn the bonus, decided later for those that could reach the top
                # (`resolve_phrase`).
                deferred = (phrase, value)
                maybe = phrase_terms_held(conn, corpus, phrase, bonus_params, f"pt{i}")
                continue
            if analysis.phrases:
                # Positions in the code-aware vector include the identifier parts appended after
                # the text, so a phrase query can match across them: a quoted phrase must also
                # occur in the raw text (case-insensitive), checked on candidates only.
                bonus_params[f"r{i}"] = " ".join(phrase.lower().split())
                doc = sql.SQL(CORPUS_COLUMNS[corpus]["doc"].replace("d.", "x."))
                # (PostgreSQL also numbers a hyphenated word's parts after the word itself, so
                # "the sidechain-related" fails phraseto_tsquery('the sidechain'): the raw text
                # decides for quoted phrases.)
                match = sql.SQL(
                    "EXISTS (SELECT 1 FROM ah.{t} AS x WHERE x.id = m.id AND strpos(lower({doc}), {r}) > 0)"
                ).format(t=sql.Identifier(CORPUS_COLUMNS[corpus]["table"]), doc=doc, r=sql.Placeholder(f"r{i}"))
            bonus_parts.append(sql.SQL("CASE WHEN {m} THEN {b} ELSE 0 END").format(m=match, b=sql.Placeholder(f"b{i}")))
    bonus = sql.SQL(" + ").join(bonus_parts) if bonus_parts else sql.SQL("0")
    _, common = split_rare(lexemes)
    scorer = Scorer(
        conn, corpus, lexemes, stats, flt.sql, flt.params, bonus, bonus_params, maybe, common[:MAX_TIER_TERMS]
    )
    with bitmap_scans_only(conn):
        scored = score_tiers(conn, req, analysis, lexemes, stats, scorer)
    if deferred is not None and scorer.maybe:
        resolve_phrase(conn, corpus, scored, scorer.maybe, deferred, decide_top or req.limit)
    return scored


def search_corpus(
    conn: psycopg.Connection, req: SearchRequest, analysis: QueryAnalysis, corpus: str
) -> list[SearchHit]:
    """Top `req.limit` hits of one corpus ('message' | 'tool_call'), best first."""
    lexemes, stats = lexemes_for(conn, corpus, analysis.term_texts(), analysis.term_weights())
    present = [x for x in lexemes if x.df > 0]
    if not present:
        return []
    scored = score_candidates(conn, req, analysis, corpus, present, stats)
    top = sorted(scored.items(), key=lambda kv: (-tie_key(kv[1][0]), -kv[0]))[: req.limit]
    if not top:
        return []
    t = CORPUS_COLUMNS[corpus]
    needles = _needles(analysis, present)
    stmt = sql.SQL(
        """
        SELECT d.id, s.session_uid, s.agent_id, d.agent, {namespace}, {ts}, {label},
               coalesce(s.title, r.title), s.cwd, f.path, d.byte_offset, d.line_number,
               ah.search_snippet({doc}, %(needles)s::text[], ah.tsquery_any(%(lx)s::text[]), {width}),
               r.session_uid, {outcome}
        FROM unnest(%(ids)s::bigint[]) WITH ORDINALITY AS top(id, ord)
        JOIN ah.{table} AS d ON d.id = top.id
        JOIN ah.session AS s ON s.id = d.session_id
        LEFT JOIN ah.session AS r ON r.id = s.root_session_id
        LEFT JOIN ah.source_file AS f ON f.id = d.source_id
        ORDER BY top.ord
        """
    ).format(
        table=sql.Identifier(t["table"]),
        namespace=sql.SQL(t["namespace"]),
        ts=sql.SQL(t["ts"]),
        label=sql.SQL(t["label"]),
        doc=sql.SQL(t["doc"]),
        outcome=sql.SQL(t["outcome"]),
        width=sql.Literal(SNIPPET_WIDTH),
    )
    rows = conn.execute(stmt, {"ids": [i for i, _ in top], "needles": needles, "lx": [x.lexeme for x in present]})
    hits = []
    for r, (_, (score, matched)) in zip(rows, top, strict=True):
        hits.append(
            SearchHit(
                kind=corpus,
                id=r[0],
                score=score,
                session_uid=r[1],
                agent_id=r[2],
                agent=r[3],
                namespace=r[4],
                ts=r[5],
                label=r[6],
                title=r[7],
                cwd=r[8],
                source_path=r[9],
                byte_offset=r[10],
                line_number=r[11],
                snippet=mark_terms(r[12] or "", needles),
                root_session_uid=r[13],
                outcome=r[14],
                matched_terms=matched,
                backend="fts",
            )
        )
    return hits
