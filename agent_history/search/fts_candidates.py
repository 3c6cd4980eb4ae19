"""Candidate selection for the FTS backend (`search.fts`, docs/design.md §8, step 2): which
documents of a corpus are scored, each scored as its scan fetches it (``ah.bm25_terms`` or
``ah.bm25_id_terms`` summed in a LATERAL join; a row is read once).

- *Rare* lexemes — the rarest ones whose document frequencies add up to at most `RARE_BUDGET`
  (`split_rare`) — contribute every document containing them (`Scorer.all_of`): they carry the
  high-idf matches, so everything a query could rank by IDF is scored.
- *Coordination tiers* over the (≤ `MAX_TIER_TERMS` rarest) remaining, common lexemes
  (`score_tiers`): the newest documents containing all n of them, then at least n−1, then at
  least 2 (`tier_levels`), until fewer than `limit` of `BUDGET` remain (when the rare lexemes
  alone found `limit` documents, only the all-n tier runs, and only if the common terms' Σ idf
  exceeds the strongest rare term's: a document missing every rare term and some common one
  cannot compete); then, only when fewer than `limit` documents were found, the newest
  containing any common lexeme (e.g. a one-word query of a very common word).
- "Newest" is the largest id (most recently indexed). A tier's expected window is
  ``WINDOW_FACTOR × cap / density`` ids, where density is the tier's expected match rate from
  the term statistics (independence assumed: `density_at_least`). A GIN scan reads every
  posting list of the tier whatever the window (≈ 280 ms for "at least 2 of 6" common words at
  1 M messages), so a tier expected within `WALK_ROWS` ids first *walks* the primary key from
  the newest id down, testing each row (≈ 0.5–2 µs a row), and stops at `cap` matches; it reads
  no posting list. What the walk did not find comes from GIN scans of the older ids, in a
  window that widens ×8 until it has what is missing or covers the table — each widening
  re-reads the posting lists, so the window jumps at once to where the documents already
  scored say enough matches lie (a document scored by an earlier statement that holds ≥ k of
  the tier's lexemes matches the "at least k" tier). Whatever the windows, a tier scores
  exactly its newest `cap` matches (the walk's size and the windows change only the cost). A
  document that has only common lexemes and is older than its tier's newest `BUDGET` matches is
  not scored: for very common words recency is the prior.
- A term-id corpus (tool calls) is scanned with ``terms @@ query_int`` or `array_match`'s
  clauses (`search.tsquery`), per ``ah.meta`` ``term_index``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import combinations

import psycopg
from psycopg import sql

from agent_history.search.fts_corpus import CORPUS_COLUMNS, CorpusStats, Lexeme
from agent_history.search.query import QueryAnalysis
from agent_history.search.request import SearchRequest
from agent_history.search.tsquery import array_match, query_int, tsquery_any, tsquery_at_least

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


def tier_levels(n: int) -> list[int]:
    """Coordination levels tried for `n` common lexemes: all of them, all but one, then at
    least two — at most three GIN scans (each reads every posting list involved)."""
    return sorted({k for k in (n, n - 1, 2) if 2 <= k <= n}, reverse=True)


class Scorer:
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
            {x.lexeme: x.id for x in lexemes if x.id is not None} if CORPUS_COLUMNS[corpus]["ids"] else None
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
            "table": sql.Identifier(CORPUS_COLUMNS[corpus]["table"]),
            "where": where,
            "bm25": sql.SQL(CORPUS_COLUMNS[corpus]["bm25"]),
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


def score_tiers(
    conn: psycopg.Connection,
    req: SearchRequest,
    analysis: QueryAnalysis,
    lexemes: list[Lexeme],
    stats: CorpusStats,
    scorer: Scorer,
) -> dict[int, tuple[float, int]]:
    """Run the candidate statements of one search on `scorer` (built for `lexemes` of this
    corpus): every document of the rare lexemes, then the coordination tiers over the common
    ones, as the module docstring says, within `BUDGET` and until `req.limit` are found. Returns
    `scorer.scored`: document id → (BM25 score + phrase bonus, matched lexemes). `conn` and
    `analysis` are unused (the scorer holds the connection). Raises psycopg errors unchanged."""
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
