"""File touches → FileTouchRow, shared by the harness parsers. Pure; never raises.

The ``(op, path)`` pairs come from `shell.touches_from_shell`, `shell.touches_from_patch` or a
harness's file tools (op in read | create | edit | delete | move). Rules applied here:

- A pair whose path is not a non-empty string is skipped.
- With a `cwd` (an absolute POSIX directory: pi's session cwd, a Codex call's working
  directory), a relative path is joined to it and normalised (`resolve_path`); absolute, ``~``
  and ``$`` paths are kept as written. Without one (Claude Code) every path is kept as written.
- Each row is keyed ``touch_uid(tool_call_uid, op, path)`` (`shell.touch_uid`) on the resolved
  path, so the same touch seen twice for one call merges into one row.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from datetime import datetime

from agent_history.model.rows import FileTouchRow
from agent_history.parsers.base import Pos
from agent_history.parsers.common.shell import touch_uid

__all__ = ["file_touch_rows", "resolve_path"]


def resolve_path(path: str, cwd: str | None) -> str:
    """`path` joined to the absolute POSIX directory `cwd` (normalised); unchanged when it is
    absolute, starts with ``~`` or ``$``, or `cwd` is not an absolute POSIX path."""
    if not cwd or not cwd.startswith("/") or path.startswith(("/", "~", "$")):
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def file_touch_rows(
    touches: Iterable[tuple[str, str]],
    *,
    agent: str,
    tool_call_uid: str,
    session_uid: str,
    agent_id: str,
    ts: datetime | None,
    pos: Pos,
    cwd: str | None = None,
) -> list[FileTouchRow]:
    """One FileTouchRow per ``(op, path)`` touch of one tool call, in the order given.

    `ts` and `pos` (byte offset, line number) are those of the record that names the touch;
    `cwd` resolves relative paths (module docstring). Returns ``[]`` when nothing is touched.
    """
    rows: list[FileTouchRow] = []
    for op, raw in touches:
        if not isinstance(raw, str) or not raw:
            continue
        path = resolve_path(raw, cwd)
        rows.append(
            FileTouchRow(
                agent=agent,
                touch_uid=touch_uid(tool_call_uid, op, path),
                session_uid=session_uid,
                agent_id=agent_id,
                tool_call_uid=tool_call_uid,
                path=path,
                op=op,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
    return rows
