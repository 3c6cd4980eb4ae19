"""A keyword-search corpus as the FTS backend (`search.fts`) reads it: which columns hold its
time, label, document text and vector (`CORPUS_COLUMNS`: ``message`` keeps positional vectors,
``tool_call`` term ids and frequencies), its statistics (documents, mean length, newest id, how
term ids are matched: `CorpusStats`), the query's lexemes in it with df and idf (`Lexeme`,
``ah.search_lexemes``), and the order scores are ranked in (`tie_key`).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql


@dataclass(frozen=True, slots=True)
class Lexeme:
    """A query lexeme: query weight, document frequency and BM25 idf in one corpus."""

    lexeme: str
    weight: float
    df: int
    idf: float
    id: int | None = None
    """Its ``ah.search_term.id`` in a term-id corpus (tool calls; None elsewhere or when absent)."""


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What candidate selection needs to know about a corpus."""

    docs: int
    """Documents with a non-empty vector (N of the idf)."""
    avglen: float
    max_id: int
    term_index: str | None = None
    """How a term-id corpus is matched (``ah.meta`` ``term_index``, migration 0028_term_ids): the
    schema of the ``intarray`` extension (``terms @@ query_int``), or ``array`` (``@>`` clauses)."""


CORPUS_COLUMNS = {
    "message": {
        "table": "message",
        "ts": "d.ts",
        "namespace": "d.namespace",
        "label": "d.message_class",
        "doc": "d.text",
        "outcome": "NULL::text",
        "bm25": "ah.bm25_terms",
        "positions": "yes",
        "ids": "",
    },
    "tool_call": {
        "table": "tool_call",
        "ts": "d.started_at",
        "namespace": "s.namespace",
        "label": "d.name",
        # the text the vector was built from (head of input, head and tail of output; 0015_store)
        "doc": "ah.tool_call_doc(d.name, d.input, d.output)",
        "outcome": "coalesce(d.error_class, d.outcome)",
        # term ids and frequencies, no positions (migrations 0025_store, 0028_term_ids)
        "bm25": "ah.bm25_id_terms",
        "positions": "",
        "ids": "yes",
    },
}


def lexemes_for(
    conn: psycopg.Connection, corpus: str, terms: list[str], weights: list[float]
) -> tuple[list[Lexeme], CorpusStats]:
    """Lexemes of `terms` in `corpus` (rarest first) and the corpus statistics."""
    cs = corpus_stats(conn, corpus)
    return (query_lexemes(conn, corpus, terms, weights) if terms else []), cs


def corpus_stats(conn: psycopg.Connection, corpus: str) -> CorpusStats:
    """Documents, mean length and newest id of `corpus`."""
    table = sql.Identifier(CORPUS_COLUMNS[corpus]["table"])
    stats = conn.execute(
        sql.SQL(
            "SELECT coalesce((SELECT doc_count FROM ah.search_corpus WHERE corpus = %(c)s), 0), "
            "ah.search_avglen(%(c)s), coalesce((SELECT max(id) FROM ah.{}), 0), "
            "(SELECT value FROM ah.meta WHERE key = 'term_index')"
        ).format(table),
        {"c": corpus},
    ).fetchone()
    return CorpusStats(
        int(stats[0]), float(stats[1]), int(stats[2]), stats[3] if CORPUS_COLUMNS[corpus]["ids"] else None
    )


def query_lexemes(conn: psycopg.Connection, corpus: str, terms: list[str], weights: list[float]) -> list[Lexeme]:
    """Lexemes of `terms` in `corpus` with df and idf, rarest first (and their term ids in a
    term-id corpus)."""
    rows = conn.execute(
        "SELECT l.lexeme, l.weight, l.df, l.idf, t.id FROM ah.search_lexemes(%(c)s, %(t)s::text[], %(w)s::float8[]) AS l "
        "LEFT JOIN ah.search_term AS t ON t.corpus = %(c)s AND t.lexeme = l.lexeme ORDER BY l.df, l.lexeme",
        {"c": corpus, "t": terms, "w": weights},
    ).fetchall()
    return [Lexeme(r[0], float(r[1]), int(r[2]), float(r[3]), r[4]) for r in rows]


SCORE_DIGITS = 9
"""Decimal places of a score that decide an order: scores equal to 1e-9 are ties, broken by the
newest id. A document's BM25 is a float sum whose last bit depends on the order the plan delivers
its terms in, so without rounding two identical documents (copied sessions; the clones of
`just bench-scale`) ranked in an order a plan change could flip (h-read1m, 1 M messages)."""


def tie_key(score: float) -> float:
    """`score` rounded to `SCORE_DIGITS` decimal places, for sorting only (hits keep the score)."""
    return round(score, SCORE_DIGITS)
