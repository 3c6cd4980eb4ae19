"""The harness registry: one declared row per coding-agent harness (docs/design.md §3, §13).

Everything that knows about Claude Code, Codex, pi, Gemini CLI, OpenCode, Cursor, Copilot CLI,
VS Code Copilot Chat or claude.ai — and is not its parser — reads it from here: discovery and
the default homes (`ingest.discovery`, `config`), detection (`detect`), the CLI's and the MCP
tools' agent names and aliases, the after-turn hooks and `connect` (`agent_history.connect`),
telemetry label values, help text, and the README's agent table (`readme`). Nothing else lists
agents. The row shape is `spec.Harness`; the rows are the modules beside this one.

Adding a harness = a parser package under `agent_history/parsers/` + a row module here, listed
in `HARNESSES` (docs/design.md §13 gives the recipe). This package imports nothing of ours but
`agent_history.model` (the ground floor).
"""

from __future__ import annotations

from agent_history.harnesses import (
    aider,
    amp,
    chatgpt,
    claude,
    claude_ai,
    cline,
    codex,
    continuedev,
    copilot,
    copilot_vscode,
    crush,
    cursor,
    droid,
    gemini,
    goose,
    kilo_code,
    kimi,
    opencode,
    openhands,
    pi,
    qwen_code,
    roo_code,
)
from agent_history.harnesses.spec import Harness

HARNESSES: tuple[Harness, ...] = (
    claude.HARNESS,
    codex.HARNESS,
    pi.HARNESS,
    gemini.HARNESS,
    opencode.HARNESS,
    cursor.HARNESS,
    copilot.HARNESS,
    copilot_vscode.HARNESS,
    claude_ai.HARNESS,
    cline.HARNESS,
    roo_code.HARNESS,
    kilo_code.HARNESS,
    continuedev.HARNESS,
    amp.HARNESS,
    chatgpt.HARNESS,
    aider.HARNESS,
    goose.HARNESS,
    qwen_code.HARNESS,
    droid.HARNESS,
    kimi.HARNESS,
    crush.HARNESS,
    openhands.HARNESS,
)
"""Every harness, in the order lists show them (default namespaces, help text, label values)."""

BY_NAME: dict[str, Harness] = {h.name: h for h in HARNESSES}

NAMES: tuple[str, ...] = tuple(BY_NAME)
"""Harness names: the values of the ``agent`` column."""

ALIASES: dict[str, str] = {alias: h.name for h in HARNESSES for alias in h.aliases}
"""Other names (product names) → harness name."""

ACCEPTED_NAMES: tuple[str, ...] = (*NAMES, *ALIASES)
"""Every name an ``agent`` argument accepts (CLI ``--agent``, the MCP tools' enums)."""


def harness(name: str) -> Harness:
    """The row of harness `name` (a `NAMES` value). Raises KeyError if unknown."""
    return BY_NAME[name]


def resolve_name(name: str) -> str:
    """The harness name for `name` — a harness name or alias, case-insensitive, surrounding
    blanks ignored. Raises ValueError naming the accepted values."""
    key = name.strip().lower()
    if key in BY_NAME:
        return key
    if key in ALIASES:
        return ALIASES[key]
    raise ValueError(f"unknown agent {name!r} (accepted: {', '.join(ACCEPTED_NAMES)})")


def of_namespace(namespace: str) -> str:
    """The harness of a namespace (``claude-work`` → ``claude``, ``claude-ai-export`` →
    ``claude-ai``): the longest harness name followed by ``-``. Raises ValueError if none."""
    for name in sorted(NAMES, key=len, reverse=True):
        if namespace.startswith(name + "-"):
            return name
    names = ", ".join(f"{n}-" for n in sorted(NAMES))
    raise ValueError(f"namespace {namespace!r} must start with one of {names}")


def products(names: tuple[str, ...] = NAMES) -> str:
    """The product names of `names`, for help text: ``Claude Code, Codex CLI, pi, …``."""
    return ", ".join(BY_NAME[n].product for n in names)


__all__ = [
    "ACCEPTED_NAMES",
    "ALIASES",
    "BY_NAME",
    "HARNESSES",
    "NAMES",
    "Harness",
    "harness",
    "of_namespace",
    "products",
    "resolve_name",
]
