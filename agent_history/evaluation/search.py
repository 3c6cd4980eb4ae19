"""Keyword-search evaluation: hit@1, hit@5 and MRR over labelled queries (``just eval``).

    python -m agent_history.evaluation.search [--home DIR] [--queries FILE] [--dsn DSN] [--json] [-v]

Indexes the agent home (default ``../shared/corpus/home``) into the database and runs every
query of ``fixtures/eval/queries.toml``. Without ``--dsn`` it starts a private embedded server
in a temporary directory (your catalogue is never touched); with ``--dsn`` the corpus is
indexed into that database (incrementally, like ``index``).

A hit is correct when its session uid is the query's ``session`` and its document (message
text, or tool name + input + output) contains ``contains`` (case-insensitive). hit@k = share
of queries with a correct hit in the first k; MRR = mean of 1/rank of the first correct hit
(0 when none in the returned `limit`). `check_labels` verifies every label is satisfiable at
all (some document of that session, in the query's scope and classes, contains the substring).

Thread recall (issue 17): every question of ``fixtures/eval/recall.toml`` ("what did we try
before X worked") runs `read.recall.thread_recall` (keyword, default bounds); a question is
covered when the narrative's steps of its session contain every ``expect`` substring
(case-insensitive). Reported: questions covered, share of substrings found, mean steps, p50 ms.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from agent_history.search import hit_text
from agent_history.search.request import Scope, SearchRequest

REPO = Path(__file__).resolve().parents[2]
DEFAULT_QUERIES = REPO / "fixtures" / "eval" / "queries.toml"
DEFAULT_RECALL = REPO / "fixtures" / "eval" / "recall.toml"
DEFAULT_HOME = REPO.parent / "shared" / "corpus" / "home"
LIMIT = 20


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One evaluation query and its expected answer."""

    id: str
    kind: str
    q: str
    session: str
    contains: str
    scope: Scope = Scope.MESSAGES


@dataclass(slots=True)
class QueryResult:
    """Where the first correct hit came (None = not in the returned hits) and how long it took."""

    query: LabelledQuery
    rank: int | None
    ms: float
    top: list[str] = field(default_factory=list)


@dataclass(slots=True)
class EvalReport:
    """Aggregate figures over `results`."""

    results: list[QueryResult]

    def hit_at(self, k: int) -> float:
        """Share of queries with a correct hit in the first `k`."""
        return sum(1 for r in self.results if r.rank is not None and r.rank <= k) / max(1, len(self.results))

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank of the first correct hit."""
        return sum(1 / r.rank for r in self.results if r.rank) / max(1, len(self.results))

    def latency_ms(self, pct: float) -> float:
        """Percentile of per-query latency (nearest rank)."""
        xs = sorted(r.ms for r in self.results)
        return xs[min(len(xs) - 1, max(0, round(pct / 100 * len(xs)) - 1))] if xs else 0.0

    def as_dict(self) -> dict:
        """JSON-ready summary and per-query ranks."""
        return {
            "queries": len(self.results),
            "hit@1": round(self.hit_at(1), 4),
            "hit@5": round(self.hit_at(5), 4),
            "mrr": round(self.mrr, 4),
            "p50_ms": round(self.latency_ms(50), 1),
            "p95_ms": round(self.latency_ms(95), 1),
            "by_kind": {
                kind: {
                    "n": len(rs),
                    "hit@5": round(sum(1 for r in rs if r.rank and r.rank <= 5) / len(rs), 4),
                }
                for kind in sorted({r.query.kind for r in self.results})
                for rs in [[r for r in self.results if r.query.kind == kind]]
            },
            "results": [{"id": r.query.id, "rank": r.rank, "ms": round(r.ms, 1)} for r in self.results],
        }


def load_queries(path: Path = DEFAULT_QUERIES) -> list[LabelledQuery]:
    """The labelled queries of a TOML file (``[[query]]`` tables)."""
    data = tomllib.loads(path.read_text())
    return [
        LabelledQuery(
            q["id"], q.get("kind", "other"), q["q"], q["session"], q["contains"], Scope(q.get("scope", "messages"))
        )
        for q in data["query"]
    ]


def _documents(conn: psycopg.Connection, hits) -> dict[tuple[str, int], str]:
    docs: dict[tuple[str, int], str] = {}
    for kind in hit_text.HIT_KINDS:
        ids = [h.id for h in hits if h.kind == kind]
        if ids:
            for i, text in hit_text.hit_texts(conn, kind, ids):
                docs[(kind, i)] = text or ""
    return docs


def run_query(conn: psycopg.Connection, lq: LabelledQuery, limit: int = LIMIT, search=None) -> QueryResult:
    """Run one labelled query and find the rank of its first correct hit. `search(conn, req)
    -> list[SearchHit]` defaults to the keyword search (vector/hybrid: `evaluation.modes`)."""
    if search is None:
        from agent_history.search.keyword import search

    t0 = time.perf_counter()
    hits = search(conn, SearchRequest(lq.q, limit=limit, scope=lq.scope))
    ms = (time.perf_counter() - t0) * 1000
    docs = _documents(conn, hits)
    needle = lq.contains.lower()
    rank = next(
        (
            i
            for i, h in enumerate(hits, 1)
            if h.session_uid == lq.session and needle in docs.get((h.kind, h.id), "").lower()
        ),
        None,
    )
    return QueryResult(lq, rank, ms, [f"{h.session_uid[:8]}:{h.kind}:{h.label}" for h in hits[:5]])


def evaluate(conn: psycopg.Connection, queries: list[LabelledQuery], limit: int = LIMIT, search=None) -> EvalReport:
    """Run every query (after one warm-up search) and collect ranks (`search`: see `run_query`)."""
    if search is None:
        from agent_history.search.keyword import search

    search(conn, SearchRequest("warm up", limit=1))
    return EvalReport([run_query(conn, q, limit, search) for q in queries])


def check_labels(conn: psycopg.Connection, queries: list[LabelledQuery]) -> list[str]:
    """Ids of queries whose label no document satisfies (session + substring, in scope)."""
    from agent_history.model import classes

    bad = []
    for lq in queries:
        found = False
        if lq.scope in (Scope.MESSAGES, Scope.ALL):
            found = hit_text.message_holds(conn, lq.session, classes.CONVERSATIONAL, lq.contains)
        if not found and lq.scope in (Scope.TOOLS, Scope.ALL):
            found = hit_text.tool_call_holds(conn, lq.session, lq.contains)
        if not found:
            bad.append(lq.id)
    return bad


@dataclass(frozen=True, slots=True)
class RecallQuestion:
    """One thread-recall question: the session its story is in and what the narrative must hold."""

    id: str
    q: str
    session: str
    expect: tuple[str, ...]


def load_recall_questions(path: Path = DEFAULT_RECALL) -> list[RecallQuestion]:
    """The ``[[question]]`` tables of a recall TOML file."""
    data = tomllib.loads(path.read_text())
    return [RecallQuestion(q["id"], q["q"], q["session"], tuple(q["expect"])) for q in data["question"]]


def evaluate_recall(conn: psycopg.Connection, questions: list[RecallQuestion]) -> dict:
    """``{questions, covered, expect_found, mean_steps, p50_ms, results: [{id, found, missing, steps, ms}]}``
    (see the module docstring). `expect_found` is found substrings / all substrings."""
    from agent_history.read.recall import thread_recall

    results = []
    for rq in questions:
        t0 = time.perf_counter()
        recall = thread_recall(conn, SearchRequest(rq.q), "keyword", None)
        ms = (time.perf_counter() - t0) * 1000
        text = "\n".join(s.text.lower() for s in recall.steps if s.session_uid == rq.session)
        missing = [e for e in rq.expect if e.lower() not in text]
        results.append({"id": rq.id, "found": len(rq.expect) - len(missing), "missing": missing,
                        "steps": len(recall.steps), "ms": round(ms, 1)})  # fmt: skip
    total = sum(len(q.expect) for q in questions)
    ms_sorted = sorted(r["ms"] for r in results)
    return {
        "questions": len(questions),
        "covered": sum(1 for r in results if not r["missing"]),
        "expect_found": round(sum(r["found"] for r in results) / max(1, total), 4),
        "mean_steps": round(sum(r["steps"] for r in results) / max(1, len(results)), 1),
        "p50_ms": ms_sorted[(len(ms_sorted) - 1) // 2] if ms_sorted else 0.0,
        "results": results,
    }


def index_home(dsn: str, home: Path) -> None:
    """Index a directory laid out like ``~`` into `dsn` (incremental)."""
    from agent_history.db.migrate import ensure_schema
    from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
    from agent_history.ingest.loader import Loader

    ensure_schema(dsn)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    with psycopg.connect(dsn, autocommit=True) as conn:
        Loader(conn).run(sources)


def _print_report(report: EvalReport, verbose: bool) -> None:
    d = report.as_dict()
    print(
        f"queries {d['queries']}  hit@1 {d['hit@1']:.3f}  hit@5 {d['hit@5']:.3f}  MRR {d['mrr']:.3f}  "
        f"latency p50 {d['p50_ms']:.1f} ms  p95 {d['p95_ms']:.1f} ms"
    )
    for kind, v in d["by_kind"].items():
        print(f"  {kind:<11} n={v['n']:<3} hit@5 {v['hit@5']:.3f}")
    for r in report.results:
        if verbose or r.rank is None or r.rank > 5:
            print(
                f"  {'miss' if r.rank is None else f'#{r.rank}':>5}  {r.query.id:<32} {r.query.q!r}  top: {', '.join(r.top[:3])}"
            )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m agent_history.evaluation.search``."""
    import orjson

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--home", type=Path, default=DEFAULT_HOME, help="agent home laid out like ~ (default: the shared corpus)"
    )
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    ap.add_argument("--recall-questions", type=Path, default=DEFAULT_RECALL)
    ap.add_argument(
        "--dsn", default=None, help="index into and search this database (default: a private temporary one)"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every query, not only misses and ranks > 5")
    args = ap.parse_args(argv)
    queries = load_queries(args.queries)
    if not args.home.is_dir():
        print(f"error: {args.home} is not a directory (the labelled corpus lives in ../shared)", file=sys.stderr)
        return 2
    from agent_history.db.embedded import dsn_or_scratch

    with dsn_or_scratch(args.dsn, "ah-eval-") as dsn:
        t0 = time.perf_counter()
        index_home(dsn, args.home)
        indexed = time.perf_counter() - t0
        with psycopg.connect(dsn) as conn:
            bad = check_labels(conn, queries)
            report = evaluate(conn, queries)
            recall = evaluate_recall(conn, load_recall_questions(args.recall_questions))
        if args.json:
            out = report.as_dict() | {"unsatisfiable_labels": bad, "index_seconds": round(indexed, 2), "recall": recall}
            sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            print(f"indexed {args.home} in {indexed:.1f} s")
            if bad:
                print(f"unsatisfiable labels: {', '.join(bad)}")
            _print_report(report, args.verbose)
            print(
                f"thread recall: {recall['covered']}/{recall['questions']} questions covered, "
                f"{recall['expect_found']:.3f} of expected steps found, {recall['mean_steps']} steps on average, "
                f"p50 {recall['p50_ms']:.1f} ms"
            )
            for r in recall["results"]:
                if args.verbose or r["missing"]:
                    print(f"  {r['id']:<24} found {r['found']}  missing: {', '.join(r['missing']) or '-'}")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
