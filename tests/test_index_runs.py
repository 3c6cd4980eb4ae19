"""`ah.index_run` after a pass is killed: the next pass (holding the index lock) marks the row it
left `running` as interrupted with when it noticed, and `status` says so. Real subprocesses."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime

import psycopg
import pytest

from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.snapshot import snapshot

PY = sys.executable


def cli(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def home(corpus_home, own_tmp):
    dst = own_tmp / "corpus-home"
    shutil.copytree(corpus_home, dst)
    return dst


def test_a_killed_pass_is_marked_interrupted_by_the_next_and_status_shows_it(cli_env, db, home):
    env = {**cli_env, "AGENT_HISTORY_BATCH_LINES": "3"}  # many small batches: still running when killed
    proc = subprocess.Popen([PY, "-m", "agent_history", "index", "--home", str(home)], env=env)
    deadline = time.monotonic() + 300
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] == 0:  # mid-pass, rows in
            assert proc.poll() is None and time.monotonic() < deadline, "the pass ended before it was killed"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_id, status, finished = conn.execute(
            "SELECT id, status, finished_at FROM ah.index_run ORDER BY id DESC LIMIT 1"
        ).fetchone()
        assert (status, finished) == ("running", None)  # what a killed pass leaves behind
        before = conn.execute("SELECT now()").fetchone()[0]

        assert cli("index", "--home", str(home), env=cli_env).returncode == 0
        status, finished, summary = conn.execute(
            "SELECT status, finished_at, summary FROM ah.index_run WHERE id = %s", (killed_id,)
        ).fetchone()
        assert (status, finished, summary["killed"]) == ("interrupted", None, True)
        assert before <= datetime.fromisoformat(summary["noticed_at"]) <= conn.execute("SELECT now()").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM ah.index_run WHERE status = 'running'").fetchone()[0] == 0

    data = json.loads(cli("status", "--json", env=cli_env).stdout)
    assert data["killed_passes"]["count"] == 1
    assert data["last_pass"]["status"] == "ok"
    text = " ".join(cli("status", env=cli_env).stdout.split())  # status wraps its lines at 80 columns
    assert "killed passes: 1 (the last started " in text and "noticed by the next pass at " in text

    assert cli("index", "--home", str(home), env=cli_env).returncode == 0  # a clean pass changes nothing
    assert json.loads(cli("status", "--json", env=cli_env).stdout)["killed_passes"]["count"] == 1


def test_sigterm_mid_pass_leaves_the_rest_to_the_next_pass_which_equals_an_uninterrupted_one(
    cli_env,
    db,
    home,
    corpus_db,  # noqa: F811 - the imported fixture
):
    env = {**cli_env, "AGENT_HISTORY_BATCH_LINES": "7"}
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(home), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] == 0:
            assert proc.poll() is None and time.monotonic() < deadline, "the pass ended before the signal"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "Traceback" not in err, err
        assert json.loads(out)["interrupted"] is True
        # the queued batches and the post-passes were left: the sessions written stay marked dirty
        assert conn.execute("SELECT count(*) FROM ah.dirty_session").fetchone()[0] > 0
        assert conn.execute("SELECT status FROM ah.index_run ORDER BY id DESC LIMIT 1").fetchone()[0] == "interrupted"

        assert cli("index", "--home", str(home), env=cli_env).returncode == 0
        assert conn.execute("SELECT count(*) FROM ah.dirty_session").fetchone()[0] == 0
        after = snapshot(conn)
    with corpus_db.connect() as conn:  # the shared corpus indexed in one uninterrupted pass
        assert after == snapshot(conn)
