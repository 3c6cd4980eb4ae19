"""Phrase bonuses of the FTS backend (`search.fts`): quoted phrases add Σ idf of their lexemes
plus `QUOTED_PHRASE_FLOOR` when they occur verbatim; an unquoted query of ≥ 2 terms that is not a
question (pasted error text) adds half its Σ idf (`IMPLICIT_PHRASE_FACTOR`) when it occurs
verbatim (`bonus_phrases`).

Tool-call vectors are term ids and term frequencies, not positions (migrations 0025_store and
0028_term_ids), so the unquoted phrase bonus — a position test — is decided after scoring, on
the positional vector recomputed for the candidates that hold every word of the phrase
(`phrase_terms_held`) and could still reach the top `limit` of the final order
(`fts_corpus.tie_key`, then newest id) (`resolve_phrase`, `phrase_holders`; recomputing costs
milliseconds per document, so checking every candidate holding common words took seconds at
×10). At 1 M messages the clones of a pasted error's tool call are all distinct texts whose
scores lie closer together than the bonus (e.g. 521 of 521 for "failed to push some refs"):
every one of them is checked.
"""

from __future__ import annotations

import heapq

import psycopg
from psycopg import sql

from agent_history.analysis.scripts import CJK_RANGES
from agent_history.search.fts_corpus import CORPUS_COLUMNS, tie_key
from agent_history.search.query import QueryAnalysis

IMPLICIT_PHRASE_FACTOR = 0.5
"""Bonus factor when an unquoted, non-question query of ≥ 2 terms occurs verbatim."""
QUOTED_PHRASE_FLOOR = 1000.0
"""Added to a quoted phrase's bonus so that a document holding it verbatim ranks above every
document that does not (a BM25 score stays far below this): quotes mean "this exact text"."""


def bonus_phrases(analysis: QueryAnalysis) -> list[tuple[str, float]]:
    """Phrases that earn a bonus: quoted ones (×1, plus `QUOTED_PHRASE_FLOOR`), else the whole
    query when it is not a question and has at least two terms (×`IMPLICIT_PHRASE_FACTOR`) —
    pasted error text."""
    if analysis.phrases:
        return [(p, 1.0) for p in analysis.phrases]
    if not analysis.is_question and len(analysis.terms) >= 2:
        return [(" ".join(analysis.raw.split()), IMPLICIT_PHRASE_FACTOR)]
    return []


def phrase_terms_held(conn: psycopg.Connection, corpus: str, phrase: str, params: dict, name: str) -> sql.Composable:
    """The condition "the candidate ``m`` holds every lexeme of ``to_tsvector('ah.search',
    phrase)``" in a term-id corpus: ``m.terms @> ids`` with the lexemes' ids put in
    ``params[name]``; ``false`` when one of them has no id (no document holds it) or the phrase
    has no lexeme (as ``@@`` an empty tsquery)."""
    row = conn.execute(
        "SELECT array_agg(t.id ORDER BY t.id), count(*), count(t.id) "
        "FROM unnest(tsvector_to_array(to_tsvector('ah.search', %s))) AS l(lexeme) "
        "LEFT JOIN ah.search_term AS t ON t.corpus = %s AND t.lexeme = l.lexeme",
        (phrase, corpus),
    ).fetchone()
    if not row[1] or row[1] != row[2]:
        return sql.SQL("false")
    params[name] = row[0]
    return sql.SQL("m.terms OPERATOR(pg_catalog.@>) {}::int4[]").format(sql.Placeholder(name))


CJK_RUN = "([" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in CJK_RANGES) + "]+)"
"""A run of CJK characters (``ah.search_text`` sets it apart from adjacent letters first)."""
POSITION_LIMIT = 16383
"""PostgreSQL's largest tsvector position (a text this long or longer takes the full analysis)."""
POSITIONS_PER_LEXEME = 256
"""PostgreSQL keeps at most this many positions of one lexeme (a count this high is not exact)."""


def phrase_holders(conn: psycopg.Connection, corpus: str, ids: list[int], phrase: str) -> set[int]:
    """Those of `ids` (tool calls: a term-frequency vector) whose positional vector
    (``ah.search_tsv`` of the document, recomputed) matches ``phraseto_tsquery(phrase)`` — what
    ``tsv @@ phraseto_tsquery(…)`` says of a corpus whose stored vector keeps positions.

    ``ah.search_tsv(t)`` is ``to_tsvector(t' || E'\\n' || parts) || script lexemes``, where t' is
    t with CJK runs spaced and `parts` the code-aware identifier parts (the "tail"): the words of
    t' keep their positions, and computing `parts` (regular expressions over the whole text) is
    ≈ 80 % of the cost (≈ 6 ms of a 10 KB tool call). So each document is first analysed without
    the tail, ``to_tsvector(t')`` (≈ 1 ms), and the stored vector tells how many occurrences of a
    lexeme the tail holds (its term frequency minus the count in t'):
    - a match in t' is a match of the full vector (same positions): held;
    - a match using the tail either lies in it (every lexeme of the phrase occurs in the tail) or
      straddles its start (the phrase's last lexeme occurs in the tail, and its first lexeme in
      t' within the phrase's span of t''s last position); when neither can be, not held;
    - otherwise — or for a text of `POSITION_LIMIT` characters or more, or a count at
      `POSITIONS_PER_LEXEME` (both clipped by PostgreSQL) — the full analysis decides.
    Each distinct document is analysed once (a command run again, a file read again)."""
    pv = conn.execute(
        "SELECT u.lexeme, u.positions FROM unnest(to_tsvector('ah.search', %s)) AS u", (phrase,)
    ).fetchall()
    if not pv:
        return set()
    at = sorted((pos, lx) for lx, positions in pv for pos in positions)
    term_id = dict(
        conn.execute(
            "SELECT lexeme, id FROM ah.search_term WHERE corpus = %s AND lexeme = ANY(%s)",
            (corpus, [lx for lx, _ in pv]),
        ).fetchall()
    )
    (first_pos, first), (last_pos, last) = at[0], at[-1]
    t = CORPUS_COLUMNS[corpus]
    stmt = sql.SQL(
        """
        WITH d AS (SELECT x.id, {doc} AS doc, x.terms, x.tf FROM ah.{table} AS x WHERE x.id = ANY(%(ids)s::bigint[])),
        u AS (SELECT DISTINCT ON (d.doc) d.id AS key, d.doc, d.terms, d.tf FROM d),
        a AS MATERIALIZED (
            SELECT u.key, u.doc, v.va,
                   ts_filter(setweight(v.va, 'A', %(lx)s::text[]), '{{a}}') AS head,
                   u.terms, u.tf, char_length(u.doc) < %(maxpos)s AS short
            FROM u
            CROSS JOIN LATERAL (
                SELECT to_tsvector('ah.search', regexp_replace(u.doc, %(cjk)s, ' \\1 ', 'g')) AS va
            ) AS v
        ),
        c AS (
            SELECT a.key, a.short, l.lx, h.positions AS at,
                   coalesce(get_byte(a.tf, array_position(a.terms, l.id) - 1) + 1, 0)
                   - coalesce(cardinality(h.positions), 0) AS tail
            FROM a
            CROSS JOIN unnest(%(lx)s::text[], %(lid)s::int4[]) AS l(lx, id)
            LEFT JOIN unnest(a.head) AS h ON h.lexeme = l.lx
        ),
        k AS (
            SELECT c.key,
                   bool_and(c.short AND coalesce(cardinality(c.at), 0) < %(maxnum)s AND c.tail >= 0) AS exact,
                   bool_and(c.tail > 0) AS all_in_tail,
                   bool_or(c.lx = %(last)s AND c.tail > 0) AS last_in_tail,
                   max(c.at[cardinality(c.at)]) FILTER (WHERE c.lx = %(first)s) AS first_end
            FROM c GROUP BY c.key
        ),
        held AS (
            SELECT a.doc FROM a JOIN k ON k.key = a.key
            WHERE CASE
                WHEN a.va @@ phraseto_tsquery('ah.search', %(p)s) THEN true
                WHEN k.exact AND NOT k.all_in_tail
                     AND NOT (k.last_in_tail AND coalesce(
                         k.first_end > (SELECT max(e.positions[cardinality(e.positions)]) FROM unnest(a.va) AS e)
                                       - %(span)s, false))
                    THEN false
                ELSE ah.search_tsv(a.doc) @@ phraseto_tsquery('ah.search', %(p)s)
            END
        )
        SELECT d.id FROM d JOIN held ON held.doc = d.doc
        """
    ).format(table=sql.Identifier(t["table"]), doc=sql.SQL(t["doc"].replace("d.", "x.")))
    params = {
        "ids": ids,
        "p": phrase,
        "cjk": CJK_RUN,
        "maxpos": POSITION_LIMIT,
        "maxnum": POSITIONS_PER_LEXEME,
        "lx": [lx for lx, _ in pv],
        "lid": [term_id.get(lx) for lx, _ in pv],
        "first": first,
        "last": last,
        "span": last_pos - first_pos,
    }
    return {r[0] for r in conn.execute(stmt, params)}


def phrase_holders_full(conn: psycopg.Connection, corpus: str, ids: list[int], phrase: str) -> set[int]:
    """`phrase_holders` by the full analysis of every document (its reference; tests)."""
    t = CORPUS_COLUMNS[corpus]
    stmt = sql.SQL(
        "WITH d AS (SELECT x.id, {doc} AS doc FROM ah.{table} AS x WHERE x.id = ANY(%(ids)s::bigint[])), "
        "held AS (SELECT u.doc FROM (SELECT DISTINCT doc FROM d) AS u "
        "WHERE ah.search_tsv(u.doc) @@ phraseto_tsquery('ah.search', %(p)s)) "
        "SELECT d.id FROM d JOIN held ON held.doc = d.doc"
    ).format(table=sql.Identifier(t["table"]), doc=sql.SQL(t["doc"].replace("d.", "x.")))
    return {r[0] for r in conn.execute(stmt, {"ids": ids, "p": phrase})}


def resolve_phrase(
    conn: psycopg.Connection,
    corpus: str,
    scored: dict[int, tuple[float, int]],
    maybe: set[int],
    deferred: tuple[str, float],
    limit: int,
) -> None:
    """Add the implicit phrase bonus to the documents of `maybe` (they hold every word of the
    phrase) that hold the phrase, checking only those that could be in the top `limit`: rank
    every document as if each unchecked one had the bonus; while the first `limit` hold an
    unchecked one, check the unchecked ones among the first `limit` × 2^round (a round is one
    statement: near-copies with near-equal scores, e.g. 800 clones of a tool call at 1 M
    messages, took 40 rounds of 20). The top `limit` is the one checking every document would
    give (a bonus only raises a score; ties — equal `tie_key` — by newest id, the order
    `search_corpus` sorts by: ranking by the unrounded score would leave unchecked a tied
    document with a newer id whose sum differs in the last bit). Checking more than needed
    changes only scores below the top `limit` (a round may check documents that a smaller one
    would have shown not to matter)."""
    phrase, value = deferred
    pending, holders = set(maybe), set()

    def optimistic(i: int) -> tuple[float, int]:
        bonus = value if i in pending or i in holders else 0.0
        return (-tie_key(scored[i][0] + bonus), -i)

    batch = limit
    while any(i in pending for i in heapq.nsmallest(limit, scored, key=optimistic)):
        check = [i for i in heapq.nsmallest(batch, scored, key=optimistic) if i in pending]
        pending.difference_update(check)
        holders |= phrase_holders(conn, corpus, check, phrase)
        batch *= 2
    for i in holders:
        scored[i] = (scored[i][0] + value, scored[i][1])
