"""Newcomer stop 41: what a new user found at the edges of `connect`, `statusline`, `index` and the
CLI's error lines. Each finding is pinned with its exact output:

- ``connect AGENT`` then ``disconnect AGENT`` (and ``--hook``) on a fresh home left empty
  directories behind (``~/.codex``, ``~/.claude/skills``, the data dir that held the record of
  what `connect` created): now `connect` lists the directories it creates (`connect.created`) and
  `disconnect` removes them when empty — the home is left as it was. (``disconnect cursor --hook``
  kept ``hooks.json`` as ``{"version": 1}`` with a backup, ``disconnect vscode --hook`` its hook
  file's backup: left here, removed in stop 42.)
- ``statusline`` with a NUL character in the payload's ``session_id`` said "catalogue not read:
  PostgreSQL text fields cannot contain NUL" and printed a line: now one line, exit 2.
- ``statusline`` with a malformed payload in a data dir never used started the resident query
  process (an idle server for 15 minutes, for nothing): now a usage error starts nothing.
- An error naming a value echoed it whole: a 100 kB ``--since`` printed 100 kB on stderr. Now every
  echoed value longer than 200 characters is cut, saying its size (`cli.echo`).
- ``index --file ""`` (an unset shell variable) was taken as ``.``: now a usage error, as
  ``--home ""`` and ``--claude-export ""``.
- ``touched`` with a pattern too complex for PostgreSQL's regular expressions was a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.connect import connect, disconnect
from agent_history.connect import hook as connect_hook
from agent_history.connect.created import DIRECTORIES_NAME, record_path
from agent_history.echo import ECHO_LIMIT, clip_echoes
from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture
from tests.test_newcomer_stop40 import _no_server_env

PY = sys.executable


def cli(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "agent_history", *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


def fresh_env(tmp: Path, *, idle_s: str = "0") -> dict[str, str]:
    """A CLI environment with no DSN, a data dir ``tmp/data`` not created yet, HOME ``tmp/home``
    and the resident query process's idle timeout `idle_s` (0: off)."""
    return {**_no_server_env(tmp, tmp / "data"), "AGENT_HISTORY_QUERY_IDLE_S": idle_s}


def tree(root: Path) -> list[str]:
    """Every path below `root`, relative, sorted."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty HOME and a data dir ``tmp/home/.local/share/agent-history`` not created yet."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_HISTORY_DATA_DIR", str(home / ".local" / "share" / "agent-history"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "AGENT_HISTORY_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "cursor", "opencode", "vscode", "qwen-code"])
def test_disconnect_leaves_a_fresh_home_as_connect_found_it(home, agent):
    connect(agent)
    assert tree(home) != []  # the config, the usage note and their directories were written
    disconnect(agent)
    assert tree(home) == []


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "cursor", "vscode"])
def test_disconnect_hook_leaves_a_fresh_home_as_connect_hook_found_it(home, agent):
    connect_hook.install(agent)
    assert tree(home) != []
    assert connect_hook.uninstall(agent).action == "removed"
    assert tree(home) == []


def test_disconnect_hook_of_cursor_and_vscode_leaves_no_backup_of_what_connect_created(home):
    """Cursor's ``hooks.json`` kept ``{"version": 1}`` with a backup and VS Code's own hook file
    left its backup until stop 41 (said there); since stop 42 a file `connect --hook` created and
    that holds only what it put there is removed without a backup, its directories with it."""
    for agent in ("cursor", "vscode"):
        connect_hook.install(agent)
    assert [(c.action, c.backup) for c in map(connect_hook.uninstall, ("cursor", "vscode"))] == [
        ("removed", None),
        ("removed", None),
    ]
    assert tree(home) == []


def test_a_directory_connect_created_that_now_holds_the_users_file_stays_listed(home):
    connect("codex")
    (home / ".codex" / "history.jsonl").write_text("{}\n")  # the agent ran meanwhile
    disconnect("codex")
    assert tree(home) == [
        ".codex",
        ".codex/history.jsonl",
        ".local",
        ".local/share",
        ".local/share/agent-history",
        f".local/share/agent-history/{DIRECTORIES_NAME}",
    ]
    assert not record_path().exists()  # no config of ours is left
    listed = json.loads((record_path().parent / DIRECTORIES_NAME).read_text())
    assert listed == [str(home / ".local"), str(home / ".local/share"), str(home / ".local/share/agent-history"),
                      str(home / ".codex")]  # fmt: skip
    (home / ".codex" / "history.jsonl").unlink()
    connect("codex")
    disconnect("codex")
    assert tree(home) == []  # once empty, the next disconnect takes it away


def test_disconnect_keeps_directories_the_user_had(home):
    (home / ".codex").mkdir()
    connect("codex")
    disconnect("codex")
    assert tree(home) == [".codex"]


def test_a_nul_in_the_statusline_session_id_is_one_line_exit_2(tmp_path):
    env = fresh_env(tmp_path)
    r = cli(env, "statusline", stdin=json.dumps({"session_id": "ab\u0000cd"}))
    assert (r.returncode, r.stdout, r.stderr) == (
        2,
        "",
        'error: status-line payload: "session_id" holds a NUL character\n',
    )
    assert not (tmp_path / "data").exists()


def test_a_bad_statusline_payload_in_a_data_dir_never_used_starts_nothing(tmp_path):
    env = fresh_env(tmp_path, idle_s="300")  # the resident query process is on
    try:
        r = cli(env, "statusline", stdin="{not json")
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            "error: status-line payload is not JSON (Expecting property name enclosed in double quotes)\n",
        )
        assert not (tmp_path / "data").exists()  # `spawn_server` makes its directory before it returns
    finally:
        cli(env, "service", "stop")


def test_an_echoed_value_is_cut_to_its_first_200_characters_saying_its_size():
    huge = "é" * 100_000
    assert clip_echoes(f"--since: not a time: {huge!r}") == (
        f"--since: not a time: '{'é' * (ECHO_LIMIT - 1)}…' (200,000 bytes)"
    )
    assert clip_echoes(f"no such file: {'x' * 300} (try another)") == (
        f"no such file: {'x' * ECHO_LIMIT}… (300 bytes) (try another)"
    )
    spaced = "word " * 100  # a quoted value with blanks is one value
    assert (
        clip_echoes(f"unknown agent {spaced.strip()!r}") == f"unknown agent '{spaced[: ECHO_LIMIT - 1]}…' (499 bytes)"
    )
    short = "unknown namespace 'abc'; known: a, b"
    assert clip_echoes(short) == short


def test_a_cli_error_naming_a_huge_argument_prints_it_cut(tmp_path):
    r = cli(fresh_env(tmp_path), "usage", "--since", "x" * 100_000)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        f"error: --since: not a time: '{'x' * (ECHO_LIMIT - 1)}…' (100,000 bytes) "
        "(use 7d, 12h, 30m, 2w, YYYY-MM-DD or an ISO timestamp)\n"
    )


@pytest.mark.parametrize("option", ["--file", "--home", "--claude-export"])
def test_an_empty_path_option_of_index_is_a_usage_error(tmp_path, option):
    r = cli(fresh_env(tmp_path), "index", option, "")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: {option}: an empty path (give a file or directory)\n")
    assert not (tmp_path / "data").exists()  # refused before the embedded server was created


def test_touched_with_a_pattern_too_complex_for_postgresql_is_one_line(corpus_db, tmp_path):  # noqa: F811
    r = cli(cli_environment(tmp_path, corpus_db.dsn), "touched", "x" * 100_000)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        "error: touched: the pattern cannot be matched (invalid regular expression: regular expression is too "
        "complex); give a shorter one\n"
    )
