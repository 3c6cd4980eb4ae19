"""Where a pass with no changes spends its time, phase by phase (issue 27; not a test).

    python -m benchmarks.nochange_phases [--runs 9] [--resident]

Runs ``python -m agent_history index`` in process RUNS times against the configuration of the
calling environment (``HOME``, ``AGENT_HISTORY_DATA_DIR``, ``AGENT_HISTORY_CONFIG``: point it at a
home already indexed, so the pass finds nothing to read), each run in a fresh interpreter whose
phases are timed by wrapping the functions that do them (wall and this process's CPU, ms):
interpreter start (what ``python -c pass`` costs), imports (the CLI, typer, psycopg, the loader),
settings, the first-use check (schema, roles) with the rebuild check on one connection, the
connection pool, then inside the pass: the pass locks, the killed-run check and the run
row, discovery with a ``stat`` per file, this host's claims and missing files, the ``source_file``
lookup, the bulk-path check, the post-passes over dirty sessions, the run row's end; and the
summary line. ``--resident`` measures the same phases in a child forked from a process that
preloaded what the resident query process preloads (`cli.resident_preload.preload`): what a pass
through it costs besides the hand-offs. Prints the medians as a Markdown table with the load
average before and after; the sum of the rows is the whole process (the rest is "other").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PHASES = (
    (
        "settings and sources (config, harness registry)",
        "agent_history.cli.index",
        "database|resolve_sources|_explicit_namespaces|_check_parse_workers",
    ),
    ("retention warnings", "agent_history.ingest.archive.retention", "retention_warnings"),
    (
        "first-use check's full path (start, migrate; 0 when all is ready)",
        "agent_history.db.connection",
        "Database.dsn",
    ),
    ("connection pool (opened; connections made in its threads)", "agent_history.db.connection", "Database.pool"),
    ("first-use check + rebuild check (one connection)", "agent_history.cli.index", "_warn_if_rebuild_interrupted"),
    ("pass locks (take + release)", "agent_history.ingest.pass_locks", "PassLocks.take|PassLocks.release"),
    ("killed-run check", "agent_history.ingest.loader", "mark_killed_runs"),
    ("discovery (the walk; a stat per file is in other)", "agent_history.ingest.pass_start", "iter_files"),
    ("claims + missing files (host_files)", "agent_history.ingest.loader", "claim|mark_missing"),
    ("source_file lookup (one set-based query)", "agent_history.ingest.pass_start", "known_files|register"),
    ("bulk-path check", "agent_history.ingest.pass_start", "begin_bulk"),
    ("post-passes (dirty sessions, loops at now)", "agent_history.ingest.pass_end", "run_postpasses"),
    ("summary line", "agent_history.cli.index", "_summary_line"),
)

_CHILD = r"""
import builtins, json, os, sys, time
T0 = (time.perf_counter(), time.process_time())
spent = {}
stack = []  # [name, wall at (re)start, cpu at (re)start]: exclusive times, the innermost phase's

def _charge():
    if stack:
        top = stack[-1]
        w, c = time.perf_counter(), time.process_time()
        s = spent.setdefault(top[0], [0.0, 0.0])
        s[0] += w - top[1]
        s[1] += c - top[2]
        top[1], top[2] = w, c

def timed(name, fn):
    def wrapper(*a, **kw):
        _charge()
        stack.append([name, time.perf_counter(), time.process_time()])
        try:
            out = fn(*a, **kw)
            if hasattr(out, "__next__"):
                out = list(out)
            return out
        finally:
            _charge()
            stack.pop()
            if stack:
                stack[-1][1], stack[-1][2] = time.perf_counter(), time.process_time()
    return wrapper

_real_import = builtins.__import__
def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name in sys.modules and not fromlist:
        return _real_import(name, globals, locals, fromlist, level)
    return timed("imports", _real_import)(name, globals, locals, fromlist, level)
PHASES = json.loads(sys.argv[1])
resident = sys.argv[2] == "1"
import importlib
def patch(name, module, targets):
    mod = importlib.import_module(module)
    for target in targets.split("|"):
        owner = mod
        *path, attr = target.split(".")
        for p in path:
            owner = getattr(owner, p)
        fn = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        if isinstance(fn, property) or type(fn).__name__ == "cached_property":
            inner = fn.func
            import functools
            new = functools.cached_property(timed(name, inner))
            new.__set_name__(owner, attr)
            setattr(owner, attr, new)
        else:
            setattr(owner, attr, timed(name, fn))
argv = ["index"]
sys.argv = ["agent-history", *argv]
if resident:
    from agent_history.cli import resident_preload
    resident_preload.preload()
    from agent_history.cli import app as cli_app
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.waitpid(pid, 0)
        sys.stderr.write(data.decode())
        sys.exit(0)
    os.close(r)
    T0 = (time.perf_counter(), time.process_time())
    cli_app.reset_for_process()
else:
    w = 2
from agent_history.cli import app as cli_app
import importlib as _il
_real_import_module = _il.import_module
_il.import_module = lambda name, package=None: (
    _real_import_module(name, package) if name in sys.modules else timed("imports", _real_import_module)(name, package)
)
builtins.__import__ = _import
orig_register = cli_app._register
def register_then_patch(command=None):
    orig_register(command)
    for name, module, targets in PHASES:
        patch(name, module, targets)
cli_app._register = register_then_patch
stack.append(["other", time.perf_counter(), time.process_time()])
try:
    cli_app.run(argv)
except SystemExit:
    pass
getattr(cli_app, "_spare_exit_collection", lambda: None)()  # what `main` does before the exit
_charge()
sys.stdout.flush()
wall, cpu = time.perf_counter() - T0[0], time.process_time() - T0[1]
os.write(w, ("PHASES " + json.dumps({"spent": spent, "wall": wall, "cpu": cpu}) + "\n").encode())
if resident:
    os._exit(0)
"""


def one_run(resident: bool) -> dict:
    """One interpreter: its phases, its whole wall and CPU (seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, json.dumps(PHASES), "1" if resident else "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "AGENT_HISTORY_QUERY_IDLE_S": "0"},
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    line = next((x for x in err.splitlines() if x.startswith("PHASES ")), None)
    if line is None:
        sys.exit(f"no phases: {err[-800:]}")
    data = json.loads(line[len("PHASES ") :])
    data["process_wall"], data["process_cpu"] = wall, usage.ru_utime + usage.ru_stime
    return data


def floor() -> tuple[float, float]:
    """(wall, CPU) seconds of ``python -c pass``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="benchmarks.nochange_phases")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--resident", action="store_true", help="in a child forked after the resident preload")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    one_run(args.resident)  # warm the page cache and the bytecode caches
    runs, floors = [], []
    for _ in range(args.runs):
        floors.append(floor())
        runs.append(one_run(args.resident))
    load1 = os.getloadavg()[0]

    def med(values: list[float]) -> str:
        return f"{1000 * statistics.median(values):.0f}"

    rows = []
    if not args.resident:
        rows.append(("interpreter start (`python -c pass`)", [f[0] for f in floors], [f[1] for f in floors]))
    for name in ("imports", *(p[0] for p in PHASES)):
        rows.append(
            (name, [r["spent"].get(name, [0, 0])[0] for r in runs], [r["spent"].get(name, [0, 0])[1] for r in runs])
        )
    total_w = [r["process_wall"] if not args.resident else r["wall"] for r in runs]
    total_c = [r["process_cpu"] if not args.resident else r["cpu"] for r in runs]
    named_w = [sum(v[i] for _, v, _ in rows) for i in range(len(runs))]
    named_c = [sum(v[i] for _, _, v in rows) for i in range(len(runs))]
    other_w = [t - n for t, n in zip(total_w, named_w, strict=True)]
    other_c = [t - n for t, n in zip(total_c, named_c, strict=True)]
    rows.append(("other (typer, the run row, a stat per file, interpreter exit)", other_w, other_c))
    way = "a child of the resident preload" if args.resident else "in process, whole process"
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load average "
          f"{load0:.1f} → {load1:.1f}; {args.runs} runs, medians; {way}; ms")  # fmt: skip
    print()
    print("| phase | wall | CPU (this process) |")
    print("|---|---|---|")
    for name, walls, cpus in rows:
        print(f"| {name} | {med(walls)} | {med(cpus)} |")
    print(f"| **whole** | **{med(total_w)}** | **{med(total_c)}** |")


if __name__ == "__main__":
    main()
