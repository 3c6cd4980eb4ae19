"""Client CPU of a cold load, tree against tree (issue 27: a measurement, not a test).

    python -m benchmarks.client_cpu --home HOME --tree before=DIR --tree after=DIR --rounds 2

Each round runs one cold ``agent-history index`` of `HOME` per tree, in the order given (so the
trees' runs interleave and share the machine's load), each on a fresh embedded server in its own
data directory, through `benchmarks.client_phases` with ``PYTHONPATH`` set to the tree (and the
work directory as the working directory: ``python -m`` would import a tree found there first): the
client's CPU seconds (user + system of the process and the parse workers it waited for, wait4
rusage) and its phases (exclusive thread CPU seconds, `client_phases`). The machine is shared:
CPU seconds are the figures, wall seconds and the load average are context.

Prints one JSON object per run and, at the end, the median per tree and phase as a Markdown table
(CPU seconds). `HOME` is an agent home (``../shared/tools/scale_home.py`` makes the ×10 corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.compare import run

PHASES = ("read", "hash", "decode", "parse", "search text", "fold", "row build", "send", "wait", "other")
"""The phases of `benchmarks.client_phases`, in its table's order."""


def cold_load(home: Path, tree: Path, work: Path) -> dict:
    """One cold load of `home` with the code of `tree` → {client_cpu_s, wall_s, load, phases:
    {phase: cpu_s}} (seconds). The server is started in `work` and stopped after."""
    from agent_history.db import embedded

    data = work / "data"
    env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(data), PYTHONPATH=str(tree))
    env["AGENT_HISTORY_QUERY_IDLE_S"] = "0"
    env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
    (work / "config.toml").write_text("")
    for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN"):
        env.pop(key, None)
    py = sys.executable
    here = os.getcwd()
    os.chdir(work)  # `python -m` puts the working directory before PYTHONPATH: never a source tree's
    try:
        run([py, "-m", "agent_history", "db", "status", "--json"], env)
        env["AH_PROFILE_PHASES"] = str(work / "phases.json")
        load = os.getloadavg()[0]
        p = run([py, "-m", "benchmarks.client_phases", "index"], env)
        phases = json.loads((work / "phases.json").read_text())["phases"]
        return {
            "client_cpu_s": round(p.cpu, 2),
            "wall_s": round(p.wall, 1),
            "load": round((load + os.getloadavg()[0]) / 2, 1),
            "phases": {k: v["cpu_s"] for k, v in phases.items()},
        }
    finally:
        os.chdir(here)
        embedded.stop(data / "pg")
        shutil.rmtree(data, ignore_errors=True)


def table(runs: dict[str, list[dict]]) -> str:
    """Markdown: rows = client CPU and each phase, columns = trees (median CPU seconds)."""
    names = list(runs)
    lines = ["| CPU s (median) | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    rows = [("client process", lambda r: r["client_cpu_s"])]
    rows += [(p, lambda r, p=p: r["phases"].get(p, 0.0)) for p in PHASES]
    for label, get in rows:
        lines.append(
            f"| {label} | " + " | ".join(f"{statistics.median(get(r) for r in runs[n]):.2f}" for n in names) + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.client_cpu", description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="the agent home to load")
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=DIR", help="a source tree (repeatable)")
    ap.add_argument("--rounds", type=int, default=2, help="cold loads per tree (default 2)")
    args = ap.parse_args(argv)
    trees = {name: Path(path).resolve() for name, path in (t.split("=", 1) for t in args.tree)}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="ah-client-cpu-") as tmp:
        for i in range(args.rounds):
            for name, tree in trees.items():
                work = Path(tmp) / f"{name}-{i}"
                work.mkdir()
                fig = cold_load(args.home, tree, work)
                runs[name].append(fig)
                print(json.dumps({"tree": name, "round": i, **fig}), flush=True)
    print(table(runs))


if __name__ == "__main__":
    main()
