"""Keyword search on plain PostgreSQL: GIN candidates, BM25 on the candidates only (docs/design.md §8).

The ranking lives in ``sql/40_search.sql`` (Okapi BM25 with IDF from ``ah.search_term`` and
length normalisation; Robertson & Zaragoza 2009); this module chooses which documents to score
and reads the winners. Per corpus (``message`` | ``tool_call``):

1. The corpus' size, mean length and newest id (one small statement), and
   ``ah.search_lexemes``: the analysed terms as lexemes with df/idf. Lexemes absent from the
   corpus (df = 0) are dropped, so a missing word never empties the result.
2. Candidate statements, each a GIN scan (filters in the same scan) that scores what it fetches
   (``ah.bm25_terms`` summed in a LATERAL join) — a row is read once:
   a. *rare* lexemes — the rarest ones whose document frequencies add up to at most
      `RARE_BUDGET` — contribute every document containing them: they carry the high-idf
      matches, so everything a query could rank by IDF is scored;
   b. *coordination tiers* over the (≤ `MAX_TIER_TERMS` rarest) remaining, common lexemes: the
      newest documents containing all n of them, then at least n−1, then at least 2, until
      fewer than `limit` of `BUDGET` remain (when the rare lexemes alone found `limit` documents,
      only the all-n tier runs, and only if the common terms' Σ idf exceeds the strongest rare
      term's: a document missing every rare term and some common one cannot compete);
   c. only when fewer than `limit` documents were found: the newest containing any common
      lexeme (e.g. a one-word query of a very common word).
   "Newest" is the largest id (most recently indexed). A tier's expected window is
   ``WINDOW_FACTOR × cap / density`` ids, where density is the tier's expected match rate from
   the term statistics (independence assumed). A GIN scan reads every posting list of the tier
   whatever the window (≈ 280 ms for "at least 2 of 6" common words at 1 M messages), so a
   tier expected within `WALK_ROWS` ids first *walks* the primary key from the newest id down,
   testing each row (≈ 0.5–2 µs a row), and stops at `cap` matches; it reads no posting list.
   What the walk did not find comes from GIN scans of the older ids, in a window that widens
   ×8 until it has what is missing or covers the table — each widening re-reads the posting
   lists, so the window jumps at once to where the documents already scored say enough
   matches lie (a document scored by an earlier statement that holds ≥ k of the tier's
   lexemes matches the "at least k" tier). Whatever the windows, a tier scores exactly its
   newest `cap` matches (the walk's size and the windows change only the cost). A document that
   has only common lexemes and is older than its tier's newest `BUDGET` matches is not scored:
   for very common words recency is the prior. Quoted phrases are not a tier of their own (GIN
   cannot check positions, so a phrase scan rechecks every document holding all its words):
   their words are terms, and the phrase bonus applies to whatever the tiers fetch.
3. The top `limit` by score (then newest) are read with provenance and a ``ts_headline``
   snippet around the rarest term.

Quoted phrases add a bonus of Σ idf of their lexemes when they occur verbatim; an unquoted query
of ≥ 2 terms that is not a question (pasted error text) gets half that when it occurs verbatim.

Tool-call vectors are term ids and term frequencies, not positions (migrations 0025_store and
0028_term_ids: ``terms int4[]``, ``tf bytea``): their candidates come from ``terms @@ query_int``
(the same tsquery text with each lexeme replaced by its ``ah.search_term.id``, `query_int`; ORed
``@>`` clauses where the ``intarray`` extension is absent, `array_match`), they are scored by
``ah.bm25_id_terms`` (the scores ``ah.bm25_terms`` gives the positional vector), and the unquoted
phrase bonus — a position test — is decided after scoring, on the positional vector recomputed
for the candidates that hold every word of the phrase and could still reach the top `limit`
of the final order (`tie_key`, then newest id) (`_resolve_phrase`; recomputing costs
milliseconds per document, so checking every candidate holding common words took seconds at
×10). At 1 M messages the clones of a pasted error's tool call are all distinct texts whose
scores lie closer together than the bonus (e.g. 521 of 521 for "failed to push some refs"):
every one of them is checked.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations

import psycopg
from psycopg import sql

from agent_history.analysis.scripts import CJK_RANGES, has_script
from agent_history.search.filters import build_filter
from agent_history.search.query import QueryAnalysis, TermKind
from agent_history.search.request import SearchHit, SearchRequest, mark_terms

RARE_BUDGET = 2_000
"""Σ df of the lexemes whose every posting is scored."""
BUDGET = 800
"""Candidates scored from common lexemes (coordination tiers), beyond the rare ones."""
MAX_TIER_TERMS = 6
"""Coordination tiers use the rarest common lexemes only (C(6,3) = 20 clauses at most)."""
WINDOW_FACTOR = 2.0
"""A tier first scans the newest WINDOW_FACTOR × cap / expected-density ids."""
WINDOW_GROWTH = 8
WALK_ROWS = 20_000
"""A tier expected within this many of the newest ids walks the primary key instead of reading
its posting lists (at most this many rows, or `WINDOW_GROWTH` × its expected window if fewer)."""
EXTRAPOLATE = 2.0
"""A GIN window after a walk that found some matches is sized to hold this many times the
documents still missing at the walk's density."""
SNIPPET_WIDTH = 1200
"""Characters of a document handed to ts_headline (a window around the rarest term)."""
IMPLICIT_PHRASE_FACTOR = 0.5
"""Bonus factor when an unquoted, non-question query of ≥ 2 terms occurs verbatim."""


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


_LITERAL = re.compile(r"'((?:[^'\\]|''|\\.)*)'")
"""A quoted operand of a tsquery text as `tsquery_literal` writes it (its body in group 1)."""


def unquote_literal(body: str) -> str:
    """The lexeme of a tsquery operand's body (the text between its quotes), undoing
    `tsquery_literal`'s escapes (``''`` → ``'``, a backslash-escaped character)."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        elif c == "'" and body[i + 1 : i + 2] == "'":
            out.append("'")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def query_int(tsquery: str, ids: dict[str, int]) -> str:
    """The intarray ``query_int`` text of a tsquery text made of quoted lexemes, ``&``, ``|`` and
    parentheses (what `tsquery_any` / `tsquery_at_least` write): each lexeme replaced by its term
    id (``'pool' | ('py' & 'x')`` → ``7 | (9 & 12)``). KeyError for a lexeme without an id (the
    search drops lexemes of df 0 first)."""
    return _LITERAL.sub(lambda m: str(ids[unquote_literal(m.group(1))]), tsquery)


def array_match(tsquery: str, ids: dict[str, int], column: str = "d.terms") -> str:
    """`query_int`'s condition as SQL over the built-in array operators (a catalogue without the
    ``intarray`` extension: GIN ``array_ops``): each lexeme becomes ``column @> '{id}'``, ``&``
    ``AND``, ``|`` ``OR``. The ids are integers, so the text is safe to inline. KeyError as
    `query_int`."""
    body = _LITERAL.sub(lambda m: f"{column} @> '{{{ids[unquote_literal(m.group(1))]}}}'::int4[]", tsquery)
    return "(" + body.replace(" & ", " AND ").replace(" | ", " OR ") + ")"


def density_at_least(probabilities: list[float], k: int) -> float:
    """Expected share of documents containing at least `k` of terms with the given document
    probabilities, under independence (union bound over k-subsets), capped at 1."""
    if k <= 0:
        return 1.0
    return min(1.0, sum(math.prod(c) for c in combinations(probabilities, k)))


def split_rare(lexemes: list[Lexeme], rare_budget: int | None = None) -> tuple[list[Lexeme], list[Lexeme]]:
    """(rare, common): the rarest lexemes while their df add up to ≤ `rare_budget` (default
    `RARE_BUDGET`, read at the call); the rest."""
    if rare_budget is None:
        rare_budget = RARE_BUDGET
    ordered = sorted(lexemes, key=lambda x: (x.df, x.lexeme))
    rare, total = [], 0
    for x in ordered:
        if total + x.df > rare_budget:
            break
        rare.append(x)
        total += x.df
    return rare, ordered[len(rare) :]


_TABLES = {
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
    table = sql.Identifier(_TABLES[corpus]["table"])
    stats = conn.execute(
        sql.SQL(
            "SELECT coalesce((SELECT doc_count FROM ah.search_corpus WHERE corpus = %(c)s), 0), "
            "ah.search_avglen(%(c)s), coalesce((SELECT max(id) FROM ah.{}), 0), "
            "(SELECT value FROM ah.meta WHERE key = 'term_index')"
        ).format(table),
        {"c": corpus},
    ).fetchone()
    return CorpusStats(int(stats[0]), float(stats[1]), int(stats[2]), stats[3] if _TABLES[corpus]["ids"] else None)


def query_lexemes(conn: psycopg.Connection, corpus: str, terms: list[str], weights: list[float]) -> list[Lexeme]:
    """Lexemes of `terms` in `corpus` with df and idf, rarest first (and their term ids in a
    term-id corpus)."""
    rows = conn.execute(
        "SELECT l.lexeme, l.weight, l.df, l.idf, t.id FROM ah.search_lexemes(%(c)s, %(t)s::text[], %(w)s::float8[]) AS l "
        "LEFT JOIN ah.search_term AS t ON t.corpus = %(c)s AND t.lexeme = l.lexeme ORDER BY l.df, l.lexeme",
        {"c": corpus, "t": terms, "w": weights},
    ).fetchall()
    return [Lexeme(r[0], float(r[1]), int(r[2]), float(r[3]), r[4]) for r in rows]


class _Scorer:
    """Runs candidate statements for one search and keeps every scored document: id → (score,
    matched lexemes), the ids whose deferred phrase bonus may apply (`maybe`), and how many of
    the coordination tier's lexemes (`tier`) each holds — what sizes a tier's GIN window."""

    def __init__(
        self,
        conn: psycopg.Connection,
        corpus: str,
        lexemes: list[Lexeme],
        stats: CorpusStats,
        where: sql.Composable,
        params: dict,
        bonus: sql.Composable,
        bonus_params: dict,
        maybe: sql.Composable = sql.SQL("false"),
        tier: list[Lexeme] | None = None,
    ):
        self.conn, self.stats = conn, stats
        self.ids: dict[str, int] | None = (
            {x.lexeme: x.id for x in lexemes if x.id is not None} if _TABLES[corpus]["ids"] else None
        )
        """Lexeme → term id in a term-id corpus (tool calls), else None."""
        self.scored: dict[int, tuple[float, int]] = {}
        self.maybe: set[int] = set()
        """Scored documents for which the `maybe` condition held (a deferred phrase bonus)."""
        self.tier_matched: dict[int, int] = {}
        """Scored document → how many of the coordination tier's lexemes it holds."""
        ids = self.ids is not None
        self.params = {
            **params,
            **bonus_params,
            "lx": [x.id for x in lexemes] if ids else [x.lexeme for x in lexemes],
            "w": [x.weight * x.idf for x in lexemes],
            "tier": [x.id for x in tier or []] if ids else [x.lexeme for x in tier or []],
            "avglen": stats.avglen,
        }
        # Innermost: the scan ({scan}: a GIN scan, or a walk down the primary key); middle:
        # newest `cap`, phrase bonus; outer: BM25 summed over the matched lexemes (term ids).
        self.template = sql.SQL(
            """
            SELECT c.id, coalesce(sum(t.score), 0) + max(c.bonus) AS score, count(t.{term}) AS matched,
                   bool_or(c.maybe) AS maybe,
                   count(t.{term}) FILTER (WHERE t.{term} = ANY(%(tier)s::{lxtype}[])) AS tier_matched
            FROM (
                SELECT m.id, {mvec}, {bonus} AS bonus, {maybe} AS maybe
                FROM ({scan}) AS m
                {order}
            ) AS c
            LEFT JOIN LATERAL {bm25}({cvec}, %(lx)s::{lxtype}[], %(w)s::float8[], %(avglen)s) AS t ON true
            GROUP BY c.id
            """
        )
        # The GIN scan: OFFSET 0 keeps the planner from pushing the LIMIT into it, which would
        # turn it into a backward primary-key scan testing every row's vector.
        self.gin_scan = sql.SQL("SELECT d.id, {dvec} FROM ah.{table} AS d WHERE {match} AND {where} {window} OFFSET 0")
        # The walk: the newest rows above a floor, each tested, until `cap` match (`_walk` makes
        # the planner take the backward primary-key scan).
        self.walk_scan = sql.SQL(
            "SELECT d.id, {dvec} FROM ah.{table} AS d WHERE d.id > %(floor)s AND {match} AND {where} "
            "ORDER BY d.id DESC LIMIT %(cap)s"
        )
        cols = ("terms", "tf") if ids else ("tsv",)
        self.fmt = {
            "bonus": bonus,
            "table": sql.Identifier(_TABLES[corpus]["table"]),
            "where": where,
            "bm25": sql.SQL(_TABLES[corpus]["bm25"]),
            "maybe": maybe,
            "term": sql.SQL("term" if ids else "lexeme"),
            "lxtype": sql.SQL("int4" if ids else "text"),
            "mvec": sql.SQL(", ".join(f"m.{c}" for c in cols)),
            "cvec": sql.SQL(", ".join(f"c.{c}" for c in cols)),
        }
        self.dvec = sql.SQL(", ".join(f"d.{c}" for c in cols))

    def _match(self, tsquery: str) -> tuple[sql.Composable, dict]:
        """The scan's condition for `tsquery` (a text of quoted lexemes) and its parameters: the
        vector ``@@`` the tsquery; in a term-id corpus ``terms @@ query_int`` (intarray) or the
        `array_match` clauses."""
        if self.ids is None:
            return sql.SQL("d.tsv @@ %(q)s::tsquery"), {"q": tsquery}
        schema = self.stats.term_index
        if schema is None or schema == "array":
            return sql.SQL(array_match(tsquery, self.ids)), {}
        return (
            sql.SQL("d.terms OPERATOR({s}.@@) %(q)s::{s}.query_int").format(s=sql.Identifier(schema)),
            {"q": query_int(tsquery, self.ids)},
        )

    def _scan(
        self, scan: sql.Composable, match: sql.Composable, window: sql.Composable = sql.SQL("")
    ) -> sql.Composable:
        return scan.format(table=self.fmt["table"], dvec=self.dvec, match=match, where=self.fmt["where"], window=window)

    def all_of(self, tsquery: str) -> int:
        """Score every document matching `tsquery`; returns how many."""
        match, q = self._match(tsquery)
        stmt = self.template.format(scan=self._scan(self.gin_scan, match), order=sql.SQL(""), **self.fmt)
        return self._run(stmt, q)

    def newest(self, tsquery: str, at_least: int, cap: int, density: float) -> int:
        """Score the newest `cap` documents matching `tsquery` — "at least `at_least` of the tier's
        lexemes" — whose expected share of the documents is `density`: a walk of the newest ids
        when the expected window is small, then GIN scans of the older ids in a widening window
        (see the module docstring). Returns how many were scored (`cap` unless fewer match)."""
        window = max(cap, int(WINDOW_FACTOR * cap / max(density, 1e-9)))
        ceiling, found = self.stats.max_id, 0
        if window <= WALK_ROWS:
            walked = min(ceiling, WALK_ROWS, WINDOW_GROWTH * window)
            found = self._walk(tsquery, cap, ceiling - walked)
            if found >= cap or walked >= ceiling:
                return found
            ceiling -= walked
            if found:
                window = max(walked, int(EXTRAPOLATE * walked * (cap - found) / found))
            else:
                window = max(window, walked * WINDOW_GROWTH)
        need = cap - found
        while True:
            floor = max(ceiling - window, self._known_floor(at_least, need, ceiling))
            bounded = floor > 0
            conds = [sql.SQL("AND d.id <= %(ceiling)s")] if ceiling < self.stats.max_id else []
            if bounded:
                conds.append(sql.SQL("AND d.id > %(floor)s"))
            match, q = self._match(tsquery)
            stmt = self.template.format(
                scan=self._scan(self.gin_scan, match, sql.SQL(" ").join(conds)),
                order=sql.SQL("ORDER BY m.id DESC LIMIT %(cap)s"),
                **self.fmt,
            )
            n = self._run(stmt, {**q, "cap": need, "floor": floor, "ceiling": ceiling})
            if n >= need or not bounded:
                return found + n
            window = max(window * WINDOW_GROWTH, ceiling - floor)

    def _known_floor(self, at_least: int, need: int, ceiling: int) -> int:
        """The largest floor below which the documents already scored leave `need` matches of an
        "at least `at_least` tier lexemes" tier with ids ≤ `ceiling` (their window (floor,
        ceiling] holds at least `need` matches); 0 when they are fewer."""
        ids = [i for i, k in self.tier_matched.items() if k >= at_least and i <= ceiling]
        if len(ids) < need:
            return 0
        return heapq.nlargest(need, ids)[-1] - 1

    def _walk(self, tsquery: str, cap: int, floor: int) -> int:
        """Score the newest `cap` documents matching `tsquery` with ids above `floor`, walking the
        primary key down from the newest id (bitmap scans off for the statement)."""
        old = self.conn.execute(
            "SELECT current_setting('enable_bitmapscan'), current_setting('enable_indexscan'), "
            "set_config('enable_bitmapscan', 'off', true), set_config('enable_indexscan', 'on', true)"
        ).fetchone()
        match, q = self._match(tsquery)
        stmt = self.template.format(scan=self._scan(self.walk_scan, match), order=sql.SQL(""), **self.fmt)
        n = self._run(stmt, {**q, "cap": cap, "floor": floor})
        self.conn.execute(
            "SELECT set_config('enable_bitmapscan', %s, true), set_config('enable_indexscan', %s, true)", old[:2]
        )
        return n

    def _run(self, stmt: sql.Composable, extra: dict) -> int:
        rows = self.conn.execute(stmt, {**self.params, **extra}).fetchall()
        for i, score, matched, maybe, tier_matched in rows:
            self.scored[i] = (float(score), int(matched))
            self.tier_matched[i] = int(tier_matched)
            if maybe:
                self.maybe.add(i)
        return len(rows)


@contextmanager
def bitmap_scans_only(conn: psycopg.Connection) -> Iterator[None]:
    """Within the block, plain index scans are off (transaction-local; the previous value is
    restored). A candidate scan wants BitmapAnd(GIN, id range, filters): with a LIMIT the
    planner otherwise prefers walking the primary key backwards and testing each row's vector,
    which reads every non-matching row of the window (measured 3× slower at 100 k messages)."""
    with conn.transaction():
        old = conn.execute(
            "SELECT current_setting('enable_indexscan'), set_config('enable_indexscan', 'off', true)"
        ).fetchone()[0]
        yield
        # On an exception the (sub)transaction rolls back, which also reverts the setting; on
        # success a released savepoint would keep it for the caller's transaction: restore it.
        conn.execute("SELECT set_config('enable_indexscan', %s, true)", (old,))


QUOTED_PHRASE_FLOOR = 1000.0
"""Added to a quoted phrase's bonus so that a document holding it verbatim ranks above every
document that does not (a BM25 score stays far below this): quotes mean "this exact text"."""


def _bonus_phrases(analysis: QueryAnalysis) -> list[tuple[str, float]]:
    """Phrases that earn a bonus: quoted ones (×1, plus `QUOTED_PHRASE_FLOOR`), else the whole
    query when it is not a question and has at least two terms (×`IMPLICIT_PHRASE_FACTOR`) —
    pasted error text."""
    if analysis.phrases:
        return [(p, 1.0) for p in analysis.phrases]
    if not analysis.is_question and len(analysis.terms) >= 2:
        return [(" ".join(analysis.raw.split()), IMPLICIT_PHRASE_FACTOR)]
    return []


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
    """Candidate id → (BM25 score + phrase bonus, matched lexemes); see step 2 above. In a corpus
    whose vectors hold no positions the implicit phrase bonus is decided only for the documents
    that could be among the first `decide_top` (default ``req.limit``; `_resolve_phrase`)."""
    flt = build_filter(req, corpus, broad_class_index=False)
    bonus_parts: list[sql.Composable] = []
    bonus_params: dict = {}
    deferred: tuple[str, float] | None = None
    maybe: sql.Composable = sql.SQL("false")
    for i, (phrase, factor) in enumerate(_bonus_phrases(analysis)):
        plex = query_lexemes(conn, corpus, [phrase], [1.0])
        value = factor * sum(x.idf for x in plex if x.df > 0)
        if value > 0 and analysis.phrases:
            value += QUOTED_PHRASE_FLOOR
        if value > 0:
            bonus_params[f"p{i}"], bonus_params[f"b{i}"] = phrase, value
            match = sql.SQL("m.tsv @@ phraseto_tsquery('ah.search', {p})").format(p=sql.Placeholder(f"p{i}"))
            if not _TABLES[corpus]["positions"] and not analysis.phrases:
                # A term-frequency vector cannot check a phrase: the documents holding every word
                # of it may earn the bonus, decided later for those that could reach the top
                # (`_resolve_phrase`).
                deferred = (phrase, value)
                maybe = phrase_terms_held(conn, corpus, phrase, bonus_params, f"pt{i}")
                continue
            if analysis.phrases:
                # Positions in the code-aware vector include the identifier parts appended after
                # the text, so a phrase query can match across them: a quoted phrase must also
                # occur in the raw text (case-insensitive), checked on candidates only.
                bonus_params[f"r{i}"] = " ".join(phrase.lower().split())
                doc = sql.SQL(_TABLES[corpus]["doc"].replace("d.", "x."))
                # (PostgreSQL also numbers a hyphenated word's parts after the word itself, so
                # "the sidechain-related" fails phraseto_tsquery('the sidechain'): the raw text
                # decides for quoted phrases.)
                match = sql.SQL(
                    "EXISTS (SELECT 1 FROM ah.{t} AS x WHERE x.id = m.id AND strpos(lower({doc}), {r}) > 0)"
                ).format(t=sql.Identifier(_TABLES[corpus]["table"]), doc=doc, r=sql.Placeholder(f"r{i}"))
            bonus_parts.append(sql.SQL("CASE WHEN {m} THEN {b} ELSE 0 END").format(m=match, b=sql.Placeholder(f"b{i}")))
    bonus = sql.SQL(" + ").join(bonus_parts) if bonus_parts else sql.SQL("0")
    _, common = split_rare(lexemes)
    scorer = _Scorer(
        conn, corpus, lexemes, stats, flt.sql, flt.params, bonus, bonus_params, maybe, common[:MAX_TIER_TERMS]
    )
    with bitmap_scans_only(conn):
        scored = _score(conn, req, analysis, lexemes, stats, scorer)
    if deferred is not None and scorer.maybe:
        _resolve_phrase(conn, corpus, scored, scorer.maybe, deferred, decide_top or req.limit)
    return scored


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
    t = _TABLES[corpus]
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
    t = _TABLES[corpus]
    stmt = sql.SQL(
        "WITH d AS (SELECT x.id, {doc} AS doc FROM ah.{table} AS x WHERE x.id = ANY(%(ids)s::bigint[])), "
        "held AS (SELECT u.doc FROM (SELECT DISTINCT doc FROM d) AS u "
        "WHERE ah.search_tsv(u.doc) @@ phraseto_tsquery('ah.search', %(p)s)) "
        "SELECT d.id FROM d JOIN held ON held.doc = d.doc"
    ).format(table=sql.Identifier(t["table"]), doc=sql.SQL(t["doc"].replace("d.", "x.")))
    return {r[0] for r in conn.execute(stmt, {"ids": ids, "p": phrase})}


def _resolve_phrase(
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


def tier_levels(n: int) -> list[int]:
    """Coordination levels tried for `n` common lexemes: all of them, all but one, then at
    least two — at most three GIN scans (each reads every posting list involved)."""
    return sorted({k for k in (n, n - 1, 2) if 2 <= k <= n}, reverse=True)


def _score(
    conn: psycopg.Connection,
    req: SearchRequest,
    analysis: QueryAnalysis,
    lexemes: list[Lexeme],
    stats: CorpusStats,
    scorer: _Scorer,
) -> dict[int, tuple[float, int]]:
    rare, common = split_rare(lexemes)
    if rare:
        scorer.all_of(tsquery_any([x.lexeme for x in rare]))
    from_rare = len(scorer.scored)

    def left() -> int:
        return BUDGET - (len(scorer.scored) - from_rare)

    n = max(1, stats.docs)
    tier = common[:MAX_TIER_TERMS]
    p = [min(1.0, x.df / n) for x in tier]
    levels = tier_levels(len(tier))
    if from_rare >= req.limit:
        # Enough high-idf matches: only a document with every common term could still compete,
        # and only if those terms together outweigh the strongest rare one.
        common_weight = sum(x.weight * x.idf for x in tier)
        rare_weight = max(x.weight * x.idf for x in rare)
        levels = levels[:1] if levels and levels[0] == len(tier) and common_weight > rare_weight else []
    for k in levels:
        if left() < req.limit:
            break  # budget (nearly) spent: another full GIN scan would add a handful of rows
        scorer.newest(tsquery_at_least([x.lexeme for x in tier], k), k, left(), density_at_least(p, k))
    if tier and len(scorer.scored) < req.limit:
        scorer.newest(tsquery_any([x.lexeme for x in tier]), 1, max(left(), req.limit), density_at_least(p, 1))
    return scorer.scored


SCORE_DIGITS = 9
"""Decimal places of a score that decide an order: scores equal to 1e-9 are ties, broken by the
newest id. A document's BM25 is a float sum whose last bit depends on the order the plan delivers
its terms in, so without rounding two identical documents (copied sessions; the clones of
`just bench-scale`) ranked in an order a plan change could flip (h-read1m, 1 M messages)."""


def tie_key(score: float) -> float:
    """`score` rounded to `SCORE_DIGITS` decimal places, for sorting only (hits keep the score)."""
    return round(score, SCORE_DIGITS)


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
    t = _TABLES[corpus]
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
