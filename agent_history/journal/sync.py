"""One journal-sync pass: read the export view, validate every row, write in one transaction.

Rules (issue 15): rows join ``ah.session`` by natural key (linked later when the session is not
indexed yet); a summary is replaced only by a newer ``analysed_at``; topics are replaced per
conversation; an incremental pass reads rows analysed at or after the cursor in ``ah.meta``; a
full pass (the first, then daily, or on request) also prunes conversations the journal no
longer holds; a changed ``app_instance_id`` wipes the journal rows and resyncs in full; more
than one instance id in the view refuses. Every pass is recorded in ``ah.journal_sync_run``.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

import psycopg

from agent_history.db.tables import journal
from agent_history.journal.rows import TEXT_COLUMNS, BatchRefused, Summary, validate
from agent_history.journal.source import SourceSkipped, describe, read_export

#: Advisory lock of a journal-sync pass (index and embed use their own keys).
JOURNAL_LOCK = 0x6A6F75726E616C  # "journal"

#: A full pass (which prunes deleted conversations) runs at least this often (issue 15: daily).
FULL_PASS_EVERY = timedelta(days=1)

#: ah.meta keys.
META_CURSOR = "journal_sync:cursor"  # max analysed_at synced (ISO-8601, UTC)
META_INSTANCE = "journal_sync:app_instance_id"  # the journal instance the rows came from
META_LAST_FULL = "journal_sync:last_full_at"  # end of the last full pass (ISO-8601, UTC)


@dataclass
class SyncResult:
    """The outcome of a pass. ``status``: ok | skipped | refused | failed; ``reason`` a short
    word when not ok (``source_not_configured``, ``source_missing``, ``source_unreadable``,
    ``view_missing``, ``column_missing``, ``instance_ids``, ``bad_timestamp``, ``missing_value``,
    ``bad_topics``, ``duplicate_conversation``, ``another_pass``, ``database_error``)."""

    status: str
    source: str
    reason: str | None = None
    message: str | None = None
    full_pass: bool = False
    rows_read: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    pruned: int = 0
    wiped: int = 0
    topics: int = 0
    linked: int = 0
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        """Summaries inserted, updated, pruned or wiped."""
        return self.inserted + self.updated + self.pruned + self.wiped

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self) | {"rows_written": self.rows_written}


def _ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


_STAGE_COLUMNS = (
    "journal_conversation_id",
    "agent",
    "session_uid",
    "agent_id",
    "analysed_at",
    "app_instance_id",
    *TEXT_COLUMNS,
)


def _write(conn: psycopg.Connection, summaries: list[Summary], *, full: bool, wipe: bool, result: SyncResult) -> None:
    """Inside the pass transaction: wipe, stage, upsert newer, replace topics, prune, link."""
    if wipe:
        result.wiped = journal.wipe_summaries(conn)
    staged = (
        (
            s.conversation_id,
            s.agent,
            s.session_uid,
            s.agent_id,
            s.analysed_at.isoformat(),
            s.app_instance_id,
            *(s.text[c] for c in TEXT_COLUMNS),
            json.dumps(list(s.topics)),
        )
        for s in summaries
    )
    journal.stage(conn, _STAGE_COLUMNS, staged)
    changed = journal.upsert_staged(conn, _STAGE_COLUMNS, TEXT_COLUMNS)
    result.inserted = sum(1 for r in changed if r[2])
    result.updated = len(changed) - result.inserted
    result.unchanged = len(summaries) - len(changed)
    ids = [r[0] for r in changed]
    result.topics = journal.replace_topics(conn, ids)
    if full:
        result.pruned = journal.prune_unstaged(conn)
    result.linked = journal.link_summaries(conn)


def _run(conn: psycopg.Connection, source: str, full: bool, now: datetime, result: SyncResult) -> None:
    meta = journal.sync_meta(conn)
    cursor = _ts(meta.get(META_CURSOR))
    last_full = _ts(meta.get(META_LAST_FULL))
    full = full or cursor is None or last_full is None or now - last_full >= FULL_PASS_EVERY
    try:
        export = read_export(source, since=None if full else cursor)
        ids = export.instance_ids
        if len(ids) > 1:
            shown = ", ".join("NULL" if i is None else repr(i) for i in ids[:5])
            raise BatchRefused(
                "instance_ids", f"the journal holds {len(ids)} app_instance_id values ({shown}); refusing"
            )
        wipe = bool(ids) and ids[0] is not None and META_INSTANCE in meta and meta[META_INSTANCE] != ids[0]
        if wipe and not full:  # a different journal: resync everything it holds
            full = True
            export = read_export(source, since=None)
        summaries = validate(export.rows, export.names)
    except (SourceSkipped, BatchRefused) as exc:
        result.status = "refused" if isinstance(exc, BatchRefused) else "skipped"
        result.reason, result.message = exc.reason, str(exc)
        return
    result.full_pass = full
    result.rows_read = len(export.rows)
    if not full and cursor is not None:  # text timestamps are not filtered by the source
        summaries = [s for s in summaries if s.analysed_at >= cursor]
    with conn.transaction():
        if not conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (JOURNAL_LOCK,)).fetchone()[0]:
            result.status, result.reason = "skipped", "another_pass"
            result.message = "another journal-sync pass is running"
            return
        _write(conn, summaries, full=full, wipe=wipe, result=result)
        newest = max((s.analysed_at for s in summaries), default=None)
        if newest is not None and (cursor is None or newest > cursor or wipe):
            journal.set_meta(conn, META_CURSOR, newest.isoformat())
        if ids and ids[0] is not None:
            journal.set_meta(conn, META_INSTANCE, ids[0])
        if full:
            journal.set_meta(conn, META_LAST_FULL, now.isoformat())
    result.status = "ok"


def sync_journal(
    conn: psycopg.Connection, source: str | None, *, full: bool = False, now: datetime | None = None
) -> SyncResult:
    """Run one pass from ``source`` (a SQLite path or PostgreSQL DSN; None: not configured) into
    the catalogue behind ``conn`` (an autocommit connection of the owner/writer role).

    ``full`` forces a full pass (also taken on the first pass and when the last one is older than
    FULL_PASS_EVERY from ``now``, default the current time). Never raises for source problems or
    invalid rows: they come back as a ``skipped``/``refused`` SyncResult. A lost database
    connection (psycopg.OperationalError) propagates; other database errors are ``failed``.
    The pass is recorded in ``ah.journal_sync_run``.
    """
    now = now or datetime.now(UTC)
    started = time.monotonic()
    result = SyncResult(status="failed", source=describe(source) if source else "")
    run_id = journal.start_run(conn)
    try:
        if not source:
            result.status, result.reason = "skipped", "source_not_configured"
            result.message = "no journal source: pass --source or set [journal] source in the config file"
        else:
            try:
                _run(conn, source, full, now, result)
            except psycopg.OperationalError:
                raise
            except psycopg.Error as exc:
                result.status, result.reason = "failed", "database_error"
                result.message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return result
    finally:
        result.seconds = time.monotonic() - started
        try:
            journal.finish_run(
                conn,
                run_id,
                status=result.status,
                full_pass=result.full_pass,
                skip_reason=result.reason,
                rows_read=result.rows_read,
                rows_written=result.rows_written,
                summary=result.as_dict(),
            )
        except psycopg.Error:
            pass  # connection lost: the run row stays 'running' without finished_at
