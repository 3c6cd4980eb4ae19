"""The first command on a new machine starts the embedded PostgreSQL (seconds of silence before
issue 10): on a terminal it says so on stderr; when the server is already running it says nothing.
stderr is a real pseudo-terminal here, so rich sees a terminal as a person's shell would give."""

from __future__ import annotations

import os
import subprocess
import sys

from agent_history.db import embedded
from tests.procinfo import read_until_closed


def run_with_stderr_on_a_tty(args: list[str], env: dict) -> tuple[int, str, str]:
    """Run the CLI with stdout piped and stderr on a new pty; (exit code, stdout, stderr text)."""
    leader, follower = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_history", *args], env=env, stdout=subprocess.PIPE, stderr=follower, text=True
        )
        os.close(follower)
        follower = -1
        out, _ = proc.communicate(timeout=300)
        return proc.returncode, out, read_until_closed(leader).decode(errors="replace")
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


def test_the_first_start_is_announced_on_a_terminal_and_not_repeated(own_tmp):
    pgdata = own_tmp / "data" / "pg"
    (own_tmp / "home").mkdir()
    (own_tmp / "config.toml").touch()
    env = {
        k: v for k, v in os.environ.items() if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
    }
    env.update(
        AGENT_HISTORY_DATA_DIR=str(own_tmp / "data"),
        AGENT_HISTORY_CONFIG=str(own_tmp / "config.toml"),
        HOME=str(own_tmp / "home"),
    )
    try:
        code, out, err = run_with_stderr_on_a_tty(["db", "status", "--json"], env)
        assert code == 0, err
        assert f"starting the embedded PostgreSQL in {pgdata.resolve()} …" in err
        again, _, err_again = run_with_stderr_on_a_tty(["db", "status", "--json"], env)
        assert again == 0 and "starting" not in err_again
        piped = subprocess.run(
            [sys.executable, "-m", "agent_history", "db", "status"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert piped.returncode == 0 and piped.stderr == ""
    finally:
        embedded.stop(pgdata)
