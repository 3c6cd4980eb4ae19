"""`agent-history index` end to end in subprocesses: kills, a dead database, rebuilds."""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.snapshot import snapshot

PY = sys.executable


def cli(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def home(corpus_home, own_tmp) -> Path:
    dst = own_tmp / "corpus-home"
    shutil.copytree(corpus_home, dst)
    return dst


def test_index_then_status_json_shows_every_file_indexed(cli_env, home):
    out = cli("index", "--home", str(home), "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    n = len(list(home.rglob("*.jsonl")))
    assert summary["files_scanned"] == summary["files_changed"] == n
    assert summary["issues"].get("load_error", 0) == 0
    status = json.loads(cli("status", "--json", env=cli_env).stdout)
    files = {ns: d["files"] for ns, d in status["namespaces"].items()}
    assert files == {
        "claude-local": {"ok": len(list((home / ".claude").rglob("*.jsonl")))},
        "codex-local": {"ok": len(list((home / ".codex").rglob("*.jsonl")))},
        "pi-local": {"ok": len(list((home / ".pi").rglob("*.jsonl")))},
    }
    assert status["last_pass"]["status"] == "ok"
    second = json.loads(cli("index", "--home", str(home), "--json", env=cli_env).stdout)
    assert (second["bytes_read"], second["files_changed"]) == (0, 0)


def test_second_pass_exits_75_with_the_lock_message(cli_env, db, home):
    with psycopg.connect(db.dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (0x61685F696478,))
        out = cli("index", "--home", str(home), env=cli_env)
        one_file = cli("index", "--home", str(home), "--file", str(next(home.rglob("*.jsonl"))), env=cli_env)
    assert out.returncode == one_file.returncode == 75  # EX_TEMPFAIL: cron can tell nothing was done
    # the lock every pass shares is held exclusively (as a bulk load or a whole rebuild holds it)
    assert (
        out.stdout
        == one_file.stdout
        == "another index pass is running (a bulk load or rebuild holds every namespace)\n"
    )


def test_sigkill_mid_pass_then_finish_equals_a_clean_run(cli_env, db, home, corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:  # the same corpus indexed by one clean pass (conftest)
        clean = snapshot(conn)
    env = {**cli_env, "AGENT_HISTORY_BATCH_LINES": "7"}  # many commits: kills land mid-file
    rng = random.Random(7)
    kills = 0
    for _ in range(4):
        proc = subprocess.Popen(
            [PY, "-m", "agent_history", "index", "--home", str(home)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # killed once a random number more messages are committed (an event in the database,
        # not a guess at how fast this machine is today), or not at all if the pass ends first
        if messages_reach(db.dsn, proc, messages(db.dsn) + rng.randint(1, 150)):
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 1  # the first pass commits 1,588 messages 7 lines at a time: still running at 150
    # the finishing pass resumes every file from its committed offset (default batch size)
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    with db.connect() as conn:
        assert snapshot(conn) == clean


def test_sigterm_finishes_the_batch_and_exits_cleanly(cli_env, db, home):
    env = {**cli_env, "AGENT_HISTORY_BATCH_LINES": "3"}
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_rows(db.dsn, proc)  # the handlers are installed and a batch is in: not a guess at start-up time
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0  # the rest, default batches
    with db.connect() as conn:
        errors = conn.execute("SELECT count(*) FROM ah.parse_issue WHERE kind = 'load_error'").fetchone()[0]
    assert errors == 0


def wait_for_rows(dsn: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    """Return once the pass of `proc` has committed message rows (an event in the database, not a
    guess at how long start-up takes); fail if it exits or `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] == 0:
            assert proc.poll() is None, "the pass ended before it was interrupted"
            assert time.monotonic() < deadline, f"no rows within {timeout:g} s"
            time.sleep(0.05)


def messages(dsn: str) -> int:
    """Committed rows of ah.message."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]


def messages_reach(dsn: str, proc: subprocess.Popen, n: int, timeout: float = 300) -> bool:
    """Wait until ah.message holds at least `n` committed rows (True) or `proc` has exited
    (False); fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] < n:
            if proc.poll() is not None:
                return False
            assert time.monotonic() < deadline, f"fewer than {n} messages within {timeout:g} s"
            time.sleep(0.02)
    return proc.poll() is None


def test_database_stopped_mid_pass_is_one_line_error_then_resumes(cli_env, home, own_tmp):
    from agent_history.db import embedded

    env = {k: v for k, v in cli_env.items() if k not in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN")}
    env.update(AGENT_HISTORY_DATA_DIR=str(own_tmp / "own"), AGENT_HISTORY_BATCH_LINES="2")
    pgdata = own_tmp / "own" / "pg"
    assert cli("db", "status", env=env).returncode == 0  # server up, schema migrated
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_rows(embedded.server_dsn(pgdata), proc)  # mid-pass: a batch is committed, most are not
    embedded.stop(pgdata)
    out, err = proc.communicate(timeout=120)
    try:
        assert proc.returncode == 2, (out, err)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert lines[0].startswith("error:")
        rest = {k: v for k, v in env.items() if k != "AGENT_HISTORY_BATCH_LINES"}  # default batches
        done = cli("index", "--home", str(home), "--json", env=rest)  # restarts the server on demand
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["issues"].get("load_error", 0) == 0
        status = json.loads(cli("status", "--json", env=env).stdout)
        total = sum(sum(d["files"].values()) for d in status["namespaces"].values())
        assert total == len(list(home.rglob("*.jsonl")))
    finally:
        embedded.stop(pgdata)


def test_rebuild_from_hot_and_cold_equals_the_original(cli_env, db, home, own_tmp):
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    with db.connect() as conn:
        original = snapshot(conn)
    cold_claude = own_tmp / "cold-claude"
    shutil.copytree(home / ".claude", cold_claude)
    gone = sorted((home / ".claude").rglob("*.jsonl"))[:3]
    for p in gone:
        p.unlink()
    config = Path(cli_env["AGENT_HISTORY_CONFIG"])
    config.write_text(f'[cold_sources]\n"claude-local" = "{cold_claude}"\n')
    check = cli("rebuild-check", "--json", env=cli_env)
    assert check.returncode == 0, check.stderr
    counts = json.loads(check.stdout)["namespaces"]["claude-local"]
    n_claude = len(list(cold_claude.rglob("*.jsonl")))
    assert counts == {"hot": n_claude - 3, "cold": n_claude, "archive": 0, "cold_only": 3, "missing": 0}
    out = cli("rebuild", env=cli_env)
    assert out.returncode == 0, out.stderr
    with db.connect() as conn:
        assert snapshot(conn) == original
        tiers = dict(conn.execute("SELECT tier, count(*) FROM ah.source_file GROUP BY 1").fetchall())
    assert tiers["cold"] == 3


def test_rebuild_check_and_rebuild_refuse_when_a_file_is_missing_from_both_tiers(cli_env, db, home):
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    victim = sorted((home / ".codex").rglob("*.jsonl"))[0]
    victim.unlink()
    check = cli("rebuild-check", "--json", env=cli_env)
    assert check.returncode == 1
    data = json.loads(check.stdout)
    assert data["would_refuse"] is True
    assert data["missing_files"] == [str(victim)]
    assert data["namespaces"]["codex-local"]["missing"] == 1
    human = cli("rebuild-check", env={**cli_env, "COLUMNS": "200"})  # people get a table and one line each
    assert human.returncode == 1 and not human.stdout.lstrip().startswith("{")
    assert f"missing from every tier: {victim}" in human.stdout.splitlines()
    assert "rebuild would refuse (`rebuild --allow-missing` drops the missing files)" in human.stdout
    with db.connect() as conn:
        before = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
    out = cli("rebuild", env=cli_env)
    assert out.returncode == 1
    assert "rebuild refused" in out.stderr
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] == before
    forced = cli("rebuild", "--allow-missing", "--json", env=cli_env)
    assert forced.returncode == 0, forced.stderr
    with db.connect() as conn:
        paths = {r[0] for r in conn.execute("SELECT path FROM ah.source_file")}
    assert str(victim) not in paths
    assert len(paths) == len(list(home.rglob("*.jsonl")))


_ = os


def test_session_accepts_the_uid_slash_agent_id_form_sessions_prints(cli_env, home):
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    out = cli("session", "29ccd257-68b1-427f-ae5f-6524b7cb6f20/a2271d1", "--to", "1", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["session"]["agent_id"], data["events"][0]["label"]) == ("a2271d1", "subagent_brief")
    bad = cli("session", "29ccd257", "--from", "5", "--to", "2", env=cli_env)
    assert bad.returncode == 2 and "--to must not be before --from" in bad.stderr


class ProcessEvents:
    """What a running process writes, as events in the order it wrote them: its stderr is merged
    into stdout (one pipe), each indented JSON object (`index --json`: ``{`` … ``}`` lines) is a
    ``("summary", dict)`` and every other line a ``("log", line)``. A reader thread feeds a queue,
    so a test waits for what the process says, never for a time."""

    def __init__(self, proc: subprocess.Popen):
        self.queue: queue.Queue = queue.Queue()
        self.log: list[str] = []
        self.summaries: list[dict] = []
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _read(self, stream) -> None:
        buf: list[str] = []
        for line in stream:
            if buf or line.rstrip("\n") == "{":
                buf.append(line)
                if line.rstrip("\n") == "}":
                    self.queue.put(("summary", json.loads("".join(buf))))
                    buf = []
            else:
                self.queue.put(("log", line.rstrip("\n")))
        self.queue.put(("eof", None))

    def wait_for(self, wanted, timeout: float = 300) -> tuple[str, object]:
        """The next event for which `wanted(kind, value)` is true (recording every event seen);
        fails the test if the process ends or `timeout` seconds pass first."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no such event within {timeout:g} s; log so far: {self.log}"
            try:
                kind, value = self.queue.get(timeout=left)
            except queue.Empty:
                continue
            self._record(kind, value)
            assert kind != "eof", f"the process ended; log: {self.log}"
            if wanted(kind, value):
                return kind, value

    def _record(self, kind: str, value) -> None:
        if kind == "summary":
            self.summaries.append(value)
        elif kind == "log":
            self.log.append(value)

    def drain(self) -> None:
        """Record the remaining events up to the end of the output (after the process exited)."""
        while (event := self.queue.get(timeout=60))[0] != "eof":
            self._record(*event)


def test_index_every_survives_a_database_restart(cli_env, home, own_tmp):
    from agent_history.db import embedded

    env = {k: v for k, v in cli_env.items() if k not in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN")}
    env["AGENT_HISTORY_DATA_DIR"] = str(own_tmp / "loop")
    pgdata = own_tmp / "loop" / "pg"
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(home), "--every", "1", "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    events = ProcessEvents(proc)
    try:
        events.wait_for(lambda kind, _: kind == "summary")  # the first pass is done
        embedded.stop(pgdata)
        # The server stays down until the loop says so: a pass that was running, or the next
        # one once the pool gives up waiting for a connection (5 s with --every 1), reports one retry line.
        events.wait_for(lambda kind, line: kind == "log" and line.startswith("pass failed"))
        failed_at = len(events.summaries)
        embedded.ensure_running(pgdata)
        events.wait_for(lambda kind, _: kind == "summary")  # a pass after the failure: reconnected
        assert len(events.summaries) == failed_at + 1 and proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        events.drain()
        embedded.stop(pgdata)
    assert proc.returncode == 0, events.log
    # one event, one line: every log line is a whole retry line (one once wrapped at 80 columns
    # in CI, leaving "command" on a line of its own) or a skipped path; no traceback
    assert events.log and all(line.startswith(("pass failed, retrying in 1 s: ", "skipped")) for line in events.log), (
        events.log
    )
    assert events.summaries[0]["files_changed"] == len(list(home.rglob("*.jsonl")))
    last = events.summaries[-1]
    assert last["files_changed"] == 0 and last["issues"].get("load_error", 0) == 0


def test_a_stop_signal_while_waiting_ends_the_loop_without_another_pass():
    import threading

    from agent_history.cli.loop import run_every

    class SignalledWhileWaiting(threading.Event):
        """A stop event whose first wait is interrupted by the signal (no clock involved)."""

        def wait(self, timeout=None):
            self.set()
            return True

    passes: list[int] = []
    run_every(3600, SignalledWhileWaiting(), lambda: passes.append(1) or True)
    assert passes == [1]
