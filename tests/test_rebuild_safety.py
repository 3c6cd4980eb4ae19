"""`rebuild` never leaves a catalogue emptier than it found it without saying so: an archived copy
that cannot be read back refuses the rebuild before anything is emptied, and a rebuild that
stops after emptying is announced by `status` and `index` until a rebuild completes (a newcomer's
break-it run: a truncated ``.zst`` and a Ctrl-C each left an empty catalogue, silently)."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from agent_history.ingest.archive import manifest
from agent_history.ingest.rebuild import REBUILD_KEY, rebuild, rebuild_interrupted
from tests.homes import cli
from tests.snapshot import snapshot


@pytest.fixture
def small_home(corpus_home, own_tmp) -> Path:
    """Four real Claude Code sessions of the shared corpus, laid out as written."""
    src = corpus_home / ".claude" / "projects"
    picked = sorted(p for p in src.glob("*/*.jsonl") if p.stat().st_size > 10_000)[:4]
    assert len(picked) == 4
    home = own_tmp / "home-small"
    for p in picked:
        dest = home / ".claude" / "projects" / p.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    return home


def _archive_root(env: dict) -> Path:
    return Path(env["AGENT_HISTORY_DATA_DIR"]) / "archive"


def test_an_unreadable_archived_copy_refuses_the_rebuild_and_changes_nothing(cli_env, db, small_home):
    assert cli("index", "--home", str(small_home), env=cli_env).returncode == 0
    assert cli("archive", "--home", str(small_home), env=cli_env).returncode == 0
    gone = sorted(small_home.rglob("*.jsonl"))[0]
    with db.connect() as conn:
        (copy,) = [c for c in manifest.all_copies(conn) if c.path == str(gone)]
    gone.unlink()
    zst = _archive_root(cli_env) / copy.archive_file
    zst.write_bytes(zst.read_bytes()[:1000])  # a truncated zstd frame: EOFError when read
    with db.connect() as conn:
        before = snapshot(conn)
    out = cli("rebuild", env=cli_env)
    assert out.returncode == 1, out.stdout + out.stderr
    [line] = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert "rebuild refused: 1 archived transcript(s) have no readable copy" in line and str(gone) in line
    assert "nothing was changed" in line and "Traceback" not in out.stderr and "Aborted" not in out.stderr
    with db.connect() as conn:
        assert snapshot(conn) == before
        assert rebuild_interrupted(conn) is None
    # --allow-missing drops the unreadable transcript and keeps the rest
    out = cli("rebuild", "--allow-missing", env=cli_env)
    assert out.returncode == 0, out.stderr
    with db.connect() as conn:
        paths = {r[0] for r in conn.execute("SELECT path FROM ah.source_file")}
    assert paths == {str(p) for p in small_home.rglob("*.jsonl")}


def test_a_rebuild_stopped_after_emptying_is_announced_until_one_completes(cli_env, db, small_home):
    assert cli("index", "--home", str(small_home), env=cli_env).returncode == 0
    with db.connect() as conn:
        before = snapshot(conn)
    stop = threading.Event()
    stop.set()  # the loader stops at its first batch boundary: the catalogue is emptied, not refilled
    with db.connect(autocommit=True) as conn:
        summary = rebuild(conn, [], [], stop=stop)
        assert summary.interrupted
        at = rebuild_interrupted(conn)
        assert at is not None and at.endswith("Z")
        assert conn.execute("SELECT count(*) FROM ah.session").fetchone()[0] == 0
    warning = f"a rebuild started at {at} emptied the catalogue and did not finish"
    status = cli("status", env=cli_env)
    assert status.returncode == 0 and warning in status.stderr, status.stderr
    assert json.loads(cli("status", "--json", env=cli_env).stdout)["rebuild_interrupted_at"] == at
    index = cli("index", "--home", str(small_home), env=cli_env)
    assert index.returncode == 0 and warning in index.stderr, index.stderr
    done = cli("rebuild", env=cli_env)
    assert done.returncode == 0, done.stderr
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ah.meta WHERE key = %s", (REBUILD_KEY,)).fetchone()[0] == 0
        assert snapshot(conn) == before
    assert "rebuild started" not in cli("status", env=cli_env).stderr
