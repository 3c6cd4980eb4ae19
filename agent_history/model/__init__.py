"""Pure row model: row dataclasses, natural keys, merge policies, message classes. No I/O.

The names below are re-exported lazily (PEP 562): importing `agent_history.model.classes` — as
every read command does — does not build the row dataclasses (start-up time, issue 18).
"""

from __future__ import annotations

import importlib

_EXPORTS: dict[str, str] = {
    "Merge": "policy",
    "merge_value": "policy",
    **{
        name: "rows"
        for name in (
            "ROW_TYPES",
            "CompactionRow",
            "FileTouchRow",
            "GitEventRow",
            "MessageRow",
            "ModelCallRow",
            "ParseIssueRow",
            "RecordTypeRow",
            "Row",
            "SessionRow",
            "SubagentSpawnRow",
            "ToolCallRow",
            "TurnRow",
        )
    },
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"agent_history.model.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
