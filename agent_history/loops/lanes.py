"""The Codex-lane heuristic's pure half (issue 12, Lanes): which working trees a root's shell
command starts `codex` in. A Codex session without lineage that starts while that command runs,
in that tree, is a lane (`link_method = 'heuristic'`)."""

from __future__ import annotations

import posixpath

import orjson

from agent_history.loops import rules


def shell_command(tool_input: str | None) -> str | None:
    """The script of a shell tool call's input: ``{"command": str | [argv…]}`` or ``{"cmd": …}``
    (Claude `Bash`, Codex `shell`/`exec_command`, pi `bash`), or the raw text. Never raises."""
    if not tool_input:
        return None
    try:
        args = orjson.loads(tool_input)
    except orjson.JSONDecodeError:
        return tool_input
    if isinstance(args, dict):
        command = args.get("command", args.get("cmd"))
        if isinstance(command, list):
            return " ".join(str(part) for part in command)
        return command if isinstance(command, str) else None
    return tool_input if isinstance(args, str) else None


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def codex_dirs(tool_input: str | None, cwd: str | None) -> list[str]:
    """Working trees (absolute, normalised) of each `codex` command in a shell call: its
    ``-C/--cd`` directory, else a ``cd DIR &&`` before it, else the call's ``workdir``, else
    `cwd`. [] when the script runs no `codex` (or no directory is known)."""
    script = shell_command(tool_input)
    if not script:
        return []
    workdir = None
    try:
        args = orjson.loads(tool_input) if tool_input else None
        if isinstance(args, dict) and isinstance(args.get("workdir"), str):
            workdir = args["workdir"]
    except orjson.JSONDecodeError:
        pass
    base = workdir or cwd
    out: list[str] = []
    for m in rules.CODEX_COMMAND.finditer(script):
        flag = rules.CODEX_CD_FLAG.search(m["args"] or "")
        cd = None
        for c in rules.SHELL_CD.finditer(script[: m.start() + 1]):
            cd = c
        target = _unquote(flag["dir"]) if flag else (_unquote(cd["dir"]) if cd else None)
        if target and not target.startswith("/") and base:
            target = posixpath.join(base, target)
        target = target or base
        if target:
            out.append(posixpath.normpath(target).rstrip("/") or "/")
    return list(dict.fromkeys(out))
