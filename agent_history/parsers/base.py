"""The parser contract (docs/design.md §6) shared by every harness module.

A parser is constructed per source file as ``Parser(ctx, state)``; the loader (or `parse` CLI)
feeds it decoded JSON records in file order with ``feed(record, pos)``, calls ``flush()`` at the
end of every pass over the file, and saves ``state()`` beside the file's offset. A parser never
opens a file or a connection.

Batch independence: feeding a file whole, in batches of any size, or resuming from a saved
``state()`` at any record boundary must yield rows that fold (`model.merge.fold`) to the same
result. So ``flush()`` may only emit rows that are safe to emit again later (a re-observation
merges by policy), and ``state()`` must carry everything later records need (bounded size: keep
ids and small scalars, never message text or whole records).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, ClassVar

from agent_history.model.rows import MessageRow, RecordTypeRow, Row


@dataclass(frozen=True, slots=True)
class Pos:
    """Where a record sits in its file: byte offset (0-based), length in bytes, line (1-based)."""

    byte_offset: int
    length: int
    line_number: int


@dataclass(frozen=True, slots=True)
class ParseContext:
    """What a parser knows about its file besides the records.

    ``path`` is the file's path as discovered (absolute, or as given to `parse`); ``namespace``
    e.g. `claude-local`; ``home`` the agent home the file was found under (None for `parse`);
    ``sidecar`` the decoded metadata file the harness writes beside a transcript, read by the
    caller (Claude Code's ``agent-<id>.meta.json``: ``{"agentType": …}``), or None.
    """

    path: str
    namespace: str = ""
    home: str | None = None
    sidecar: dict | None = None


class Parser:
    """Base class for one harness's parser. Subclasses set AGENT and VERSION."""

    AGENT: ClassVar[str]
    """Harness name: claude | codex | pi."""
    VERSION: ClassVar[int]
    """Bump when output for the same input changes; the loader records `parser_upgraded`."""
    RAW_LINES: ClassVar[bool] = False
    """True for an append-only *text* format (Aider's Markdown, source kind ``markdown``):
    ``feed`` gets each complete line's bytes (without ``\\n``/``\\r\\n``) instead of decoded JSON;
    offsets, torn tails, batches and resumption are those of JSONL."""

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        self.ctx = ctx

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Turn one decoded JSON value into rows (any value: non-objects become parse issues)."""
        raise NotImplementedError

    def flush(self) -> Iterable[Row]:
        """Emit rows held back for pairing; called at the end of each pass over the file."""
        return ()

    def state(self) -> dict:
        """JSON-serialisable, bounded state to resume after the last fed record."""
        return {}


_KEY_SETS: dict[tuple, str] = {}
"""Top keys of a record, in its order → its key set (``k1,k2,…`` sorted). Records of one kind
repeat their keys in the same order, so each key tuple is sorted once; only all-``str`` tuples are
kept (``1 == True`` must not share an entry); at most `_KEY_SETS_MAX` entries (a new dict takes
the place of a full one)."""
_KEY_SETS_MAX = 4096


def record_type_row(agent: str, record: dict, record_type: str, subtype: str | None, known: bool) -> RecordTypeRow:
    """The `record_type_seen` observation for one record (count 1, key set = sorted top keys)."""
    global _KEY_SETS
    keys = tuple(record)
    key_set = _KEY_SETS.get(keys)
    if key_set is None:
        key_set = ",".join(sorted(str(k) for k in keys))
        if all(type(k) is str for k in keys):
            if len(_KEY_SETS) >= _KEY_SETS_MAX:
                _KEY_SETS = {}
            _KEY_SETS[keys] = key_set
    return RecordTypeRow(
        agent=agent,
        record_type=record_type,
        subtype=subtype or "",
        key_set=key_set,
        known=known,
        count=1,
    )


def stamp_messages(rows: list, record_type: str | None, record_origin: str | None, byte_offset: int) -> list:
    """`rows` with every MessageRow of the record at `byte_offset` stamped with that record's raw
    type and origin (in place; returns `rows`). Rows about other records (e.g. pi active-branch
    corrections) are left alone. A parser calls it once per record, on that record's rows."""
    for i, row in enumerate(rows):
        if type(row) is MessageRow and row.record_type is None and row.byte_offset == byte_offset:
            values = list(_MESSAGE_VALUES(row))  # = replace(row, record_type=…, record_origin=…)
            values[_RECORD_TYPE_AT] = record_type
            values[_RECORD_ORIGIN_AT] = record_origin
            rows[i] = MessageRow(*values)
    return rows


_MESSAGE_FIELDS = tuple(f.name for f in fields(MessageRow))
_MESSAGE_VALUES = attrgetter(*_MESSAGE_FIELDS)
"""A MessageRow's field values in constructor order (no field is keyword-only or left out of
``__init__``, and there is no ``__post_init__``: building from them is `dataclasses.replace`
without its per-call field walk)."""
_RECORD_TYPE_AT = _MESSAGE_FIELDS.index("record_type")
_RECORD_ORIGIN_AT = _MESSAGE_FIELDS.index("record_origin")


class DocumentParser:
    """Base class for a parser of *whole-document* sources (docs/design.md §7 source kinds): a JSON file
    the harness rewrites in place (Gemini ≤ 0.39 session JSON, OpenCode storage JSON, VS Code
    `chatSessions/*.json`, claude.ai `conversations.json`) or a Markdown memory file.

    Constructed per source as ``DocumentParser(ctx)``; the loader reads the whole document when
    its size, mtime or content hash changed and calls ``parse(data)`` once with all its bytes.
    The rows returned are the document's *complete* current content: the loader merges them by
    natural key (an unchanged item changes nothing) and purges rows of the previous version that
    are not returned. Pure: never opens a file or a connection; bad input becomes
    `ParseIssueRow`s, never an exception. Rows carry a `Pos` whose ``byte_offset`` is the item's
    ordinal in document order (0-based), ``line_number`` = ordinal + 1 and ``length`` 0, so
    "file order" sorts work as for JSONL.
    """

    AGENT: ClassVar[str]
    """Harness name (gemini | opencode | copilot-vscode | claude-ai | …)."""
    VERSION: ClassVar[int]
    """Bump when output for the same input changes."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx

    def parse(self, data: bytes) -> Iterable[Row]:
        """Every row of the document `data` (its raw bytes, any encoding the format uses)."""
        raise NotImplementedError

    def session_versions(self) -> dict[str, str] | None:
        """Optional, after `parse`: session uid → the version stamp the document gives it (e.g.
        a claude.ai conversation's ``updated_at``). The loader then writes only the sessions
        whose stamp changed since the last read (the others' rows are kept, not purged).
        None (the default): every row is merged each time."""
        return None


@dataclass(frozen=True, slots=True)
class DbTable:
    """One table a `DatabaseParser` reads incrementally: ``query`` selects its rows as named
    columns and ends in ``WHERE``; the loader appends the cursor condition on ``cursor_columns``
    (qualified as the query needs, e.g. ``("p.time_updated", "p.id")``: an update time in ms and
    a unique id; the selected columns carry the unqualified names) and the ordering."""

    name: str
    query: str
    cursor_columns: tuple[str, str] = ("time_updated", "id")


class DatabaseParser:
    """Base class for a parser of *database* sources (docs/design.md §7 source kinds): a SQLite file the
    harness writes while it runs (OpenCode ``opencode.db``, Cursor ``state.vscdb``).

    The loader opens the database read-only and, per table of ``TABLES`` in order, reads rows
    whose cursor columns are past the saved cursor, in cursor order, in batches; it calls
    ``rows(table, record, pos)`` for each (``record`` = column name → value) and saves the cursor
    with the batch's rows in one transaction. Rows must not depend on batch boundaries (a row
    updated later is read again and merges by natural key). Pure: never opens anything; bad
    values become `ParseIssueRow`s. ``pos``: ``byte_offset`` = the row's cursor time (or rowid),
    ``line_number`` = its rowid, ``length`` 0.
    """

    AGENT: ClassVar[str]
    VERSION: ClassVar[int]
    TABLES: ClassVar[tuple[DbTable, ...]]

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx

    def rows(self, table: str, record: dict, pos: Pos) -> Iterable[Row]:
        """Rows of one database row of `table`."""
        raise NotImplementedError
