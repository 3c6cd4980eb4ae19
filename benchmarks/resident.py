"""Whole-process time of the read commands, in process and through the resident query process
(issue 27 item 5: p50 ≤ 250 ms wall for search, sessions, session, why, touched, status, usage
daily and statusline; index --file ≤ 300 ms; --version ≤ 100 ms).

``python -m benchmarks.resident [--runs N] [--write docs/performance.md] [--home DIR]`` (``just
bench-resident``) indexes ``../shared/corpus/home`` (or ``--home DIR``, e.g. the corpus scaled ×10
by ``../shared/tools/scale_home.py``: then ``--only index`` — the other commands name corpus
sessions and files) into a private embedded server in a scratch data dir, starts the resident
process there (``service start``), then runs each command N times
both ways, interleaved (``AGENT_HISTORY_QUERY_IDLE_S=0`` for in process), as ``python -m
agent_history`` with stdout/stderr to files (not a terminal), and prints p50/p95 wall time, the
client's CPU (user+sys from wait4), the CPU its child used in the resident process (the
server's reaped-children time from ``/proc/PID/stat``, per command) and the CPU of the embedded
PostgreSQL per command (its postmaster's own and reaped backends' time, both ways together: the
connections and queries). CPU figures do not depend on the machine's load; on an idle machine a
resident command's wall time is about the sum of its three CPU columns plus the hand-offs between
the processes. ``--only NAME`` (repeatable) runs only the commands whose name starts with NAME.
Every run's exit code and stdout are checked to be the same both ways. Finally it stops the
resident process and the embedded server and removes the scratch directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "home"
SESSION = "9e953218"  # claude-local: the tokenizer/submodule session
STATUS_PAYLOAD = '{"session_id": "0fae0449-64d3-4788-8622-d3a47d82c14b", "model": {"id": "claude-sonnet-4-20250514"}}'
CORPUS_FILE = (
    ".claude/projects/-Users-user1-workspace-claude-code-log-sample/07f2e15c-a38b-454b-9148-60edc06de401.jsonl"
)
MARK_BEGIN = "<!-- bench-resident: begin -->"
MARK_END = "<!-- bench-resident: end -->"


def commands(sha: str, home: Path = CORPUS) -> dict[str, tuple[list[str], str]]:
    """Name → (argv after the program, stdin text); the pass with no changes is over `home`."""
    return {
        "search tokenizer --limit 3": (["search", "tokenizer", "--limit", "3"], ""),
        "search tokenizer --json": (["search", "tokenizer", "--limit", "3", "--json"], ""),
        "sessions --limit 20": (["sessions", "--limit", "20"], ""),
        f"session {SESSION} --to 20": (["session", SESSION, "--to", "20"], ""),
        "why SHA": (["why", sha], ""),
        "touched '**/*.py'": (["touched", "**/*.py"], ""),
        "status": (["status"], ""),
        "usage daily": (["usage", "daily"], ""),
        "statusline": (["statusline"], STATUS_PAYLOAD),
        "sql (count by agent)": (["sql", "SELECT agent, count(*) FROM ah.session GROUP BY 1"], ""),
        "recall tokenizer": (["recall", "tokenizer"], ""),
        "efficiency": (["efficiency"], ""),
        "pricing": (["pricing"], ""),
        "issues": (["issues"], ""),
        "index --file (unchanged)": (["index", "--home", str(CORPUS), "--file", str(CORPUS / CORPUS_FILE)], ""),
        "index (no changes)": (["index", "--home", str(home)], ""),
        "--version": (["--version"], ""),
    }


def run_once(argv: list[str], stdin: str, env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """(wall s, CPU s of the process and the children it waited for, exit code, stdout)."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        inp.write(stdin.encode())
        inp.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_history", *argv], env=env, stdin=inp, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), out.read()


def children_cpu(pid: int) -> float:
    """CPU seconds of the reaped children of `pid` (cutime + cstime)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` itself and its reaped children (utime + stime + cutime + cstime)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="benchmarks.resident")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--write", type=Path, help="Replace the bench-resident section of this Markdown file.")
    parser.add_argument("--only", action="append", default=[], help="Run only the commands starting with this.")
    parser.add_argument("--home", type=Path, default=CORPUS, help="The home indexed (default: the shared corpus).")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="ah-bench-resident-"))
    (tmp / "config.toml").touch()
    (tmp / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_") and k != "COLUMNS"}
    env.update(AGENT_HISTORY_CONFIG=str(tmp / "config.toml"), AGENT_HISTORY_DATA_DIR=str(tmp / "data"),
               HOME=str(tmp / "home"), AGENT_HISTORY_QUERY_IDLE_S="900")  # fmt: skip
    inproc = {**env, "AGENT_HISTORY_QUERY_IDLE_S": "0"}
    cli = [sys.executable, "-m", "agent_history"]
    try:
        subprocess.run([*cli, "index", "--home", str(args.home)], env=inproc, check=True, capture_output=True)
        sql = "SELECT sha FROM ah.git_event WHERE op = 'commit' ORDER BY id LIMIT 1"
        rows = subprocess.run([*cli, "sql", sql, "--json"], env=inproc, check=True, capture_output=True).stdout
        sha = json.loads(rows)["rows"][0][0]
        started = subprocess.run([*cli, "service", "start", "--json"], env=env, check=True, capture_output=True)
        server = json.loads(started.stdout)["pid"]
        postmaster = int((tmp / "data" / "pg" / "postmaster.pid").read_text().split()[0])
        chosen = {k: v for k, v in commands(sha, args.home).items() if not args.only or k.startswith(tuple(args.only))}
        for argv_, stdin in chosen.values():  # warm both paths (caches, the server's first fork)
            run_once(argv_, stdin, inproc)
            run_once(argv_, stdin, env)
        load = os.getloadavg()[0]
        rows_out = []
        for name, (argv_, stdin) in chosen.items():
            walls = {"in process": [], "resident": []}
            cpus = {"in process": [], "resident": []}
            cpu0, pg0 = children_cpu(server), tree_cpu(postmaster)
            for _ in range(args.runs):
                for way, e in (("in process", inproc), ("resident", env)):
                    wall, cpu, code, out = run_once(argv_, stdin, e)
                    walls[way].append(wall)
                    cpus[way].append(cpu)
                    if way == "in process":
                        expected = (code, re.sub(rb"[0-9.]+ s\b", b"", out))
                    elif (code, re.sub(rb"[0-9.]+ s\b", b"", out)) != expected:
                        sys.exit(f"{name}: the resident output differs from the in-process one")
            child = (children_cpu(server) - cpu0) / args.runs
            postgres = (tree_cpu(postmaster) - pg0) / (2 * args.runs)
            rows_out.append((name, walls, cpus, child, postgres))
        table = render(rows_out, args.runs, load, os.getloadavg()[0])
        print(table)
        if args.write:
            text = args.write.read_text()
            if MARK_BEGIN in text:
                head, rest = text.split(MARK_BEGIN, 1)
                text = head + MARK_BEGIN + "\n" + table + "\n" + MARK_END + rest.split(MARK_END, 1)[1]
            else:
                text += f"\n{MARK_BEGIN}\n{table}\n{MARK_END}\n"
            args.write.write_text(text)
    finally:
        subprocess.run([*cli, "service", "stop"], env=env, capture_output=True)
        subprocess.run([*cli, "db", "stop"], env=inproc, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def render(rows, runs: int, load_before: float, load_after: float) -> str:
    """The Markdown table of `rows` (name, walls by way, CPUs by way, child CPU and PostgreSQL
    CPU per command)."""
    lines = [
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load average "
        f"{load_before:.1f} → {load_after:.1f}; {runs} runs each way, interleaved; ms.",
        "",
        "| command | in process p50 / p95 | resident p50 / p95 | client CPU in process / resident "
        "| resident child CPU | PostgreSQL CPU |",
        "|---|---|---|---|---|---|",
    ]
    for name, walls, cpus, child, postgres in rows:
        w_in, w_res = walls["in process"], walls["resident"]
        lines.append(
            f"| `{name}` | {1000 * statistics.median(w_in):.0f} / {1000 * pct(w_in, 0.95):.0f} "
            f"| {1000 * statistics.median(w_res):.0f} / {1000 * pct(w_res, 0.95):.0f} "
            f"| {1000 * statistics.median(cpus['in process']):.0f} / {1000 * statistics.median(cpus['resident']):.0f} "
            f"| {1000 * child:.0f} | {1000 * postgres:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
