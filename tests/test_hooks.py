"""After-turn hooks (issue 18): `connect AGENT --hook` / `disconnect --hook` round trips on
realistic config files, and `agent-history hook` with real payloads indexing exactly the named
transcript — or, with the database down, exiting 0 and logging why."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agent_history.connect import ConnectError
from agent_history.connect import hook as hooks

CLAUDE = ".claude/projects/-Users-user1-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
CODEX = ".codex/sessions/2025/11/17/rollout-2025-11-17T21-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
CODEX_THREAD = "019a93b9-f380-7600-98ff-940e6b99603c"

# A settings.json as Claude Code users have them: permissions, another Stop hook, a PreToolUse hook.
SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
    },
}

CONFIG_TOML = """\
# my codex config
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"  # the docs server
args = ["--stdio"]

[profiles.fast]
model = "gpt-5-mini"
"""


@pytest.fixture
def fake_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def test_claude_stop_hook_round_trip_keeps_every_other_setting(fake_home):
    path = fake_home / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(SETTINGS, indent=2) + "\n"
    path.write_text(original)

    change = hooks.install("claude")
    assert change.action == "updated"
    assert change.backup.read_text() == original
    data = json.loads(path.read_text())
    assert data["hooks"]["PreToolUse"] == SETTINGS["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == SETTINGS["hooks"]["Stop"][0]
    ours = data["hooks"]["Stop"][1]["hooks"]
    assert len(ours) == 1 and ours[0]["type"] == "command" and ours[0]["command"].endswith(" hook claude")
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in SETTINGS.items() if k != "hooks"}

    assert hooks.install("claude").action == "unchanged"
    removed = hooks.uninstall("claude")
    assert removed.action == "removed"
    assert json.loads(path.read_text()) == SETTINGS
    assert hooks.uninstall("claude").action == "absent"


def test_claude_hook_into_a_missing_settings_file_and_out_again(fake_home):
    path = fake_home / ".claude" / "settings.json"
    assert hooks.install("claude").action == "created"
    assert list(json.loads(path.read_text())) == ["hooks"]
    assert hooks.uninstall("claude").action == "removed"
    assert not path.exists()  # install created it and nothing else is in it: removed (connect.created)


def test_codex_notify_round_trip_keeps_comments_and_tables(fake_home):
    path = fake_home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CONFIG_TOML)

    change = hooks.install("codex")
    assert change.action == "updated" and change.backup.read_text() == CONFIG_TOML
    text = path.read_text()
    parsed = tomllib.loads(text)
    assert parsed["notify"][-2:] == ["hook", "codex"]
    assert {k: v for k, v in parsed.items() if k != "notify"} == tomllib.loads(CONFIG_TOML)
    assert "# my codex config" in text and "# the docs server" in text

    assert hooks.install("codex").action == "unchanged"
    assert hooks.uninstall("codex").action == "removed"
    assert path.read_text() == CONFIG_TOML


def test_codex_notify_of_another_program_is_not_replaced(fake_home):
    path = fake_home / ".codex" / "config.toml"
    path.parent.mkdir()
    text = 'notify = ["notify-send", "Codex"]\n' + CONFIG_TOML
    path.write_text(text)
    with pytest.raises(ConnectError, match="one notify program"):
        hooks.install("codex")
    assert path.read_text() == text
    assert hooks.uninstall("codex").action == "absent"
    assert not (path.parent / "config.toml.bak").exists()


def test_unknown_agent_and_broken_config_are_connect_errors(fake_home):
    with pytest.raises(ConnectError, match="no after-turn hook"):
        hooks.install("opencode")
    path = fake_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus",}')
    with pytest.raises(ConnectError, match="not changed"):
        hooks.install("claude")
    assert path.read_text() == '{"model": "opus",}'


# -- the hook command, end to end ------------------------------------------------------------


def _hook(args: list[str], env: dict, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "hook", *args, "--wait"],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def home(corpus_home, cli_env) -> Path:
    root = Path(cli_env["HOME"])
    for rel in (CLAUDE, CODEX):
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus_home / rel, dst)
    return root


def test_claude_stop_payload_indexes_exactly_that_transcript(home, cli_env, db):
    path = home / CLAUDE
    payload = {
        "session_id": "7acd37a8-2745-4b58-a8a9-46164b22ad9e",
        "transcript_path": str(path),
        "cwd": "/Users/user1/workspace/JSSoundRecorder",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    out = _hook(["claude"], cli_env, stdin=json.dumps(payload))
    assert (out.returncode, out.stdout) == (0, "")
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file").fetchall() == [(str(path),)]


def test_codex_notify_payload_indexes_the_threads_rollout(home, cli_env, db):
    payload = {
        "type": "agent-turn-complete",
        "thread-id": CODEX_THREAD,
        "turn-id": "1",
        "cwd": "/tmp",
        "input-messages": ["hi"],
        "last-assistant-message": "done",
    }
    out = _hook(["codex", json.dumps(payload)], cli_env)
    assert (out.returncode, out.stdout) == (0, "")
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file").fetchall() == [(str(home / CODEX),)]


def test_hook_with_the_database_down_exits_0_and_logs_why(home, cli_env, own_tmp):
    env = dict(cli_env, AGENT_HISTORY_DSN="postgresql://ah@127.0.0.1:9/none?connect_timeout=2")
    payload = {"transcript_path": str(home / CLAUDE), "hook_event_name": "Stop"}
    out = _hook(["claude"], env, stdin=json.dumps(payload))
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    log = (Path(env["AGENT_HISTORY_DATA_DIR"]) / "hook.log").read_text().splitlines()
    # the detached child's line says when and for which agent, like the hook's own lines
    assert len(log) == 1 and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 hook claude: error: cannot reach the database .*", log[0]
    ), log

    bad = _hook(["claude"], env, stdin="not json")
    assert (bad.returncode, bad.stdout) == (0, "")
    log = (Path(env["AGENT_HISTORY_DATA_DIR"]) / "hook.log").read_text().splitlines()
    assert len(log) == 2 and log[1].split(" ", 1)[1].startswith("hook claude:")


def test_hook_with_an_unusable_data_dir_still_exits_0_quietly(tmp_path, corpus_home):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {
        k: v for k, v in os.environ.items() if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
    }
    env.update(HOME=str(tmp_path), AGENT_HISTORY_DATA_DIR=str(blocker / "data"))
    payload = {"transcript_path": str(corpus_home / CLAUDE), "hook_event_name": "Stop"}
    out = _hook(["claude"], env, stdin=json.dumps(payload))
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
