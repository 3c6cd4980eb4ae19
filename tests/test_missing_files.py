"""A catalogued transcript gone from disk: the next pass marks its ``source_file`` row
``missing`` (its sessions stay), `status` counts it, and a pass that finds it again gives it its
status back without reading anything twice. Through the real CLI and the embedded server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.homes import cli
from tests.snapshot import snapshot

VICTIM = "-Users-user1-workspace-example-site-dev-next/b25638d7-b104-4f06-a797-70ac33d069ed.jsonl"


@pytest.fixture
def home(corpus_home, own_tmp) -> Path:
    dst = own_tmp / "corpus-home"
    shutil.copytree(corpus_home, dst)
    return dst


def index(env: dict, *args: str) -> dict:
    out = cli("index", *args, "--json", env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def file_row(db, path: Path) -> tuple:
    with db.connect() as conn:
        return conn.execute(
            "SELECT f.status, (SELECT count(*) FROM ah.session s WHERE s.source_id = f.id) "
            "FROM ah.source_file f WHERE f.path = %s",
            (str(path),),
        ).fetchone()


def test_a_deleted_transcript_is_marked_missing_kept_and_back_when_it_returns(cli_env, db, home):
    victim = home / ".claude" / "projects" / VICTIM
    assert index(cli_env, "--home", str(home))["files_missing"] == 0
    with db.connect() as conn:
        original = snapshot(conn)
    status, sessions = file_row(db, victim)
    assert (status, sessions) == ("ok", 1)
    content = victim.read_bytes()
    victim.unlink()

    gone = index(cli_env, "--home", str(home))
    assert (gone["files_missing"], gone["files_returned"], gone["files_changed"]) == (1, 0, 0)
    assert file_row(db, victim) == ("missing", 1)  # the session is kept
    with db.connect() as conn:
        assert snapshot(conn) == original
    files = json.loads(cli("status", "--json", env=cli_env).stdout)["namespaces"]["claude-local"]["files"]
    assert files["missing"] == 1
    text = cli("index", "--home", str(home), env=cli_env)  # already marked: not counted again
    assert text.returncode == 0 and "missing from disk" not in text.stdout, text.stdout
    # a pass over another home of the same namespace leaves files it did not look at alone
    other = home.parent / "other-home"
    (other / ".claude" / "projects").mkdir(parents=True)
    assert index(cli_env, "--home", str(other))["files_missing"] == 0

    victim.write_bytes(content)  # back, with a new mtime: re-checked from its offset, nothing doubled
    back = index(cli_env, "--home", str(home))
    assert (back["files_missing"], back["files_returned"], back["bytes_read"]) == (0, 1, 0)
    assert file_row(db, victim) == ("ok", 1)
    with db.connect() as conn:
        assert snapshot(conn) == original
    files = json.loads(cli("status", "--json", env=cli_env).stdout)["namespaces"]["claude-local"]["files"]
    assert "missing" not in files


def test_the_pass_line_says_how_many_went_missing(cli_env, db, home, corpus_home):
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[sources]\nclaude-local = "{home / ".claude"}"\n')
    assert cli("index", env=cli_env).returncode == 0
    (home / ".claude" / "projects" / VICTIM).unlink()
    out = cli("index", env=cli_env)
    assert out.returncode == 0, out.stderr
    assert "0 changed, 1 now missing from disk (sessions kept), " in out.stdout, out.stdout
    assert file_row(db, home / ".claude" / "projects" / VICTIM) == ("missing", 1)
    # `index --file` judges no other transcript, and gives the one it is given its status back
    other = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[0]
    assert cli("index", "--file", str(other), env=cli_env).returncode == 0
    assert file_row(db, home / ".claude" / "projects" / VICTIM) == ("missing", 1)
    shutil.copyfile(corpus_home / ".claude" / "projects" / VICTIM, home / ".claude" / "projects" / VICTIM)
    assert cli("index", "--file", str(home / ".claude" / "projects" / VICTIM), env=cli_env).returncode == 0
    assert file_row(db, home / ".claude" / "projects" / VICTIM) == ("ok", 1)
