"""The shared corpus catalogue (``../shared/corpus/home`` indexed by the real loader), built once
per test session (`conftest.corpus_template`) and cloned by ``CREATE DATABASE … TEMPLATE``:
`corpus_db` once per module that imports it (read-only tests share it), `corpus_rw_db` once per
test (free to write); `cli_environment`, the environment of a CLI subprocess over such a
catalogue (or any test database); `resident_environment`, such an environment whose read
commands a resident query process answers; and `corpus_resident` / `served`, one resident query
process per module over `corpus_db` that answers the read commands of each test's own
environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import TestDatabase, clone_database, drop_database, existing_database


@pytest.fixture(scope="module")
def corpus_db(pg_server, corpus_template) -> TestDatabase:
    """A database with the corpus indexed, shared by the module's tests (do not write to it)."""
    database = clone_database(pg_server, corpus_template, "c")
    yield database
    drop_database(database)


@pytest.fixture
def corpus_rw_db(pg_server, corpus_template, clone_pool) -> TestDatabase:
    """A fresh database with the corpus indexed, for one test (it may write); copied while the
    previous test ran and dropped while the next one runs (`conftest.clone_pool`)."""
    database = existing_database(pg_server, clone_pool.take(corpus_template, "w"))
    yield database
    clone_pool.give_back(database.name)


def cli_environment(
    tmp: Path,
    dsn: str,
    reader_dsn: str | None = None,
    *,
    config: str = "",
    columns: int | None = None,
    home: Path | None = None,
) -> dict[str, str]:
    """The environment of a CLI subprocess over the catalogue at `dsn`, touching no real home,
    config or data dir: this process's environment without any ``AGENT_HISTORY_*`` variable or
    ``COLUMNS``, then ``AGENT_HISTORY_DSN`` (and ``AGENT_HISTORY_READER_DSN`` when `reader_dsn`
    is given), the config file ``tmp/config.toml`` holding `config` (written; an empty file by
    default: a named config file must exist), the data dir ``tmp/data``, ``HOME`` `home`
    (default ``tmp/home``; created), ``AGENT_HISTORY_QUERY_IDLE_S=0`` (no resident query process
    left behind) and ``COLUMNS`` when `columns` is given."""
    home = tmp / "home" if home is None else home
    home.mkdir(parents=True, exist_ok=True)
    (tmp / "config.toml").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_") and k != "COLUMNS"}
    env.update(
        AGENT_HISTORY_DSN=dsn,
        AGENT_HISTORY_CONFIG=str(tmp / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(tmp / "data"),
        AGENT_HISTORY_QUERY_IDLE_S="0",
        HOME=str(home),
    )
    if reader_dsn is not None:
        env["AGENT_HISTORY_READER_DSN"] = reader_dsn
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


@contextmanager
def resident_environment(env: dict[str, str], idle_s: int = 300) -> Iterator[dict[str, str]]:
    """`env` (a `cli_environment`) with the resident query process on: ``service start`` in its
    data dir (``AGENT_HISTORY_QUERY_IDLE_S`` = `idle_s` seconds), yielding the environment whose
    eligible commands (`agent_history.cli.resident.ELIGIBLE`: the read commands) the server's
    forked child runs — the normal CLI entry, so stdout, stderr and the exit code are the in-process
    ones byte for byte (tests/test_query_service.py compares every kind), without ≈ 0.4 s of CPU
    per command importing psycopg, typer and rich again. For a module whose CLI subprocesses test
    what a command prints and exits with, not how a process starts. ``service stop`` on exit.
    Raises AssertionError when the server does not start (a data dir too deep for a socket)."""
    on = {**env, "AGENT_HISTORY_QUERY_IDLE_S": str(idle_s)}
    argv = [sys.executable, "-m", "agent_history", "service"]
    started = subprocess.run([*argv, "start", "--json"], env=on, capture_output=True, text=True, timeout=120)
    assert started.returncode == 0 and json.loads(started.stdout)["running"] is True, started.stderr
    try:
        yield on
    finally:
        subprocess.run([*argv, "stop"], env=on, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def corpus_resident(corpus_db) -> Iterator[dict[str, str]]:  # noqa: F811 - the fixture above
    """A `resident_environment` over the module's `corpus_db`, its data dir in a fresh directory
    outside pytest's basetemp (`conftest.own_tmp` says why), for `served`: one server per module,
    stopped and removed after the module."""
    tmp = Path(tempfile.mkdtemp(prefix="ah-test-served-"))
    try:
        with resident_environment(cli_environment(tmp, corpus_db.dsn, corpus_db.reader_dsn)) as on:
            yield on
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def served(env: dict[str, str], resident: dict[str, str]) -> dict[str, str]:
    """`env` (one test's `cli_environment`: its own config, home and columns) with its eligible
    commands answered by the resident query process of `resident` (`corpus_resident`): that data
    dir and ``AGENT_HISTORY_QUERY_IDLE_S``. The forked child takes this environment whole, so it
    reads this test's config file, not the server's. For tests that only read: a command that
    writes into the data dir would write into the module's."""
    return {**env, **{k: resident[k] for k in ("AGENT_HISTORY_DATA_DIR", "AGENT_HISTORY_QUERY_IDLE_S")}}
