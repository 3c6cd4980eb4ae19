"""`agent-history index --file PATH` (the after-turn hook path, issue 18): exactly that
transcript is indexed, an appended turn is read from where the last pass stopped, and a file no
source discovers is a one-line usage error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLAUDE = ".claude/projects/-Users-user1-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
CODEX = ".codex/sessions/2025/11/17/rollout-2025-11-17T21-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def home(corpus_home, cli_env) -> Path:
    """The test HOME with two real transcripts (writable copies)."""
    root = Path(cli_env["HOME"])
    for rel in (CLAUDE, CODEX):
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus_home / rel, dst)
    return root


def test_index_file_indexes_exactly_that_transcript_then_reads_only_the_appended_bytes(home, cli_env, db):
    path = home / CLAUDE
    out = cli("index", "--file", str(path), "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    first = json.loads(out.stdout)
    assert (first["files_scanned"], first["files_changed"], first["bytes_read"]) == (1, 1, path.stat().st_size)
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file").fetchall() == [(str(path),)]
        sessions = conn.execute("SELECT session_uid FROM ah.session WHERE agent = 'claude'").fetchall()
    assert ("7acd37a8-2745-4b58-a8a9-46164b22ad9e",) in sessions

    last = path.read_bytes().splitlines(keepends=True)[-1]  # a re-observed record merges as a no-op
    with path.open("ab") as fh:
        fh.write(last)
    out = cli("index", "--file", str(path), "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    second = json.loads(out.stdout)
    assert (second["files_scanned"], second["files_changed"], second["bytes_read"]) == (1, 1, len(last))
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ah.source_file").fetchone()[0] == 1


def test_index_file_outside_every_source_is_a_one_line_usage_error(home, cli_env, own_tmp):
    stray = own_tmp / "elsewhere.jsonl"
    shutil.copyfile(home / CODEX, stray)
    out = cli("index", "--file", str(stray), env=cli_env)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "not a transcript of any source" in out.stderr
    assert cli("index", "--file", str(home / CODEX), "--every", "5", env=cli_env).returncode == 2
    gone = home / ".codex" / "sessions" / "no-such-rollout.jsonl"
    missing = cli("index", "--file", str(gone), env=cli_env)  # a hook naming a file that is gone
    assert missing.returncode == 2 and missing.stderr == f"error: --file {gone}: no such file\n"
