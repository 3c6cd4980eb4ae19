"""Harnesses whose files live inside each project, through the CLI and a real catalogue: Aider's
append-only Markdown (found from the working directories the catalogue knows and from
``[aider] roots``, read from its offset, a torn last line waiting) and Crush's database (read
with its ``-wal`` while Crush holds it open, then by its cursor) — and Goose's ``sessions.db``, a
home database read by row id."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests import repo_sample_homes_b as b
from tests import sample_databases as sdb

PY = sys.executable
QUICKDRAW = b.AIDER / "quickdraw" / ".aider.chat.history.md"


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


def index(env: dict, *args: str) -> dict:
    out = cli("index", *args, "--json", env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def status(env: dict) -> dict:
    return json.loads(cli("status", "--json", env=env).stdout)["namespaces"]


def test_aider_history_in_a_known_working_directory_is_found_on_the_next_pass(cli_env, db, own_tmp):
    # a Qwen Code session that ran in a sub-directory of a repository holding an Aider history
    project = own_tmp / "projects" / "quickdraw"
    (project / ".git").mkdir(parents=True)
    (project / "app").mkdir()
    shutil.copyfile(QUICKDRAW, project / ".aider.chat.history.md")
    home = own_tmp / "home-q"
    recording = b.qwen_layout(home)
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    recording.write_text("".join(json.dumps({**r, "cwd": str(project / "app")}) + "\n" for r in lines))

    first = index(cli_env, "--home", str(home))
    assert "aider-local" not in status(cli_env)  # the working directory was not known yet
    assert first["files_failed"] == 0
    index(cli_env, "--home", str(home))
    found = status(cli_env)["aider-local"]
    assert (found["files"], found["sessions"]) == ({"ok": 1}, 1)  # parents up to the repository root
    with db.connect() as conn:
        cwd = conn.execute("SELECT cwd FROM ah.session WHERE agent = 'aider'").fetchone()[0]
    assert cwd == str(project)


def test_configured_aider_roots_are_searched_and_the_history_is_read_from_its_offset(cli_env, db, own_tmp):
    work = own_tmp / "work"
    history = b.aider_projects(work)["quickdraw"]
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[aider]\nroots = ["{work}"]\n')
    first = index(cli_env)
    assert status(cli_env)["aider-local"]["files"] == {"ok": 3}
    with db.connect() as conn:
        before = conn.execute(
            "SELECT count(*) FROM ah.model_call m JOIN ah.session s ON s.id = m.session_id WHERE s.agent = 'aider'"
        ).fetchone()[0]
    assert first["files_failed"] == 0 and before == b.aider_status(sorted(work.glob("src/*/.aider.chat.history.md")))[3]

    # Aider appends a session; its last write is still in progress (no newline yet)
    block = "\n# aider chat started at 2024-10-10 09:00:00\n\n#### add a dark mode  \n\nDone: added a toggle.\n\n"
    with history.open("a") as fh:
        fh.write(block + "> Tokens: 2.4k sent, 310 rec")
    size = history.stat().st_size
    grown = index(cli_env)
    assert grown["bytes_read"] == len(block.encode())  # from the saved offset, up to the torn line
    with history.open("a") as fh:
        fh.write("eived. Cost: $0.01 message, $0.04 session.  \n")
    done = index(cli_env)
    assert done["bytes_read"] == history.stat().st_size - size + len(b"> Tokens: 2.4k sent, 310 rec")
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT m.input_uncached, m.output, m.recorded_cost_usd FROM ah.model_call m JOIN ah.source_file f "
            "ON f.id = m.source_id WHERE f.path = %s ORDER BY m.byte_offset DESC LIMIT 1",
            (str(history),),
        ).fetchone()
        prompts = conn.execute(
            "SELECT m.text FROM ah.message m JOIN ah.source_file f ON f.id = m.source_id WHERE f.path = %s "
            "AND m.message_class = 'human_prompt' ORDER BY m.byte_offset",
            (str(history),),
        ).fetchall()
    assert (rows[0], rows[1], float(rows[2])) == (2400, 310, 0.01)
    assert prompts[-1] == ("add a dark mode",)


def test_index_home_searches_below_it_for_aider_projects_instead_of_the_configured_roots(cli_env, db, own_tmp):
    # README "[aider] / [crush]": `index --home DIR` searches below DIR, not `[aider] roots`
    home, elsewhere = own_tmp / "home-a", own_tmp / "elsewhere"
    b.aider_projects(home)
    b.aider_projects(elsewhere)
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[aider]\nroots = ["{elsewhere}"]\n')
    assert index(cli_env, "--home", str(home))["files_failed"] == 0
    with db.connect() as conn:
        paths = conn.execute("SELECT path FROM ah.source_file WHERE namespace = 'aider-local' ORDER BY path").fetchall()
    assert [p for (p,) in paths] == [
        str(home.resolve() / "src" / name / ".aider.chat.history.md")
        for name in ("aider", "quickdraw", "simple-calculator")
    ]


def test_crush_database_is_read_with_its_wal_then_by_its_cursor(cli_env, db, own_tmp):
    root = own_tmp / "code"
    path = root / "timer" / ".crush" / "crush.db"
    con = sdb.crush_db(path, keep_open=True)  # Crush running: the rows are still in crush.db-wal
    try:
        assert Path(str(path) + "-wal").stat().st_size > 0
        Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[crush]\nroots = ["{root}"]\n')
        first = index(cli_env)
        files, sessions, messages, calls, tokens = b.crush_status(path)
        got = status(cli_env)["crush-local"]
        assert (got["files"], got["sessions"], got["messages"], got["model_calls"], got["tokens"]) == (
            files,
            sessions,
            messages,
            calls,
            tokens,
        )
        assert first["files_failed"] == 0
        # the user asks again: a new message (seconds timestamps, as Crush writes them)
        parts = json.dumps(
            [{"type": "text", "data": {"text": "And make it louder"}}, {"type": "finish", "data": {"reason": "stop"}}]
        )
        t = sdb.T0 + 3600
        con.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) "
            "VALUES ('m07', ?, 'user', ?, NULL, NULL, ?, ?)",
            (sdb.PARENT, parts, t, t),
        )
        con.commit()
        again = index(cli_env)
        assert again["files_changed"] == 1 and again["rows_new"].get("message") == 1
        unchanged = index(cli_env)
        assert unchanged["files_changed"] == 0  # database and -wal unchanged: not opened
    finally:
        con.close()
    with db.connect() as conn:
        text = conn.execute("SELECT text FROM ah.message WHERE message_uid = 'm07'").fetchone()[0]
    assert text == "And make it louder"


def test_goose_database_is_read_by_row_id_and_a_replaced_conversation_is_not_counted_twice(cli_env, db, own_tmp):
    home = own_tmp / "home-g"
    path = b.home_of("goose", home) / "sessions" / "sessions.db"
    con = sdb.goose_db(path, keep_open=True)  # Goose running: the rows are still in sessions.db-wal
    try:
        first = index(cli_env, "--home", str(home))
        assert first["files_failed"] == 0
        files, sessions, messages, calls, tokens = b.goose_status([path])
        got = status(cli_env)["goose-local"]
        assert (got["files"], got["sessions"], got["messages"], got["model_calls"], got["tokens"]) == (
            files,
            sessions,
            messages,
            calls,
            tokens,
        )
        # the user asks again (add_message: a new row, updated_at moves)
        con.execute(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
            "VALUES ('msg_new', ?, 'user', ?, ?, '{}')",
            (sdb.GOOSE_NATIVE, json.dumps([{"type": "text", "text": "And push it"}]), sdb.G0 + 3600),
        )
        con.execute("UPDATE sessions SET updated_at = datetime('now') WHERE id = ?", (sdb.GOOSE_NATIVE,))
        con.commit()
        again = index(cli_env, "--home", str(home))
        assert again["files_changed"] == 1 and again["rows_new"].get("message") == 1
        # a compaction rewrites the conversation: every message again under a new row id
        kept = con.execute(
            "SELECT message_id, session_id, role, content_json, created_timestamp, metadata_json FROM messages "
            "WHERE session_id = ? ORDER BY created_timestamp, id",
            (sdb.GOOSE_NATIVE,),
        ).fetchall()
        con.execute("DELETE FROM messages WHERE session_id = ?", (sdb.GOOSE_NATIVE,))
        con.executemany(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            kept,
        )
        con.commit()
        replaced = index(cli_env, "--home", str(home))
        assert replaced["files_changed"] == 1 and not replaced["rows_new"].get("message")
        assert status(cli_env)["goose-local"]["messages"] == messages + 1
        assert index(cli_env, "--home", str(home))["files_changed"] == 0  # database and -wal unchanged
    finally:
        con.close()
    with db.connect() as conn:
        text = conn.execute(
            "SELECT text FROM ah.message WHERE message_uid = %s", (f"{sdb.GOOSE_NATIVE}#{len(kept)}",)
        ).fetchone()[0]
    assert text == "And push it"
