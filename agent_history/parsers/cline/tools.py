"""Tool calls of the Cline family (pure): what a call touches, and how its result text reads.

File touches, at the call, from its input (rules as data, `FILE_TOOLS`): ``read_file`` → read
(Roo/Kilo may name several files: ``files[].path``, or ``<file><path>`` inside ``args``);
``write_to_file`` → create (it creates or overwrites; the input does not say which — Claude Code's
Write rule); ``replace_in_file``, ``apply_diff``, ``insert_content``, ``search_and_replace``,
``edit_file`` → edit; ``new_rule`` → create; ``apply_patch`` → `shell.touches_from_patch`;
``execute_command`` → `shell.touches_from_shell` on ``command``, and its output is searched for
git commits and pushes (`gitout`). Relative paths are joined to the task's working directory
when it is known.

Outcome of a result written as text (cline/cline ``src/core/prompts/responses.ts``): "The user
denied this operation" → ``rejected`` (error class ``denied``); "The tool execution failed
with the following error" or an ``<error>`` block → ``error``; a call the harness skipped
("Tool [x] was not executed because …") → ``error``; anything else → ``ok``. A ``tool_result``
block (Roo, Kilo: native tool calling) says ``is_error`` itself.
"""

from __future__ import annotations

import re
from typing import Any

from agent_history.parsers.common.coerce import as_dict, as_list, as_nonempty_str
from agent_history.parsers.common.shell import touches_from_patch, touches_from_shell

FILE_TOOLS: dict[str, str] = {
    "read_file": "read",
    "write_to_file": "create",
    "new_rule": "create",
    "replace_in_file": "edit",
    "apply_diff": "edit",
    "insert_content": "edit",
    "search_and_replace": "edit",
    "edit_file": "edit",
}
"""Tool name → the op on the file(s) its input names."""
SHELL_TOOLS: frozenset[str] = frozenset({"execute_command"})
PATCH_TOOLS: frozenset[str] = frozenset({"apply_patch"})
SUBTASK_TOOL = "new_task"
"""Roo Code / Kilo Code start a sub-task (a child task folder) with it; Cline's ``new_task``
hands over to a fresh task instead (no parent link is written), so it is a plain call there."""

_ARGS_PATH = re.compile(r"<path>\s*(?P<p>[^<]+?)\s*</path>")
_DENIED = re.compile(r"The user denied this operation|denied this operation")
_FAILED = re.compile(r"^\s*(The tool execution failed with the following error|<error>)")


def paths_of(inp: dict) -> list[str]:
    """The file paths a file tool's input names (``path`` — Cline 3.5x: ``absolutePath`` —, ``files[].path``, ``args`` XML)."""
    out: list[str] = []
    path = (
        as_nonempty_str(inp.get("path"))
        or as_nonempty_str(inp.get("absolutePath"))
        or as_nonempty_str(inp.get("file_path"))
    )
    if path:
        out.append(path)
    for f in as_list(inp.get("files")):
        p = as_nonempty_str(as_dict(f).get("path"))
        if p:
            out.append(p)
    args = inp.get("args")
    if isinstance(args, str):
        out.extend(m["p"] for m in _ARGS_PATH.finditer(args))
    return out


def touches(name: str | None, inp: Any) -> list[tuple[str, str]]:
    """``[(op, path)]`` the call `name` with input `inp` touches (module docstring)."""
    args = as_dict(inp)
    if name in FILE_TOOLS:
        return [(FILE_TOOLS[name], p) for p in paths_of(args)]
    if name in SHELL_TOOLS:
        return touches_from_shell(as_nonempty_str(args.get("command")) or "")
    if name in PATCH_TOOLS:
        return touches_from_patch(as_nonempty_str(args.get("input")) or as_nonempty_str(args.get("patch")) or "")
    return []


def text_outcome(output: str, skipped: bool) -> tuple[str, bool, bool]:
    """(outcome, is_error, rejected) of a result written as text (module docstring)."""
    if _DENIED.search(output[:2000]):
        return "rejected", True, True
    if skipped or _FAILED.match(output):
        return "error", True, False
    return "ok", False, False
