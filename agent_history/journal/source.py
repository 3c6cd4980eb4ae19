"""Read the journal's export view from a SQLite file or a PostgreSQL database, read-only.

SQLite is opened with ``mode=ro`` and ``PRAGMA query_only``; PostgreSQL in a read-only
transaction. A missing file, an unreadable database, a missing view or missing columns raise
:class:`SourceSkipped` with a short reason; nothing here writes anywhere.
"""

from __future__ import annotations

import errno
import sqlite3
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from agent_history.journal.rows import COLUMNS, VIEW

#: PostgreSQL type OID of timestamptz (pg_type.dat): the cursor filter is pushed into the query.
TIMESTAMPTZ_OID = 1184

#: Prefixes that make a source a PostgreSQL connection string rather than a path (libpq URIs).
DSN_PREFIXES: tuple[str, ...] = ("postgresql://", "postgres://")


class SourceSkipped(Exception):
    """The source cannot be read. ``reason``: ``source_missing`` | ``source_unreadable`` |
    ``view_missing`` | ``column_missing``; ``str(exc)`` is one line for people."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class Export:
    """What one read of the view returned: ``names`` (column order of ``rows``), the rows
    analysed at or after ``since`` (all when None), the distinct ``app_instance_id`` values of
    the whole view, and its total row count."""

    kind: str  # sqlite | postgresql
    names: tuple[str, ...]
    rows: list[Sequence[Any]] = field(default_factory=list)
    instance_ids: list[str | None] = field(default_factory=list)
    total: int = 0


def is_dsn(source: str) -> bool:
    """True when ``source`` is a PostgreSQL URI or key=value connection string, not a path."""
    s = source.strip()
    return s.startswith(DSN_PREFIXES) or ("=" in s and any(k in s for k in ("dbname=", "host=", "service=")))


def describe(source: str) -> str:
    """The source for messages and status: a path as it is, a DSN without its password."""
    if not is_dsn(source):
        return source
    try:
        info = psycopg.conninfo.conninfo_to_dict(source)
    except psycopg.ProgrammingError:
        return "postgresql (unparsable DSN)"
    info.pop("password", None)
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{info.get('host', 'localhost')}/{info.get('dbname', '')}"


def _missing(names: Sequence[str]) -> None:
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise SourceSkipped("column_missing", f"view {VIEW} lacks column(s): {', '.join(missing)}")


_SELECT = ", ".join(COLUMNS)


def _not_a_file(path: Path) -> str:
    """What `path`, which is not a regular file, is instead: "does not exist", "is a directory",
    "is a symlink loop" or "is not a regular file" (a FIFO, a device)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return "is a symlink loop" if exc.errno == errno.ELOOP else "does not exist"
    return "is a directory" if stat.S_ISDIR(mode) else "is not a regular file"


def _read_sqlite(path: Path, since: datetime | None) -> Export:
    if not path.is_file():
        raise SourceSkipped("source_missing", f"journal file {path} {_not_a_file(path)}")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SourceSkipped("source_unreadable", f"cannot open journal {path}: {exc}") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('view', 'table')", (VIEW,)
        ).fetchone()
        if found is None:
            raise SourceSkipped("view_missing", f"journal {path} has no view {VIEW}")
        names = tuple(d[0] for d in conn.execute(f"SELECT * FROM {VIEW} LIMIT 0").description)
        _missing(names)
        ids = [r[0] for r in conn.execute(f"SELECT DISTINCT app_instance_id FROM {VIEW} ORDER BY 1")]
        total = conn.execute(f"SELECT count(*) FROM {VIEW}").fetchone()[0]
        if since is None:
            rows = conn.execute(f"SELECT {_SELECT} FROM {VIEW}").fetchall()
        else:
            # julianday() is NULL for text it cannot read: such rows still come through, so the
            # validator refuses them instead of the filter dropping them silently.
            rows = conn.execute(
                f"SELECT {_SELECT} FROM {VIEW} "
                "WHERE julianday(analysed_at) IS NULL OR julianday(analysed_at) >= julianday(?)",
                (since.isoformat(),),
            ).fetchall()
    except sqlite3.Error as exc:
        raise SourceSkipped("source_unreadable", f"cannot read journal {path}: {exc}") from None
    finally:
        conn.close()
    return Export("sqlite", COLUMNS, rows, ids, total)


def _read_postgres(dsn: str, since: datetime | None) -> Export:
    try:
        conn = psycopg.connect(dsn, connect_timeout=10)
    except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SourceSkipped("source_unreadable", f"cannot connect to journal {describe(dsn)}: {first}") from None
    try:
        conn.read_only = True
        with conn.transaction():
            if conn.execute("SELECT to_regclass(%s)", (VIEW,)).fetchone()[0] is None:
                raise SourceSkipped("view_missing", f"journal {describe(dsn)} has no view {VIEW}")
            cur = conn.execute(f"SELECT * FROM {VIEW} LIMIT 0")
            types = {d.name: d.type_code for d in cur.description}
            _missing(tuple(types))
            ids = [r[0] for r in conn.execute(f"SELECT DISTINCT app_instance_id::text FROM {VIEW} ORDER BY 1")]
            total = conn.execute(f"SELECT count(*) FROM {VIEW}").fetchone()[0]
            if since is not None and types["analysed_at"] == TIMESTAMPTZ_OID:
                rows = conn.execute(f"SELECT {_SELECT} FROM {VIEW} WHERE analysed_at >= %s", (since,)).fetchall()
            else:  # text timestamps: filtered after validation (sync.py)
                rows = conn.execute(f"SELECT {_SELECT} FROM {VIEW}").fetchall()
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SourceSkipped("source_unreadable", f"cannot read journal {describe(dsn)}: {first}") from None
    finally:
        conn.close()
    return Export("postgresql", COLUMNS, rows, ids, total)


def read_export(source: str, since: datetime | None = None) -> Export:
    """Read the export view from ``source`` (a SQLite path or a PostgreSQL DSN).

    ``since`` (timezone-aware): only rows analysed at or after it (plus rows whose timestamp the
    source cannot read, so validation sees them); None reads every row. Raises SourceSkipped.
    """
    if is_dsn(source):
        return _read_postgres(source, since)
    return _read_sqlite(Path(source).expanduser(), since)
