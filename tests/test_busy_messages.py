"""What a refused `index` says about the pass that holds its lock (newcomer finding: every
refusal named "aider-local", and a running rebuild was reported as one that "did not finish")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.pass_locks import BULK_LOCK, INDEX_LOCK, NAMESPACE_LOCK, REBUILD_LOCK

PY = sys.executable
NAMESPACES = ("aider-local", "claude-local", "codex-local", "pi-local")  # the first ones a pass locks


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def home(corpus_home, own_tmp) -> Path:
    dst = own_tmp / "corpus-home"
    shutil.copytree(corpus_home, dst)
    return dst


def hold(conn: psycopg.Connection, *keys: int, namespaces: tuple[str, ...] = NAMESPACES) -> None:
    """Take what a pass holds: `INDEX_LOCK` shared, the namespaces' locks, and `keys`."""
    conn.execute("SELECT pg_advisory_lock_shared(%s)", (INDEX_LOCK,))
    for key in keys:
        conn.execute("SELECT pg_advisory_lock(%s)", (key,))
    for ns in namespaces:
        conn.execute("SELECT pg_advisory_lock(%s::int, hashtext(%s))", (NAMESPACE_LOCK, ns))


def test_index_during_a_rebuild_says_so_and_no_did_not_finish_warning(cli_env, db, home):
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    with psycopg.connect(db.dsn, autocommit=True) as rebuilding:
        # a rebuild re-reading: its mark set when it emptied the catalogue, its lock held
        rebuilding.execute("INSERT INTO ah.meta (key, value) VALUES ('rebuild:started_at', '2026-12-02T14:00:00Z')")
        hold(rebuilding, REBUILD_LOCK)
        out = cli("index", "--home", str(home), env=cli_env)
        status = json.loads(cli("status", "--json", env=cli_env).stdout)
    assert (out.returncode, out.stdout, out.stderr) == (
        75,
        "a rebuild is running (started at 2026-12-02T14:00:00Z)\n",
        "",
    )
    assert status["rebuild_interrupted_at"] is None
    # the rebuild's session gone with its mark still set: now it did not finish
    after = json.loads(cli("status", "--json", env=cli_env).stdout)
    assert after["rebuild_interrupted_at"] == "2026-12-02T14:00:00Z"


def test_index_during_the_truncation_of_a_rebuild_says_a_rebuild_is_running(cli_env, db, home):
    with psycopg.connect(db.dsn, autocommit=True) as rebuilding:
        rebuilding.execute("SELECT pg_advisory_lock(%s)", (REBUILD_LOCK,))
        rebuilding.execute("SELECT pg_advisory_lock(%s)", (INDEX_LOCK,))  # exclusive: emptying everything
        out = cli("index", "--home", str(home), env=cli_env)
    assert (out.returncode, out.stdout) == (75, "a rebuild is running\n")  # no mark yet: no time


def test_index_during_a_bulk_load_says_a_bulk_load_is_running(cli_env, db, home):
    with psycopg.connect(db.dsn, autocommit=True) as bulk:
        hold(bulk, BULK_LOCK)
        out = cli("index", "--home", str(home), env=cli_env)
    assert (out.returncode, out.stdout, out.stderr) == (75, "a bulk load is running\n", "")


def test_index_beside_an_ordinary_pass_names_the_namespace_it_waits_for(cli_env, db, home):
    with psycopg.connect(db.dsn, autocommit=True) as other:
        hold(other, namespaces=("claude-local",))
        out = cli("index", "--home", str(home), env=cli_env)
    assert (out.returncode, out.stdout) == (75, "another index pass is running (it is indexing claude-local)\n")


def test_a_second_rebuild_is_refused_naming_the_first(cli_env, db, home):
    with psycopg.connect(db.dsn, autocommit=True) as rebuilding:
        rebuilding.execute("INSERT INTO ah.meta (key, value) VALUES ('rebuild:started_at:h1', '2026-12-02T13:59:00Z')")
        rebuilding.execute("SELECT pg_advisory_lock(%s)", (REBUILD_LOCK,))
        out = cli("rebuild", env=cli_env)
    assert (out.returncode, out.stdout) == (75, "a rebuild is running (started at 2026-12-02T13:59:00Z)\n")
