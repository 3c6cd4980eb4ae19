"""`just bench-compare`: agent-history beside agentsview on one scaled home (issue 18; not a test).

    python -m benchmarks.compare [--scale 10] [--runs 3] [--work DIR] [--keep]

Builds the shared corpus cloned SCALE times with fresh ids (``../shared/tools/scale_home.py``),
then measures each figure as a user sees it — whole processes, median of RUNS:

- cold ingest: `agent-history index` on a private embedded server that was started (and
  migrated) beforehand, so server start-up is reported on its own line; wall time, MB/s, CPU of
  the client (wait4 rusage) and of the server (utime+stime of the postmaster and its reaped
  children from /proc), peak RSS of the client;
- store: `pg_database_size` of the catalogue (and its ratio to the raw bytes), the whole data
  dir, and its `pg_wal`;
- a pass with no changes, `search` p50 over a fixed query mix, `--version` — as a user's second
  command sees them: the cold `index` (run in process: nothing was resident yet) starts the
  resident query process when it ends, as any eligible command does (`cli.resident`), and the
  measurement waits until it answers (``service start`` returns once it does; it starts none
  when that one runs) with ``[service] query_idle_s`` at its default (an inherited
  ``AGENT_HISTORY_QUERY_IDLE_S`` is dropped), so `index` and `search` go through it; it is
  stopped with the embedded server;
- the same for agentsview when its command is on PATH or beside this Python (``pip install
  agentsview``), pointed at the same home through CLAUDE_PROJECTS_DIR, CODEX_SESSIONS_DIR,
  PI_DIR, AGENTSVIEW_DATA_DIR and AGENTSVIEW_NO_DAEMON=1 (`agentsview sync`, `agentsview session
  search`); its store is the size of its data dir;
- the ceiling: reading every byte and parsing every line with orjson on one core.

Prints one table (figure, agent-history, agentsview, ratio = agent-history / agentsview; below
1.0 means agent-history is faster or smaller). Each run uses fresh temporary directories.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# Queries from the shared corpus (identifiers, a path, ordinary words, a phrase).
QUERIES = ("migration", "AudioWorklet", "pool.py", "rate limit", "fix the failing test")


@dataclass
class Proc:
    """One finished process: wall seconds, CPU seconds (user+sys), peak RSS in MB, exit code."""

    wall: float
    cpu: float
    rss_mb: float
    code: int
    stdout: bytes = b""


@dataclass
class Figures:
    """Measured figures of one tool, keyed by the table's row names (None = not measured)."""

    values: dict[str, float | None] = field(default_factory=dict)


def run(cmd: list[str], env: dict[str, str]) -> Proc:
    """Run `cmd` to completion; CPU (user+sys) and peak RSS from wait4's rusage of that process
    (including the descendants it waited for)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code not in (0, 1):
        sys.stderr.write(f"{' '.join(cmd)} exited {code}: {stderr.decode(errors='replace')[-500:]}\n")
    return Proc(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, stdout)


def server_cpu(pgdata: Path) -> float:
    """CPU seconds used so far by the embedded server: the postmaster's own and its reaped
    children's (fields utime, stime, cutime, cstime of /proc/PID/stat) plus live children's."""
    tick = os.sysconf("SC_CLK_TCK")
    pid = int((pgdata / "postmaster.pid").read_text().split()[0])

    def stat(p: int) -> list[str]:
        text = Path(f"/proc/{p}/stat").read_text()
        return text[text.rindex(")") + 2 :].split()

    fields = stat(pid)
    total = sum(int(x) for x in fields[11:15])
    for child in Path("/proc").iterdir():
        if child.name.isdigit() and int(child.name) != pid:
            try:
                f = stat(int(child.name))
            except (OSError, ValueError):
                continue
            if int(f[1]) == pid:  # ppid
                total += int(f[11]) + int(f[12])
    return total / tick


def settled_server_cpu(pgdata: Path, timeout_s: float = 15.0) -> float:
    """`server_cpu` once the backends a finished client leaves have been reaped: read every half
    second until no child of the postmaster is a zombie (an exited, unreaped process shows no CPU
    in /proc) and two readings agree within 0.05 s (at most `timeout_s`). Read at the client's
    exit, the figure could miss the writer backend's whole CPU (a cold ×10 load: 8.59 s at exit,
    19.71 s three seconds later; docs/performance.md, decision 16)."""
    pid = int((pgdata / "postmaster.pid").read_text().split()[0])

    def zombies() -> bool:
        for child in Path("/proc").iterdir():
            if child.name.isdigit():
                try:
                    text = (child / "stat").read_text()
                except OSError:
                    continue
                f = text[text.rindex(")") + 2 :].split()
                if f[0] == "Z" and int(f[1]) == pid:
                    return True
        return False

    last = server_cpu(pgdata)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = server_cpu(pgdata)
        if now - last < 0.05 and not zombies():
            return now
        last = now
    return last


def du(path: Path) -> int:
    """Bytes of the files under `path` (0 when absent)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def raw_parse(home: Path) -> tuple[int, float]:
    """(bytes, seconds) to read every transcript under `home` and parse each line with orjson."""
    files = [p for p in home.rglob("*.jsonl") if p.is_file()]
    start = time.perf_counter()
    total = 0
    for p in files:
        data = p.read_bytes()
        total += len(data)
        for line in data.splitlines():
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
    return total, time.perf_counter() - start


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def measure_agent_history(home: Path, work: Path, runs: int, raw_bytes: int) -> Figures:
    """The figures for agent-history (see the module docstring)."""
    import psycopg

    from agent_history.db import embedded

    exe = [sys.executable, "-m", "agent_history"]
    fig = Figures()
    cold, cpu_client, cpu_server, rss, size, ratio, data_dir, wal, started = ([] for _ in range(9))
    for i in range(runs):
        data = work / f"ah-{i}"
        (work / "config.toml").touch()
        env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(data))
        env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
        for key in (
            "AGENT_HISTORY_DSN",
            "AGENT_HISTORY_READER_DSN",
            "AGENT_HISTORY_QUERY_IDLE_S",
            "PYTHONDONTWRITEBYTECODE",
        ):
            env.pop(key, None)
        started.append(run([*exe, "db", "status", "--json"], env).wall)
        pgdata = data / "pg"
        before = server_cpu(pgdata)
        p = run([*exe, "index"], env)
        cold.append(p.wall)
        cpu_client.append(p.cpu)
        rss.append(p.rss_mb)
        cpu_server.append(settled_server_cpu(pgdata) - before)
        with psycopg.connect(embedded.server_dsn(pgdata)) as conn:
            conn.execute("CHECKPOINT")
            db_bytes = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        size.append(db_bytes / 1e6)
        ratio.append(db_bytes / raw_bytes)
        data_dir.append(du(data) / 1e6)
        wal.append(du(pgdata / "pg_wal") / 1e6)
        if i < runs - 1:
            run([*exe, "service", "stop"], env)
            embedded.stop(pgdata)
    fig.values.update(
        {
            "server first start (s)": median(started),
            "cold ingest (s)": median(cold),
            "cold ingest (MB/s)": raw_bytes / 1e6 / median(cold),
            "CPU of cold ingest, client (s)": median(cpu_client),
            "CPU of cold ingest, server (s)": median(cpu_server),
            "peak RSS, client (MB)": max(rss),
            "store: catalogue database (MB)": median(size),
            "store: catalogue / raw bytes": median(ratio),
            "store: data dir (MB)": median(data_dir),
            "store: pg_wal (MB)": median(wal),
        }
    )
    run([*exe, "service", "start"], env)  # the one the cold index started, once it answers
    fig.values["pass with no changes (s)"] = median([run([*exe, "index"], env).wall for _ in range(runs)])
    fig.values["search p50 (ms)"] = 1000 * median(
        [run([*exe, "search", q, "--limit", "10"], env).wall for q in QUERIES for _ in range(runs)]
    )
    fig.values["--version (ms)"] = 1000 * median([run([*exe, "--version"], env).wall for _ in range(max(runs, 5))])
    run([*exe, "service", "stop"], env)
    embedded.stop(data / "pg")
    return fig


def agentsview_exe() -> str | None:
    """The agentsview command: beside this Python (pip install agentsview), else on PATH."""
    beside = Path(sys.executable).with_name("agentsview")
    return str(beside) if beside.exists() else shutil.which("agentsview")


def measure_agentsview(exe: str, home: Path, work: Path, runs: int, raw_bytes: int) -> Figures:
    """The figures for agentsview (see the module docstring)."""
    fig = Figures()
    cold, cpu, rss, store = [], [], [], []
    for i in range(runs):
        data = work / f"av-{i}"
        env = dict(
            os.environ,
            HOME=str(work / "av-home"),
            CLAUDE_PROJECTS_DIR=str(home / ".claude" / "projects"),
            CODEX_SESSIONS_DIR=str(home / ".codex" / "sessions"),
            PI_DIR=str(home / ".pi" / "agent" / "sessions"),
            AGENTSVIEW_DATA_DIR=str(data),
            AGENTSVIEW_NO_DAEMON="1",
        )
        p = run([exe, "sync"], env)
        cold.append(p.wall)
        cpu.append(p.cpu)
        rss.append(p.rss_mb)
        store.append(du(data))
    fig.values.update(
        {
            "cold ingest (s)": median(cold),
            "cold ingest (MB/s)": raw_bytes / 1e6 / median(cold),
            "CPU of cold ingest, client (s)": median(cpu),
            "peak RSS, client (MB)": max(rss),
            "store: data dir (MB)": median(store) / 1e6,
            "store: catalogue / raw bytes": median(store) / raw_bytes,
        }
    )
    fig.values["pass with no changes (s)"] = median([run([exe, "sync"], env).wall for _ in range(runs)])
    fig.values["search p50 (ms)"] = 1000 * median(
        [run([exe, "session", "search", q], env).wall for q in QUERIES for _ in range(runs)]
    )
    fig.values["--version (ms)"] = 1000 * median([run([exe, "--version"], env).wall for _ in range(max(runs, 5))])
    return fig


ROWS = (
    "server first start (s)",
    "cold ingest (s)",
    "cold ingest (MB/s)",
    "CPU of cold ingest, client (s)",
    "CPU of cold ingest, server (s)",
    "peak RSS, client (MB)",
    "store: catalogue database (MB)",
    "store: catalogue / raw bytes",
    "store: data dir (MB)",
    "store: pg_wal (MB)",
    "pass with no changes (s)",
    "search p50 (ms)",
    "--version (ms)",
)


def table(ours: Figures, theirs: Figures | None, raw: tuple[int, float], files: int) -> str:
    """The comparison as a Markdown table."""

    def cell(v: float | None) -> str:
        return "—" if v is None else (f"{v:,.2f}" if v < 100 else f"{v:,.0f}")

    lines = [
        f"home: {files:,} files, {raw[0] / 1e6:,.0f} MB; raw read + orjson on one core: {raw[1]:.2f} s "
        f"({raw[0] / 1e6 / raw[1]:,.0f} MB/s)",
        "",
        "| figure | agent-history | agentsview | ratio |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        a = ours.values.get(row)
        b = theirs.values.get(row) if theirs else None
        ratio = f"{a / b:.2f}" if a is not None and b else "—"
        lines.append(f"| {row} | {cell(a)} | {cell(b)} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10, help="clones of the shared corpus home (default 10)")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure; medians are reported (default 3)")
    ap.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working directory")
    args = ap.parse_args(argv)
    corpus = SHARED / "corpus" / "home"
    scaler = SHARED / "tools" / "scale_home.py"
    if not corpus.is_dir() or not scaler.exists():
        sys.exit(f"error: {corpus} and {scaler} are needed (../shared beside the repository)")
    work = args.work or Path(tempfile.mkdtemp(prefix="ah-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    try:
        if not home.exists():
            subprocess.run([sys.executable, str(scaler), str(corpus), str(home), str(args.scale)], check=True)
        files = sum(1 for p in home.rglob("*") if p.is_file())
        raw = raw_parse(home)
        ours = measure_agent_history(home, work, args.runs, raw[0])
        exe = agentsview_exe()
        theirs = measure_agentsview(exe, home, work, args.runs, raw[0]) if exe else None
        if exe is None:
            print("agentsview not installed (pip install agentsview): its column is empty", file=sys.stderr)
        print(table(ours, theirs, raw, files))
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
