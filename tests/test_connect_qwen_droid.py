"""`connect` / `connect --hook` for Qwen Code (``~/.qwen/settings.json``: ``mcpServers`` and
``hooks.Stop``, ``$QWEN_HOME``), Factory Droid (``~/.factory/mcp.json``, ``hooks.Stop`` in
``~/.factory/settings.json``) and Kimi Code (``~/.kimi-code/mcp.json``, ``$KIMI_CODE_HOME``) on realistic config files (HOME is a temp dir): our entries added
and removed, everything else kept; a Stop payload indexes exactly the transcript it names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.connect import ConnectError, connect, disconnect
from agent_history.connect import hook as hooks
from tests import repo_sample_homes_b as b

# ~/.qwen/settings.json as Qwen Code users keep it (QwenLM/qwen-code docs: mcpServers; hooks with
# matcher groups, here a PreToolUse guard and a Stop prompt hook of the user's)
QWEN_SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "model": {"name": "qwen3-coder-plus"},
    "mcpServers": {"context7": {"httpUrl": "https://mcp.context7.com/mcp", "headers": {"CONTEXT7_API_KEY": "k"}}},
    "hooks": {
        "PreToolUse": [
            {"matcher": "^run_shell_command$", "hooks": [{"type": "command", "command": "~/.qwen/hooks/guard.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Stop only when done: $ARGUMENTS", "timeout": 30}]}],
    },
}
# ~/.factory/mcp.json and settings.json (docs.factory.ai: "type": "stdio" servers; Claude-Code-style hooks)
DROID_MCP = {"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "disabled": False}}}
# ~/.kimi-code/mcp.json (moonshotai.github.io/kimi-code "Model Context Protocol": a stdio and an HTTP server)
KIMI_MCP = {
    "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        "linear": {"url": "https://mcp.linear.app/mcp", "bearerTokenEnvVar": "LINEAR_TOKEN", "enabled": False},
    }
}
DROID_SETTINGS = {
    "model": "claude-sonnet-4-5-20250929",
    "reasoningEffort": "medium",
    "hooks": {"PostToolUse": [{"matcher": "Edit|Create", "hooks": [{"type": "command", "command": "prettier -w ."}]}]},
}

CASES = {
    # agent → (config under HOME, original, note under HOME)
    "qwen-code": (".qwen/settings.json", QWEN_SETTINGS, ".qwen/skills/agent-history/SKILL.md"),
    "droid": (".factory/mcp.json", DROID_MCP, ".factory/skills/agent-history/SKILL.md"),
    "kimi": (".kimi-code/mcp.json", KIMI_MCP, ".kimi-code/skills/agent-history/SKILL.md"),
}
HOOK_CASES = {"qwen-code": (".qwen/settings.json", QWEN_SETTINGS), "droid": (".factory/settings.json", DROID_SETTINGS)}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in (
        "QWEN_HOME",
        "QWEN_RUNTIME_DIR",
        "FACTORY_DIR",
        "KIMI_CODE_HOME",
        "AGENT_HISTORY_CONFIG",
        "AGENT_HISTORY_DATA_DIR",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.mark.parametrize("agent", list(CASES))
def test_connect_and_disconnect_round_trip_keeps_everything_else(agent, home):
    rel, original, note_rel = CASES[agent]
    config = home / rel
    config.parent.mkdir(parents=True)
    text = json.dumps(original, indent=2) + "\n"
    config.write_text(text)
    result = connect(agent)
    assert (result.config.action, result.config.path) == ("updated", config)
    assert Path(result.config.backup).read_text() == text
    after = json.loads(config.read_text())
    entry = after["mcpServers"].pop("agent-history")
    assert Path(entry["command"]).is_absolute() and entry["args"][-1] == "mcp"
    assert entry.get("type") == ("stdio" if agent == "droid" else None)  # Droid's entries name their transport
    assert after == original
    assert (home / note_rel).read_text().startswith("---\nname: agent-history\ndescription: ")
    assert connect(agent).config.action == "unchanged"
    gone = disconnect(agent)
    assert (gone.config.action, gone.note.action) == ("removed", "removed")
    assert json.loads(config.read_text()) == original and not (home / note_rel).exists()


def test_qwen_home_factory_dir_and_kimi_code_home_move_the_config(home, monkeypatch, tmp_path):
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qh"))
    monkeypatch.setenv("FACTORY_DIR", str(tmp_path / "fd"))
    monkeypatch.setenv("KIMI_CODE_HOME", str(tmp_path / "kh"))
    kimi = connect("kimi-code")  # alias of kimi
    assert (kimi.config.path, kimi.note.path) == (
        tmp_path / "kh" / "mcp.json",
        tmp_path / "kh" / "skills" / "agent-history" / "SKILL.md",
    )
    assert connect("qwen").config.path == tmp_path / "qh" / "settings.json"  # alias of qwen-code
    assert connect("factory").config.path == tmp_path / "fd" / "mcp.json"
    assert hooks.install("droid").path == tmp_path / "fd" / "settings.json"


@pytest.mark.parametrize("agent", list(HOOK_CASES))
def test_stop_hook_round_trip_keeps_the_users_hooks(agent, home):
    rel, original = HOOK_CASES[agent]
    path = home / rel
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(original, indent=2) + "\n")
    assert hooks.install(agent).action == "updated"
    data = json.loads(path.read_text())
    ours = data["hooks"]["Stop"][-1]["hooks"]
    assert len(ours) == 1 and ours[0]["type"] == "command" and ours[0]["command"].endswith(f" hook {agent}")
    assert {k: v for k, v in data["hooks"].items() if k != "Stop"} == {
        k: v for k, v in original["hooks"].items() if k != "Stop"
    }
    assert data["hooks"]["Stop"][:-1] == original["hooks"].get("Stop", [])
    assert hooks.install(agent).action == "unchanged"
    assert hooks.uninstall(agent).action == "removed"
    assert json.loads(path.read_text()) == original


def test_goose_aider_and_crush_have_no_config_to_write(home):
    for agent in ("goose", "aider", "crush"):
        with pytest.raises(ConnectError, match="has no MCP configuration to write"):
            connect(agent)


@pytest.mark.parametrize("agent", ["qwen-code", "droid"])
def test_stop_payload_indexes_exactly_that_transcript(agent, cli_env, db):
    home = Path(cli_env["HOME"])
    path = b.qwen_layout(home) if agent == "qwen-code" else b.droid_layout(home)[0]
    payload = {
        "session_id": path.stem,
        "transcript_path": str(path),
        "cwd": "/tmp",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "hook", agent, "--wait"],
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
        assert conn.execute("SELECT agent, count(*) FROM ah.session GROUP BY 1").fetchall() == [(agent, 1)]
