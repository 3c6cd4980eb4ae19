"""`connect` / `disconnect`: register the read-only MCP server with a coding agent (docs/design.md §10).

`connect(agent)` writes our server entry (`targets.AGENTS`, from the harness registry: where and
in which shape) into the agent's user config and installs the usage note where the agent reads
skills/instructions; `disconnect(agent)` removes both. Rules:

- Structural edits only (`edit`): JSON/TOML parsed and rewritten, unrelated entries kept (TOML
  comments and layout too). A file that cannot be parsed is not touched (`ConnectError`, with
  the snippet to paste by hand).
- Before a file is changed, its previous content is copied to ``<file>.bak`` (``<file>.bak.N``
  when a ``.bak`` holding something else is there: no backup is overwritten).
- Idempotent: when the file already says what we would write, nothing is written (no backup).
- An ``agent-history`` entry already there that differs from ours (edited by the user, or by an
  older install) is not silently replaced: `merge_entry` keeps the user's environment variables
  (ours are added where the user has none) and the keys we do not manage, and the result lists
  every change (`ConnectResult.changes`) and what was kept (`kept`); ``force=True`` writes our
  entry exactly. Environment values are never shown (they may hold secrets), only their names.
- `disconnect` on an agent with no entry says so (action ``absent``: not connected).
- `disconnect` also removes what `connect` created for our entry (`created`: the file, or the
  ``"mcpServers"``-like object holding it) once nothing else is in it — ``{"mcpServers": {}}`` or
  an empty file is not left behind; what the user had (an empty object included) stays.
- Writes are atomic (temp file + rename) and keep the file's permissions; a symlinked config
  (dotfiles) is written where the link points; a read-only (no write bit) or non-UTF-8 config is
  refused (`ConnectError`), unchanged.
- `plan(agent)` computes everything without writing (``--print`` shows its snippet).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_history.connect import created, edit, note
from agent_history.connect.launch import server_launch
from agent_history.connect.targets import AGENTS, SERVER_NAME, AgentTarget, target_name

__all__ = ["AGENTS", "ConnectError", "ConnectResult", "connect", "disconnect", "plan", "snippet"]


class ConnectError(Exception):
    """The agent's config cannot be edited safely (message says what to do instead)."""


@dataclass
class FileChange:
    """One file's outcome: ``action`` is created | updated | removed | unchanged | absent
    (``absent``: the file, or our entry in it, is not there — not connected)."""

    path: Path
    action: str
    backup: Path | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"path": str(self.path), "action": self.action, "backup": str(self.backup) if self.backup else None}


@dataclass
class ConnectResult:
    """What `connect`/`disconnect` did (or, for `plan`, would do)."""

    agent: str
    config: FileChange
    note: FileChange
    entry: dict[str, Any] | None
    snippet: str
    warnings: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # to an existing entry, one line each
    kept: list[str] = field(default_factory=list)  # what of the user's entry was kept instead

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "agent": self.agent,
            "server": SERVER_NAME,
            "config": self.config.as_dict(),
            "note": self.note.as_dict(),
            "entry": self.entry,
            "snippet": self.snippet,
            "warnings": self.warnings,
            "changes": self.changes,
            "kept": self.kept,
        }


def _target(agent: str) -> AgentTarget:
    """The target of `agent` (a connect name, or a harness name or alias). Raises ConnectError."""
    try:
        return AGENTS[target_name(agent)]
    except ValueError as exc:
        raise ConnectError(str(exc)) from None


def _read(path: Path) -> str | None:
    """The text of config `path`, None when it does not exist. Raises ConnectError (one line,
    nothing changed) when it is not UTF-8 text or cannot be read (a directory, no permission)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConnectError(f"{path} is not UTF-8 text (byte {exc.start}); not changed") from None
    except OSError as exc:
        raise ConnectError(f"cannot read {path}: {exc.strerror}; not changed") from None


def _backup(path: Path, real: Path) -> Path:
    """Copy `real` (the file config `path` names) beside `path` as ``<name>.bak`` — or, when a
    ``.bak`` holding something else is there (the user's own, or an earlier state), as the
    first free ``<name>.bak.N``; a backup already holding the same bytes is reused. No backup
    is ever overwritten."""
    data = real.read_bytes()
    for n in range(1000):
        backup = path.with_name(path.name + (".bak" if n == 0 else f".bak.{n}"))
        try:
            if backup.read_bytes() == data:
                return backup
        except FileNotFoundError:
            shutil.copy2(real, backup)
            return backup
    raise ConnectError(f"{path}: 1,000 backups beside it already; remove some, nothing changed")


def _write(path: Path, text: str, old: str | None) -> FileChange:
    """Write `text` atomically; back up `old` first. `old` None = the file did not exist; no
    backup either of a file `connect` created (`created.recorded`: what is in it is ours or was
    written there since, and the edit keeps the latter — a ``.bak`` of it would be a leftover
    `disconnect` cannot tell from the user's).

    A symlinked config (dotfiles) is written where the link points, so the link stays (the backup
    goes beside the link, not into the dotfiles directory). A file with no write permission bit
    (``chmod a-w``, a read-only store) is refused: ConnectError, nothing changed. A new file is
    private (0600), an existing one keeps its mode."""
    real = path.resolve() if path.is_symlink() else path
    if old is not None and not real.stat().st_mode & 0o222:
        raise ConnectError(f"{path} is read-only (mode {real.stat().st_mode & 0o777:04o}); not changed")
    created.remember_directories(created.missing_directories(real))  # `disconnect` may remove them again
    real.parent.mkdir(parents=True, exist_ok=True)
    backup = _backup(path, real) if old is not None and not created.recorded(path)[0] else None
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if old is not None:
            shutil.copymode(real, tmp)
        os.replace(tmp, real)
    except PermissionError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ConnectError(f"cannot write {real}: {exc.strerror}; not changed") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return FileChange(path, "updated" if old is not None else "created", backup)


def _unlink(path: Path) -> None:
    """Remove the file config `path` names: a symlink's target (the file `connect` created
    where a dangling dotfiles link pointed), the link itself staying as the user made it."""
    (path.resolve() if path.is_symlink() else path).unlink()


def _current(target: AgentTarget, text: str | None) -> dict[str, Any] | None:
    if not text or not text.strip():
        return None
    try:
        return edit._parse_json(text) if target.fmt == "json" else edit._parse_toml(text).unwrap()
    except edit.EditError:
        return None


def snippet(target: AgentTarget, entry: dict[str, Any], key: tuple[str, ...]) -> str:
    """The entry as it appears in the agent's config file (for ``--print`` and error messages)."""
    if target.fmt == "toml":
        return edit.toml_set("", key, entry)
    nested: Any = entry
    for part in reversed(key):
        nested = {part: nested}
    return json.dumps(nested, indent=2, ensure_ascii=False) + "\n"


def _set(target: AgentTarget, text: str, key: tuple[str, ...], entry: dict[str, Any]) -> str:
    if target.fmt == "toml":
        return edit.toml_set(text, key, entry)
    return edit.json_set(text, key, entry)


def _get(target: AgentTarget, text: str, key: tuple[str, ...]) -> Any:
    return edit.toml_get(text, key) if target.fmt == "toml" else edit.json_get(text, key)


def _remove(target: AgentTarget, text: str, key: tuple[str, ...]) -> str:
    return edit.toml_remove(text, key) if target.fmt == "toml" else edit.json_remove(text, key)


def _note_text(target: AgentTarget, old: str | None) -> str:
    return note.skill_text() if target.note_kind == "skill" else note.with_section(old or "")


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def merge_entry(
    current: Any, ours: dict[str, Any], env_key: str, *, force: bool = False
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The entry to write over an existing `current` one: (entry, changes, kept).

    Without `force`: our keys with our values, except `env_key`, which is the user's variables
    plus ours that the user does not set; keys only the user has are kept. With `force` (or no
    usable `current` entry): `ours`. `changes` lists each difference from `current` (keys by
    value, variables by name only), `kept` each user value that differs from ours and stays.
    """
    if not isinstance(current, dict) or current == ours:
        return ours, [], []
    kept: list[str] = []
    entry = dict(ours)
    if not force:
        user_env = current.get(env_key) if isinstance(current.get(env_key), dict) else {}
        our_env = ours.get(env_key) or {}
        env = {**our_env, **user_env}
        if env:
            entry[env_key] = env
        kept += [
            f"{env_key} {name}: your value (`connect --force` writes ours)"
            for name in sorted(user_env)
            if name in our_env and user_env[name] != our_env[name]
        ]
        kept += [f"{env_key} {name}: yours" for name in sorted(user_env) if name not in our_env]
        for k, v in current.items():
            if k not in entry:
                entry[k] = v
                kept.append(f"{k}: yours")
    changes: list[str] = []
    for k in [*ours, *sorted(k for k in {*current, *entry} if k not in ours)]:  # a stable order
        old, new = current.get(k), entry.get(k)
        if old == new:
            continue
        if k == env_key and isinstance(old or {}, dict) and isinstance(new or {}, dict):
            old, new = old or {}, new or {}
            for n in sorted({*old, *new}):
                if old.get(n) != new.get(n):
                    changes.append(f"{k} {n}: {'added' if n not in old else 'removed' if n not in new else 'changed'}")
        elif k not in current:
            changes.append(f"{k}: added {_show(new)}")
        elif k not in entry:
            changes.append(f"{k}: removed (was {_show(old)})")
        else:
            changes.append(f"{k}: {_show(old)} → {_show(new)}")
    return entry, changes, kept


def plan(agent: str, *, force: bool = False) -> ConnectResult:
    """What `connect(agent, force=force)` would write, without writing. Raises ConnectError."""
    target = _target(agent)
    launch, warnings = server_launch()
    path = target.config_path()
    old = _read(path)
    key = target.key_path(_current(target, old))
    current = _safe_get(target, old, key) if old is not None else None
    entry, changes, kept = merge_entry(current, target.entry(launch), target.env_key, force=force)
    text = snippet(target, entry, key)
    config_action = "created" if old is None else ("unchanged" if current == entry else "updated")
    note_path = target.note_path()
    note_old = _read(note_path)
    note_action = (
        "created" if note_old is None else ("unchanged" if note_old == _note_text(target, note_old) else "updated")
    )
    return ConnectResult(
        target.name,
        FileChange(path, config_action),
        FileChange(note_path, note_action),
        entry,
        text,
        warnings,
        changes,
        kept,
    )


def _safe_get(target: AgentTarget, text: str, key: tuple[str, ...]) -> Any:
    try:
        return _get(target, text, key)
    except edit.EditError:
        return None


def connect(agent: str, *, force: bool = False) -> ConnectResult:
    """Write the server entry and the usage note for `agent` (idempotent); an existing entry is
    merged (`merge_entry`) unless `force`. Raises ConnectError."""
    result = plan(agent, force=force)
    target = _target(agent)
    path, entry = result.config.path, result.entry
    old = _read(path)
    key = target.key_path(_current(target, old))
    if result.config.action != "unchanged":
        try:
            new = _set(target, old or "", key, entry)
        except edit.EditError as exc:
            raise ConnectError(f"cannot edit {path} ({exc}); add this by hand:\n{result.snippet}") from None
        made = created.missing_parent(_current(target, old), key)
        result.config = _write(path, new, old)
        created.remember(path, file=old is None, key=made)  # what disconnect may take away again
    note_path = result.note.path
    note_old = _read(note_path)
    if result.note.action != "unchanged":
        result.note = _write(note_path, _note_text(target, note_old), note_old)
    return result


def _without_created(target: AgentTarget, path: Path, text: str) -> tuple[str, bool]:
    """``(text, whether the file can go)`` for config `text` with our entry already removed: the
    object `connect` created for it (`created.recorded`) removed when it is now empty, and True
    when `connect` created the file and nothing is left in it. What the user had stays."""
    file_made, made_key = created.recorded(path)
    if made_key is not None and _safe_get(target, text, made_key) == {}:
        text = _remove(target, text, made_key)
    return text, file_made and _current(target, text) in (None, {})


def disconnect(agent: str) -> ConnectResult:
    """Remove our server entry and usage note from `agent`'s files (idempotent). Raises ConnectError."""
    target = _target(agent)
    path = target.config_path()
    old = _read(path)
    config = FileChange(path, "absent")
    if old is not None:
        key = target.key_path(_current(target, old))
        try:
            new = _remove(target, old, key)
        except edit.EditError as exc:
            raise ConnectError(f"cannot edit {path} ({exc}); remove the {SERVER_NAME!r} entry by hand") from None
        if new == old:  # no entry: not connected
            config = FileChange(path, "absent")
        else:
            new, only_ours = _without_created(target, path, new)
            if only_ours:  # connect created the file and nothing else is in it: no backup of our entry
                _unlink(path)
                config = FileChange(path, "removed")
            else:
                config = _write(path, new, old)
                config.action = "removed"
        created.forget(path, file_gone=not path.exists())  # a link left dangling: gone too
    note_path = target.note_path()
    note_old = _read(note_path)
    note_change = FileChange(note_path, "absent")
    warnings: list[str] = []
    if note_old is not None:
        if target.note_kind == "skill":
            if note.is_ours(note_old):
                note_path.unlink()
                try:
                    note_path.parent.rmdir()
                except OSError:
                    pass  # other files beside it: leave the directory
                note_change = FileChange(note_path, "removed")
            else:
                warnings.append(f"{note_path} was not written by agent-history connect; left in place")
                note_change = FileChange(note_path, "unchanged")
        else:
            new_note = note.without_section(note_old)
            if new_note == note_old:
                note_change = FileChange(note_path, "unchanged")
            elif not new_note.strip() and not note_path.is_symlink():  # the file held only our section
                note_path.unlink()
                note_change = FileChange(note_path, "removed")
            else:
                note_change = _write(note_path, new_note, note_old)
                note_change.action = "removed"
    created.remove_empty_directories()  # those `connect` created, now empty (`connect.created`)
    return ConnectResult(target.name, config, note_change, None, "", warnings)
