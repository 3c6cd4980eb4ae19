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

The directories `connect` (or ``connect --hook``) created on the way to a file it wrote
(``~/.codex``, ``~/.claude/skills``, and the data dir the record itself went into) are listed in
``<data dir>/connect-directories.json`` (`DIRECTORIES_NAME`): a JSON list of absolute paths.
`disconnect` removes those that are empty once it is done (`remove_empty_directories`), deepest
first, so a home is left as `connect` found it; a directory that holds something (the user's, or
another agent's connection) stays and stays listed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent_history.config import data_dir

RECORD_NAME = "connect-created.json"
DIRECTORIES_NAME = "connect-directories.json"


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
    remember_directories(missing_directories(path))
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


def missing_directories(path: Path) -> list[Path]:
    """The directories writing `path` would create: its ancestors that do not exist (absolute),
    outermost first; empty when its parent exists."""
    out: list[Path] = []
    parent = Path(os.path.abspath(path)).parent
    while not parent.exists() and parent != parent.parent:
        out.append(parent)
        parent = parent.parent
    return out[::-1]


def _directories_path() -> Path:
    return data_dir() / DIRECTORIES_NAME


def _listed_directories() -> list[str]:
    try:
        data = json.loads(_directories_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, str)] if isinstance(data, list) else []


def _write_directories(dirs: list[str]) -> None:
    path = _directories_path()
    if not dirs:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(dirs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def remember_directories(dirs: list[Path]) -> None:
    """Add `dirs` (directories `connect` is about to create, `missing_directories`) to the list
    `remove_empty_directories` works through; nothing is written for none. The list's own file
    may create the data dir: that is listed too."""
    if not dirs:
        return
    listed = _listed_directories()
    wanted = dict.fromkeys(str(d) for d in [*missing_directories(_directories_path()), *dirs])
    new = [d for d in wanted if d not in listed]
    if new:
        _write_directories(listed + new)


def remove_empty_directories() -> list[Path]:
    """Remove each listed directory (`remember_directories`) that is empty, deepest first, and
    return those removed. The list keeps the ones still there (not empty: someone's files); when
    only the directories holding the list itself remain, it goes too, and they with it if that
    leaves them empty. Never raises for a directory that cannot be removed."""
    listed = _listed_directories()
    if not listed:
        return []
    removed: list[Path] = []

    def sweep(dirs: list[str]) -> list[str]:
        """Try each of `dirs`, deepest first; those still there, in their listed order."""
        kept = set()
        for d in sorted(dirs, key=lambda p: p.count(os.sep), reverse=True):
            try:
                os.rmdir(d)
                removed.append(Path(d))
            except FileNotFoundError:
                pass  # gone already
            except OSError:
                kept.add(d)
        return [d for d in dirs if d in kept]

    kept = sweep(listed)
    holders = {str(p) for p in [_directories_path().parent, *_directories_path().parent.parents]}
    if all(d in holders for d in kept):
        _directories_path().unlink(missing_ok=True)
        kept = sweep(kept)
        if kept:
            _write_directories(kept)  # they hold something else (the catalogue): still ours to tidy
    elif kept != listed:
        _write_directories(kept)
    return removed
