"""What `index` says about agent homes that are not there, and how Ctrl-C ends it: a default home
the user does not have is named only under ``--verbose``; a configured one is a warning, once per
``--every`` loop; SIGINT commits what was done and exits 130 with one line on stderr."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

INTERRUPTED = "interrupted: the files indexed so far are committed; run index again to finish"
STOPPED = "stopped: every pass finished and is committed"  # Ctrl-C between two passes of the loop


@pytest.fixture
def claude_only(cli_env, corpus_home) -> Path:
    """HOME with only Claude Code's home (one small project of the corpus one: a cheap pass)."""
    home = Path(cli_env["HOME"])
    project = Path(".claude") / "projects" / "-experiments-ideas"
    shutil.copytree(corpus_home / project, home / project)
    return home


def _index(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "index", *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_default_homes_the_user_lacks_are_named_only_with_verbose(cli_env, claude_only):
    plain = _index(cli_env)
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr == ""
    verbose = _index(cli_env, "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    skipped = verbose.stderr.splitlines()
    assert f"skipped codex-local: {claude_only / '.codex'} does not exist" in skipped
    assert all(line.startswith("skipped ") and line.endswith(" does not exist") for line in skipped)
    assert not any(line.startswith("skipped claude-local") for line in skipped)


def test_a_configured_missing_home_warns_once_per_loop_and_ctrl_c_exits_130(cli_env, claude_only, own_tmp, db):
    missing = own_tmp / "archive" / ".codex"
    (own_tmp / "config.toml").write_text(f'[sources]\ncodex-archive = "{missing}"\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_history", "index", "--every", "1"],
        env={**cli_env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        passes = [proc.stdout.readline() for _ in range(3)]  # three pass summaries: the loop is waiting or in a pass
        assert all(p.startswith("indexed: ") for p in passes), passes
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    # the signal lands in a (no-change) pass or in the wait between two: one line says which
    lines = err.splitlines()
    assert lines[:1] == [f"warning: skipped codex-archive: {missing} does not exist"] and lines[1:] in (
        [INTERRUPTED],
        [STOPPED],
    ), lines
    with psycopg.connect(db.dsn) as conn:  # the first pass was committed
        assert conn.execute("SELECT count(*) FROM ah.session WHERE namespace = 'claude-local'").fetchone()[0] > 0
