"""`connect claude --statusline` / `disconnect claude --statusline`: install `agent-history
statusline` as Claude Code's status line, with the structural edit and ``.bak`` rules of the
hooks (`connect.hook`): ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``), key
``statusLine`` = ``{"type": "command", "command": …}`` (Claude Code docs, "Status line
configuration"); every other key keeps its value and position. Claude Code shows one status
line: a ``statusLine`` that is not ours is a `ConnectError`, never replaced."""

from __future__ import annotations

import shlex
import sys
from typing import Any

from agent_history.connect.launch import PASSED_ENV, _executable
from agent_history.harnesses.places import resolve

KEY = "statusLine"
AGENTS = ("claude",)
"""Harnesses with a command status line (Claude Code)."""


def statusline_command(environ: dict[str, str] | None = None) -> str:
    """The shell command Claude Code runs: this installation's ``agent-history statusline``,
    with the variables that locate the catalogue passed through ``env`` when set."""
    import os

    environ = dict(os.environ if environ is None else environ)
    exe = _executable()
    base = [exe] if exe else [sys.executable, "-m", "agent_history"]
    env = [f"{name}={environ[name]}" for name in PASSED_ENV if environ.get(name)]
    return shlex.join((["env", *env] if env else []) + [*base, "statusline"])


def _is_ours(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    try:
        words = shlex.split(entry["command"])
    except ValueError:
        return False
    return (
        bool(words)
        and words[-1] == "statusline"
        and any(w.endswith("agent-history") or w == "agent_history" for w in words)
    )


def _settings(agent: str):
    from agent_history.connect import ConnectError
    from agent_history.connect.hook import HOOKS, hook_name

    try:
        name = hook_name(agent)  # the registry's name for `agent` (aliases: claude-code → claude)
    except ValueError:
        name = None
    if name not in AGENTS:
        raise ConnectError(f"no status line for agent {agent!r} (status lines for: {', '.join(AGENTS)})")
    return resolve(HOOKS[name].config)


def snippet(agent: str, environ: dict[str, str] | None = None) -> tuple[Any, str]:
    """What `install` would add, written nowhere (`connect claude --statusline --print`):
    → (settings path, JSON text ``{"statusLine": {...}}``). Raises ConnectError for another agent."""
    from agent_history.connect.edit import _dump_json

    return _settings(agent), _dump_json({KEY: {"type": "command", "command": statusline_command(environ)}})


def install(agent: str, environ: dict[str, str] | None = None):
    """Set Claude Code's ``statusLine`` to ours; returns the `FileChange` (``unchanged`` when it
    is already exactly that). Raises ConnectError for another agent, a settings file that is not
    a plain JSON object, or a status line that is not ours."""
    from agent_history.connect import ConnectError, FileChange, _read, _write
    from agent_history.connect.edit import EditError, _dump_json, _parse_json

    path = _settings(agent)
    old = _read(path)
    try:
        data = _parse_json(old or "")
    except EditError as exc:
        raise ConnectError(f"{path}: {exc}; not changed") from None
    current = data.get(KEY)
    if current is not None and not _is_ours(current):
        shown = current.get("command") if isinstance(current, dict) else current
        raise ConnectError(f"{path} already has a status line ({shown!r}); not changed — remove it first")
    entry = {"type": "command", "command": statusline_command(environ)}
    if isinstance(current, dict):
        entry = {**current, **entry}  # keep extra keys of ours (padding …)
    data[KEY] = entry
    new = _dump_json(data)
    if old is not None and new == old:
        return FileChange(path, "unchanged")
    return _write(path, new, old)


def uninstall(agent: str):
    """Remove our ``statusLine``; returns the `FileChange` (``absent`` when ours is not there).
    Raises ConnectError as `install` (a status line that is not ours is left alone: absent)."""
    from agent_history.connect import ConnectError, FileChange, _read, _write
    from agent_history.connect.edit import EditError, _dump_json, _parse_json

    path = _settings(agent)
    old = _read(path)
    if old is None:
        return FileChange(path, "absent")
    try:
        data = _parse_json(old)
    except EditError as exc:
        raise ConnectError(f"{path}: {exc}; not changed") from None
    if not _is_ours(data.get(KEY)):
        return FileChange(path, "absent")
    del data[KEY]
    change = _write(path, _dump_json(data), old)
    return FileChange(path, "removed", change.backup)
