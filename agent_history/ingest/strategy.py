"""The loader's source strategies: one public interface for every kind of source (issue 27 item 3).

A pass (`ingest.loader.Loader`) walks the discovered files and hands each to the strategy of its
kind (`FileRef.kind`): appended files read by byte offset (JSONL, Markdown: the loader's own
batches, `ingest.chunks`), whole documents (`ingest.documents.DocumentStrategy`) and SQLite
databases (`ingest.databases.DatabaseStrategy`). A strategy sees the pass only through
`PassContext` — the connection, the stop event, the summary, and the three operations it may
need: `commit` (hand the open batch to the writer), `drain` (wait until every handed-over batch
is written) and `record_load_error` — and keeps its own per-pass state (documents waiting for
their batch, caches) on itself, reset by `begin_pass`. So no strategy imports the loader and the
loader imports the strategies, never the reverse.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import psycopg

from agent_history.ingest.discovery import FileRef


@dataclass
class PassSummary:
    """What one pass did. Units: bytes, seconds."""

    files_scanned: int = 0
    files_changed: int = 0
    files_failed: int = 0
    bytes_read: int = 0
    rows: Counter = field(default_factory=Counter)
    """Rows written per table: new + merged (a re-observed row that changes nothing is not)."""
    rows_new: Counter = field(default_factory=Counter)
    """Rows inserted per table."""
    rows_merged: Counter = field(default_factory=Counter)
    """Existing rows changed by their merge policy per table (e.g. a larger token count)."""
    issues: Counter = field(default_factory=Counter)
    load_errors: list[str] = field(default_factory=list)
    """One line per file that failed to load: path, byte offset, error (as recorded)."""
    sessions_rolled_up: int = 0
    skipped_homes: list[str] = field(default_factory=list)
    skipped_paths: list[str] = field(default_factory=list)
    """Files and directories passed over: symlinks, unreadable directories, undecodable names."""
    files_missing: int = 0
    """Catalogued files of this pass's namespaces found gone from disk by it (status set to
    'missing'; their sessions are kept)."""
    files_returned: int = 0
    """Files marked 'missing' by an earlier pass and found again by this one."""
    sessions_elsewhere: dict[str, dict[str, int]] = field(default_factory=dict)
    """``{namespace: {namespace that stored them first: sessions}}``: sessions this pass's changed
    files hold that another namespace had stored (a synced home; `db.tables.shared_sessions`): their
    rows merged there, so this namespace counts none of them."""
    interrupted: bool = False
    bulk: str | None = None
    """The bulk path (`ingest.bulk`): None = not taken, "done" = ended by this pass,
    "unfinished" = left for the next pass (stopped or failed before its end)."""
    wal_settled: bool = False
    """The pass ended with the checkpoint that deletes its WAL segments (`db.embedded.settle_wal`,
    the last step of a bulk pass's end on an embedded server whose settings it widened): the
    caller need not ask for another checkpoint."""
    batches: int = 0
    """Batch transactions committed (JSONL and Markdown files)."""
    vectors_fallback: list[str] = field(default_factory=list)
    """A bulk pass's batches whose search vectors the merge computed because the analysis
    connection failed (`ingest.vectors_stage`), one line each: why. Nothing is lost either way."""
    seconds: float = 0.0
    changed_ids: set[int] = field(default_factory=set, repr=False)
    """The ``source_file`` ids behind `files_changed`."""

    def changed(self, source_id: int) -> None:
        """Count a file as changed once something of it is committed (rows and offset, a
        cursor, a new signature): a file begun but not committed when a pass stops is not."""
        self.changed_ids.add(source_id)
        self.files_changed = len(self.changed_ids)

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "files_scanned": self.files_scanned,
            "files_changed": self.files_changed,
            "files_failed": self.files_failed,
            "bytes_read": self.bytes_read,
            "rows": {k: v for k, v in self.rows.items() if v},
            "rows_new": {k: v for k, v in self.rows_new.items() if v},
            "rows_merged": {k: v for k, v in self.rows_merged.items() if v},
            "issues": dict(self.issues),
            "load_errors": self.load_errors[:100],
            "sessions_rolled_up": self.sessions_rolled_up,
            "skipped_homes": self.skipped_homes,
            "skipped_paths": self.skipped_paths[:100],
            "files_missing": self.files_missing,
            "files_returned": self.files_returned,
            "sessions_elsewhere": self.sessions_elsewhere,
            "interrupted": self.interrupted,
            "bulk": self.bulk,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
        } | ({"vectors_fallback": self.vectors_fallback[:100]} if self.vectors_fallback else {})

    def add_issues(self, kinds: Counter) -> None:
        """Count parse issues recorded outside a write (the post-pass's ``rows_shared``,
        ``postpass_error``; per kind) as this pass's issues and new ``parse_issue`` rows."""
        self.add_written(Counter(parse_issue=sum(kinds.values())), Counter(), kinds)

    def add_written(self, new: Counter, merged: Counter, issues: Counter | None = None) -> None:
        """Count the rows one write inserted (`new`) and merged (`merged`), per table, and the
        parse issues it recorded itself (`issues`, per kind: `uid_conflict`)."""
        if issues:
            self.issues.update(issues)
        self.rows_new.update(new)
        self.rows_merged.update(merged)
        self.rows.update(new)
        self.rows.update(merged)


@dataclass
class KnownFile:
    """What ``ah.source_file`` says of a file at the start of a pass (sizes in bytes)."""

    id: int
    size: int | None
    mtime_ns: int | None
    offset: int
    line_count: int
    head: str | None
    checkpoint: str | None
    parser_version: int | None
    status: str


class PassContext(Protocol):
    """What a strategy may use of the running pass (the loader implements it)."""

    conn: psycopg.Connection
    """The pass's owner connection (autocommit; a strategy opens its own transactions)."""
    stop: threading.Event
    """Set by a stop signal: end at the next checkpoint."""
    progress: Callable[[str, int, int], None] | None
    """``progress(path, bytes, files done)`` after each write, if set."""
    redact_kw: dict
    """`writer.write_parts` keywords (``redact`` when ``[index] redact`` is on)."""

    @property
    def summary(self) -> PassSummary:
        """The pass's running summary."""
        ...

    def commit(self) -> None:
        """Hand the open batch (every strategy's pending rows) to the writer."""
        ...

    def drain(self) -> None:
        """Wait until every handed-over batch is written; re-raise the writer's failure."""
        ...

    def record_load_error(
        self, ref: FileRef, source_id: int, exc: BaseException | None, conn: psycopg.Connection | None = None
    ) -> None:
        """Record a failed file (status 'error', a `load_error` issue with its SQLSTATE); skip it."""
        ...


class SourceStrategy:
    """How one kind of source is read and written. Subclasses set `KINDS` and `index`."""

    KINDS: ClassVar[tuple[str, ...]] = ()
    """The `FileRef.kind` values this strategy reads."""

    def begin_pass(self) -> None:
        """Forget per-pass state (called when a pass starts)."""

    def index(self, ctx: PassContext, ref: FileRef, st: os.stat_result, known: KnownFile) -> None:
        """Index what is new in `ref` (`st`: its stat at discovery). Raises what the loader records
        as the file's `load_error` (psycopg errors, OSError, parser failures); a lost connection
        propagates."""
        raise NotImplementedError

    def flush(self, ctx: PassContext) -> None:
        """Write the rows this strategy holds back for a shared transaction (called by `commit`)."""

    def discard(self) -> None:
        """Drop the rows held back (a stop signal: the next pass reads them again)."""
