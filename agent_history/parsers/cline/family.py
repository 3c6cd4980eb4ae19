"""What the readers of one Cline-family task folder share (pure): the task's identity and the
per-harness differences, and small value helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from agent_history.parsers.common.coerce import as_dict, as_list, as_str


@dataclass(frozen=True, slots=True)
class Task:
    """One task folder: the harness (`agent`), the task id (the folder's name, the session uid)
    and whether ``new_task`` starts a child task (Roo Code, Kilo Code) or hands over (Cline)."""

    agent: str
    sid: str
    subtasks: bool


def json_text(value: Any) -> str | None:
    """A tool input or structured value as text: a string as it is, anything else as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def block_text(content: Any) -> str | None:
    """The text of a ``tool_result`` block's ``content`` (a string, or text blocks), or None."""
    if isinstance(content, str):
        return content
    parts = [t for b in as_list(content) if (t := as_str(as_dict(b).get("text"))) is not None]
    if not parts:
        parts = [b for b in as_list(content) if isinstance(b, str)]
    return "\n".join(parts) if parts else None


def summary_text(value: Any) -> str | None:
    """The text of a reasoning ``summary`` (a string, a list of strings or ``{text}`` parts)."""
    if isinstance(value, str):
        return value or None
    parts = [s if isinstance(s, str) else as_str(as_dict(s).get("text")) or "" for s in as_list(value)]
    text = "\n".join(p for p in parts if p)
    return text or None
