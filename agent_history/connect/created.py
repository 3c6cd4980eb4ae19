"""What `connect` created in an agent's config file, so `disconnect` can take exactly that away.

`connect` writing our server entry may create the file itself (``~/.cursor/mcp.json``) or the
object that holds the servers (``"mcpServers"`` in an existing ``settings.json``). Once our entry
is removed, such a leftover (``{"mcpServers": {}}``, an empty file) is ours alone; but an empty
``"mcpServers": {}`` the user wrote looks the same. So `connect` records, per config file, what it
created, and `disconnect` removes only that, and only when nothing else is left in it — never what
the user had.

The record is one JSON file, ``<data dir>/connect-created.json`` (`config.data_dir`)::

    {"/home/me/.cursor/mcp.json": {"file": true, "key": ["mcpServers"]},
     "/home/me/.gemini/settings.json": {"file": false, "key": ["mcpServers"]}}

``file``: `connect` (or ``connect --hook``) created the file; ``key``: the outermost object on our
entry's key path that was missing (null when every parent was there). A config without a record (connected by an
older version, or with another data dir) keeps whatever is left after our entry is removed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_history.config import data_dir

RECORD_NAME = "connect-created.json"


def record_path() -> Path:
    """Where the record lives: ``<data dir>/connect-created.json``."""
    return data_dir() / RECORD_NAME


def _load() -> dict[str, Any]:
    try:
        data = json.loads(record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: nothing is known to be ours
    return data if isinstance(data, dict) else {}


def _save(data: dict[str, Any]) -> None:
    path = record_path()
    if not data:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def missing_parent(current: dict[str, Any] | None, key: tuple[str, ...]) -> tuple[str, ...] | None:
    """The outermost prefix of `key`'s parents (``key[:-1]``) absent from the parsed config
    `current` (None: no file or an empty one) — what writing at `key` creates; None when every
    parent is there."""
    node: Any = current or {}
    for n, part in enumerate(key[:-1]):
        if not isinstance(node, dict) or part not in node:
            return key[: n + 1]
        node = node[part]
    return None


def remember(config: Path, *, file: bool, key: tuple[str, ...] | None) -> None:
    """Record that `connect` created `config` (`file`) and/or the object at `key` in it; nothing
    is written when it created neither. An earlier record of the same file is kept where it says
    more (a file created before stays created)."""
    if not file and key is None:
        return
    data = _load()
    before = data.get(str(config)) or {}
    data[str(config)] = {"file": bool(file or before.get("file")), "key": list(key or before.get("key") or []) or None}
    _save(data)


def recorded(config: Path) -> tuple[bool, tuple[str, ...] | None]:
    """``(whether connect created `config`, the key of the object it created there or None)``;
    ``(False, None)`` without a record."""
    entry = _load().get(str(config)) or {}
    key = entry.get("key")
    return bool(entry.get("file")), tuple(key) if isinstance(key, list) and key else None


def forget(config: Path, *, file_gone: bool) -> None:
    """Drop what the record says of `config` once `disconnect` dealt with it: all of it when the
    file is gone, else the created object only — the file stays known as created, so removing
    the other thing written there (the after-turn hook beside the MCP entry in Gemini's
    ``settings.json``) can still remove the file."""
    data = _load()
    entry = data.pop(str(config), None)
    if entry is None:
        return
    if not file_gone and entry.get("file"):
        data[str(config)] = {"file": True, "key": None}
    _save(data)
