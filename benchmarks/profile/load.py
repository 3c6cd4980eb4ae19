"""One cold load on a fresh profiled server (`one_run`): a cold `agent-history index` of the home
through `benchmarks.client_phases` (the real command, its loader timed by phase), the client's CPU
(wait4 rusage) and the server's (its processes' utime+stime from /proc), wall seconds, the load
average, and the server's figures (`server`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.compare import run, server_cpu, settled_server_cpu
from benchmarks.profile.server import PidWatch, configure, perf_categories, statement_figures


def one_run(home: Path, work: Path, i: int, use_perf: bool, settings: dict[str, str], bulk: str | None = None) -> dict:
    """One cold load on a fresh profiled server → its figures (see the module docstring); `bulk`:
    the ``[index] bulk`` setting of the load (None: the default)."""
    import psycopg

    from agent_history.db import embedded

    data = work / f"ah-{i}"
    (work / "config.toml").write_text(f'[index]\nbulk = "{bulk}"\n' if bulk else "")
    env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(data))
    env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
    for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN"):
        env.pop(key, None)
    run([sys.executable, "-m", "agent_history", "db", "status", "--json"], env)
    pgdata = data / "pg"
    configure(pgdata, settings)
    phases_file = work / f"phases-{i}.json"
    env["AH_PROFILE_PHASES"] = str(phases_file)
    perf_file = work / f"perf-{i}.data"
    perf = None
    if use_perf:
        perf = subprocess.Popen(
            ["perf", "record", "-N", "-F", "499", "-a", "-q", "-o", str(perf_file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    load_before = os.getloadavg()[0]
    before = server_cpu(pgdata)
    with PidWatch(pgdata) as watch:
        p = run([sys.executable, "-m", "benchmarks.client_phases", "index"], env)
    server = settled_server_cpu(pgdata) - before
    if perf is not None:
        perf.send_signal(2)
        perf.wait()
    fig: dict = {
        "wall_s": p.wall,
        "client_cpu_s": p.cpu,
        "server_cpu_s": server,
        "client_rss_mb": p.rss_mb,
        "load": (load_before + os.getloadavg()[0]) / 2,
        "phases": json.loads(phases_file.read_text())["phases"] if phases_file.exists() else {},
    }
    with psycopg.connect(embedded.server_dsn(pgdata), autocommit=True) as conn:
        fig["statements"], fig["functions"] = statement_figures(conn)
        conn.execute("CHECKPOINT")
        fig["db_mb"] = conn.execute("SELECT pg_database_size(current_database()) / 1e6").fetchone()[0]
    fig["db_mb"] = float(fig["db_mb"])
    if perf is not None and perf_file.exists():
        cats, syms = perf_categories(perf_file, watch.pids)
        fig["perf_categories"], fig["perf_symbols"] = cats, dict(sorted(syms.items(), key=lambda kv: -kv[1])[:40])
        perf_file.unlink()
    fig["pgdata"] = str(pgdata)
    return fig
