"""`connect` / `disconnect` on copies of realistic agent config files (HOME is a temp dir)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agent_history.connect import ConnectError, connect, disconnect, plan
from agent_history.connect import note as usage
from tests.mcp_client import REPO, call_tools, server_env

CLAUDE_JSON = {
    "numStartups": 34,
    "theme": "dark",
    "hasCompletedOnboarding": True,
    "projects": {"/Users/me/app": {"allowedTools": [], "mcpServers": {}, "history": [{"display": "fix the build"}]}},
    "mcpServers": {
        "github": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"},
        },
    },
}
CODEX_TOML = """\
# Codex configuration — edited by hand
model = "gpt-5-codex"  # the default model
approval_policy = "on-request"

[mcp_servers.context7]
# documentation lookups
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[profiles.fast]
model = "o4-mini"  # cheap and quick
"""
CODEX_AGENTS_MD = "# Global instructions\n\nPrefer small commits.\n"
CURSOR_JSON = {"mcpServers": {"playwright": {"command": "npx", "args": ["@playwright/mcp@latest"]}}}
OPENCODE_JSON = {
    "$schema": "https://opencode.ai/config.json",
    "theme": "opencode",
    "mcp": {"context7": {"type": "remote", "url": "https://mcp.context7.com/mcp", "enabled": True}},
}
GEMINI_JSON = {
    "selectedAuthType": "gemini-api-key",
    "theme": "Dracula",
    "mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"], "timeout": 5000}},
}

# agent → (config path under HOME, original text, key path of our entry, note path under HOME)
CASES = {
    "claude-code": (
        ".claude.json",
        json.dumps(CLAUDE_JSON, indent=2),
        ("mcpServers", "agent-history"),
        ".claude/skills/agent-history/SKILL.md",
    ),
    "codex": (".codex/config.toml", CODEX_TOML, ("mcp_servers", "agent-history"), ".codex/AGENTS.md"),
    "cursor": (
        ".cursor/mcp.json",
        json.dumps(CURSOR_JSON, indent=2),
        ("mcpServers", "agent-history"),
        ".cursor/skills/agent-history/SKILL.md",
    ),
    "opencode": (
        ".config/opencode/opencode.json",
        json.dumps(OPENCODE_JSON, indent=2),
        ("mcp", "agent-history"),
        ".config/opencode/skills/agent-history/SKILL.md",
    ),
    "gemini": (
        ".gemini/settings.json",
        json.dumps(GEMINI_JSON, indent=2),
        ("mcpServers", "agent-history"),
        ".gemini/skills/agent-history/SKILL.md",
    ),
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "XDG_CONFIG_HOME",
        "AGENT_HISTORY_CONFIG",
        "AGENT_HISTORY_DATA_DIR",
        "AGENT_HISTORY_DSN",
        "AGENT_HISTORY_READER_DSN",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


def _load(path: Path) -> dict:
    text = path.read_text()
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def _without(data: dict, key: tuple[str, ...]) -> dict:
    data = json.loads(json.dumps(data))
    node = data
    for part in key[:-1]:
        node = node[part]
    node.pop(key[-1], None)
    return data


def _at(data: dict, key: tuple[str, ...]):
    for part in key:
        data = data[part]
    return data


@pytest.mark.parametrize("agent", list(CASES))
def test_connect_and_disconnect_round_trip_keeps_everything_else(agent, home):
    rel, original, key, note_rel = CASES[agent]
    config = home / rel
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(original)
    if agent == "codex":
        (home / note_rel).write_text(CODEX_AGENTS_MD)

    result = connect(agent)
    assert result.config.action == "updated"
    assert Path(result.config.backup).read_text() == original
    after = _load(config)
    entry = _at(after, key)
    command = entry["command"][0] if agent == "opencode" else entry["command"]
    args = entry["command"][1:] if agent == "opencode" else entry["args"]
    assert Path(command).is_absolute() and Path(command).exists()
    assert args[-1] == "mcp"
    assert _without(after, key) == _load_text(original, config.suffix)

    note_text = (home / note_rel).read_text()
    if agent == "codex":
        assert note_text.startswith(CODEX_AGENTS_MD) and usage.BEGIN in note_text and usage.END in note_text
        assert Path(result.note.backup).read_text() == CODEX_AGENTS_MD
    else:
        assert note_text.startswith("---\nname: agent-history\ndescription: ")
    assert "How to cite" in note_text

    # idempotent: nothing is rewritten, no new backup
    Path(result.config.backup).unlink()
    again = connect(agent)
    assert (again.config.action, again.note.action) == ("unchanged", "unchanged")
    assert not Path(result.config.backup).exists()

    gone = disconnect(agent)
    assert gone.config.action == "removed" and gone.note.action == "removed"
    if agent == "codex":
        assert config.read_text() == original  # comments and layout intact
        assert (home / note_rel).read_text() == CODEX_AGENTS_MD
    else:
        assert _load(config) == _load_text(original, config.suffix)
        assert not (home / note_rel).exists() and not (home / note_rel).parent.exists()
    assert disconnect(agent).config.action == "absent"  # a second disconnect: not connected


def _load_text(text: str, suffix: str) -> dict:
    return tomllib.loads(text) if suffix == ".toml" else json.loads(text)


def test_codex_toml_keeps_comments_and_appends_one_table(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_TOML)
    connect("codex")
    text = config.read_text()
    assert text.startswith(CODEX_TOML)  # every original line, comments included, untouched
    added = text[len(CODEX_TOML) :]
    assert added.lstrip("\n").startswith("[mcp_servers.agent-history]\n")
    assert tomllib.loads(text)["mcp_servers"]["context7"]["command"] == "npx"


def test_connect_creates_missing_files(home):
    result = connect("cursor")
    assert result.config.action == "created" and result.config.backup is None
    assert list(_load(home / ".cursor" / "mcp.json")["mcpServers"]) == ["agent-history"]


def test_opencode_v2_native_shape_gets_the_entry_under_servers(home):
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcp": {"servers": {"docs": {"type": "remote", "url": "https://x.example/mcp"}}}}))
    connect("opencode")
    servers = _load(config)["mcp"]["servers"]
    assert set(servers) == {"docs", "agent-history"}
    assert servers["agent-history"]["type"] == "local" and servers["agent-history"]["command"][-1] == "mcp"
    disconnect("opencode")
    assert set(_load(config)["mcp"]["servers"]) == {"docs"}


def test_json_with_comments_is_left_alone_and_the_snippet_is_offered(home):
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = '{\n  // my settings\n  "theme": "Dracula"\n}\n'
    settings.write_text(original)
    with pytest.raises(ConnectError) as err:
        connect("gemini")
    assert "add this by hand" in str(err.value) and '"agent-history"' in str(err.value)
    assert settings.read_text() == original
    assert not settings.with_name("settings.json.bak").exists()


def test_disconnect_keeps_a_skill_it_did_not_write(home):
    skill = home / ".cursor" / "skills" / "agent-history" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: agent-history\ndescription: mine\n---\n")
    result = disconnect("cursor")
    assert skill.exists() and result.note.action == "unchanged"
    assert any("not written by agent-history connect" in w for w in result.warnings)


def test_catalogue_location_is_passed_but_passwords_are_not(home, monkeypatch):
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", "/etc/agent-history.toml")
    monkeypatch.setenv("AGENT_HISTORY_READER_DSN", "postgresql://ah_reader:s3cret@db.example/ah")
    result = plan("claude-code")
    assert result.entry["env"] == {"AGENT_HISTORY_CONFIG": "/etc/agent-history.toml"}
    assert any("AGENT_HISTORY_READER_DSN holds a password" in w for w in result.warnings)
    assert "s3cret" not in result.snippet


def test_claude_config_dir_is_honoured(home, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-alt"))
    result = connect("claude-code")
    assert result.config.path == tmp_path / "claude-alt" / ".claude.json"
    assert result.note.path == tmp_path / "claude-alt" / "skills" / "agent-history" / "SKILL.md"


def test_unknown_agent_is_an_error(home):
    with pytest.raises(ConnectError, match="unknown agent 'vim'"):
        plan("vim")


def test_connect_print_shows_a_working_entry_and_writes_nothing(db, tmp_path):
    env = server_env(db.dsn, db.reader_dsn, tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "connect", "claude-code", "--print"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    entry = json.loads(out.stdout)["mcpServers"]["agent-history"]
    assert entry["type"] == "stdio" and entry["args"] == ["mcp"]
    assert entry["env"]["AGENT_HISTORY_READER_DSN"] == db.reader_dsn
    assert not (tmp_path / "home" / ".claude.json").exists()
    # the printed entry starts a server that answers
    tools, results = call_tools(
        {**env, **entry["env"]}, [("sql", {"statement": "SELECT 1"})], command=entry["command"], args=entry["args"]
    )
    assert "search" in {t.name for t in tools}
    assert results[0].data["rows"] == [[1]]


OLD_EXE = "/opt/old/bin/agent-history"
USER_DSN = "postgresql://ah_reader:hunter2@db.internal/ah"  # the user's own, with a password


def _customised(agent: str) -> dict:
    """An agent-history entry as a user might have edited it: another command, own env, an extra key."""
    if agent == "opencode":
        return {"type": "local", "command": [OLD_EXE, "mcp"], "enabled": True,
                "environment": {"AGENT_HISTORY_READER_DSN": USER_DSN, "AGENT_HISTORY_CONFIG": "/home/me/ah.toml"},
                "timeout": 30000}  # fmt: skip
    return {"command": OLD_EXE, "args": ["mcp"], "timeout": 30000,
            "env": {"AGENT_HISTORY_READER_DSN": USER_DSN, "AGENT_HISTORY_CONFIG": "/home/me/ah.toml"}}  # fmt: skip


@pytest.mark.parametrize("agent", ["gemini", "codex", "opencode"])
def test_a_customised_entry_keeps_the_users_env_and_lists_what_changes(agent, home, monkeypatch):
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", "/etc/agent-history.toml")
    monkeypatch.setenv("AGENT_HISTORY_DATA_DIR", "/var/lib/agent-history")
    rel, _, key, _ = CASES[agent]
    config = home / rel
    config.parent.mkdir(parents=True, exist_ok=True)
    mine = _customised(agent)
    if agent == "codex":
        config.write_text(f"[mcp_servers.agent-history]\ncommand = {json.dumps(OLD_EXE)}\nargs = [\"mcp\"]\n"
                          "timeout = 30000\n\n[mcp_servers.agent-history.env]\n"
                          f"AGENT_HISTORY_READER_DSN = {json.dumps(USER_DSN)}\n"
                          'AGENT_HISTORY_CONFIG = "/home/me/ah.toml"\n')  # fmt: skip
    else:
        config.write_text(json.dumps({key[0]: {key[1]: mine}}, indent=2))
    env_key = "environment" if agent == "opencode" else "env"
    ours = plan(agent, force=True).entry

    result = connect(agent)
    entry = _at(_load(config), key)
    assert entry[env_key] == {"AGENT_HISTORY_READER_DSN": USER_DSN, "AGENT_HISTORY_CONFIG": "/home/me/ah.toml",
                              "AGENT_HISTORY_DATA_DIR": "/var/lib/agent-history"}  # fmt: skip
    assert entry["timeout"] == 30000
    assert {k: v for k, v in entry.items() if k not in (env_key, "timeout")} == {
        k: v for k, v in ours.items() if k != env_key
    }
    new_command = json.dumps(ours["command"])
    old_command = json.dumps([OLD_EXE, "mcp"] if agent == "opencode" else OLD_EXE)
    assert result.config.action == "updated"
    assert result.changes == [f"command: {old_command} → {new_command}", f"{env_key} AGENT_HISTORY_DATA_DIR: added"]
    assert result.kept == [
        f"{env_key} AGENT_HISTORY_CONFIG: your value (`connect --force` writes ours)",
        f"{env_key} AGENT_HISTORY_READER_DSN: yours",
        "timeout: yours",
    ]
    assert connect(agent).config.action == "unchanged"  # merged once, stable after

    forced = connect(agent, force=True)
    assert _at(_load(config), key) == ours
    assert forced.changes == [
        f"{env_key} AGENT_HISTORY_CONFIG: changed",
        f"{env_key} AGENT_HISTORY_READER_DSN: removed",
        "timeout: removed (was 30000)",
    ]
    assert forced.kept == []


def test_cli_says_what_changes_hides_env_values_and_a_second_disconnect_says_not_connected(home, tmp_path):
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"theme": "Dracula", "mcpServers": {"agent-history": _customised("gemini")}}))
    env = {
        k: v
        for k, v in __import__("os").environ.items()
        if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
    }
    env["HOME"] = str(home)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    out = cli("connect", "gemini")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"gemini: MCP server entry updated: {settings} (backup: {settings}.bak)"
    assert lines[1].startswith(f'  changed command: "{OLD_EXE}" → "') and lines[1].endswith('"')
    assert lines[2:5] == [
        "  kept env AGENT_HISTORY_CONFIG: yours",
        "  kept env AGENT_HISTORY_READER_DSN: yours",
        "  kept timeout: yours",
    ]
    assert "hunter2" not in out.stdout + out.stderr
    assert cli("disconnect", "gemini").returncode == 0
    again = cli("disconnect", "gemini")
    assert (again.returncode, again.stdout) == (
        0,
        f"gemini: not connected (no 'agent-history' MCP server entry in {settings})\n",
    )
