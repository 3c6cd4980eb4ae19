"""Which row fields are free text a secret can hide in, and rewriting them (pure, ``[index] redact``).

`FREE_TEXT` declares, per row type, the fields written by a person or a model (prompts, replies,
tool input and output, briefs, titles, commit subjects) — not identifiers, paths, names or
numbers. `redact_rows` returns the rows with those fields passed through a redaction function
(the loader gives `embed.redact.redact`); keys are untouched, so a row redacted on one pass merges
with the same row on the next. Rows of other types pass through as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from agent_history.model.rows import (
    GitEventRow,
    MessageRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
)

FREE_TEXT: dict[type[Row], tuple[str, ...]] = {
    SessionRow: ("custom_title", "ai_title", "first_prompt"),
    MessageRow: ("text",),
    ToolCallRow: ("input", "output", "error_excerpt"),
    SubagentSpawnRow: ("description", "brief"),
    GitEventRow: ("subject",),
}
"""Row type → its free-text fields (the fields `[index] redact` rewrites)."""


def redact_rows(rows: Iterable[Row], redact: Callable[[str], str]) -> list[Row]:
    """`rows` with every `FREE_TEXT` field passed through `redact` (a row whose fields come out
    unchanged is the same object)."""
    out: list[Row] = []
    for row in rows:
        names = FREE_TEXT.get(type(row))
        if names:
            changes = {}
            for name in names:
                value = getattr(row, name)
                if isinstance(value, str) and value:
                    new = redact(value)
                    if new != value:
                        changes[name] = new
            if changes:
                row = dataclasses.replace(row, **changes)
        out.append(row)
    return out
