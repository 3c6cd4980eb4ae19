"""The timeline of one cold load: which side works in each phase (issue 27; a measurement, not a test).

    python -m benchmarks.timeline --home HOME [--tree DIR ...] [--runs N] [--work DIR] [--json OUT]

For each run and each tree (a checkout of agent-history; default this one; several trees are
run alternately, run 1 of each, then run 2 of each, … — interleaved pairs), a private embedded
server is started and migrated beforehand (``db status``), then ``agent-history index`` of
HOME runs as its own process with that tree first on ``PYTHONPATH``. In that process the
functions that open or close a phase of the pass (`SPANS`) are wrapped to log their start and
end (``time.monotonic``, the same clock in every process); meanwhile this process samples, every
`SAMPLE_S`, the CPU of the client (the ``index`` process, its threads and its parse workers:
utime+stime of each, reaped children included) and of the server (the postmaster and each
backend) from ``/proc/<pid>/stat``.

Each phase of `PHASES` runs from one logged event to the next; its client and server CPU are the
sampled totals interpolated at its ends. Prints, per tree, a Markdown table (medians over the
runs): phase → wall s, client CPU s, server CPU s, cores busy (their sum / wall), and the load
average. Sampling costs this process about 2 % of a core. Rows:

| phase | from → to |
|---|---|
| start-up | process start → `Loader.run` (interpreter, imports, settings, first connection, migration check) |
| discovery | `Loader.run` → the bulk path's choice (runs row, file walk, stat, claims, registering files) |
| bulk begin | `pass_start.begin_bulk` (the mark, indexes dropped, triggers off, settings widened) |
| pipeline fill | → the writer's first batch (the first batch parsed; the server idle) |
| load | → the last batch committed (`Loader.drain` returns) |
| post-passes | `run_postpasses` |
| bulk end | `bulk.finish` (its parts: `_end` — index builds, recount —, `compact`, `reindex`, `VACUUM FULL ah.search_term`, `settle_wal`) |
| exit | → process end (the run's row, the CLI's checkpoint, the resident process started) |
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SAMPLE_S = 0.05
"""Seconds between two CPU samples."""

SPANS: tuple[tuple[str, str, str], ...] = (
    ("agent_history.cli.app", "main", "cli"),
    ("agent_history.ingest.loader", "Loader.run", "run"),
    ("agent_history.ingest.loader", "Loader._begin_bulk", "begin_bulk"),
    ("agent_history.ingest.loader", "Loader._start_pool", "start_pool"),
    ("agent_history.ingest.loader", "Loader._write_batch", "write_batch"),
    ("agent_history.ingest.loader", "Loader.drain", "drain"),
    ("agent_history.ingest.loader", "run_postpasses", "postpasses"),
    ("agent_history.ingest.loader", "sessions_stored_elsewhere", "stored_elsewhere"),
    ("agent_history.ingest.loader", "finish_run", "finish_run"),
    # the same spans after the loader's split (pass_start, append, batch_writer, pass_end)
    ("agent_history.ingest.pass_start", "begin_bulk", "begin_bulk"),
    ("agent_history.ingest.append", "start_pool", "start_pool"),
    ("agent_history.ingest.batch_writer", "BatchWriter.write_batch", "write_batch"),
    ("agent_history.ingest.pass_end", "run_postpasses", "postpasses"),
    ("agent_history.ingest.pass_end", "sessions_stored_elsewhere", "stored_elsewhere"),
    ("agent_history.ingest.bulk", "finish", "bulk_finish"),
    ("agent_history.ingest.bulk", "_end", "bulk_end_txn"),
    ("agent_history.ingest.bulk", "compact", "compact"),
    ("agent_history.ingest.bulk", "reindex", "reindex"),
    ("agent_history.ingest.bulk", "recompute_statistics", "recount"),
    ("agent_history.db.tables.search_stats", "build_index", "gin_build"),
    ("agent_history.db.tables.search_stats", "vacuum_full", "vacuum_full"),
    ("agent_history.db.embedded", "settle_wal", "settle_wal"),
    ("agent_history.db.embedded", "checkpoint", "cli_checkpoint"),
    ("agent_history.cli.app", "_start_resident", "start_resident"),
    ("agent_history.ingest.bulk", "EarlyCheckpoint.wait", "early_checkpoint_wait"),
)
"""(module, attribute, span name) of the functions logged in the ``index`` process; a name that
does not exist in a tree is skipped (older trees)."""

PHASES: tuple[tuple[str, tuple[str, str], tuple[str, str]], ...] = (
    ("start-up", ("proc", "start"), ("run", "start")),
    ("discovery", ("run", "start"), ("begin_bulk", "start")),
    ("bulk begin", ("begin_bulk", "start"), ("begin_bulk", "end")),
    ("pipeline fill", ("begin_bulk", "end"), ("write_batch", "start")),
    ("load", ("write_batch", "start"), ("drain", "end")),
    ("post-passes", ("postpasses", "start"), ("postpasses", "end")),
    ("· wait for the early checkpoint", ("early_checkpoint_wait", "start"), ("early_checkpoint_wait", "end")),
    ("bulk end", ("bulk_finish", "start"), ("bulk_finish", "end")),
    ("· end transaction (GIN builds, recount)", ("bulk_end_txn", "start"), ("bulk_end_txn", "end")),
    ("· compact (helper connection)", ("compact", "start"), ("compact", "end")),
    ("· reindex", ("reindex", "start"), ("reindex", "end")),
    ("· · GIN builds", ("gin_build", "start"), ("gin_build", "end")),
    ("· · statistics recount", ("recount", "start"), ("recount", "end")),
    ("· settle_wal (CHECKPOINT)", ("settle_wal", "start"), ("settle_wal", "end")),
    ("exit", ("bulk_finish", "end"), ("proc", "end")),
    ("· the run's row", ("finish_run", "start"), ("finish_run", "end")),
    ("· the CLI's checkpoint", ("cli_checkpoint", "start"), ("cli_checkpoint", "end")),
    ("· resident process started", ("start_resident", "start"), ("start_resident", "end")),
    ("whole process", ("proc", "start"), ("proc", "end")),
)
"""Table rows: (phase, (span, first start | last end) it runs from, … to). A span's "start" is its
first call's start, its "end" its last call's end; ``proc`` is the ``index`` process."""


# -- the index process -----------------------------------------------------------------------------
def _child(out: str) -> None:
    """Run ``agent-history index`` in this process with `SPANS` logged to `out` (JSON)."""
    import importlib

    events: list[tuple[str, float, float, str]] = []
    lock = threading.Lock()

    def wrap(owner, attr: str, name: str) -> None:
        fn = getattr(owner, attr, None)
        if fn is None:
            return

        def logged(*args, **kwargs):
            t0 = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                with lock:
                    events.append((name, t0, time.monotonic(), threading.current_thread().name))

        setattr(owner, attr, logged)

    for module, attr, name in SPANS:
        try:
            owner = importlib.import_module(module)
        except ImportError:
            continue
        *path, last = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is not None:
            wrap(owner, last, name)
    from agent_history.cli import app

    sys.argv = ["agent-history", "index"]
    code = 0
    try:
        app.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        with open(out, "w") as fh:
            json.dump({"events": events, "end": time.monotonic()}, fh)
    sys.exit(code)


# -- sampling ---------------------------------------------------------------------------------------
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, utime+stime, cutime+cstime) of `pid` in clock ticks, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    f = text[text.rindex(")") + 2 :].split()
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])


def _tree_cpu(root: int) -> float:
    """CPU seconds of `root` and its descendants now: each live one's own, plus `root`'s reaped
    children's (a descendant reaped by another descendant is in that one's reaped total only
    once it is reaped; the parse workers are `root`'s children)."""
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = _stat(int(d))
            if s is not None:
                procs[int(d)] = s
    if root not in procs:
        return float("nan")
    total = procs[root][1] + procs[root][2]
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, own, _) in procs.items():
            if ppid == parent:
                total += own
                frontier.append(pid)
    return total / TICK


class Sampler(threading.Thread):
    """Samples (monotonic time, client CPU s, server CPU s) every `SAMPLE_S` until `stop`."""

    def __init__(self, client: int, postmaster: int) -> None:
        super().__init__(daemon=True)
        self.client, self.postmaster = client, postmaster
        self.samples: list[tuple[float, float, float]] = []
        self.halt = threading.Event()

    def sample(self) -> None:
        t = time.monotonic()
        self.samples.append((t, _tree_cpu(self.client), _tree_cpu(self.postmaster)))

    def run(self) -> None:
        while not self.halt.is_set():
            self.sample()
            self.halt.wait(SAMPLE_S)


def _at(samples: list[tuple[float, float, float]], t: float, k: int) -> float:
    """Column `k` of `samples` linearly interpolated at time `t` (NaN samples skipped)."""
    pts = [(s[0], s[k]) for s in samples if s[k] == s[k]]
    if not pts:
        return float("nan")
    if t <= pts[0][0]:
        return pts[0][1]
    for (t0, v0), (t1, v1) in zip(pts, pts[1:], strict=False):
        if t0 <= t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1
    return pts[-1][1]


# -- one run ----------------------------------------------------------------------------------------
def one_run(tree: Path, home: Path, work: Path) -> dict:
    """One cold ``index`` of `home` with `tree`'s code on a fresh embedded server → {phase: figures}."""
    env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(work / "data"), PYTHONPATH=str(tree))
    (work / "config.toml").touch()
    env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
    for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN", "AGENT_HISTORY_QUERY_IDLE_S"):
        env.pop(key, None)
    subprocess.run(
        [sys.executable, "-m", "agent_history", "db", "status", "--json"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    pgdata = work / "data" / "pg"
    try:
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        events_file, err_file = work / "events.json", work / "stderr.txt"
        load = os.getloadavg()[0]
        started = time.monotonic()
        with err_file.open("wb") as err_fh:  # the child holds its own copy
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--child", str(events_file)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err_fh,
                cwd=str(work),
            )
        sampler = Sampler(proc.pid, postmaster)
        sampler.samples.append((started, 0.0, _tree_cpu(postmaster)))
        sampler.start()
        # wait4 keeps the process (and its /proc entry) until the sampler's last look: its final CPU
        # is rusage's, taken at the process end
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.monotonic()
        sampler.halt.set()
        sampler.join()
        err = err_file.read_text(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            sys.stderr.write(f"index exited {os.waitstatus_to_exitcode(status)}: {err[-800:]}\n")
        server_end = _tree_cpu(postmaster)
        sampler.samples.append((ended, usage.ru_utime + usage.ru_stime, server_end))
        load = (load + os.getloadavg()[0]) / 2
        logged = json.loads(events_file.read_text())
        marks: dict[tuple[str, str], float] = {("proc", "start"): started, ("proc", "end"): ended}
        for name, t0, t1, _thread in logged["events"]:
            marks[(name, "start")] = min(marks.get((name, "start"), t0), t0)
            marks[(name, "end")] = max(marks.get((name, "end"), t1), t1)
        rows = {}
        for phase, a, b in PHASES:
            if a not in marks or b not in marks:
                continue
            t0, t1 = marks[a], marks[b]
            client = _at(sampler.samples, t1, 1) - _at(sampler.samples, t0, 1)
            server = _at(sampler.samples, t1, 2) - _at(sampler.samples, t0, 2)
            rows[phase] = {"wall_s": t1 - t0, "client_cpu_s": client, "server_cpu_s": server}
        wal_mb = sum(f.stat().st_size for f in (pgdata / "pg_wal").iterdir() if f.is_file()) / 1e6
    finally:
        subprocess.run(
            [sys.executable, "-m", "agent_history", "service", "stop"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; from agent_history.db import embedded; "
                "embedded.stop(Path(sys.argv[1]))",
                str(pgdata),
            ],
            env=env,
            check=False,
        )
    return {"load": load, "phases": rows, "pg_wal_mb": wal_mb}


def table(runs: list[dict]) -> str:
    """Medians over `runs` (results of `one_run` of one tree) as a Markdown table."""
    lines = [
        "| phase | wall s | client CPU s | server CPU s | cores busy |",
        "|---|---|---|---|---|",
    ]
    for phase, _, _ in PHASES:
        got = [r["phases"][phase] for r in runs if phase in r["phases"]]
        if not got:
            continue
        w, c, s = (statistics.median(g[k] for g in got) for k in ("wall_s", "client_cpu_s", "server_cpu_s"))
        lines.append(f"| {phase} | {w:.2f} | {c:.2f} | {s:.2f} | {(c + s) / w if w > 0 else 0:.2f} |")
    loads = [r["load"] for r in runs]
    wal = [r["pg_wal_mb"] for r in runs]
    lines.append(
        f"\nload average {min(loads):.2f}–{max(loads):.2f}, {len(runs)} run(s); "
        f"pg_wal after the pass {min(wal):.1f}–{max(wal):.1f} MB"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="the home to index (e.g. a ×10 scaled corpus)")
    ap.add_argument("--tree", type=Path, action="append", help="a checkout to run (repeatable; default this one)")
    ap.add_argument("--runs", type=int, default=1, help="runs per tree, interleaved (default 1)")
    ap.add_argument("--work", type=Path, help="working directory (default: a new temporary one, removed)")
    ap.add_argument("--json", type=Path, help="also write every run's figures here")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parents[1]])]
    work = args.work or Path(tempfile.mkdtemp(prefix="ah-timeline-"))
    results: dict[str, list[dict]] = {str(t): [] for t in trees}
    try:
        for i in range(args.runs):
            for j, tree in enumerate(trees):
                run_dir = work / f"run-{i}-{j}"
                shutil.rmtree(run_dir, ignore_errors=True)
                run_dir.mkdir(parents=True)
                r = one_run(tree, args.home.resolve(), run_dir)
                results[str(tree)].append(r)
                whole = r["phases"].get("whole process", {})
                print(f"run {i} {tree}: {whole.get('wall_s', 0):.2f} s, load {r['load']:.2f}", file=sys.stderr)
                shutil.rmtree(run_dir, ignore_errors=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        for tree, runs in results.items():
            print(f"\n### {tree}\n")
            print(table(runs))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
