"""A printing command whose reader goes away (``agent-history session X | head -1``) ends quietly
with exit 141 — 128 + SIGPIPE, what ``git log | head`` gives — never 1 (our "nothing found",
README) and never a traceback, in process and through the resident query process alike
(`cli.terminal.output_closed`). Real CLI subprocesses on the corpus catalogue; stdout is a real
pipe whose read end is closed before the command writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agent_history.cli.resident_control import service_status
from tests.corpus_db import corpus_db  # noqa: F401 - fixture

PY = sys.executable
SESSION = "9e953218-585f-4692-89df-9e0747a31c68"  # claude-local: the tokenizer/submodule session

PRINTING = {
    "session": ("session", SESSION, "--all"),
    "session --json": ("session", SESSION, "--all", "--json"),
    "sessions": ("sessions", "--limit", "50"),
    "search": ("search", "tokenizer", "--limit", "20", "--mode", "keyword"),
    "usage": ("usage", "session"),
    "usage --json": ("usage", "session", "--json"),
    "sql": ("sql", "SELECT g FROM generate_series(1, 200) AS g"),
    "sql --csv": ("sql", "--csv", "SELECT g FROM generate_series(1, 200) AS g"),
    "sql --json": ("sql", "--json", "SELECT g FROM generate_series(1, 200) AS g"),
    "export": ("export", SESSION),
}
"""Each printing command, with enough output that some write meets the closed pipe."""
RESIDENT = (
    "session",
    "session --json",
    "sessions",
    "search",
    "usage",
    "usage --json",
    "sql",
    "sql --csv",
    "sql --json",
)
"""… those the resident query process runs (`cli.resident.ELIGIBLE`)."""


@pytest.fixture(scope="module")
def env(corpus_db) -> dict[str, str]:  # noqa: F811
    tmp = Path(tempfile.mkdtemp(prefix="ah-test-closed-"))
    (tmp / "config.toml").touch()
    (tmp / "home").mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_")}
    out = {
        **base,
        "AGENT_HISTORY_DSN": corpus_db.dsn,
        "AGENT_HISTORY_READER_DSN": corpus_db.reader_dsn,
        "AGENT_HISTORY_CONFIG": str(tmp / "config.toml"),
        "AGENT_HISTORY_DATA_DIR": str(tmp / "data"),
        "HOME": str(tmp / "home"),
        "AGENT_HISTORY_QUERY_IDLE_S": "0",
    }
    yield out
    subprocess.run(
        [PY, "-m", "agent_history", "service", "stop"],
        env={**out, "AGENT_HISTORY_QUERY_IDLE_S": "300"},
        capture_output=True,
        timeout=60,
    )
    shutil.rmtree(tmp, ignore_errors=True)


def _into_closed_pipe(env: dict[str, str], args: tuple[str, ...]) -> tuple[int, str]:
    """(exit code, stderr) of ``agent-history ARGS`` writing into a pipe nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write fails with EPIPE
    try:
        r = subprocess.run(
            [PY, "-m", "agent_history", *args], env=env, stdout=write_end, stderr=subprocess.PIPE, timeout=300
        )
    finally:
        os.close(write_end)
    return r.returncode, r.stderr.decode()


@pytest.mark.parametrize("name", list(PRINTING))
def test_a_closed_output_ends_the_command_with_141_and_no_message(env, name):
    assert _into_closed_pipe(env, PRINTING[name]) == (141, "")


def test_a_closed_output_through_the_resident_process_is_141_too(env):
    on = {**env, "AGENT_HISTORY_QUERY_IDLE_S": "300"}
    r = subprocess.run([PY, "-m", "agent_history", "service", "start", "--json"], env=on, capture_output=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = {name: _into_closed_pipe(on, PRINTING[name]) for name in RESIDENT}
    assert got == dict.fromkeys(RESIDENT, (141, ""))
    # every one of them ran in the resident process (none fell back to running in process)
    assert service_status(Path(env["AGENT_HISTORY_DATA_DIR"]))["requests"] == len(RESIDENT)


def test_a_reader_that_takes_one_line_gets_it_and_the_command_ends_with_141(env):
    """``| head -1``: the first line arrives whole; the rest (380 kB, more than a pipe holds)
    meets the closed pipe."""
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "sql", "--csv", "SELECT repeat('x', 1900) AS r FROM generate_series(1, 200)"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (first, proc.wait(timeout=300), err) == (b"r\n", 141, "")
