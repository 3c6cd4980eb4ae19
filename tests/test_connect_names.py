"""`connect` and `disconnect` (and their ``--hook``) take an agent by its harness name or its
product name alike (issue 25, item 7: `connect claude --print` wanted `claude-code` while
`connect claude-code --hook` wanted `claude`). Real CLI processes, HOME a temp directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.connect.hook import HOOKS, hook_name
from agent_history.connect.targets import AGENTS, target_name
from agent_history.harnesses import HARNESSES

PY = sys.executable


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), AGENT_HISTORY_DATA_DIR=str(home / "data"))
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", ["claude", "claude-code"])
def test_connect_print_and_hook_take_either_name_of_claude(tmp_path, name):
    printed = run(tmp_path, "connect", name, "--print")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["mcpServers"]["agent-history"]["command"]
    assert printed.stderr.startswith(f"# add to {tmp_path / '.claude.json'}")
    hooked = run(tmp_path, "connect", name, "--hook", "--json")
    assert hooked.returncode == 0, hooked.stderr
    assert json.loads(hooked.stdout)["hook"]["path"] == str(tmp_path / ".claude" / "settings.json")
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook claude")
    other = "claude-code" if name == "claude" else "claude"
    removed = run(tmp_path, "disconnect", other, "--hook", "--json")
    assert removed.returncode == 0 and json.loads(removed.stdout)["hook"]["action"] in ("updated", "removed"), (
        removed.stderr
    )
    assert not (tmp_path / ".claude" / "settings.json").exists()  # created by --hook, emptied: removed


@pytest.mark.parametrize(("name", "config"), [("vscode", ".config/Code/User/mcp.json"),
                                              ("copilot-vscode", ".config/Code/User/mcp.json"),
                                              ("gemini-cli", ".gemini/settings.json"),
                                              ("codex-cli", ".codex/config.toml")])  # fmt: skip
def test_connect_and_disconnect_take_the_product_and_the_catalogue_names(tmp_path, name, config):
    added = run(tmp_path, "connect", name, "--json")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["config"]["path"] == str(tmp_path / config)
    gone = run(tmp_path, "disconnect", name, "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout)["config"]["action"] in ("updated", "removed"), gone.stderr


def test_an_agent_without_that_kind_of_config_or_an_unknown_one_is_a_one_line_usage_error(tmp_path):
    pi = run(tmp_path, "connect", "pi")
    assert (pi.returncode, pi.stdout) == (2, "")
    assert pi.stderr == f"error: pi has no MCP configuration to write (one of: {', '.join(AGENTS)})\n"
    opencode = run(tmp_path, "connect", "opencode", "--hook")
    assert opencode.returncode == 2 and "no after-turn hook for agent 'opencode'" in opencode.stderr
    vim = run(tmp_path, "disconnect", "vim")
    assert (vim.returncode, vim.stderr) == (2, f"error: unknown agent 'vim' (one of: {', '.join(AGENTS)})\n")


def test_every_name_of_a_harness_reaches_its_configuration_and_its_hook():
    for h in HARNESSES:
        for name in (h.name, *h.aliases, h.name.upper()):
            if h.mcp is not None:
                assert target_name(name) == h.mcp.name in AGENTS, name
            if h.hook is not None:
                assert hook_name(name) == h.hook.name in HOOKS, name


def test_connect_hook_print_shows_the_edited_config_and_writes_nothing(tmp_path):
    """`--print` promises to write nothing; with `--hook` it installed the hook all the same."""
    settings = tmp_path / ".claude" / "settings.json"
    printed = run(tmp_path, "connect", "claude", "--hook", "--print")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook claude")
    assert printed.stderr.startswith(f"# {settings} with the after-turn hook:")
    assert not settings.exists()
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n')
    again = run(tmp_path, "connect", "claude", "--hook", "--print", "--json")
    assert again.returncode == 0, again.stderr
    shown = json.loads(again.stdout)
    assert (shown["path"], shown["unchanged"]) == (str(settings), False)
    assert json.loads(shown["text"])["model"] == "opus" and "Stop" in json.loads(shown["text"])["hooks"]
    assert settings.read_text() == '{"model": "opus"}\n' and not Path(str(settings) + ".bak").exists()
