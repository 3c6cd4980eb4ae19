"""The archive's statements (docs/design.md §18): the manifest ``ah.archive_copy`` (migration
0020; one row per copy, the rows of one (origin_host, namespace, rel_path) are its versions),
the status counts over it, and the relocation of rows read back from staged copies
(``ah.source_file``). `ingest.archive` builds the rows and owns the transactions: every function
here runs in the caller's transaction and commits nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg

COLUMNS = (
    "id, namespace, agent, kind, path, rel_path, version, archive_file, size, sha256, compressed_size, "
    "source_size, source_mtime_ns, head_sha256, checkpoint_sha256, prefix_windows, table_rows, "
    "archived_at, verified_at, verify_error"
)
"""The manifest columns `copies` returns, in order (`ingest.archive.manifest.Copy`'s fields)."""


def copies(conn: psycopg.Connection, *, namespace: str | None, host: str | None) -> list[tuple]:
    """`COLUMNS` of every copy of machine `host` (its ``origin_host``; None: every machine's),
    of `namespace` when given, by namespace, rel_path, version."""
    where = "(%(host)s::text IS NULL OR origin_host = %(host)s) " + ("AND namespace = %(ns)s " if namespace else "")
    return conn.execute(
        f"SELECT {COLUMNS} FROM ah.archive_copy WHERE {where}ORDER BY namespace, rel_path, version",
        {"host": host, "ns": namespace},
    ).fetchall()


def insert_copy(conn: psycopg.Connection, values: Sequence) -> int:
    """Insert one version's row; `values` are (namespace, agent, kind, path, rel_path, version,
    archive_file, size, sha256, compressed_size, source_size, source_mtime_ns, head_sha256,
    checkpoint_sha256, prefix_windows, table_rows, origin_host) (jsonb as `Jsonb` or None).
    Returns its id."""
    return conn.execute(
        "INSERT INTO ah.archive_copy (namespace, agent, kind, path, rel_path, version, archive_file, size, sha256, "
        "compressed_size, source_size, source_mtime_ns, head_sha256, checkpoint_sha256, prefix_windows, table_rows, "
        "origin_host) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        tuple(values),
    ).fetchone()[0]


def replace_copy(conn: psycopg.Connection, values: Sequence) -> None:
    """Point a row at a new copy of the same version, verified now; `values` are (path,
    archive_file, size, sha256, compressed_size, source_size, source_mtime_ns, head_sha256,
    checkpoint_sha256, prefix_windows, table_rows, id)."""
    conn.execute(
        "UPDATE ah.archive_copy SET path = %s, archive_file = %s, size = %s, sha256 = %s, compressed_size = %s, "
        "source_size = %s, source_mtime_ns = %s, head_sha256 = %s, checkpoint_sha256 = %s, prefix_windows = %s, "
        "table_rows = %s, archived_at = now(), verified_at = now(), verify_error = NULL WHERE id = %s",
        tuple(values),
    )


def touch_copy(conn: psycopg.Connection, copy_id: int, source_size: int, source_mtime_ns: int) -> None:
    """Record the hot file's new stat (bytes, ns) on row `copy_id`."""
    conn.execute(
        "UPDATE ah.archive_copy SET source_size = %s, source_mtime_ns = %s WHERE id = %s",
        (source_size, source_mtime_ns, copy_id),
    )


def record_verify(conn: psycopg.Connection, copy_id: int, error: str | None) -> None:
    """Stamp row `copy_id` verified now, with `error` (None: it matched)."""
    conn.execute("UPDATE ah.archive_copy SET verified_at = now(), verify_error = %s WHERE id = %s", (error, copy_id))


def good_copies(conn: psycopg.Connection, host: str | None) -> psycopg.Cursor:
    """(namespace, rel_path, archive_file) of machine `host`'s copies with no failed
    verification (None: every machine's), as a cursor read row by row."""
    return conn.execute(
        "SELECT namespace, rel_path, archive_file FROM ah.archive_copy "
        "WHERE (%(host)s::text IS NULL OR origin_host = %(host)s) AND verify_error IS NULL",
        {"host": host},
    )


def relocate(conn: psycopg.Connection, staged: list[str], original: list[str]) -> int:
    """Record the source files read at the `staged` paths under the parallel `original` paths,
    tier ``archive`` (a path another row of the same origin host already holds keeps the staged
    name). Returns rows moved."""
    return conn.execute(
        "UPDATE ah.source_file AS sf SET path = m.original, tier = 'archive' "
        "FROM unnest(%s::text[], %s::text[]) AS m(staged, original) "
        "WHERE sf.path = m.staged AND NOT EXISTS (SELECT 1 FROM ah.source_file x WHERE x.path = m.original "
        "AND x.origin_host IS NOT DISTINCT FROM sf.origin_host)",
        (staged, original),
    ).rowcount


def manifest_totals(conn: psycopg.Connection, host: str) -> tuple[int, int, int, int, int, datetime | None]:
    """Of machine `host`'s copies: (transcripts, copies, bytes, compressed bytes, copies that
    failed their last verification, newest archived_at)."""
    return conn.execute(
        "SELECT count(DISTINCT (namespace, rel_path)), count(*), coalesce(sum(size), 0), "
        "coalesce(sum(compressed_size), 0), count(*) FILTER (WHERE verify_error IS NOT NULL), max(archived_at) "
        "FROM ah.archive_copy WHERE origin_host = %s",
        (host,),
    ).fetchone()


def main_thread_files(conn: psycopg.Connection) -> psycopg.Cursor:
    """(namespace, rel_path, path) of the source file of every main thread (``agent_id = ''``),
    as a cursor read row by row."""
    return conn.execute(
        "SELECT sf.namespace, sf.rel_path, sf.path FROM ah.session AS s "
        "JOIN ah.source_file AS sf ON sf.id = s.source_id WHERE s.agent_id = ''"
    )
