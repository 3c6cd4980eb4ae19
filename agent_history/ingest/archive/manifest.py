"""The archive manifest ``ah.archive_copy`` (migration 0020): reading and writing its rows.

One row per copy; the rows of one (origin_host, namespace, rel_path) are its versions. Every
write runs in the caller's transaction. The statements are `db.tables.archive`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

from agent_history.db.tables import archive


@dataclass(slots=True)
class Copy:
    """One manifest row (`db.tables.archive.COLUMNS`). Units: bytes, nanoseconds (mtime)."""

    id: int
    namespace: str
    agent: str
    kind: str
    path: str
    rel_path: str
    version: int
    archive_file: str
    size: int
    sha256: bytes
    compressed_size: int
    source_size: int
    source_mtime_ns: int
    head_sha256: str | None
    checkpoint_sha256: str | None
    prefix_windows: dict | None
    table_rows: dict | None
    archived_at: datetime
    verified_at: datetime
    verify_error: str | None


def _copy(row) -> Copy:
    values = list(row)
    values[9] = bytes(values[9])
    return Copy(*values)


def all_copies(conn: psycopg.Connection, *, namespace: str | None = None, host: str | None = "") -> list[Copy]:
    """Every row of one machine's archive, by namespace, path, version: `host` is the
    ``origin_host`` of that machine's copies (`config.Settings.archive_host`: '' on a single
    machine, its host name when several share the catalogue); None: every machine's rows."""
    return [_copy(r) for r in archive.copies(conn, namespace=namespace, host=host)]


def newest_versions(conn: psycopg.Connection, host: str = "") -> dict[tuple[str, str], Copy]:
    """(namespace, rel_path) → the row of its highest version, of `host`'s copies (`all_copies`)."""
    out: dict[tuple[str, str], Copy] = {}
    for c in all_copies(conn, host=host):
        out[(c.namespace, c.rel_path)] = c  # ordered by version: the last one wins
    return out


def insert(conn: psycopg.Connection, c: Copy, host: str = "") -> int:
    """Insert a new version's row, a copy of machine `host` (`all_copies`); returns its id."""
    return archive.insert_copy(
        conn,
        (
            c.namespace,
            c.agent,
            c.kind,
            c.path,
            c.rel_path,
            c.version,
            c.archive_file,
            c.size,
            c.sha256,
            c.compressed_size,
            c.source_size,
            c.source_mtime_ns,
            c.head_sha256,
            c.checkpoint_sha256,
            Jsonb(c.prefix_windows) if c.prefix_windows is not None else None,
            Jsonb(c.table_rows) if c.table_rows is not None else None,
            host,
        ),
    )


def replace(conn: psycopg.Connection, c: Copy) -> None:
    """Point row `c.id` at its new, larger copy (the same version grew)."""
    archive.replace_copy(
        conn,
        (
            c.path,
            c.archive_file,
            c.size,
            c.sha256,
            c.compressed_size,
            c.source_size,
            c.source_mtime_ns,
            c.head_sha256,
            c.checkpoint_sha256,
            Jsonb(c.prefix_windows) if c.prefix_windows is not None else None,
            Jsonb(c.table_rows) if c.table_rows is not None else None,
            c.id,
        ),
    )


def touch(conn: psycopg.Connection, copy_id: int, source_size: int, source_mtime_ns: int) -> None:
    """The hot file changed its stat but not its bytes: remember the new stat."""
    archive.touch_copy(conn, copy_id, source_size, source_mtime_ns)


def record_verify(conn: psycopg.Connection, copy_id: int, error: str | None) -> None:
    """Record a re-hash of copy `copy_id`: when, and why it failed (None: it matched)."""
    archive.record_verify(conn, copy_id, error)
