"""Database sources (docs/design.md §7 "Source kinds"): a SQLite file the harness writes while it runs.

The file is opened **read-only** (``file:…?mode=ro``; never ``immutable=1``, which would let
SQLite skip locking on a file that is being written) with a busy timeout, and each batch is one
read transaction, so it sees a consistent snapshot while the harness writes (WAL mode readers
never block the writer). SQLITE_BUSY/locked after the timeout is retried a few times, then the
pass records a `load_error` for the file and goes on.

Tables are read in the parser's ``TABLES`` order by a saved cursor per table, the last
``(time_updated, id)`` read (`ah.source_file.db_cursor`), ``BATCH_ROWS`` rows at a time; each
batch's rows and the advanced cursor commit in **one** transaction (the JSONL offset rule), so a
crash neither loses nor double-counts a batch. A row updated later has a later ``time_updated``
and is read again; rows merge by natural key. A writer's transaction can commit a row stamped
slightly *before* rows already read: so each pass re-reads the last ``OVERLAP_MS`` before the
cursor and skips the ``(time, id)`` pairs already read there (kept in the cursor, bounded).

Unchanged file → skipped without opening: the signature is the size and mtime of the database
*and* its ``-wal`` file (in WAL mode new rows reach the main file only at a checkpoint).
A file that is not a SQLite database (or lacks the tables) gives a parse issue, not a traceback.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse

from agent_history.db.tables import parse_issues, source_files
from agent_history.ingest.discovery import FileRef
from agent_history.ingest.strategy import KnownFile, PassContext, SourceStrategy
from agent_history.ingest.writer import Part, prepare_staging, purge_source, write_parts
from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers import source_parser
from agent_history.parsers.base import DatabaseParser, DbTable, ParseContext, Pos
from agent_history.parsers.driver import database_rows

BATCH_ROWS = 5_000
OVERLAP_MS = 2_000
"""Re-read window before a table's cursor (ms of ``time_updated``), see module docstring."""
BUSY_TIMEOUT_S = 5.0
BUSY_RETRIES = 3


class DatabaseBusy(Exception):
    """The database stayed locked through every retry."""


def signature(path: str) -> tuple[int, int]:
    """(size, mtime_ns) of a database and its ``-wal`` file together: changes when either does."""
    st = os.stat(path)
    size, mtime = st.st_size, st.st_mtime_ns
    try:
        wal = os.stat(path + "-wal")
        size, mtime = size + wal.st_size, max(mtime, wal.st_mtime_ns)
    except FileNotFoundError:
        pass
    return size, mtime


def open_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection to the SQLite file `path` (rows as `sqlite3.Row`)."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    con.row_factory = sqlite3.Row
    return con


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _fetch(con: sqlite3.Connection, sql: str, args: tuple) -> list[dict]:
    """Run one read (its own snapshot), retrying SQLITE_BUSY; raises DatabaseBusy at the end."""
    for attempt in range(BUSY_RETRIES):
        try:
            return [dict(r) for r in con.execute(sql, args).fetchall()]
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            time.sleep(0.1 * (attempt + 1))
    raise DatabaseBusy(f"database stayed locked for {BUSY_RETRIES} × {BUSY_TIMEOUT_S:g} s")


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r["name"] for r in _fetch(con, "SELECT name FROM sqlite_master WHERE type = 'table'", ())}


class DatabaseStrategy(SourceStrategy):
    """SQLite database sources (see the module docstring): each batch of rows commits with its
    table cursors; nothing is held back between files."""

    KINDS = ("database",)

    def index(self, ctx: PassContext, ref: FileRef, st: os.stat_result, known: KnownFile) -> None:
        """Index new and updated rows of one database source. Raises psycopg errors, DatabaseBusy
        and parser failures for the loader to record."""
        index_database(ctx, ref, known)


def index_database(loader: PassContext, ref: FileRef, known: KnownFile) -> None:
    """Index new and updated rows of one database source (see the module docstring)."""
    size, mtime = signature(ref.path)
    if known.size == size and known.mtime_ns == mtime:
        return
    conn = loader.conn
    summary = loader.summary
    parser_cls: type[DatabaseParser] = source_parser(ref.source.agent, "database")
    loader.commit()
    loader.drain()
    saved, version = source_files.database_cursor(conn, known.id)
    cursor: dict = saved or {}
    if cursor and version != parser_cls.VERSION:  # re-read everything with the new parser
        with conn.transaction():
            purge_source(conn, known.id)
        cursor = {}
    parser = parser_cls(ParseContext(path=ref.path, namespace=ref.source.namespace, home=str(ref.source.home)))
    try:
        con = open_readonly(ref.path)
    except sqlite3.Error as exc:
        _bad_database(conn, known.id, f"cannot open: {exc}", summary)
        return
    try:
        try:
            present = _tables(con)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                raise
            _bad_database(conn, known.id, str(exc), summary)
            return
        # taken once the connection is open (opening may create an empty -wal/-shm): a write
        # after this point changes the next pass's signature, and rows it adds are read below
        # or then
        size, mtime = signature(ref.path)
        for table in parser_cls.TABLES:
            if table.name not in present:
                continue
            _read_table(loader, con, ref, known.id, parser, table, cursor, summary)
            if loader.stop.is_set():
                return  # signature not saved: the next pass goes on from the cursor
    finally:
        con.close()
    source_files.save_signature(conn, known.id, size, mtime)
    summary.changed(known.id)


def _read_table(loader: PassContext, con, ref, source_id, parser, table: DbTable, cursor: dict, summary) -> None:
    tcol, icol = table.cursor_columns
    tname, iname = tcol.split(".")[-1], icol.split(".")[-1]
    state = cursor.get(table.name) or {"t": None, "id": "", "recent": []}
    first = True
    while True:
        if state["t"] is None:
            sql = f"{table.query} 1 = 1 ORDER BY {tcol}, {icol} LIMIT ?"
            args: tuple = (BATCH_ROWS,)
            skip: set = set()
        else:
            since = (state["t"] - OVERLAP_MS, "") if first else (state["t"], state["id"])
            sql = f"{table.query} ({tcol}, {icol}) > (?, ?) ORDER BY {tcol}, {icol} LIMIT ?"
            args = (*since, BATCH_ROWS)
            skip = {tuple(x) for x in state["recent"]} if first else set()
        fetched = _fetch(con, sql, args)
        if not fetched:
            return
        rows: list[Row] = []
        for rec in fetched:
            t, rid = rec.get(tname), rec.get(iname)
            if (t, rid) in skip:
                continue
            pos = Pos(int(t) if isinstance(t, int) else 0, 0, int(rec.get("_rowid") or 0))
            rows.extend(database_rows(parser, table.name, rec, pos))
        last = fetched[-1]
        lt, lid = last.get(tname), last.get(iname)
        if not isinstance(lt, int) or not isinstance(lid, str):
            rows.append(ParseIssueRow("bad_record", 0, None, f"{table.name}: cursor columns are not (int, text)"))
            lt, lid = state["t"] or 0, state["id"]
        recent = [x for x in state["recent"] if x[0] >= lt - OVERLAP_MS] if state["t"] is not None else []
        recent += [
            [r.get(tname), r.get(iname)]
            for r in fetched
            if isinstance(r.get(tname), int) and r[tname] >= lt - OVERLAP_MS
        ]
        recent = [list(x) for x in dict.fromkeys(tuple(x) for x in recent)]
        state = {"t": lt, "id": lid, "recent": recent}
        cursor[table.name] = state
        _write(loader, ref, source_id, rows, cursor, summary, sum(len(str(r)) for r in fetched))
        first = False
        if len(fetched) < BATCH_ROWS or loader.stop.is_set():
            return


def _write(
    loader: PassContext, ref: FileRef, source_id: int, rows: list[Row], cursor: dict, summary, nbytes: int
) -> None:
    """One batch: rows + the advanced cursor in one transaction."""
    conn = loader.conn
    prepare_staging(conn)
    with conn.transaction():
        written = write_parts(conn, [Part(source_id, ref.source.namespace, rows)], **loader.redact_kw)
        source_files.save_database_cursor(conn, source_id, cursor, _version(ref))
        parse_issues.clear_load_error(conn, source_id)
    summary.add_written(written.new, written.merged, written.issues)
    summary.changed(source_id)
    summary.bytes_read += nbytes
    for row in rows:
        if isinstance(row, ParseIssueRow):
            summary.issues[row.kind] += 1
    if loader.progress:
        loader.progress(ref.path, nbytes, 0)


def _version(ref: FileRef) -> int:
    return source_parser(ref.source.agent, "database").VERSION


def _bad_database(conn, source_id: int, detail: str, summary) -> None:
    with conn.transaction():
        parse_issues.record_bad_database(conn, source_id, detail)
        source_files.mark_database_read(conn, source_id)
    summary.issues["bad_database"] += 1
    summary.changed(source_id)


def read_all(path: str, parser: DatabaseParser) -> list[Row]:
    """Every row of a database source in one read (`agent-history parse`; no cursor, no catalogue).
    A file that is not a SQLite database gives one `bad_database` issue."""
    rows: list[Row] = []
    try:
        con = open_readonly(path)
        try:
            present = _tables(con)
            for table in type(parser).TABLES:
                if table.name not in present:
                    continue
                tcol, icol = table.cursor_columns
                for rec in _fetch(con, f"{table.query} 1 = 1 ORDER BY {tcol}, {icol}", ()):
                    t = rec.get(tcol.split(".")[-1])
                    pos = Pos(int(t) if isinstance(t, int) else 0, 0, int(rec.get("_rowid") or 0))
                    rows.extend(database_rows(parser, table.name, rec, pos))
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        rows.append(ParseIssueRow("bad_database", 0, None, str(exc)[:300]))
    return rows
