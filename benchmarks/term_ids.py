"""`just bench-term-ids`: a term dictionary for the tool-call vectors, measured (issue 27 item 4; not a test).

    python -m benchmarks.term_ids [--scale 10] [--work DIR] [--keep] [--dsn DSN] [--runs 5]

Without ``--dsn``: a cold load of the shared corpus cloned SCALE times on a private embedded
server (`benchmarks.store.cold_load`); with ``--dsn``: that catalogue as it is (read only but for
the scratch schema ``td``, dropped at the start and the end). Never run against a shared home.

The record of decision 11: it builds from ``ah.tool_call.tsv``, which migration 0028_term_ids
replaced by the form it measured (decision 13), so it runs only against a catalogue from before
that migration (a checkout of the tree before it, or ``--dsn`` of such a catalogue).

Built in the scratch schema ``td`` from the stored tool-call vectors (``ah.tool_call.tsv``, term
frequencies as positions, migration 0025/0027):

- ``td.term(id int4, lexeme text)``: the dictionary, an id per distinct lexeme (in lexeme order);
- ``td.doc(id bigint, terms int4[], tf bytea)``: per tool call its term ids, ascending, and one
  byte per term, ``tf − 1`` (a positional vector keeps at most 256 positions: tf is 1–256);
- GIN indexes on ``terms``: ``gin__int_ops`` (intarray, shipped by the embedded server) and
  ``array_ops``; a B-tree ``text_pattern_ops`` on ``td.term.lexeme`` (prefix queries);
- ``td.bm25_id_terms``: ``ah.bm25_tf_terms`` over that form (the same arithmetic, the document
  length being ``cardinality(terms)``).

Reported (MB = 10⁶ bytes; CPU = user + system seconds of the server backend that ran the
statements, from /proc, so it needs the server on this machine):

1. bytes: Σ ``pg_column_size`` of ``terms`` + ``tf`` against ``tsv``; two copies of
   ``ah.tool_call`` made the same way (``CREATE TABLE AS … ORDER BY id``), one with ``tsv``, one
   with ``terms, tf`` instead (heap, TOAST); the GIN indexes against ``tool_call_tsv_idx``; the
   dictionary's cost (an ``int4`` column on ``ah.search_term`` — a copy of its tool-call rows
   with and without it — and the prefix B-tree); per tool call, extrapolated to ×100 and 1 M;
2. BM25: for every eval query (``fixtures/eval/queries.toml``) over the tool-call corpus, the
   candidate selection of `agent_history.search.fts_candidates` (rare lexemes, coordination tiers, the
   primary-key walk and the newest-id GIN windows: its own `score_tiers`) run once over today's
   vectors and once over the term-id form (``terms @@ query_int``, the same tsquery text
   translated by `query_int`): the same scored ids, matched and tier-matched counts, each score
   equal to `SCORE_DIGITS` decimals, the same top 20 (no phrase bonus on either
   side: the phrase check recomputes from the text and is unchanged);
3. time: that candidate retrieval + scoring per query, server CPU ms, both forms interleaved
   over ``--runs`` rounds;
4. prefix queries (``lexeme:*``): today's ``tsv @@ 'p':*`` against dictionary → ids → ``&&``;
5. ingest: assigning ids at load — per load batch (tool calls of one 8 MiB chunk of one file,
   `agent_history.ingest.chunks.BATCH_BYTES`) an upsert of its lexemes into a fresh dictionary
   and the mapping of its vectors to ``terms``/``tf``, server CPU summed over the load, beside
   today's ``ah.tf_vector`` over the same vectors (the step the mapping replaces); the set-based
   builds once after the load (dictionary, term-id form, the GIN index of each form).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from agent_history.search.tsquery import query_int, unquote_literal
from benchmarks.store import SHARED, cold_load

__all__ = ["decode_tf", "encode_tf", "query_int", "unquote_literal"]
"""`query_int`/`unquote_literal` are the search's own (`search.tsquery`), re-exported for the tests."""

SCORE_DIGITS = 9
"""Scores compare equal when they agree to this many decimals (`fts_corpus.SCORE_DIGITS`)."""
TOP = 20
PREFIXES = ("migrat", "pool", "lefthook", "audio", "ts27", "select", "npm", "err")
"""Prefix queries measured (item 4): common and rare stems of the corpus."""
PREFIX_ROUNDS = 20
"""A prefix query runs `--runs` × this many times (each takes about a millisecond)."""
PROJECTIONS = (
    ("×100 (est.: 10 × the ×10 rows; 0.80× raw)", 160_510, 0.80 * 1050.0, 1050.0),
    ("1 M (`just bench-scale`, 2026-12-02)", 1_235_851, 6618.0, 8115.0),
)
"""(catalogue, tool calls, catalogue MB, raw transcript MB) the per-row saving is extrapolated
to: the ×100 home's figures from issue 27 (0.80×, ten times the ×10 home's 105.0 MB and 16,051
tool calls), the 1 M run's from docs/performance.md "The proof at a million messages"."""


def encode_tf(tfs: list[int]) -> bytes:
    """One byte per term frequency, ``tf − 1`` (tf in 1–256, the range a positional tsvector
    can give); ValueError outside it."""
    if any(not 1 <= t <= 256 for t in tfs):
        raise ValueError(f"term frequency outside 1..256: {tfs}")
    return bytes(t - 1 for t in tfs)


def decode_tf(data: bytes) -> list[int]:
    """The term frequencies `encode_tf` stored (SQL: ``get_byte(tf, i − 1) + 1``)."""
    return [b + 1 for b in data]


SCHEMA = r"""
DROP SCHEMA IF EXISTS td CASCADE;
CREATE SCHEMA td;
CREATE EXTENSION IF NOT EXISTS intarray SCHEMA td;
"""
TERMS = r"""
CREATE TABLE td.term AS
    SELECT (row_number() OVER (ORDER BY u.lexeme))::int4 AS id, u.lexeme
    FROM (SELECT DISTINCT u.lexeme FROM ah.tool_call AS d, unnest(d.tsv) AS u) AS u;
ALTER TABLE td.term ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX term_lexeme ON td.term (lexeme);
"""
DOCS = r"""
CREATE TABLE td.doc AS
    SELECT d.id,
           coalesce(array_agg(t.id ORDER BY t.id) FILTER (WHERE t.id IS NOT NULL), '{}')::int4[] AS terms,
           coalesce(string_agg(set_byte('\x00'::bytea, 0, coalesce(u.positions[1], 1) - 1), ''::bytea
                               ORDER BY t.id) FILTER (WHERE t.id IS NOT NULL), ''::bytea) AS tf
    FROM ah.tool_call AS d
    LEFT JOIN LATERAL unnest(d.tsv) AS u ON true
    LEFT JOIN td.term AS t ON t.lexeme = u.lexeme
    GROUP BY d.id
    ORDER BY d.id;
ALTER TABLE td.doc ADD PRIMARY KEY (id);
"""
FUNCTION = r"""
CREATE FUNCTION td.bm25_id_terms(
    terms int4[], tf bytea, ids int4[], weights double precision[], avglen double precision,
    k1 double precision DEFAULT 1.2, b double precision DEFAULT 0.75
) RETURNS TABLE (term int4, tf integer, score double precision)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT q.id, f.tf,
           q.w * f.tf * (bm25_id_terms.k1 + 1)
           / (f.tf + bm25_id_terms.k1 * (1 - bm25_id_terms.b + bm25_id_terms.b * cardinality(bm25_id_terms.terms)
                                         / greatest(bm25_id_terms.avglen, 1.0)))
    FROM unnest(bm25_id_terms.ids, bm25_id_terms.weights) AS q(id, w)
    CROSS JOIN LATERAL (SELECT array_position(bm25_id_terms.terms, q.id) AS i) AS p
    CROSS JOIN LATERAL (SELECT get_byte(bm25_id_terms.tf, p.i - 1) + 1 AS tf) AS f
    WHERE p.i IS NOT NULL
$$;
"""

GIN_TODAY = "CREATE INDEX doc_tsv_copy ON td.tsv_copy USING gin (tsv)"
GIN_INT = "CREATE INDEX doc_terms_int ON td.doc USING gin (terms td.gin__int_ops)"
GIN_ARRAY = "CREATE INDEX doc_terms_array ON td.doc USING gin (terms array_ops)"
PREFIX_BTREE = "CREATE INDEX term_prefix ON td.term (lexeme text_pattern_ops)"

COPIES = r"""
CREATE TABLE td.tool_call_today AS SELECT * FROM ah.tool_call ORDER BY id;
CREATE TABLE td.tool_call_terms AS
    SELECT {columns}, x.terms, x.tf FROM ah.tool_call AS c JOIN td.doc AS x ON x.id = c.id ORDER BY c.id;
CREATE TABLE td.search_term_today AS SELECT corpus, lexeme, df FROM ah.search_term WHERE corpus = 'tool_call'
    ORDER BY corpus, lexeme;
CREATE TABLE td.search_term_ids AS SELECT corpus, lexeme, df, 0::int4 AS id FROM td.search_term_today
    ORDER BY corpus, lexeme;
"""
VACUUM = (
    "VACUUM (ANALYZE) td.tool_call_today, td.tool_call_terms, td.search_term_today, td.search_term_ids, td.doc, td.term"
)

VARINT = """
SELECT sum(b) / 1e6 FROM (
    SELECT 4 + coalesce(sum(CASE WHEN x.g < 128 THEN 1 WHEN x.g < 16384 THEN 2 ELSE 3 END), 0) AS b
    FROM td.doc AS d
    LEFT JOIN LATERAL (
        SELECT u.t - coalesce(lag(u.t) OVER (ORDER BY u.o), 0) AS g FROM unnest(d.terms) WITH ORDINALITY AS u(t, o)
    ) AS x ON true
    GROUP BY d.id
) AS s
"""
"""MB of the term ids stored as ascending deltas, 7 bits a byte, plus a 4-byte header (an
estimate of a form GIN cannot index directly: an expression index would decode it)."""

SIZE = """SELECT pg_relation_size(c.oid) / 1e6, coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) / 1e6
FROM pg_class AS c WHERE c.oid = %s::regclass"""


def backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) of server process `pid` so far, from /proc/PID/stat."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Meter:
    """Server CPU and wall time of what runs on one connection (its backend process)."""

    def __init__(self, conn):
        self.pid = int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])

    def __call__(self, fn: Callable[..., object], *args: object) -> tuple[float, float, object]:
        """(server CPU s, wall s, result) of `fn(*args)`."""
        cpu, wall = backend_cpu(self.pid), time.perf_counter()
        out = fn(*args)
        return backend_cpu(self.pid) - cpu, time.perf_counter() - wall, out


def build(conn, meter: Meter) -> dict:
    """Build the scratch schema; returns the server CPU seconds of each set-based build step
    (the dictionary, the term-id form of every tool call, each GIN index)."""
    conn.execute(SCHEMA)
    cpu = {
        "dictionary of the whole load (`td.term`, set-based)": meter(conn.execute, TERMS)[0],
        "term ids + tf bytes of every tool call (`td.doc`, set-based)": meter(conn.execute, DOCS)[0],
    }
    conn.execute(FUNCTION)
    conn.execute("CREATE TABLE td.tsv_copy AS SELECT id, tsv FROM ah.tool_call ORDER BY id")
    for name, ddl in (
        ("GIN on `tsv` (today)", GIN_TODAY),
        ("GIN on `terms`, `gin__int_ops`", GIN_INT),
        ("GIN on `terms`, `array_ops`", GIN_ARRAY),
    ):
        cpu[name] = meter(lambda ddl=ddl: conn.execute(ddl))[0]
    conn.execute(PREFIX_BTREE)
    columns = [
        r[0]
        for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'ah.tool_call'::regclass AND attnum > 0 "
            "AND NOT attisdropped AND attname <> 'tsv' ORDER BY attnum"
        )
    ]
    conn.execute(COPIES.format(columns=", ".join(f'c."{c}"' for c in columns)))
    conn.execute(VACUUM)
    return cpu


def sizes(conn) -> dict:
    """Every byte figure of item 1 (MB)."""

    def one(q: str) -> float:
        return float(conn.execute(q).fetchone()[0])

    def rel(name: str) -> tuple[float, float]:
        heap, toast = conn.execute(SIZE, (name,)).fetchone()
        return float(heap), float(toast)

    def idx(name: str) -> float:
        return one(f"SELECT pg_relation_size('{name}'::regclass) / 1e6")

    return {
        "rows": int(one("SELECT count(*) FROM ah.tool_call")),
        "terms": int(one("SELECT count(*) FROM td.term")),
        "entries": int(one("SELECT coalesce(sum(cardinality(terms)), 0) FROM td.doc")),
        "col tsv": one("SELECT sum(pg_column_size(tsv)) / 1e6 FROM ah.tool_call"),
        "col terms": one("SELECT sum(pg_column_size(terms)) / 1e6 FROM td.doc"),
        "col tf": one("SELECT sum(pg_column_size(tf)) / 1e6 FROM td.doc"),
        "col varint": one(VARINT),
        "copy today": rel("td.tool_call_today"),
        "copy terms": rel("td.tool_call_terms"),
        "gin tsv": idx("ah.tool_call_tsv_idx"),
        "gin tsv copy": idx("td.doc_tsv_copy"),
        "gin int": idx("td.doc_terms_int"),
        "gin array": idx("td.doc_terms_array"),
        "dict today": sum(rel("td.search_term_today")),
        "dict ids": sum(rel("td.search_term_ids")),
        "prefix btree": idx("td.term_prefix"),
    }


def scorers(conn, lexemes, stats, ids: dict[str, int]):
    """(today's `fts_candidates.Scorer`, the term-id one) for one query, built as `fts.score_candidates`
    builds its scorer (the coordination tier: the rarest `fts_candidates.MAX_TIER_TERMS` common lexemes) but
    with no filters and no phrase bonus."""
    from psycopg import sql

    from agent_history.search import fts_candidates

    tier = fts_candidates.split_rare(lexemes)[1][: fts_candidates.MAX_TIER_TERMS]
    args = (conn, "tool_call", lexemes, stats, sql.SQL("true"), {}, sql.SQL("0"), {}, sql.SQL("false"), tier)

    class IdScorer(fts_candidates.Scorer):
        """`fts_candidates.Scorer` over ``td.doc``: each statement's tsquery text becomes a ``query_int``
        over term ids (the GIN scan and the primary-key walk alike), ``ah.bm25_tf_terms``
        becomes ``td.bm25_id_terms``, lexemes become ids."""

        def __init__(self):
            super().__init__(*args)
            self.params["lx"] = [ids[x.lexeme] for x in lexemes]
            self.params["tier"] = [ids[x.lexeme] for x in tier]
            self.template = sql.SQL(
                """
                SELECT c.id, coalesce(sum(t.score), 0) + max(c.bonus) AS score, count(t.term) AS matched,
                       bool_or(c.maybe) AS maybe,
                       count(t.term) FILTER (WHERE t.term = ANY(%(tier)s::int4[])) AS tier_matched
                FROM (
                    SELECT m.id, m.terms, m.tf, {bonus} AS bonus, {maybe} AS maybe
                    FROM ({scan}) AS m
                    {order}
                ) AS c
                LEFT JOIN LATERAL td.bm25_id_terms(c.terms, c.tf, %(lx)s::int4[], %(w)s::float8[], %(avglen)s) AS t
                    ON true
                GROUP BY c.id
                """
            )
            self.gin_scan = sql.SQL(
                "SELECT d.id, d.terms, d.tf FROM td.doc AS d "
                "WHERE d.terms OPERATOR(td.@@) %(q)s::td.query_int AND {where} {window} OFFSET 0"
            )
            self.walk_scan = sql.SQL(
                "SELECT d.id, d.terms, d.tf FROM td.doc AS d "
                "WHERE d.id > %(floor)s AND d.terms OPERATOR(td.@@) %(q)s::td.query_int AND {where} "
                "ORDER BY d.id DESC LIMIT %(cap)s"
            )

        def _run(self, stmt, extra: dict) -> int:
            return super()._run(stmt, {**extra, "q": query_int(extra["q"], ids)})

    return fts_candidates.Scorer(*args), IdScorer()


def compare_queries(conn, meter: Meter, runs: int) -> list[dict]:
    """Items 2 and 3 for every eval query over the tool-call corpus."""
    from agent_history.evaluation.search import load_queries
    from agent_history.search import fts_candidates, fts_corpus
    from agent_history.search.query import analyze
    from agent_history.search.request import SearchRequest

    ids = dict(conn.execute("SELECT lexeme, id FROM td.term").fetchall())
    out = []
    for lq in load_queries():
        analysis = analyze(lq.q)
        lexemes, stats = fts_corpus.lexemes_for(conn, "tool_call", analysis.term_texts(), analysis.term_weights())
        present = [x for x in lexemes if x.df > 0]
        if not present:
            out.append({"id": lq.id, "scope": lq.scope.value, "candidates": 0, "skip": True})
            continue
        req = SearchRequest(lq.q, limit=TOP)
        cpu = {"today": [], "ids": []}
        wall = {"today": [], "ids": []}
        scored, tiers = {}, {}
        for _ in range(runs):
            for form in ("today", "ids"):
                scorer = scorers(conn, present, stats, ids)[0 if form == "today" else 1]
                with fts_candidates.bitmap_scans_only(conn):
                    c, w, s = meter(fts_candidates.score_tiers, conn, req, analysis, present, stats, scorer)
                cpu[form].append(c)
                wall[form].append(w)
                scored[form], tiers[form] = dict(s), dict(scorer.tier_matched)
        a, b = scored["today"], scored["ids"]
        equal = (
            tiers["today"] == tiers["ids"]
            and a.keys() == b.keys()
            and all(round(a[k][0], SCORE_DIGITS) == round(b[k][0], SCORE_DIGITS) and a[k][1] == b[k][1] for k in a)
        )

        def top(s: dict) -> list[int]:
            return [k for k, _ in sorted(s.items(), key=lambda kv: (-fts_corpus.tie_key(kv[1][0]), -kv[0]))[:TOP]]

        out.append(
            {
                "id": lq.id,
                "scope": lq.scope.value,
                "lexemes": len(present),
                "candidates": len(a),
                "equal": equal,
                "same top": top(a) == top(b),
                "max diff": max((abs(a[k][0] - b[k][0]) for k in a.keys() & b.keys()), default=0.0),
                "cpu today": sum(cpu["today"]) / runs * 1e3,
                "cpu ids": sum(cpu["ids"]) / runs * 1e3,
                "wall today": sorted(wall["today"])[runs // 2] * 1e3,
                "wall ids": sorted(wall["ids"])[runs // 2] * 1e3,
            }
        )
    return out


def prefixes(conn, meter: Meter, runs: int) -> list[dict]:
    """Item 4: each of `PREFIXES` as ``tsv @@ 'p':*`` and through the dictionary."""
    out = []
    for p in PREFIXES:
        like = p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        today_q = "SELECT count(*) FROM ah.tool_call WHERE tsv @@ (%s || ':*')::tsquery"
        ids_q = (
            "SELECT count(*) FROM td.doc WHERE terms OPERATOR(td.&&) "
            "(SELECT coalesce(array_agg(id), '{}') FROM td.term WHERE lexeme LIKE %s)"
        )
        n_ids = int(conn.execute("SELECT count(*) FROM td.term WHERE lexeme LIKE %s", (like,)).fetchone()[0])
        fig = {"prefix": p, "lexemes": n_ids}
        for name, q, arg in (("today", today_q, f"'{p}'"), ("ids", ids_q, like)):
            c = w = 0.0
            for _ in range(runs * PREFIX_ROUNDS):
                dc, dw, n = meter(lambda q=q, arg=arg: conn.execute(q, (arg,)).fetchone()[0])
                c, w = c + dc, w + dw
            rounds = runs * PREFIX_ROUNDS
            fig[f"docs {name}"], fig[f"cpu {name}"], fig[f"wall {name}"] = int(n), c / rounds * 1e3, w / rounds * 1e3
        out.append(fig)
    return out


INGEST_BATCH = r"""
WITH b AS (SELECT d.id, d.tsv FROM ah.tool_call AS d WHERE d.id = ANY(%(ids)s::bigint[]))
INSERT INTO td.ing_term (lexeme)
SELECT DISTINCT u.lexeme FROM b, unnest(b.tsv) AS u
ORDER BY u.lexeme
ON CONFLICT (lexeme) DO NOTHING
"""
INGEST_MAP = r"""
INSERT INTO td.ing_doc (id, terms, tf)
SELECT d.id,
       coalesce(array_agg(t.id ORDER BY t.id) FILTER (WHERE t.id IS NOT NULL), '{}')::int4[],
       coalesce(string_agg(set_byte('\x00'::bytea, 0, coalesce(u.positions[1], 1) - 1), ''::bytea
                           ORDER BY t.id) FILTER (WHERE t.id IS NOT NULL), ''::bytea)
FROM ah.tool_call AS d
LEFT JOIN LATERAL unnest(d.tsv) AS u ON true
LEFT JOIN td.ing_term AS t ON t.lexeme = u.lexeme
WHERE d.id = ANY(%(ids)s::bigint[])
GROUP BY d.id
"""
INGEST_TF_VECTOR = r"""
SELECT count(ah.tf_vector(d.tsv)) FROM ah.tool_call AS d WHERE d.id = ANY(%(ids)s::bigint[])
"""
"""`ah.tf_vector` over the batch's stored vectors: what the load pays today per vector (its input
there is the positional vector: the same lexemes, more positions), the step the mapping replaces."""
INGEST_READ = r"""
SELECT count(*) FROM ah.tool_call AS d, unnest(d.tsv) AS u WHERE d.id = ANY(%(ids)s::bigint[])
"""


def ingest(conn, meter: Meter) -> dict:
    """Item 5: the id assignment replayed batch by batch (see the module docstring)."""
    from agent_history.ingest.chunks import BATCH_BYTES

    conn.execute(
        "CREATE TABLE td.ing_term (id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY, lexeme text UNIQUE NOT NULL);"
        "CREATE TABLE td.ing_doc (id bigint PRIMARY KEY, terms int4[] NOT NULL, tf bytea NOT NULL)"
    )
    batches = [
        r[0]
        for r in conn.execute(
            "SELECT array_agg(id ORDER BY id) FROM ah.tool_call GROUP BY source_id, byte_offset / %s ORDER BY min(id)",
            (BATCH_BYTES,),
        )
    ]
    cpu = {"read": 0.0, "upsert": 0.0, "map": 0.0, "tf_vector": 0.0}
    for ids in batches:
        with conn.transaction():
            cpu["read"] += meter(lambda ids=ids: conn.execute(INGEST_READ, {"ids": ids}).fetchone())[0]
            cpu["upsert"] += meter(lambda ids=ids: conn.execute(INGEST_BATCH, {"ids": ids}))[0]
            cpu["map"] += meter(lambda ids=ids: conn.execute(INGEST_MAP, {"ids": ids}))[0]
            cpu["tf_vector"] += meter(lambda ids=ids: conn.execute(INGEST_TF_VECTOR, {"ids": ids}).fetchone())[0]
    same = conn.execute(
        "SELECT count(*) FROM td.doc AS a JOIN td.ing_doc AS b USING (id) "
        "WHERE cardinality(a.terms) = cardinality(b.terms) AND a.tf IS NOT DISTINCT FROM "
        "(SELECT string_agg(decode(lpad(to_hex(get_byte(b.tf, x.o::int - 1)), 2, '0'), 'hex'), ''::bytea "
        " ORDER BY t.lexeme) FROM unnest(b.terms) WITH ORDINALITY AS x(tid, o) JOIN td.ing_term AS t ON t.id = x.tid)"
    ).fetchone()[0]
    return {"batches": len(batches), **cpu, "docs agreeing": int(same)}


def report(z: dict, queries: list[dict], pre: list[dict], ing: dict, gin_cpu: dict, label: str) -> str:
    """Markdown tables of every figure."""
    rows = z["rows"]
    per = {  # bytes per tool call
        "today": (z["col tsv"] + z["gin tsv"]) * 1e6 / rows,
        "ids": (z["col terms"] + z["col tf"] + z["gin int"]) * 1e6 / rows,
    }
    dict_per_term = (z["dict ids"] - z["dict today"] + z["prefix btree"]) * 1e6 / max(z["terms"], 1)
    out = [
        f"{label}: {rows:,} tool calls, {z['entries']:,} lexeme entries, {z['terms']:,} distinct lexemes.",
        "",
        "| structure | today (MB) | term ids (MB) | saved (MB) |",
        "|---|---|---|---|",
        f"| vector column, Σ `pg_column_size` | `tsv` {z['col tsv']:.2f} | `terms` {z['col terms']:.2f} + "
        f"`tf` {z['col tf']:.2f} = {z['col terms'] + z['col tf']:.2f} | "
        f"{z['col tsv'] - z['col terms'] - z['col tf']:.2f} |",
        f"| … the term ids as delta varints instead (est., not indexable as such) | | {z['col varint']:.2f} + "
        f"`tf` {z['col tf']:.2f} = {z['col varint'] + z['col tf']:.2f} | {z['col tsv'] - z['col varint'] - z['col tf']:.2f} |",
        f"| `tool_call` copy, heap · TOAST | {z['copy today'][0]:.2f} · {z['copy today'][1]:.2f} | "
        f"{z['copy terms'][0]:.2f} · {z['copy terms'][1]:.2f} | "
        f"{sum(z['copy today']) - sum(z['copy terms']):.2f} |",
        f"| GIN | `tool_call_tsv_idx` {z['gin tsv']:.2f} (rebuilt copy {z['gin tsv copy']:.2f}) | "
        f"`gin__int_ops` {z['gin int']:.2f} (`array_ops` {z['gin array']:.2f}) | {z['gin tsv'] - z['gin int']:.2f} |",
        f"| dictionary: `int4` id on `search_term` (tool-call rows) | {z['dict today']:.2f} | {z['dict ids']:.2f} | "
        f"{z['dict today'] - z['dict ids']:.2f} |",
        f"| dictionary: prefix B-tree (`text_pattern_ops`) | — | {z['prefix btree']:.2f} | {-z['prefix btree']:.2f} |",
        "",
        f"Per tool call (column + GIN): today {per['today']:.0f} B, term ids {per['ids']:.0f} B "
        f"(−{per['today'] - per['ids']:.0f} B); the dictionary {dict_per_term:.1f} B per distinct lexeme "
        "(`int4` id + prefix B-tree).",
        "",
        "| catalogue | tool calls | MB today | − column + GIN, per row (est.) | MB with term ids (est.) | × raw |",
        "|---|---|---|---|---|---|",
    ]
    for name, calls, db, raw in PROJECTIONS:
        saved = (per["today"] - per["ids"]) * calls / 1e6
        out.append(
            f"| {name} | {calls:,} | {db:,.0f} ({db / raw:.3f}×) | {saved:,.1f} | {db - saved:,.0f} | "
            f"{(db - saved) / raw:.3f}× |"
        )
    out += [
        "",
        "| build step, server CPU (s) | |",
        "|---|---|",
    ]
    out += [f"| {k} | {v:.2f} |" for k, v in gin_cpu.items()]
    done = [q for q in queries if not q.get("skip")]
    equal = sum(q["equal"] for q in done)
    same_top = sum(q["same top"] for q in done)
    out += [
        "",
        f"BM25 over the term-id form: {len(done)} eval queries with a tool-call lexeme "
        f"({len(queries) - len(done)} without); scored ids and scores (to {SCORE_DIGITS} decimals), matched and "
        f"tier-matched counts equal in {equal}, the same top {TOP} in {same_top}; largest score difference "
        f"{max((q['max diff'] for q in done), default=0):.2e}.",
        "",
        "| query | scope | lexemes | scored | equal | CPU ms today | CPU ms term ids | wall ms today · ids |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for q in done:
        out.append(
            f"| {q['id']} | {q['scope']} | {q['lexemes']} | {q['candidates']:,} | "
            f"{'yes' if q['equal'] and q['same top'] else 'NO'} | {q['cpu today']:.1f} | {q['cpu ids']:.1f} | "
            f"{q['wall today']:.1f} · {q['wall ids']:.1f} |"
        )
    ct, ci = sum(q["cpu today"] for q in done), sum(q["cpu ids"] for q in done)
    out.append(f"| **Σ** | | | {sum(q['candidates'] for q in done):,} | | **{ct:.0f}** | **{ci:.0f}** | |")
    out += [
        "",
        "| prefix | dictionary lexemes | tool calls | CPU ms `tsv @@ 'p':*` | CPU ms dictionary → `&&` | wall ms · |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| `{p['prefix']}:*` | {p['lexemes']:,} | {p['docs today']:,} / {p['docs ids']:,} | {p['cpu today']:.1f} | "
        f"{p['cpu ids']:.1f} | {p['wall today']:.1f} · {p['wall ids']:.1f} |"
        for p in pre
    ]
    out += [
        "",
        f"Ingest, replayed over the load's {ing['batches']} batches (server CPU s): reading the batch's vectors "
        f"{ing['read']:.2f}, dictionary upsert {ing['upsert']:.2f}, mapping to `terms`/`tf` {ing['map']:.2f} "
        f"(the mapping includes the read); today's `ah.tf_vector` over the same vectors {ing['tf_vector']:.2f} "
        f"(the step the mapping replaces). The replayed form equals the bulk-built one in "
        f"{ing['docs agreeing']:,} of {rows:,} tool calls.",
    ]
    return "\n".join(out)


def measure(dsn: str, runs: int, label: str) -> str:
    """Build, compare, time; returns the report. Drops the scratch schema at the end."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        meter = Meter(conn)
        load = os.getloadavg()[0]
        gin_cpu = build(conn, meter)
        try:
            z = sizes(conn)
            conn.execute("DROP INDEX td.doc_terms_array")  # retrieval through gin__int_ops
            queries = compare_queries(conn, meter, runs)
            pre = prefixes(conn, meter, runs)
            ing = ingest(conn, meter)
        finally:
            conn.execute("DROP SCHEMA IF EXISTS td CASCADE")
        label += f" (load average {load:.1f} · {os.getloadavg()[0]:.1f})"
    return report(z, queries, pre, ing, gin_cpu, label)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10, help="clones of the shared corpus home (default 10)")
    ap.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working directory (and its server)")
    ap.add_argument("--dsn", help="measure this (private) catalogue instead of loading one")
    ap.add_argument("--runs", type=int, default=5, help="timed rounds per query (default 5)")
    args = ap.parse_args(argv)
    stamp = datetime.now(UTC).date().isoformat()
    if args.dsn:
        print(measure(args.dsn, args.runs, f"Measured {stamp}"))
        return
    corpus, scaler = SHARED / "corpus" / "home", SHARED / "tools" / "scale_home.py"
    if not corpus.is_dir() or not scaler.exists():
        sys.exit(f"error: {corpus} and {scaler} are needed (../shared beside the repository)")
    work = args.work or Path(tempfile.mkdtemp(prefix="ah-term-ids-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    try:
        if not home.exists():
            subprocess.run([sys.executable, str(scaler), str(corpus), str(home), str(args.scale)], check=True)
        dsn, _ = cold_load(home, work)
        print(measure(dsn, args.runs, f"Shared corpus ×{args.scale}, cold load, {stamp}"))
    finally:
        if not args.keep:
            from agent_history.db import embedded

            embedded.stop(work / "data" / "pg")
            if args.work is None:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
