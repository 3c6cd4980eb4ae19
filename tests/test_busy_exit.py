"""`archive` and `embed` when another pass holds their lock: exit 75 (EX_TEMPFAIL, as `index`:
nothing was done, try again later) and one line on stdout saying what holds it. The lock is
held by a real second session on the test database; the commands run as subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import psycopg

from agent_history.embed.store import EMBED_LOCK
from agent_history.ingest.archive.run import ARCHIVE_LOCK_CLASS
from tests.embed_corpus import embed_server  # noqa: F401 - fixture
from tests.embed_server import MODEL_NAME


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300
    )


def _one_transcript(home: Path) -> None:
    line = {"type": "user", "sessionId": "s-busy", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z"}
    line["message"] = {"role": "user", "content": "hello"}
    path = home / ".claude" / "projects" / "-work-x" / "s-busy.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(line) + b"\n")


def test_archive_exits_75_naming_the_namespace_another_pass_archives(cli_env, db, own_tmp):
    home = own_tmp / "busy-home"
    _one_transcript(home)
    env = {**cli_env, "AGENT_HISTORY_QUERY_IDLE_S": "0"}
    with psycopg.connect(db.dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s::int, hashtext(%s))", (ARCHIVE_LOCK_CLASS, "claude-local"))
        out = cli("archive", "--home", str(home), env=env)
        js = cli("archive", "--home", str(home), "--json", env=env)
    assert out.returncode == js.returncode == 75, out.stderr
    assert out.stdout == js.stdout == "another archive pass is running (it is archiving claude-local)\n"
    assert out.stderr == ""
    done = cli("archive", "--home", str(home), "--json", env=env)  # the lock released: the pass runs
    assert done.returncode == 0 and orjson.loads(done.stdout)["copied"] == 1, done.stdout + done.stderr


def test_embed_exits_75_saying_another_embed_pass_holds_the_catalogue(cli_env, db, embed_server):  # noqa: F811
    with open(cli_env["AGENT_HISTORY_CONFIG"], "w") as f:
        f.write(f'[embedding]\nprovider = "openai"\nbase_url = "{embed_server.base_url}"\nmodel = "{MODEL_NAME}"\n')
    env = {**cli_env, "AGENT_HISTORY_QUERY_IDLE_S": "0"}
    with psycopg.connect(db.dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (EMBED_LOCK,))
        out = cli("embed", env=env)
    assert out.returncode == 75, out.stderr
    assert out.stdout == "another embed pass is running (one pass at a time embeds the whole catalogue)\n"
    assert out.stderr == ""
    done = cli("embed", "--json", env=env)  # the lock released: the pass runs (nothing pending)
    assert done.returncode == 0 and orjson.loads(done.stdout)["sources"] == 0, done.stdout + done.stderr
