"""Where each agent reads MCP servers and instructions, and the entry it expects: the harness
registry's `McpSpec` rows (`agent_history.harnesses`, which cite each agent's documentation)
turned into `AgentTarget`s.

Entry shapes (`ENTRIES`): ``stdio-typed`` ``{"type": "stdio", "command", "args", "env"}`` (Claude
Code, VS Code), ``stdio`` the same without ``type`` (Codex, Cursor, Gemini CLI), ``opencode``
``{"type": "local", "command": [cmd, …args], "enabled": true, "environment": {…}}`` — a file
already in OpenCode V2's native shape (``mcp.servers``) gets the entry there, without changing
its shape (opencode.ai/docs/migrate-v1). Paths honour ``HOME`` (through `Path.home()`) and the
agents' own overrides (the rows' `Place`s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_history.harnesses import BY_NAME, HARNESSES, resolve_name
from agent_history.harnesses.places import resolve
from agent_history.harnesses.spec import Harness

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


ENTRIES: dict[str, Callable[[Launch], dict[str, Any]]] = {
    "stdio-typed": lambda launch: _stdio(launch, with_type=True),
    "stdio": lambda launch: _stdio(launch, with_type=False),
    "opencode": _opencode_entry,
}
"""Entry builders by the registry's `McpSpec.entry` shape name (`harnesses.spec.MCP_ENTRIES`)."""


def _target(h: Harness) -> AgentTarget:
    spec = h.mcp
    assert spec is not None
    if spec.entry == "opencode":
        key_path = _opencode_key
    else:
        key = (*spec.servers_key, SERVER_NAME)
        key_path = lambda current, key=key: key  # noqa: E731
    return AgentTarget(
        spec.name,
        lambda: resolve(spec.config),
        spec.fmt,
        ENTRIES[spec.entry],
        lambda: resolve(spec.note),
        spec.note_kind,
        key_path=key_path,
        env_key=spec.env_key,
    )


AGENTS: dict[str, AgentTarget] = {h.mcp.name: _target(h) for h in HARNESSES if h.mcp is not None}
"""Supported agents by the name `connect` shows (the registry rows' `McpSpec`), in registry order."""


def target_name(agent: str) -> str:
    """The `AGENTS` key for `agent`: a connect name, or a harness name or alias whose row has an
    MCP configuration. Raises ValueError (one line) otherwise."""
    if agent in AGENTS:
        return agent
    try:
        h = BY_NAME[resolve_name(agent)]
    except ValueError:
        raise ValueError(f"unknown agent {agent!r} (one of: {', '.join(AGENTS)})") from None
    if h.mcp is None:
        raise ValueError(f"{h.product} has no MCP configuration to write (one of: {', '.join(AGENTS)})")
    return h.mcp.name
