"""The image's entrypoint commands (issue 15): `index --every`, `embed --every` and
`journal-sync --every` each start, finish one pass against the test database and stop cleanly on
SIGTERM. Real subprocesses; synchronised on each pass's printed summary line, never on sleeps."""

from __future__ import annotations

import queue
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import psycopg

from agent_history.journal.rows import COLUMNS
from tests.embed_corpus import TOPICS, embed_server, write_topic_home  # noqa: F401, F811 - fixture
from tests.embed_server import MODEL_NAME

PY = sys.executable
SAFETY_TIMEOUT_S = 600  # only bounds a hang; the test waits for output, not for time


def run_one_pass_then_sigterm(args: list[str], env: dict, marker: str) -> tuple[list[str], str, int]:
    """Start `agent-history ARGS`, wait for a stdout line starting with `marker` (the end of the
    first pass), send SIGTERM, and return (stdout lines, stderr, exit code)."""
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", *args],
        env=env | {"PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    try:
        while True:
            line = lines.get(timeout=SAFETY_TIMEOUT_S)
            if line is None:
                raise AssertionError(f"exited before a pass finished: {seen} {proc.stderr.read()}")
            seen.append(line)
            if line.startswith(marker):
                break
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=SAFETY_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    while (line := lines.get(timeout=SAFETY_TIMEOUT_S)) is not None:
        seen.append(line)
    return seen, proc.stderr.read(), code


def test_index_embed_and_journal_sync_loops_each_do_a_pass_and_stop_on_sigterm(cli_env, db, embed_server, tmp_path):  # noqa: F811
    home = tmp_path / "agents"
    uids = write_topic_home(home)
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(
        f'[embedding]\nprovider = "openai"\nmodel = "{MODEL_NAME}"\nbase_url = "{embed_server.base_url}"\n'
    )

    out, err, code = run_one_pass_then_sigterm(["index", "--home", str(home), "--every", "3600"], cli_env, "indexed:")
    assert code == 0 and "Traceback" not in err, err
    assert len(out) == 1  # one pass; SIGTERM while waiting starts no further pass
    assert out[0].startswith(f"indexed: {len(TOPICS)} files scanned, {len(TOPICS)} changed")

    out, err, code = run_one_pass_then_sigterm(["embed", "--every", "3600"], cli_env, "embedded (")
    assert code == 0 and "Traceback" not in err, err
    assert len(out) == 1 and out[0].startswith(f"embedded ({MODEL_NAME}): ")
    assert embed_server.requests  # the pass really embedded through the endpoint

    journal = tmp_path / "journal.db"
    with sqlite3.connect(journal) as j:
        j.execute(f"CREATE TABLE conv ({', '.join(f'{c} TEXT' for c in COLUMNS)})")
        j.execute(f"CREATE VIEW ah_export_session_summary AS SELECT {', '.join(COLUMNS)} FROM conv")
        j.execute(
            "INSERT INTO conv (journal_conversation_id, agent, session_uid, analysed_at, title, app_instance_id) "
            "VALUES ('c1', 'claude', ?, '2026-11-30T10:00:00Z', 'notes', 'inst-A')",
            (uids["t0"],),
        )
    out, err, code = run_one_pass_then_sigterm(
        ["journal-sync", "--source", str(journal), "--every", "3600"], cli_env, "journal-sync ("
    )
    assert code == 0 and "Traceback" not in err, err
    assert len(out) == 1 and out[0].startswith(f"journal-sync (full, {journal}): 1 row read, 1 new, 0 updated")

    with psycopg.connect(db.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM ah.session").fetchone()[0] == len(TOPICS)
        assert conn.execute("SELECT count(*) FROM ah.embedding").fetchone()[0] > 0
        linked = conn.execute(
            "SELECT s.session_uid FROM ah.session_summary ss JOIN ah.session s ON s.id = ss.session_id"
        ).fetchall()
        assert linked == [(uids["t0"],)]
        runs = conn.execute("SELECT status, finished_at IS NOT NULL FROM ah.journal_sync_run").fetchall()
        assert runs == [("ok", True)]  # one pass, then a clean stop (not a second pass, not 'running')
        assert conn.execute("SELECT status FROM ah.index_run").fetchall() == [("ok",)]


def test_journal_sync_every_survives_a_lost_connection(cli_env, db, tmp_path):
    """Synchronised on output: first pass printed → the server terminates the loop's connection
    (as a restart does) → a `pass failed, retrying` line → the next pass reconnects and prints
    → SIGTERM → exit 0."""
    journal = tmp_path / "journal.db"
    with sqlite3.connect(journal) as j:
        j.execute(f"CREATE TABLE conv ({', '.join(f'{c} TEXT' for c in COLUMNS)})")
        j.execute(f"CREATE VIEW ah_export_session_summary AS SELECT {', '.join(COLUMNS)} FROM conv")
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "journal-sync", "--source", str(journal), "--every", "1"],
        env=cli_env | {"PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events: queue.Queue[tuple[str, str | None]] = queue.Queue()

    def pump(name: str, stream) -> None:
        for line in stream:
            events.put((name, line.rstrip("\n")))
        events.put((name, None))

    threading.Thread(target=pump, args=("out", proc.stdout), daemon=True).start()
    threading.Thread(target=pump, args=("err", proc.stderr), daemon=True).start()
    seen: list[tuple[str, str | None]] = []

    def wait_for(stream: str, prefix: str) -> None:
        while True:
            name, line = events.get(timeout=SAFETY_TIMEOUT_S)
            seen.append((name, line))
            assert line is not None, seen
            if name == stream and line.startswith(prefix):
                return

    try:
        wait_for("out", "journal-sync (")
        with psycopg.connect(db.server.dsn(), autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = %s AND backend_type = 'client backend'",
                (db.name,),
            ).fetchone()[0]
        assert killed == 1  # the loop's one connection
        wait_for("err", "pass failed, retrying in 1 s: ")
        wait_for("out", "journal-sync (")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=SAFETY_TIMEOUT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not any(line and "Traceback" in line for _, line in seen), seen
