"""Per-turn freshness (issue 18): the after-turn hook that indexes the transcript a turn just
wrote, and its install/uninstall in each harness's config.

Harnesses and where their hook lives (`HOOKS`: the harness registry rows' `HookSpec`):

- **Claude Code** — ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``), ``hooks.Stop``: a list
  of matcher groups ``{"hooks": [{"type": "command", "command": …}]}``; the hook gets a JSON
  payload on stdin with ``transcript_path`` (Claude Code hooks reference, "Stop").
- **Codex CLI** — ``~/.codex/config.toml`` (``$CODEX_HOME``), top-level ``notify = [argv…]``;
  Codex appends one JSON argument ``{"type": "agent-turn-complete", "thread-id": …}`` (Codex
  config reference, "notify"). The thread id names the rollout file
  ``sessions/YYYY/MM/DD/rollout-<time>-<thread-id>.jsonl``. Codex runs one notify program
  only: a notify that is not ours is a `ConnectError`, never replaced.
- **Gemini CLI** — ``~/.gemini/settings.json``, ``hooks.AfterAgent`` (fires when the agent loop
  of a turn completes): the same matcher-group shape as Claude Code's, and a JSON payload on
  stdin whose base fields include ``transcript_path`` (geminicli.com/docs/hooks/reference,
  "Configuration schema" and the base input schema). The transcript is the session's
  ``tmp/<project hash>/chats/session-*.json`` document (or ``.jsonl``, 0.40+).
- **Cursor** — ``~/.cursor/hooks.json`` (``{"version": 1, "hooks": {"stop": [{"command": …}]}}``,
  cursor.com/docs/agent/hooks; a flat list of entries per event, no matcher groups). The stop
  payload on stdin carries ``conversation_id``, ``generation_id``, ``status``, ``loop_count`` and,
  from the editor, ``transcript_path``; the Cursor CLI sends ``transcript_path`` null
  (entireio/cli#522), so the conversation id is looked up as
  ``projects/*/agent-transcripts/<id>.jsonl`` or ``<id>/<id>.jsonl`` under ``~/.cursor``.
- **VS Code Copilot** — agent hooks (Preview, code.visualstudio.com/docs/copilot/customization/hooks):
  VS Code loads every ``*.json`` in ``~/.copilot/hooks/`` (a default hook-file location), so ours
  is a file of its own, ``~/.copilot/hooks/agent-history.json``:
  ``{"hooks": {"Stop": [{"type": "command", "command": …}]}}`` (flat entries, PascalCase events).
  The payload's ``transcript_path`` (microsoft/vscode-copilot-chat#3545) names the extension's
  ``workspaceStorage/<hash>/GitHub.copilot-chat/transcripts/<session id>.jsonl``; without it the
  payload's ``sessionId`` is looked up there. Assumed, not
  observed here: the file name is free (any ``*.json`` there is read), and Copilot CLI, which
  reads the same directory with lowerCamelCase events, ignores a ``Stop`` key.

The hook itself (`run_hook`) never blocks or breaks the agent: it reads the payload, starts
``agent-history index --file PATH`` detached (own session, no stdin/stdout) through
`relay`, which appends each of its stderr lines to ``<data dir>/hook.log`` with a timestamp and
the agent, and returns 0 at once; a pass already running makes that
child a no-op (the index advisory lock), a database that is down makes it log the one-line
reason. Nothing is printed on stdout; every failure is one line in ``hook.log``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_history.connect import created
from agent_history.connect.launch import PASSED_ENV, _executable
from agent_history.harnesses import BY_NAME, HARNESSES, resolve_name
from agent_history.harnesses.places import resolve
from agent_history.harnesses.spec import HookSpec

LOG_NAME = "hook.log"


HOOKS: dict[str, HookSpec] = {h.hook.name: h.hook for h in HARNESSES if h.hook is not None}
"""After-turn hooks by the name in the installed command (the registry rows' `HookSpec`), in
registry order."""


def hook_name(agent: str) -> str:
    """The `HOOKS` key for `agent`: a hook name, or a harness name or alias whose row has a
    hook (``connect claude-code --hook`` installs ``hook claude``). Raises ValueError (one line)."""
    if agent in HOOKS:
        return agent
    try:
        h = BY_NAME[resolve_name(agent)]
    except ValueError:
        h = None
    if h is None or h.hook is None:
        raise ValueError(f"no after-turn hook for agent {agent!r} yet (hooks for: {', '.join(HOOKS)})")
    return h.hook.name


def hook_argv(agent: str, environ: dict[str, str] | None = None) -> list[str]:
    """The command the harness runs after each turn: this installation's `agent-history hook
    AGENT`, with the variables that locate the catalogue passed through ``env`` when set (the
    harness may run hooks with a reduced environment)."""
    environ = dict(os.environ if environ is None else environ)
    exe = _executable()
    base = [exe] if exe else [sys.executable, "-m", "agent_history"]
    env = [f"{name}={environ[name]}" for name in PASSED_ENV if environ.get(name)]
    return (["env", *env] if env else []) + [*base, "hook", agent]


def _is_ours(argv_or_command: list[str] | str, agent: str) -> bool:
    words = shlex.split(argv_or_command) if isinstance(argv_or_command, str) else list(argv_or_command)
    return (
        len(words) >= 3
        and words[-2:] == ["hook", agent]
        and any(w.endswith("agent-history") or w == "agent_history" for w in words)
    )


# -- matcher groups: Claude Code settings.json hooks.Stop, Gemini CLI hooks.AfterAgent --------


def groups_install(data: dict[str, Any], argv: list[str], agent: str, event: str) -> dict[str, Any]:
    """`data` (settings.json) with our hook under ``hooks[event]`` (Claude Code ``Stop``, Gemini
    CLI ``AfterAgent``: the same matcher-group shape): other hooks kept; an older entry of ours
    replaced in place."""
    command = shlex.join(argv)
    hooks = data.setdefault("hooks", {})
    groups = hooks.setdefault(event, [])
    found = False
    for group in groups:
        for h in group.get("hooks", []):
            if h.get("type") == "command" and _is_ours(h.get("command", ""), agent):
                if found:
                    h["_drop"] = True
                else:
                    h["command"] = command
                    found = True
    for group in groups:
        group["hooks"] = [h for h in group.get("hooks", []) if not h.pop("_drop", False)]
    if not found:
        groups.append({"hooks": [{"type": "command", "command": command}]})
    return data


def groups_uninstall(data: dict[str, Any], agent: str, event: str) -> tuple[dict[str, Any], bool]:
    """(`data` without our hook under ``hooks[event]``, whether one was there); emptied groups,
    lists and the ``hooks`` object itself are removed."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(event), list):
        return data, False
    removed = False
    kept_groups = []
    for group in hooks[event]:
        inner = group.get("hooks", [])
        kept = [h for h in inner if not (h.get("type") == "command" and _is_ours(h.get("command", ""), agent))]
        removed |= len(kept) != len(inner)
        if kept or not inner:
            kept_groups.append({**group, "hooks": kept} if inner else group)
    if kept_groups:
        hooks[event] = kept_groups
    else:
        del hooks[event]
    if not hooks:
        del data["hooks"]
    return data, removed


# -- Cursor / VS Code: flat hook lists ------------------------------------------------------


def flat_install(data: dict[str, Any], argv: list[str], target: HookSpec) -> dict[str, Any]:
    """`data` with our command in the flat list ``hooks[target.event]`` (Cursor ``hooks.json``,
    VS Code hook files): other entries kept, an older entry of ours replaced in place (extra
    copies dropped), `target.top` keys added when missing."""
    command = shlex.join(argv)
    for key, value in target.top:
        data.setdefault(key, value)
    entries = data.setdefault("hooks", {}).setdefault(target.event, [])
    ours = [i for i, e in enumerate(entries) if isinstance(e, dict) and _is_ours(e.get("command", ""), target.name)]
    if ours:
        entries[ours[0]]["command"] = command
        for i in reversed(ours[1:]):
            del entries[i]
    else:
        entries.append({**dict(target.entry), "command": command})
    return data


def flat_uninstall(data: dict[str, Any], target: HookSpec) -> tuple[dict[str, Any], bool]:
    """(`data` without our entries in ``hooks[target.event]``, whether one was there); an emptied
    list and ``hooks`` object are removed."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(target.event), list):
        return data, False
    entries = hooks[target.event]
    kept = [e for e in entries if not (isinstance(e, dict) and _is_ours(e.get("command", ""), target.name))]
    if len(kept) == len(entries):
        return data, False
    if kept:
        hooks[target.event] = kept
    else:
        del hooks[target.event]
    if not hooks:
        del data["hooks"]
    return data, True


# -- a top-level notify program: Codex config.toml ------------------------------------------


class HookConflict(Exception):
    """The harness already runs another program in the only hook slot it has."""


def notify_install(text: str, argv: list[str], agent: str) -> str:
    """config.toml `text` with ``notify = argv`` (comments and layout kept; `agent` is the hook
    name our command carries). Raises HookConflict when a notify program that is not ours is
    configured."""
    import tomlkit

    doc = tomlkit.parse(text)
    current = doc.get("notify")
    if current is not None and not _is_ours([str(x) for x in current], agent):
        raise HookConflict(f"notify = {json.dumps(list(current))}")
    if current is not None:
        doc["notify"] = argv
        return tomlkit.dumps(doc)
    # a top-level key must come before the first table: insert it there
    new = tomlkit.document()
    new["notify"] = argv
    body = tomlkit.dumps(new)
    return body + ("\n" + text if text.strip() else "")


def notify_uninstall(text: str, agent: str) -> tuple[str, bool]:
    """(config.toml `text` without our ``notify``, whether it was there)."""
    import tomlkit

    doc = tomlkit.parse(text)
    current = doc.get("notify")
    if current is None or not _is_ours([str(x) for x in current], agent):
        return text, False
    del doc["notify"]
    out = tomlkit.dumps(doc)
    return (out[1:] if out.startswith("\n") and not text.startswith("\n") else out), True


# -- the hook command ------------------------------------------------------------------------


def transcript_of(agent: str, payload: dict[str, Any]) -> Path:
    """The transcript a hook payload names: its ``transcript_key`` value when that is a non-empty
    string, else the newest file the row's `TranscriptLookup` finds for the payload's id. Raises
    ValueError (one line) when it names none."""
    try:
        spec = HOOKS[hook_name(agent)]
    except ValueError:
        raise ValueError(f"no after-turn hook for agent {agent!r} (known: {', '.join(HOOKS)})") from None
    path = payload.get(spec.transcript_key) if spec.transcript_key else None
    if isinstance(path, str) and path:
        return Path(path).expanduser()
    look = spec.lookup
    if look is None:
        raise ValueError(f"{spec.event} payload has no {spec.transcript_key}")
    ident = next((payload[k] for k in look.id_keys if payload.get(k)), None)
    return _newest(ident, resolve(look.root), look.patterns, look.no_id, look.what)


def _newest(ident: Any, root: Path, patterns: tuple[str, ...], no_id: str, what: str) -> Path:
    """The last (sorted) file under `root` matching one of the glob `patterns` with ``{id}``
    replaced by `ident`. Raises ValueError `no_id` when `ident` is not a plain id (a non-empty
    string without ``/``), or "no `what` `ident` under `root`" when nothing matches."""
    if not isinstance(ident, str) or not ident or "/" in ident:
        raise ValueError(no_id)
    found = sorted(p for pattern in patterns for p in root.glob(pattern.replace("{id}", ident)))
    if not found:
        raise ValueError(f"no {what} {ident} under {root}")
    return found[-1]


def log_line(data_dir: Path, message: str) -> None:
    """Append one timestamped line to ``<data_dir>/hook.log`` (best effort). What a harness passed
    (an agent name, a payload's path) is shown, never obeyed: control characters visibly
    (`bidi.escape_controls`: ``tail hook.log`` must not set the terminal's title or clear it), and
    a value past 200 characters cut, saying its size (`echo.clip_echoes`)."""
    from agent_history.bidi import escape_controls
    from agent_history.echo import clip_echoes

    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with (data_dir / LOG_NAME).open("a") as fh:
            fh.write(
                f"{datetime.now(UTC).isoformat(timespec='seconds')} {clip_echoes(escape_controls(' '.join(message.split())))}\n"
            )
    except OSError:
        pass


def run_hook(args: list[str], stdin_text: str | None = None) -> int:
    """`agent-history hook AGENT [--wait] [PAYLOAD]`: index the transcript the harness's payload
    names (stdin for Claude Code, Gemini CLI, Cursor and VS Code; the last argument for Codex) in a detached child. Always 0;
    failures go to ``hook.log`` in the data dir. ``--wait`` waits for the child (tests, debugging)."""
    from agent_history.config import data_dir

    where = data_dir()
    wait = "--wait" in args
    rest = [a for a in args if a != "--wait"]
    try:
        if not rest:
            raise ValueError("usage: agent-history hook AGENT [PAYLOAD]")
        agent, extra = rest[0], rest[1:]
        raw = extra[-1] if extra else (stdin_text if stdin_text is not None else sys.stdin.read())
        payload = json.loads(raw or "{}")
        if not isinstance(payload, dict):
            raise ValueError("payload is not a JSON object")
        path = transcript_of(agent, payload)
    except (ValueError, OSError) as exc:  # json.JSONDecodeError is a ValueError
        log_line(where, f"hook {' '.join(args[:1])}: {exc}")
        return 0
    try:
        where.mkdir(parents=True, exist_ok=True)
        with (where / LOG_NAME).open("a") as log:
            # the relay writes each stderr line of the index child with a timestamp and the agent
            child = subprocess.Popen(
                [sys.executable, "-m", "agent_history.connect.relay", agent, str(where / LOG_NAME)]
                + [sys.executable, "-m", "agent_history", "index", "--file", str(path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,  # survives the harness's process group; never its terminal
            )
    except OSError as exc:  # an unwritable data dir, no Python: say so (best effort), never fail the agent
        log_line(where, f"hook {agent}: cannot start the index child: {exc}")
        return 0
    if wait:
        child.wait()
    return 0


# -- install / uninstall (structural edits with a .bak, like `connect`) ----------------------


def _hook_target(agent: str) -> HookSpec:
    from agent_history.connect import ConnectError

    try:
        return HOOKS[hook_name(agent)]
    except ValueError as exc:
        raise ConnectError(str(exc)) from None


def _parsed(text: str, target: HookSpec) -> dict[str, Any]:
    """The JSON config `text` parsed and checked to have the shape our edit walks (``hooks`` an
    object, ``hooks[event]`` a list of objects; matcher groups' ``hooks`` lists of objects).
    Raises EditError naming the part that is not, so valid JSON of another shape is a one-line
    error instead of an AttributeError."""
    from agent_history.connect.edit import EditError, _parse_json

    data = _parse_json(text)
    hooks = data.get("hooks")
    if hooks is None:
        return data
    if not isinstance(hooks, dict):
        raise EditError('"hooks" is not an object')
    entries = hooks.get(target.event)
    if entries is None:
        return data
    where = f'"hooks.{target.event}"'
    if not isinstance(entries, list):
        raise EditError(f"{where} is not a list")
    for entry in entries:
        if not isinstance(entry, dict):
            raise EditError(f"an entry of {where} is not an object")
        inner = entry.get("hooks", [])
        if target.style != "flat" and not (isinstance(inner, list) and all(isinstance(h, dict) for h in inner)):
            raise EditError(f'a matcher group of {where} has "hooks" that is not a list of objects')
    return data


def install(agent: str, environ: dict[str, str] | None = None):
    """Install the after-turn hook of `agent`; returns the `FileChange` (``unchanged`` when it
    is already there). Raises ConnectError for an unknown agent, a config that cannot be parsed,
    or (Codex) another notify program."""
    from agent_history.connect import FileChange, _write

    path, old, new = planned_install(agent, environ)
    if old is not None and new == old:
        return FileChange(path, "unchanged")
    change = _write(path, new, old)
    created.remember(path, file=old is None, key=None)  # uninstall removes a file it created, emptied
    return change


def planned_install(agent: str, environ: dict[str, str] | None = None) -> tuple[Path, str | None, str]:
    """What `install` would write, writing nothing: ``(config path, its text now or None when
    absent, its text with the hook)``. Raises ConnectError as `install`."""
    from agent_history.connect import ConnectError, _read
    from agent_history.connect.edit import EditError, _dump_json

    target = _hook_target(agent)
    path = resolve(target.config)
    old = _read(path)
    argv = hook_argv(target.name, environ)
    try:
        if target.style == "flat":
            new = _dump_json(flat_install(_parsed(old or "", target), argv, target))
        elif target.style == "groups":
            new = _dump_json(groups_install(_parsed(old or "", target), argv, target.name, target.event))
        else:
            new = notify_install(old or "", argv, target.name)
    except EditError as exc:
        raise ConnectError(f"{path}: {exc}; not changed") from None
    except HookConflict as exc:
        raise ConnectError(
            f"{path} already has {exc} (Codex runs one notify program); not changed — "
            f"remove it, or call {shlex.join(argv)} from that program"
        ) from None
    except Exception as exc:  # tomlkit's parse errors
        if type(exc).__module__.startswith("tomlkit"):
            raise ConnectError(f"{path}: not valid TOML ({exc}); not changed") from None
        raise
    return path, old, new


def uninstall(agent: str):
    """Remove the after-turn hook of `agent`; returns the `FileChange` (``absent`` when there
    was none). Raises ConnectError as `install`."""
    from agent_history.connect import ConnectError, FileChange, _backup, _read, _unlink, _write
    from agent_history.connect.edit import EditError, _dump_json

    target = _hook_target(agent)
    path = resolve(target.config)
    old = _read(path)
    if old is None:
        return FileChange(path, "absent")
    try:
        if target.style == "flat":
            data, removed = flat_uninstall(_parsed(old, target), target)
            new = _dump_json(data)
        elif target.style == "groups":
            data, removed = groups_uninstall(_parsed(old, target), target.name, target.event)
            new = _dump_json(data)
        else:
            new, removed = notify_uninstall(old, target.name)
    except EditError as exc:
        raise ConnectError(f"{path}: {exc}; not changed") from None
    except Exception as exc:
        if type(exc).__module__.startswith("tomlkit"):
            raise ConnectError(f"{path}: not valid TOML ({exc}); not changed") from None
        raise
    if not removed:
        return FileChange(path, "absent")
    only_ours = not new.strip() if target.style == "notify" else data in ({}, dict(target.top))
    if created.recorded(path)[0] and only_ours:
        # `install` created it and nothing but what it put there is left (Cursor's
        # ``{"version": 1}`` too): removed, no backup — the home is as `install` found it
        _unlink(path)
        created.forget(path, file_gone=True)
        created.remove_empty_directories()  # and the directories it created for it, now empty
        return FileChange(path, "removed")
    if target.own_file and not data:  # our own hook file, not recorded as created: removed, backup kept
        backup = _backup(path, path.resolve())
        _unlink(path)
        created.forget(path, file_gone=True)
        created.remove_empty_directories()
        return FileChange(path, "removed", backup)
    change = _write(path, new, old)
    return FileChange(path, "removed", change.backup)
