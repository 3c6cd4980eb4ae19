"""Keyword search before/after on an existing catalogue (not a test): the eval queries in process,
interleaved, with the server CPU of the backend per query and every answer compared.

    python -m benchmarks.keyword_ab --data-dir DIR [--before REF] [--rounds 4] [--only ID,ID]

DIR is an agent-history data dir whose catalogue is already built (e.g. ``ah`` in the work
directory of ``just bench-scale`` run with ``--keep``); its embedded server is started if it is
not running, and stopped at the end if this started it. Nothing is written to the catalogue.

"Before" is the FTS backend (``agent_history/search/fts.py`` and the modules split out of it) as
at REF (``git show``; default ``main``), loaded as a package of its own beside the working tree's; everything else (query analysis, filters,
SQL functions) is shared, so the comparison is of the FTS candidate selection and phrase
bonus only. Each round runs every query of ``fixtures/eval/queries.toml`` with both versions,
the order alternating by round, after one warm-up pass. Per query: the median wall ms, the
median server CPU ms of the backend (``/proc/<pid>/stat`` utime + stime: clock ticks, 10 ms),
and whether the answers (kind, id, score to `fts.SCORE_DIGITS` decimals) are the same in
every run. Prints p50/p95 over the per-query medians and the load average before and after:
on a shared machine the CPU columns compare, wall times only when the load is low.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import psycopg

from agent_history.db import embedded
from agent_history.evaluation.search import load_queries
from agent_history.search import fts
from agent_history.search.keyword import CORPORA
from agent_history.search.query import analyze
from agent_history.search.request import Scope, SearchRequest

ROOT = Path(__file__).resolve().parents[1]
FTS_DIR = "agent_history/search"
FTS_MODULES = ("fts", "fts_corpus", "fts_candidates", "fts_phrase", "tsquery")
"""The FTS backend's modules (split out of ``fts.py`` at stop 41), loaded together from a ref."""
LIMIT = 20


def module_at(ref: str, name: str = "fts_before") -> ModuleType:
    """The FTS backend as at git `ref`, imported as package `name` (its `FTS_MODULES` that exist
    at `ref`, each one's imports of the others pointed into the package); returns its ``fts``
    module. Raises CalledProcessError when git cannot show ``fts.py``."""
    root = Path(tempfile.mkdtemp(prefix="ah-keyword-ab-"))
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module in FTS_MODULES:
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{FTS_DIR}/{module}.py"], capture_output=True, text=True
        )
        if shown.returncode != 0:
            if module == "fts":
                raise subprocess.CalledProcessError(shown.returncode, shown.args, shown.stdout, shown.stderr)
            continue  # before the split (stop 41) fts.py held them all
        text = shown.stdout
        for other in FTS_MODULES:
            text = re.sub(rf"\bagent_history\.search\.{other}\b", f"{name}.{other}", text)
            text = text.replace(f"from agent_history.search import {other}\n", f"from {name} import {other}\n")
        (package / f"{module}.py").write_text(text)
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(f"{name}.fts")
    finally:
        sys.path.remove(str(root))


def backend_cpu_ms(pid: int) -> float:
    """User + system CPU of process `pid` so far, ms (clock-tick resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def search_with(module: ModuleType, conn: psycopg.Connection, query: str, scope: str) -> list[tuple[str, int, float]]:
    """`search.keyword.search` on the FTS backend with `module` as `search.fts`: the top `LIMIT`
    as (kind, id, score rounded to `fts.SCORE_DIGITS`)."""
    req = SearchRequest(query, limit=LIMIT, scope=scope)
    analysis = analyze(query)
    hits = []
    for corpus in CORPORA[Scope(scope)]:
        hits.extend(module.search_corpus(conn, req, analysis, corpus))
    hits.sort(key=lambda h: (-fts.tie_key(h.score), h.kind, -h.id))
    return [(h.kind, h.id, fts.tie_key(h.score)) for h in hits[:LIMIT]]


def percentile(xs: list[float], pct: float) -> float:
    """Linear-interpolated percentile (`pct` in 0–1) of `xs` (non-empty)."""
    s = sorted(xs)
    k = (len(s) - 1) * pct
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def run(dsn: str, versions: dict[str, ModuleType], rounds: int, only: set[str] | None) -> dict:
    """{version: {query id: {"ms": [...], "cpu": [...], "answers": set}}} over `rounds`."""
    queries = [q for q in load_queries() if not only or q.id in only]
    names = list(versions)
    out = {v: {q.id: {"ms": [], "cpu": [], "answers": set()} for q in queries} for v in names}
    with psycopg.connect(dsn, autocommit=True) as conn:
        pid = conn.info.backend_pid
        for q in queries:  # warm-up
            for v in names:
                search_with(versions[v], conn, q.q, q.scope)
        for r in range(rounds):
            order = names if r % 2 == 0 else names[::-1]
            for q in queries:
                for v in order:
                    c0, t0 = backend_cpu_ms(pid), time.perf_counter()
                    answer = search_with(versions[v], conn, q.q, q.scope)
                    row = out[v][q.id]
                    row["ms"].append((time.perf_counter() - t0) * 1000)
                    row["cpu"].append(backend_cpu_ms(pid) - c0)
                    row["answers"].add(tuple(answer))
    return out


def report(out: dict) -> str:
    """Markdown: per query the medians of each version and whether the answers agree; then the
    p50/p95 of the per-query medians and the totals."""
    names = list(out)
    first = out[names[0]]
    lines = [
        "| query | " + " | ".join(f"{v} ms / CPU ms" for v in names) + " | answers |",
        "|---" * (len(names) + 2) + "|",
    ]
    for qid in first:
        cells = [
            f"{statistics.median(out[v][qid]['ms']):.0f} / {statistics.median(out[v][qid]['cpu']):.0f}" for v in names
        ]
        answers = [out[v][qid]["answers"] for v in names]
        same = all(len(a) == 1 for a in answers) and all(a == answers[0] for a in answers)
        lines.append(f"| {qid} | " + " | ".join(cells) + f" | {'same' if same else 'DIFFER'} |")
    for v in names:
        ms = [statistics.median(r["ms"]) for r in out[v].values()]
        cpu = [statistics.median(r["cpu"]) for r in out[v].values()]
        total = sum(sum(r["cpu"]) for r in out[v].values())
        lines.append(
            f"\n{v}: wall p50 {percentile(ms, 0.5):.1f} p95 {percentile(ms, 0.95):.1f} ms; "
            f"server CPU p50 {percentile(cpu, 0.5):.0f} p95 {percentile(cpu, 0.95):.0f} ms; total {total:,.0f} ms"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, required=True, help="agent-history data dir of a built catalogue")
    ap.add_argument("--before", default="main", help="git ref of the 'before' fts.py (default main)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--only", default="", help="comma-separated query ids (default: all)")
    args = ap.parse_args(argv)
    pgdata = args.data_dir.expanduser().resolve() / "pg"
    started = embedded.socket_dir(pgdata) is None
    dsn = embedded.ensure_running(pgdata)
    try:
        load0 = os.getloadavg()
        out = run(
            dsn, {"before": module_at(args.before), "after": fts}, args.rounds, set(filter(None, args.only.split(",")))
        )
        load1 = os.getloadavg()
        print(
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.rounds} rounds, load average "
            f"{load0[0]:.1f} → {load1[0]:.1f}, before = {args.before}\n"
        )
        print(report(out))
    finally:
        if started:
            embedded.stop(pgdata)


if __name__ == "__main__":
    main()
