"""`connect` / `disconnect` for Cline, Roo Code and Amp on copies of realistic config files (HOME
is a temp dir): our server entry added and removed, everything else kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_history.connect import connect, disconnect
from agent_history.connect import note as usage

CLINE_JSON = {
    "mcpServers": {
        "github.com/modelcontextprotocol/servers/tree/main/src/github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"},
            "disabled": False,
            "autoApprove": [],
        }
    }
}
ROO_JSON = {
    "mcpServers": {
        "context7": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@upstash/context7-mcp"],
            "alwaysAllow": ["resolve-library-id"],
            "disabled": False,
        }
    }
}
AMP_JSON = {
    "amp.notifications.enabled": True,
    "amp.tools.disable": ["browser_navigate"],
    "amp.mcpServers": {"playwright": {"command": "npx", "args": ["-y", "@playwright/mcp@latest"]}},
}
AMP_AGENTS_MD = "# My preferences\n\nAnswer tersely.\n"

# agent → (config path under HOME (Linux layout), original, key path of our entry, note path under HOME)
CASES = {
    "cline": (
        ".cline/data/settings/cline_mcp_settings.json",
        json.dumps(CLINE_JSON, indent=2),
        ("mcpServers", "agent-history"),
        ".cline/skills/agent-history/SKILL.md",
    ),
    "roo-code": (
        ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        json.dumps(ROO_JSON, indent=2),
        ("mcpServers", "agent-history"),
        ".roo/skills/agent-history/SKILL.md",
    ),
    "amp": (
        ".config/amp/settings.json",
        json.dumps(AMP_JSON, indent=2),
        ("amp.mcpServers", "agent-history"),
        ".config/amp/AGENTS.md",
    ),
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr("sys.platform", "linux")  # the VS Code user directory's Linux place
    for var in (
        "XDG_CONFIG_HOME",
        "CLINE_MCP_SETTINGS_PATH",
        "CLINE_DATA_DIR",
        "CLINE_DIR",
        "AGENT_HISTORY_CONFIG",
        "AGENT_HISTORY_DATA_DIR",
        "AGENT_HISTORY_DSN",
        "AGENT_HISTORY_READER_DSN",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


def _at(data: dict, key: tuple[str, ...]):
    for part in key:
        data = data[part]
    return data


def _without(data: dict, key: tuple[str, ...]) -> dict:
    data = json.loads(json.dumps(data))
    _at(data, key[:-1]).pop(key[-1])
    return data


@pytest.mark.parametrize("agent", list(CASES))
def test_connect_and_disconnect_round_trip_keeps_everything_else(agent, home):
    rel, original, key, note_rel = CASES[agent]
    config = home / rel
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(original)
    if agent == "amp":
        (home / note_rel).write_text(AMP_AGENTS_MD)
    result = connect(agent)
    assert (result.config.action, result.config.path) == ("updated", config)
    assert Path(result.config.backup).read_text() == original
    after = json.loads(config.read_text())
    entry = _at(after, key)
    assert Path(entry["command"]).is_absolute() and entry["args"][-1] == "mcp" and "type" not in entry
    assert _without(after, key) == json.loads(original)
    note_text = (home / note_rel).read_text()
    if agent == "amp":  # a marked section appended to the user's AGENTS.md
        assert note_text.startswith(AMP_AGENTS_MD) and usage.BEGIN in note_text and usage.END in note_text
    else:
        assert note_text.startswith("---\nname: agent-history\ndescription: ")
    again = connect(agent)
    assert (again.config.action, again.note.action) == ("unchanged", "unchanged")
    gone = disconnect(agent)
    assert (gone.config.action, gone.note.action) == ("removed", "removed")
    assert json.loads(config.read_text()) == json.loads(original)
    if agent == "amp":
        assert (home / note_rel).read_text() == AMP_AGENTS_MD
    else:
        assert not (home / note_rel).exists()
    assert disconnect(agent).config.action == "absent"


def test_cline_settings_path_follows_its_overrides(home, monkeypatch, tmp_path):
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "cline-dir"))
    assert connect("cline").config.path == tmp_path / "cline-dir" / "data" / "settings" / "cline_mcp_settings.json"
    monkeypatch.setenv("CLINE_MCP_SETTINGS_PATH", str(tmp_path / "mine.json"))
    result = connect("cline")
    assert result.config.path == tmp_path / "mine.json" and result.config.action == "created"
    assert "agent-history" in json.loads((tmp_path / "mine.json").read_text())["mcpServers"]


def test_harnesses_without_an_mcp_config_say_so(home):
    from agent_history.connect import ConnectError

    for agent in ("continue", "kilo-code", "chatgpt"):
        with pytest.raises(ConnectError, match="has no MCP configuration to write"):
            connect(agent)
