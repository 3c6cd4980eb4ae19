"""What pi's row builders share: the per-entry context and the parser state they read.

`parser` builds an `EntryCtx` per JSONL entry and passes itself as a `PiState`; `tools` only
depends on this module, so neither imports the other's internals (no import cycle).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from agent_history.model.rows import MessageRow
from agent_history.parsers.base import Pos


class EntryCtx:
    """Per-entry facts shared by the row builders (key, id, timestamp, position)."""

    __slots__ = ("key", "eid", "ts", "pos", "raw_ts")

    def __init__(self, *, key: str, eid: str | None, ts: datetime | None, pos: Pos, raw_ts: str) -> None:
        self.key, self.eid, self.ts, self.pos, self.raw_ts = key, eid, ts, pos, raw_ts


class PiState(Protocol):
    """The parser state the tool-row builders read and update (implemented by `PiParser`)."""

    pending: dict[str, str | None]
    """Open tool calls: call id → tool name, carried across batches."""
    cwd: str | None
    entry_turn: str | None

    def _sid(self) -> str: ...

    def _message_row(
        self,
        ctx: EntryCtx,
        suffix: str,
        role: str,
        cls: str,
        text: str | None,
        *,
        model: str | None = None,
        attachments: list[dict] | None = None,
    ) -> MessageRow: ...
