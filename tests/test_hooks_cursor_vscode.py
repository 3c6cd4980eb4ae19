"""`connect cursor --hook` (``~/.cursor/hooks.json``, the ``stop`` event) and `connect vscode
--hook` (VS Code agent hooks, ``~/.copilot/hooks/agent-history.json``, ``Stop``): install /
uninstall round trips on realistic config files, and `agent-history hook cursor|vscode` with a
stop payload indexing exactly the transcript it names (a copy of a real corpus file)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.connect import ConnectError
from agent_history.connect import hook as hooks
from agent_history.harnesses.places import vscode_user_dir
from tests.conftest import SHARED

SAMPLES = SHARED / "corpus" / "samples"
CURSOR_SAMPLE = SAMPLES / "cursor" / "agent-sessions__AgentSessionsTests__Fixtures__Cursor__test-session.jsonl"
VSCODE_SAMPLE = SAMPLES / "vscode-copilot" / "code-session-memory__tests__fixtures__vscode-session.jsonl"

# ~/.cursor/hooks.json as Cursor users have it (shape: cursor.com/docs/agent/hooks): a shell
# guard, an after-edit formatter and another stop hook with Cursor's loop_limit.
CURSOR_HOOKS = {
    "version": 1,
    "hooks": {
        "beforeShellExecution": [{"command": "./hooks/guard.sh"}],
        "afterFileEdit": [{"command": "bun run hooks/format.ts", "timeout": 10}],
        "stop": [{"command": "/opt/council/stop-hook", "loop_limit": 10}],
    },
}


@pytest.fixture
def fake_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_cursor_stop_hook_round_trip_keeps_every_other_hook(fake_home):
    path = fake_home / ".cursor" / "hooks.json"
    path.parent.mkdir()
    original = json.dumps(CURSOR_HOOKS, indent=2) + "\n"
    path.write_text(original)

    change = hooks.install("cursor")
    assert change.action == "updated" and change.backup.read_text() == original
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["hooks"]["beforeShellExecution"] == CURSOR_HOOKS["hooks"]["beforeShellExecution"]
    assert data["hooks"]["afterFileEdit"] == CURSOR_HOOKS["hooks"]["afterFileEdit"]
    first, ours = data["hooks"]["stop"]
    assert first == CURSOR_HOOKS["hooks"]["stop"][0]
    assert list(ours) == ["command"] and ours["command"].endswith(" hook cursor")

    assert hooks.install("cursor").action == "unchanged"
    assert hooks.uninstall("cursor").action == "removed"
    assert json.loads(path.read_text()) == CURSOR_HOOKS
    assert hooks.uninstall("cursor").action == "absent"


def test_cursor_hook_into_a_missing_file_gets_version_1(fake_home):
    path = fake_home / ".cursor" / "hooks.json"
    assert hooks.install("cursor").action == "created"
    data = json.loads(path.read_text())
    assert data["version"] == 1 and list(data["hooks"]) == ["stop"] and len(data["hooks"]["stop"]) == 1
    change = hooks.uninstall("cursor")
    assert (change.action, change.backup) == ("removed", None)
    assert not path.parent.exists()  # the file install created, only {"version": 1} left: gone (stop 42)


def test_vscode_stop_hook_is_a_file_of_its_own_in_the_user_hook_dir(fake_home):
    hook_dir = fake_home / ".copilot" / "hooks"
    hook_dir.mkdir(parents=True)
    other = hook_dir / "security.json"
    other_text = json.dumps({"hooks": {"PreToolUse": [{"type": "command", "command": "./guard.sh"}]}}, indent=2)
    other.write_text(other_text)
    path = hook_dir / "agent-history.json"

    assert hooks.install("vscode").action == "created"
    entries = json.loads(path.read_text())["hooks"]["Stop"]
    assert len(entries) == 1 and entries[0]["type"] == "command" and entries[0]["command"].endswith(" hook vscode")
    assert hooks.install("vscode").action == "unchanged"

    change = hooks.uninstall("vscode")
    assert (change.action, change.backup) == ("removed", None)  # install created it: no backup (stop 42)
    assert sorted(p.name for p in hook_dir.iterdir()) == ["security.json"]
    assert other.read_text() == other_text
    assert hooks.uninstall("vscode").action == "absent"


def test_vscode_hook_file_edited_by_the_user_keeps_their_entries(fake_home):
    path = fake_home / ".copilot" / "hooks" / "agent-history.json"
    path.parent.mkdir(parents=True)
    mine = {"hooks": {"Stop": [{"type": "command", "command": "notify-send done", "timeout": 5}]}}
    path.write_text(json.dumps(mine))
    assert hooks.install("vscode").action == "updated"
    assert len(json.loads(path.read_text())["hooks"]["Stop"]) == 2
    assert hooks.uninstall("vscode").action == "removed"
    assert json.loads(path.read_text()) == mine


# -- the hook command, end to end ------------------------------------------------------------


def _hook(agent: str, env: dict, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "hook", agent, "--wait"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _quiet_log(env: dict) -> None:
    log = Path(env["AGENT_HISTORY_DATA_DIR"]) / "hook.log"
    assert not log.exists() or log.read_text() == "", log.read_text()


def test_cursor_stop_payload_without_transcript_path_finds_the_conversation(cli_env, db):
    conversation = "5c1f7e2a-8d3b-4f6a-9e21-0b7c4d9a1e33"
    projects = Path(cli_env["HOME"]) / ".cursor" / "projects"
    path = projects / "Users-me-app" / "agent-transcripts" / f"{conversation}.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copyfile(CURSOR_SAMPLE, path)
    other = projects / "Users-me-app" / "agent-transcripts" / "another.jsonl"
    shutil.copyfile(CURSOR_SAMPLE, other)
    # the Cursor CLI's stop payload: transcript_path null (entireio/cli#522)
    payload = {
        "conversation_id": conversation,
        "generation_id": "gen-1",
        "hook_event_name": "stop",
        "status": "completed",
        "loop_count": 0,
        "transcript_path": None,
        "workspace_roots": ["/Users/me/app"],
    }
    out = _hook("cursor", cli_env, payload)
    assert (out.returncode, out.stdout) == (0, "")
    _quiet_log(cli_env)
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file").fetchall() == [(str(path),)]
        assert conn.execute("SELECT agent, count(*) FROM ah.session GROUP BY 1").fetchall() == [("cursor", 1)]


def test_vscode_stop_payload_indexes_exactly_that_transcript(cli_env, db):
    session = "vscode-test-session-001"
    storage = vscode_user_dir(Path(cli_env["HOME"]), env={}) / "workspaceStorage" / "a1b2c3"
    path = storage / "GitHub.copilot-chat" / "transcripts" / f"{session}.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copyfile(VSCODE_SAMPLE, path)
    # another chat of the workspace: the same sample under its own session id
    path.with_name("other-session.jsonl").write_text(VSCODE_SAMPLE.read_text().replace(session, "other-session"))
    payload = {
        "timestamp": "2026-02-22T10:00:09.000Z",
        "cwd": "/home/me/app",
        "sessionId": session,
        "hookEventName": "Stop",
        "transcript_path": str(path),
        "stop_hook_active": False,
    }
    out = _hook("vscode", cli_env, payload)
    assert (out.returncode, out.stdout) == (0, "")
    _quiet_log(cli_env)
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file").fetchall() == [(str(path),)]
        assert conn.execute("SELECT agent, count(*) FROM ah.session GROUP BY 1").fetchall() == [("copilot-vscode", 1)]

    # a build whose payload has no transcript_path: the sessionId names the transcript
    other = path.with_name("other-session.jsonl")
    out = _hook("vscode", cli_env, {"sessionId": "other-session", "hookEventName": "Stop"})
    assert (out.returncode, out.stdout) == (0, "")
    _quiet_log(cli_env)
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file ORDER BY path").fetchall() == [(str(other),), (str(path),)]
        assert conn.execute("SELECT session_uid FROM ah.session ORDER BY 1").fetchall() == [
            ("other-session",),
            (session,),
        ]


def test_cursor_hook_with_the_database_down_exits_0_and_logs_why(cli_env, tmp_path):
    env = dict(cli_env, AGENT_HISTORY_DSN="postgresql://ah@127.0.0.1:9/none?connect_timeout=2")
    path = Path(env["HOME"]) / ".cursor" / "projects" / "p" / "agent-transcripts" / "c1.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copyfile(CURSOR_SAMPLE, path)
    out = _hook("cursor", env, {"conversation_id": "c1", "transcript_path": str(path), "hook_event_name": "stop"})
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    log = (Path(env["AGENT_HISTORY_DATA_DIR"]) / "hook.log").read_text().splitlines()
    assert len(log) == 1 and "cannot reach the database" in log[0]

    missing = _hook("cursor", env, {"conversation_id": "nope", "hook_event_name": "stop"})
    assert (missing.returncode, missing.stdout) == (0, "")
    log = (Path(env["AGENT_HISTORY_DATA_DIR"]) / "hook.log").read_text().splitlines()
    assert len(log) == 2 and "no transcript for conversation nope" in log[1]


@pytest.mark.parametrize(
    ("agent", "rel", "content", "message"),
    [
        ("claude", ".claude/settings.json", {"hooks": {"Stop": "say done"}}, '"hooks.Stop" is not a list'),
        ("claude", ".claude/settings.json", {"hooks": []}, '"hooks" is not an object'),
        (
            "claude",
            ".claude/settings.json",
            {"hooks": {"Stop": [{"hooks": "x"}]}},
            'a matcher group of "hooks.Stop" has "hooks" that is not a list of objects',
        ),
        ("cursor", ".cursor/hooks.json", {"hooks": {"stop": {"command": "x"}}}, '"hooks.stop" is not a list'),
        ("cursor", ".cursor/hooks.json", {"hooks": {"stop": ["x"]}}, 'an entry of "hooks.stop" is not an object'),
    ],
)
def test_valid_json_of_another_shape_is_a_one_line_error_and_untouched(fake_home, agent, rel, content, message):
    path = fake_home / rel
    path.parent.mkdir(parents=True)
    original = json.dumps(content)
    path.write_text(original)
    for edit in (hooks.install, hooks.uninstall):
        with pytest.raises(ConnectError) as caught:
            edit(agent)
        assert str(caught.value) == f"{path}: {message}; not changed"
        assert path.read_text() == original
