"""`connect gemini --hook` (Gemini CLI ``hooks.AfterAgent`` in ``~/.gemini/settings.json``):
install / uninstall round trip on a realistic settings file, and `agent-history hook gemini`
with an AfterAgent payload indexing exactly the chat document it names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.connect import hook as hooks
from tests.new_formats_home import gemini_layout

# A settings.json as Gemini CLI users have it: a theme, an MCP server, a BeforeTool hook and
# another AfterAgent hook (shape: geminicli.com/docs/hooks/reference, "Configuration schema").
SETTINGS = {
    "theme": "GitHub",
    "mcpServers": {"docs": {"command": "docs-mcp", "args": ["--stdio"]}},
    "hooks": {
        "BeforeTool": [
            {
                "matcher": "run_shell_command",
                "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5000}],
            }
        ],
        "AfterAgent": [{"hooks": [{"name": "notify", "type": "command", "command": "notify-send done"}]}],
    },
}


@pytest.fixture
def fake_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_gemini_after_agent_hook_round_trip_keeps_every_other_setting(fake_home):
    path = fake_home / ".gemini" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(SETTINGS, indent=2) + "\n"
    path.write_text(original)

    change = hooks.install("gemini")
    assert change.action == "updated" and change.backup.read_text() == original
    data = json.loads(path.read_text())
    assert data["hooks"]["BeforeTool"] == SETTINGS["hooks"]["BeforeTool"]
    assert data["hooks"]["AfterAgent"][0] == SETTINGS["hooks"]["AfterAgent"][0]
    ours = data["hooks"]["AfterAgent"][1]["hooks"]
    assert len(ours) == 1 and ours[0]["type"] == "command" and ours[0]["command"].endswith(" hook gemini")
    assert "Stop" not in data["hooks"]

    assert hooks.install("gemini").action == "unchanged"
    assert hooks.uninstall("gemini").action == "removed"
    assert json.loads(path.read_text()) == SETTINGS
    assert hooks.uninstall("gemini").action == "absent"


def test_gemini_hook_into_a_missing_settings_file_and_out_again(fake_home):
    path = fake_home / ".gemini" / "settings.json"
    assert hooks.install("gemini").action == "created"
    assert list(json.loads(path.read_text())["hooks"]) == ["AfterAgent"]
    assert hooks.uninstall("gemini").action == "removed"
    assert not path.exists()  # install created it and nothing else is in it: removed (connect.created)


def test_after_agent_payload_indexes_exactly_that_chat(cli_env, db):
    chats = gemini_layout(Path(cli_env["HOME"]))
    path = sorted(p for p in chats.values() if p.suffix == ".json")[0]
    payload = {
        "session_id": "gemini-session-1",
        "transcript_path": str(path),
        "cwd": "/srv/app",
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-03-04T10:00:00Z",
        "prompt": "list files",
        "prompt_response": "Two files.",
    }
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "hook", "gemini", "--wait"],
        input=json.dumps(payload),
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (out.returncode, out.stdout) == (0, "")
    log = Path(cli_env["AGENT_HISTORY_DATA_DIR"]) / "hook.log"
    assert not log.exists() or log.read_text() == "", log.read_text()
    with db.connect() as conn:
        assert conn.execute("SELECT path FROM ah.source_file").fetchall() == [(str(path),)]
        assert conn.execute("SELECT agent, count(*) FROM ah.session GROUP BY 1").fetchall() == [("gemini", 1)]
