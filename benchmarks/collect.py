"""`collect`'s history cursor (issue 30): a first run reads every commit, the next ones only
what is new.

``python -m benchmarks.collect [RUNS] -- PATH…`` runs ``agent-history collect --json PATH…``
RUNS times (default 3) against the configured catalogue (point AGENT_HISTORY_DSN or the data dir
at a scratch one: the first run over a repository it never collected is the full read) and prints
each run's wall and CPU milliseconds, commits read and new, and how the history was read
(full | incremental | rewritten). Measured on this repository (≈460 commits, 2 shared cores):
in process, full 9.2 s and incremental 1.9 s; as processes on a fresh embedded catalogue, 32 s
(the server's first start and migrations included) and 3.6 s.
"""

from __future__ import annotations

import json
import os
import sys

from benchmarks.compare import run


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv and argv[0] != "--" else 3
    paths = argv[argv.index("--") + 1 :] if "--" in argv else ["."]
    cmd = [sys.executable, "-m", "agent_history", "collect", "--json", *paths]
    print(f"{'run':>3} {'wall ms':>8} {'CPU ms':>8} {'commits':>8} {'new':>6}  history")
    for n in range(1, runs + 1):
        proc = run(cmd, dict(os.environ))
        repos = [r for r in json.loads(proc.stdout or b"{}").get("repositories", []) if r["state"] == "collected"]
        modes = ",".join(sorted({r["history"] for r in repos})) or "-"
        commits, new = sum(r["commits"] for r in repos), sum(r["commits_new"] for r in repos)
        print(f"{n:>3} {proc.wall * 1000:8.0f} {proc.cpu * 1000:8.0f} {commits:8,} {new:6,}  {modes}")


if __name__ == "__main__":
    main(sys.argv[1:])
