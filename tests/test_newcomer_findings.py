"""A newcomer's findings on messages, warnings and exit codes, each end to end through the CLI:
a configuration mistake is the same one-line error, exit 2, from every command that loads it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PY = sys.executable


def cli(*args: str, env: dict, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "agent_history", *args], env=env, input=stdin, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("command", [("status",), ("index",), ("sessions",), ("status", "--json")])
def test_a_bad_sources_name_is_one_line_exit_2_from_every_command(cli_env, command):
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text('[sources]\n"Bad Name" = "/tmp/x"\n')
    out = cli(*command, env=cli_env)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: config [sources] namespace 'Bad Name' must start with one of aider-, amp-,")
    assert out.stderr.count("\n") == 1
