"""How long `agent-history index` takes to exit after SIGTERM mid-way through a large cold pass
(a benchmark, not a timed test): Docker gives a container 10 s (``stop_grace_period``) before
SIGKILL. For each delay, a fresh catalogue on a private embedded server, `index --home HOME`
started, SIGTERM after DELAY seconds, the seconds from the signal to the exit printed.

    python /work/shared/tools/scale_home.py ../shared/corpus/home /tmp/big 10
    python -m benchmarks.stop /tmp/big --delay 8 20 40
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from agent_history.db import embedded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home", type=Path, help="an agent home laid out like ~ (e.g. a scaled corpus)")
    ap.add_argument("--delay", type=float, nargs="+", default=[8.0, 20.0, 40.0], help="seconds before SIGTERM")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ah-bench-stop-"))
    (tmp / "config.toml").write_text("[database]\nidle_stop_s = 0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_")}
    env.update(AGENT_HISTORY_DATA_DIR=str(tmp / "data"), AGENT_HISTORY_CONFIG=str(tmp / "config.toml"), HOME=str(tmp))
    env["AGENT_HISTORY_QUERY_IDLE_S"] = "0"  # each pass in process (none through a resident query process)
    cli = [sys.executable, "-m", "agent_history"]
    try:
        for delay in args.delay:
            subprocess.run([*cli, "db", "status"], env=env, capture_output=True, check=True)
            with psycopg.connect(embedded.server_dsn(tmp / "data" / "pg", database="postgres"), autocommit=True) as c:
                c.execute("DROP DATABASE IF EXISTS agent_history WITH (FORCE)")  # a cold pass each time
            subprocess.run([*cli, "db", "status"], env=env, capture_output=True, check=True)
            proc = subprocess.Popen(
                [*cli, "index", "--home", str(args.home), "--json"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            time.sleep(delay)
            if proc.poll() is not None:
                print(f"delay {delay:g} s: the pass ended before the signal (use a larger home)")
                continue
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate()
            took = time.monotonic() - sent
            summary = json.loads(out) if out.strip() else {}
            print(
                f"delay {delay:g} s: exit {proc.returncode} {took:.2f} s after SIGTERM "
                f"({summary.get('files_scanned')} files scanned, interrupted {summary.get('interrupted')})"
                + (f"; stderr: {err.strip().splitlines()[-1]}" if err.strip() else ""),
                flush=True,
            )
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        embedded.stop(tmp / "data" / "pg")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
