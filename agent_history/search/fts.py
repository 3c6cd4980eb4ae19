"""Keyword search on plain PostgreSQL: GIN candidates, BM25 on the candidates only (DESIGN §8).

The ranking functions live in ``sql/40_search.sql`` (BM25 with IDF from ``ah.search_term`` and
length normalisation, Robertson & Zaragoza 2009); this module picks the candidates and reads the
hits. Per corpus (``message`` | ``tool_call``) a search is a few statements:

1. ``ah.search_lexemes`` turns the analysed terms into lexemes with df/idf; lexemes absent from
   the corpus (df = 0) are dropped, so a missing word never empties the result.
2. Candidates, through the GIN index, filters applied in the same scan:
   a. every document containing a *rare* lexeme (df ≤ `RARE_DF`): these carry the high-idf
      matches and are few by definition;
   b. for quoted phrases, the newest `BUDGET` documents containing the phrase;
   c. *coordination tiers* over the (≤ `MAX_TIER_TERMS` rarest) remaining common lexemes: the
      newest documents containing all k of them for some k-subset, for k = n, n−1, …, 2, each
      tier capped by what is left of `BUDGET`, stopping once the budget is full;
   d. only if fewer than `limit` candidates remain: the newest `BUDGET` documents containing
      any common lexeme (k = 1; e.g. a one-word query of a very common word).
   A document that contains only common lexemes and is older than the newest `BUDGET` matches
   of its tier is not scored: for very common terms recency is the prior. Everything a query
   could rank by IDF (rare terms) is always scored.
3. BM25 (``ah.bm25_score``) plus a phrase bonus (Σ idf of the phrase's lexemes, i.e. its terms
   count double when they occur as the phrase; half that for an unquoted multi-term query that
   is not a question and occurs verbatim, e.g. pasted error text) on the candidates; the top `limit` are read
   with provenance and a ``ts_headline`` snippet over a window around the rarest term.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import psycopg
from psycopg import sql

from agent_history.search.filters import build_filter
from agent_history.search.query import QueryAnalysis, TermKind
from agent_history.search.request import SearchHit, SearchRequest, mark_terms

RARE_DF = 2_000
"""A lexeme in at most this many documents contributes all of its postings as candidates."""
BUDGET = 3_000
"""At most this many candidates from common lexemes (phrase + tiers) are scored."""
MAX_TIER_TERMS = 6
"""Coordination tiers use the rarest common lexemes only (C(6,3) = 20 clauses at most)."""
SNIPPET_WIDTH = 1200
"""Characters of a document handed to ts_headline (a window around the rarest term)."""


@dataclass(frozen=True, slots=True)
class Lexeme:
    """A query lexeme: query weight, document frequency and BM25 idf in one corpus."""

    lexeme: str
    weight: float
    df: int
    idf: float


def tsquery_literal(lexeme: str) -> str:
    """A tsquery operand matching exactly `lexeme` (twin of SQL ``ah.tsquery_literal``)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsquery_any(lexemes: list[str]) -> str:
    """tsquery text: any of `lexemes`."""
    return " | ".join(tsquery_literal(x) for x in lexemes)


def tsquery_at_least(lexemes: list[str], k: int) -> str:
    """tsquery text: documents containing at least `k` of `lexemes` (OR of k-subsets)."""
    if k <= 1:
        return tsquery_any(lexemes)
    return " | ".join("(" + " & ".join(tsquery_literal(x) for x in combo) + ")" for combo in combinations(lexemes, k))


_TABLES = {
    "message": {
        "table": "message",
        "ts": "d.ts",
        "namespace": "d.namespace",
        "label": "d.message_class",
        "doc": "d.text",
        "outcome": "NULL::text",
    },
    "tool_call": {
        "table": "tool_call",
        "ts": "d.started_at",
        "namespace": "s.namespace",
        "label": "d.name",
        "doc": "concat_ws(E'\\n', d.name, left(d.input, 32768), left(d.output, 65536))",
        "outcome": "coalesce(d.error_class, d.outcome)",
    },
}


def lexemes_for(conn: psycopg.Connection, corpus: str, terms: list[str], weights: list[float]) -> tuple[list[Lexeme], float]:
    """Lexemes of `terms` in `corpus` (rarest first) and the corpus' mean document length."""
    if not terms:
        return [], 1.0
    rows = conn.execute(
        "SELECT l.lexeme, l.weight, l.df, l.idf, ah.search_avglen(%(c)s) "
        "FROM ah.search_lexemes(%(c)s, %(t)s::text[], %(w)s::float8[]) AS l",
        {"c": corpus, "t": terms, "w": weights},
    ).fetchall()
    avglen = rows[0][4] if rows else 1.0
    return [Lexeme(r[0], float(r[1]), int(r[2]), float(r[3])) for r in rows], float(avglen)


def candidate_ids(
    conn: psycopg.Connection,
    corpus: str,
    lexemes: list[Lexeme],
    phrases: list[str],
    where: sql.Composable,
    params: dict,
    limit: int,
) -> list[int]:
    """Candidate document ids (see the module docstring, step 2). `lexemes` have df > 0."""
    table = sql.Identifier(_TABLES[corpus]["table"])
    newest = sql.SQL("SELECT d.id FROM ah.{} AS d WHERE d.tsv @@ {} AND {} ORDER BY d.id DESC LIMIT %(cap)s")
    everything = sql.SQL("SELECT d.id FROM ah.{} AS d WHERE d.tsv @@ %(q)s::tsquery AND {}")
    ids: dict[int, None] = {}

    def run(stmt: sql.Composable, **extra) -> None:
        for (i,) in conn.execute(stmt, {**params, **extra}):
            ids[i] = None

    rare = [x.lexeme for x in lexemes if x.df <= RARE_DF]
    common = [x.lexeme for x in sorted(lexemes, key=lambda x: x.df) if x.df > RARE_DF][:MAX_TIER_TERMS]
    if rare:
        run(everything.format(table, where), q=tsquery_any(rare))
    from_rare = len(ids)

    def budget_left() -> int:
        return BUDGET - (len(ids) - from_rare)

    for phrase in phrases:
        if budget_left() <= 0:
            break
        run(newest.format(table, sql.SQL("phraseto_tsquery('ah.search', %(phrase)s)"), where),
            phrase=phrase, cap=budget_left())
    for k in range(len(common), 1, -1):
        if budget_left() <= 0:
            break
        run(newest.format(table, sql.SQL("%(q)s::tsquery"), where), q=tsquery_at_least(common, k), cap=budget_left())
    if common and len(ids) < limit:
        run(newest.format(table, sql.SQL("%(q)s::tsquery"), where), q=tsquery_any(common), cap=max(budget_left(), limit))
    return list(ids)


def _needles(analysis: QueryAnalysis, lexemes: list[Lexeme]) -> list[str]:
    """Strings to locate the snippet window: identifier-shaped terms as typed, then lexemes
    from the rarest (highest idf) down."""
    first = [t.text for t in analysis.terms if t.kind is not TermKind.WORD]
    rest = [x.lexeme for x in sorted(lexemes, key=lambda x: -x.idf)]
    return list(dict.fromkeys(first + rest))


IMPLICIT_PHRASE_FACTOR = 0.5
"""Bonus factor when an unquoted, non-question query of ≥ 2 terms occurs verbatim (error text)."""


def _bonus_phrases(analysis: QueryAnalysis) -> list[tuple[str, float]]:
    """Phrases that earn a bonus: quoted ones (×1), else the whole query when it is not a
    question and has at least two terms (×`IMPLICIT_PHRASE_FACTOR`) — pasted error text."""
    if analysis.phrases:
        return [(p, 1.0) for p in analysis.phrases]
    if not analysis.is_question and len(analysis.terms) >= 2:
        return [(" ".join(analysis.raw.split()), IMPLICIT_PHRASE_FACTOR)]
    return []


def search_corpus(conn: psycopg.Connection, req: SearchRequest, analysis: QueryAnalysis, corpus: str) -> list[SearchHit]:
    """Top `req.limit` hits of one corpus ('message' | 'tool_call'), best first."""
    lexemes, avglen = lexemes_for(conn, corpus, analysis.term_texts(), analysis.term_weights())
    present = [x for x in lexemes if x.df > 0]
    if not present:
        return []
    flt = build_filter(req, corpus)
    ids = candidate_ids(conn, corpus, present, list(analysis.phrases), flt.sql, flt.params, req.limit)
    if not ids:
        return []
    bonus_sql: list[sql.Composable] = []
    params: dict = {
        "ids": ids,
        "lx": [x.lexeme for x in present],
        "w": [x.weight * x.idf for x in present],
        "avglen": avglen,
        "limit": req.limit,
        "needles": _needles(analysis, present),
    }
    for i, (phrase, factor) in enumerate(_bonus_phrases(analysis)):
        plex, _ = lexemes_for(conn, corpus, [phrase], [1.0])
        bonus = factor * sum(x.idf for x in plex if x.df > 0)
        if bonus <= 0:
            continue
        params[f"p{i}"], params[f"b{i}"] = phrase, bonus
        bonus_sql.append(
            sql.SQL("CASE WHEN d.tsv @@ phraseto_tsquery('ah.search', {p}) THEN {b} ELSE 0 END").format(
                p=sql.Placeholder(f"p{i}"), b=sql.Placeholder(f"b{i}")
            )
        )
    t = _TABLES[corpus]
    bonus = sql.SQL(" + ").join(bonus_sql) if bonus_sql else sql.SQL("0")
    stmt = sql.SQL(
        """
        WITH scored AS (
            SELECT d.id,
                   ah.bm25_score(d.tsv, %(lx)s::text[], %(w)s::float8[], %(avglen)s) + {bonus} AS score,
                   ah.bm25_matched(d.tsv, %(lx)s::text[]) AS matched
            FROM ah.{table} AS d
            WHERE d.id = ANY(%(ids)s::bigint[])
            ORDER BY score DESC, d.id DESC
            LIMIT %(limit)s
        )
        SELECT d.id, sc.score, s.session_uid, s.agent_id, d.agent, {namespace}, {ts}, {label},
               coalesce(s.title, r.title), s.cwd, f.path, d.byte_offset, d.line_number,
               ah.search_snippet({doc}, %(needles)s::text[], ah.tsquery_any(%(lx)s::text[]), {width}),
               r.session_uid, {outcome}, sc.matched
        FROM scored AS sc
        JOIN ah.{table} AS d ON d.id = sc.id
        JOIN ah.session AS s ON s.id = d.session_id
        LEFT JOIN ah.session AS r ON r.id = s.root_session_id
        LEFT JOIN ah.source_file AS f ON f.id = d.source_id
        ORDER BY sc.score DESC, d.id DESC
        """
    ).format(
        bonus=bonus,
        table=sql.Identifier(t["table"]),
        namespace=sql.SQL(t["namespace"]),
        ts=sql.SQL(t["ts"]),
        label=sql.SQL(t["label"]),
        doc=sql.SQL(t["doc"]),
        outcome=sql.SQL(t["outcome"]),
        width=sql.Literal(SNIPPET_WIDTH),
    )
    return [
        SearchHit(
            kind=corpus, id=r[0], score=float(r[1]), session_uid=r[2], agent_id=r[3], agent=r[4],
            namespace=r[5], ts=r[6], label=r[7], title=r[8], cwd=r[9], source_path=r[10],
            byte_offset=r[11], line_number=r[12], snippet=mark_terms(r[13] or "", params["needles"]),
            root_session_uid=r[14], outcome=r[15], matched_terms=r[16], backend="fts",
        )
        for r in conn.execute(stmt, params)
    ]
