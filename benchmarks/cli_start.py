"""Whole-process start-up of a CLI command (issue 18: `search` p50 ≤ 300 ms).

``python -m benchmarks.cli_start [RUNS] -- ARGS…`` runs ``python -m agent_history ARGS…`` RUNS
times (default 7) in the current environment (point HOME / AGENT_HISTORY_DATA_DIR at an indexed
catalogue first) and prints the median wall and CPU (user+sys of the process, from wait4)
in milliseconds, plus the floor: ``python -c pass`` and ``python -c "import psycopg"``.
"""

from __future__ import annotations

import os
import sys
from statistics import median

from benchmarks.compare import run


def figures(cmd: list[str], runs: int) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of `runs` runs of `cmd`."""
    procs = [run(cmd, dict(os.environ)) for _ in range(runs)]
    return 1000 * median(p.wall for p in procs), 1000 * median(p.cpu for p in procs)


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv and argv[0] != "--" else 7
    args = argv[argv.index("--") + 1 :] if "--" in argv else ["search", "tokenizer", "--limit", "3"]
    rows = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import psycopg'": [sys.executable, "-c", "import psycopg"],
        "agent-history " + " ".join(args): [sys.executable, "-m", "agent_history", *args],
    }
    print(f"{'command':<50} {'wall ms':>8} {'CPU ms':>8}   (median of {runs})")
    for name, cmd in rows.items():
        wall, cpu = figures(cmd, runs)
        print(f"{name:<50} {wall:8.0f} {cpu:8.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
