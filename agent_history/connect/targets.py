"""Where each agent reads MCP servers and instructions, and the entry it expects (declared as data).

Formats, from each agent's documentation (checked November 2026):

- **Claude Code** — user scope: top-level ``mcpServers`` of ``~/.claude.json``
  (``$CLAUDE_CONFIG_DIR/.claude.json`` when set); entry ``{"type": "stdio", "command", "args",
  "env"}`` (docs: code.claude.com/docs/en/mcp, "user scope"). Skills: ``~/.claude/skills/<name>/
  SKILL.md``.
- **Codex** — ``~/.codex/config.toml`` (``$CODEX_HOME``), table ``[mcp_servers.<name>]`` with
  ``command``, ``args``, ``env`` (docs: developers.openai.com/codex/mcp; openai/codex
  docs/config.md). Instructions: global ``~/.codex/AGENTS.md``, where we keep a marker-delimited
  section.
- **Cursor** — global ``~/.cursor/mcp.json``, ``mcpServers.<name>`` = ``{"command", "args",
  "env"}`` (docs: cursor.com/docs/mcp). Skills: ``~/.cursor/skills/<name>/SKILL.md``
  (cursor.com/docs/context/skills).
- **OpenCode** — global ``~/.config/opencode/opencode.json`` (``$XDG_CONFIG_HOME``), key ``mcp``:
  ``{"type": "local", "command": [cmd, …args], "enabled": true, "environment": {…}}`` (docs:
  opencode.ai/docs/mcp-servers; V2 reads this V1 shape unchanged, opencode.ai/docs/migrate-v1).
  A file already in V2's native shape (``mcp.servers``) gets the entry there, without
  ``enabled``. Skills: ``~/.config/opencode/skills/<name>/SKILL.md`` (opencode.ai/docs/skills).
- **Gemini CLI** — ``~/.gemini/settings.json``, ``mcpServers.<name>`` = ``{"command", "args",
  "env"}`` (docs: geminicli.com/docs/tools/mcp-server). Skills: ``~/.gemini/skills/<name>/
  SKILL.md`` (geminicli.com/docs/cli/skills).

- **VS Code (Copilot Chat)** — the user profile's ``mcp.json`` (``<VS Code user dir>/mcp.json``:
  ``~/.config/Code/User`` on Linux / ``$XDG_CONFIG_HOME``, ``~/Library/Application Support/Code/User``
  on macOS), key ``servers``: ``{"type": "stdio", "command", "args", "env"}`` (docs:
  code.visualstudio.com/docs/copilot/customization/mcp-servers, "configuration format"). Skills:
  ``~/.copilot/skills/<name>/SKILL.md`` (code.visualstudio.com/docs/copilot/customization/agent-skills).

Paths honour ``HOME`` (through `Path.home()`) and the agents' own overrides.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER_NAME = "agent-history"


@dataclass(frozen=True)
class Launch:
    """How to start the MCP server: executable, arguments, environment to pass."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str]


@dataclass(frozen=True)
class AgentTarget:
    """One agent: its config file and format, the key path of our entry, how the entry looks,
    and where the usage note goes (``skill`` = a SKILL.md file, ``section`` = a marker section)."""

    name: str
    config_path: Callable[[], Path]
    fmt: str  # json | toml
    entry: Callable[[Launch], dict[str, Any]]
    note_path: Callable[[], Path]
    note_kind: str  # skill | section
    key_path: Callable[[dict[str, Any] | None], tuple[str, ...]] = lambda current: ("mcpServers", SERVER_NAME)
    env_key: str = "env"  # the entry's environment table


def _env_dir(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else default


def _claude_dir() -> Path:
    return _env_dir("CLAUDE_CONFIG_DIR", Path.home() / ".claude")


def _claude_json() -> Path:
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() / ".claude.json" if value else Path.home() / ".claude.json"


def _codex_dir() -> Path:
    return _env_dir("CODEX_HOME", Path.home() / ".codex")


def _opencode_dir() -> Path:
    return _env_dir("XDG_CONFIG_HOME", Path.home() / ".config") / "opencode"


def _stdio(launch: Launch, *, with_type: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio"} if with_type else {}
    entry["command"] = launch.command
    entry["args"] = list(launch.args)
    if launch.env:
        entry["env"] = dict(launch.env)
    return entry


def _opencode_entry(launch: Launch) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "local", "command": [launch.command, *launch.args], "enabled": True}
    if launch.env:
        entry["environment"] = dict(launch.env)
    return entry


def _opencode_key(current: dict[str, Any] | None) -> tuple[str, ...]:
    """V2-native files keep servers under ``mcp.servers``; V1 (and new files) directly under ``mcp``."""
    mcp = (current or {}).get("mcp")
    if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
        return ("mcp", "servers", SERVER_NAME)
    return ("mcp", SERVER_NAME)


AGENTS: dict[str, AgentTarget] = {
    "claude-code": AgentTarget(
        "claude-code",
        _claude_json,
        "json",
        lambda launch: _stdio(launch, with_type=True),
        lambda: _claude_dir() / "skills" / "agent-history" / "SKILL.md",
        "skill",
    ),
    "codex": AgentTarget(
        "codex",
        lambda: _codex_dir() / "config.toml",
        "toml",
        lambda launch: _stdio(launch, with_type=False),
        lambda: _codex_dir() / "AGENTS.md",
        "section",
        key_path=lambda current: ("mcp_servers", SERVER_NAME),
    ),
    "cursor": AgentTarget(
        "cursor",
        lambda: Path.home() / ".cursor" / "mcp.json",
        "json",
        lambda launch: _stdio(launch, with_type=False),
        lambda: Path.home() / ".cursor" / "skills" / "agent-history" / "SKILL.md",
        "skill",
    ),
    "opencode": AgentTarget(
        "opencode",
        lambda: _opencode_dir() / "opencode.json",
        "json",
        _opencode_entry,
        lambda: _opencode_dir() / "skills" / "agent-history" / "SKILL.md",
        "skill",
        key_path=_opencode_key,
        env_key="environment",
    ),
    "gemini": AgentTarget(
        "gemini",
        lambda: Path.home() / ".gemini" / "settings.json",
        "json",
        lambda launch: _stdio(launch, with_type=False),
        lambda: Path.home() / ".gemini" / "skills" / "agent-history" / "SKILL.md",
        "skill",
    ),
}
"""Supported agents by the name `connect` takes."""


# -- issue 16: VS Code Copilot Chat ----------------------------------------------------------------
def _vscode_mcp_json() -> Path:
    from agent_history.config import vscode_user_dir

    return vscode_user_dir() / "mcp.json"


AGENTS["vscode"] = AgentTarget(
    "vscode",
    _vscode_mcp_json,
    "json",
    lambda launch: _stdio(launch, with_type=True),
    lambda: Path.home() / ".copilot" / "skills" / "agent-history" / "SKILL.md",
    "skill",
    key_path=lambda current: ("servers", SERVER_NAME),
)
