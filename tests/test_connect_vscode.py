"""`connect vscode` / `disconnect vscode` on a realistic VS Code user ``mcp.json`` (HOME is a temp dir)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.connect import ConnectError, connect, disconnect
from agent_history.harnesses.places import vscode_user_dir

# the shape VS Code writes ("MCP: Open User Configuration"): servers + inputs
MCP_JSON = {
    "servers": {
        "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
        "playwright": {"type": "stdio", "command": "npx", "args": ["@playwright/mcp@latest"]},
    },
    "inputs": [{"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": True}],
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "APPDATA", "COPILOT_HOME", "AGENT_HISTORY_CONFIG", "AGENT_HISTORY_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("AGENT_HISTORY_DSN", raising=False)
    monkeypatch.delenv("AGENT_HISTORY_READER_DSN", raising=False)
    return home


def test_vscode_user_dir_follows_the_os(home):
    expected = {
        "darwin": home / "Library" / "Application Support" / "Code" / "User",
        "win32": home / "AppData" / "Roaming" / "Code" / "User",
    }.get(sys.platform, home / ".config" / "Code" / "User")
    assert vscode_user_dir() == expected


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="XDG_CONFIG_HOME is the Linux rule")
def test_vscode_user_dir_honours_xdg_config_home(home, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert vscode_user_dir() == tmp_path / "xdg" / "Code" / "User"


def test_connect_vscode_round_trip_keeps_everything_else(home):
    config = vscode_user_dir() / "mcp.json"
    config.parent.mkdir(parents=True)
    original = json.dumps(MCP_JSON, indent=2)
    config.write_text(original)

    result = connect("vscode")
    assert result.config.path == config and result.config.action == "updated"
    assert Path(result.config.backup).read_text() == original
    after = json.loads(config.read_text())
    entry = after["servers"]["agent-history"]
    assert entry["type"] == "stdio" and entry["args"][-1] == "mcp" and Path(entry["command"]).is_absolute()
    assert list(after) == ["servers", "inputs"] and after["inputs"] == MCP_JSON["inputs"]
    assert {k: v for k, v in after["servers"].items() if k != "agent-history"} == MCP_JSON["servers"]
    skill = home / ".copilot" / "skills" / "agent-history" / "SKILL.md"
    assert skill.read_text().startswith("---\nname: agent-history\ndescription: ")

    assert connect("vscode").config.action == "unchanged"  # idempotent
    gone = disconnect("vscode")
    assert (gone.config.action, gone.note.action) == ("removed", "removed")
    assert json.loads(config.read_text()) == MCP_JSON
    assert not skill.exists()
    assert disconnect("vscode").config.action == "absent"


def test_connect_vscode_creates_a_missing_mcp_json(home):
    result = connect("vscode")
    assert result.config.action == "created"
    assert list(json.loads(result.config.path.read_text())["servers"]) == ["agent-history"]


def test_mcp_json_with_comments_is_left_alone(home):
    config = vscode_user_dir() / "mcp.json"
    config.parent.mkdir(parents=True)
    original = '{\n  // added by hand\n  "servers": {}\n}\n'
    config.write_text(original)
    with pytest.raises(ConnectError, match="add this by hand"):
        connect("vscode")
    assert config.read_text() == original


def test_cli_connect_vscode_print_writes_nothing(home, tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("AGENT_HISTORY_", "XDG_CONFIG"))}
    env.update(HOME=str(home), AGENT_HISTORY_DSN="postgresql://ah@db.example/ah")
    (tmp_path / "cfg.toml").touch()
    env["AGENT_HISTORY_CONFIG"] = str(tmp_path / "cfg.toml")
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "connect", "vscode", "--print"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["servers"]["agent-history"]["type"] == "stdio"
    assert not (vscode_user_dir() / "mcp.json").exists()
