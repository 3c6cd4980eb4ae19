"""The rows of ``ah.source_file``: one per transcript, document or database a pass reads, keyed
by ``(path, origin_host)`` (docs/design.md §7). What the loader registers, the progress each
batch saves (offset, hashes, parser state, signature), a file's status (``new``, ``ok``,
``error``, ``missing``, ``parser_upgraded``), and this machine's claims on rows of unknown host
(docs/design.md §7 "Many machines"). Every function runs in the caller's transaction unless it
says otherwise; none commits. Imports nothing but psycopg: a pass with nothing to read loads no
row model.
"""

from __future__ import annotations

import psycopg
from psycopg.types.json import Jsonb

# -- the loader's pass ------------------------------------------------------------------------


def known_files(conn: psycopg.Connection, host: str | None) -> list[tuple]:
    """This host's catalogued files: ``(path, id, size, mtime_ns, indexed_offset, line_count,
    head_sha256, checkpoint_sha256, parser_version, status)`` per row (another host's files may
    have the same paths)."""
    return conn.execute(
        "SELECT path, id, size, mtime_ns, indexed_offset, line_count, head_sha256, checkpoint_sha256, "
        "parser_version, status FROM ah.source_file WHERE origin_host IS NOT DISTINCT FROM %s",
        (host,),
    ).fetchall()


def register_files(
    conn: psycopg.Connection,
    host: str | None,
    paths: list[str],
    namespaces: list[str],
    agents: list[str],
    roles: list[str | None],
    tiers: list[str],
    rel_paths: list[str | None],
    parser_versions: list[int | None],
) -> list[tuple[str, int]]:
    """Insert new files (status ``new``, offset 0) in one statement, the lists element-wise; a
    path this host already has takes the new namespace. Returns ``(path, id)`` per row."""
    return conn.execute(
        "INSERT INTO ah.source_file (path, namespace, agent, role, tier, rel_path, parser_version, origin_host) "
        "SELECT *, %s::text FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[]) "
        "ON CONFLICT ON CONSTRAINT source_file_path_host_key DO UPDATE SET namespace = EXCLUDED.namespace "
        "RETURNING path, id",
        (host, paths, namespaces, agents, roles, tiers, rel_paths, parser_versions),
    ).fetchall()


def indexed_bytes(conn: psycopg.Connection) -> int:
    """Transcript bytes the catalogue already holds (Σ ``source_file.indexed_offset``)."""
    return int(conn.execute("SELECT coalesce(sum(indexed_offset), 0) FROM ah.source_file").fetchone()[0])


def set_kind(conn: psycopg.Connection, source_id: int, kind: str) -> None:
    """Say how file `source_id` is read (``jsonl``, ``document``, ``database``…)."""
    conn.execute("UPDATE ah.source_file SET kind = %s WHERE id = %s", (kind, source_id))


def resume_state(conn: psycopg.Connection, source_id: int) -> tuple:
    """``(parser_state, prefix_windows, prefix_crc32)`` saved for file `source_id` (what a grown
    file's read resumes from and its prefix is checked against)."""
    return conn.execute(
        "SELECT parser_state, prefix_windows, prefix_crc32 FROM ah.source_file WHERE id = %s",
        (source_id,),
    ).fetchone()


def save_progress(cur: psycopg.Cursor, files: list[tuple]) -> None:
    """Save where each file of a batch now stands, one ``executemany`` for the batch: per file
    ``(indexed_offset, line_count, head_sha256, checkpoint_sha256, parser_version,
    Jsonb(parser_state), size, mtime_ns, Jsonb(prefix_windows), prefix_crc32, id)``; status
    ``ok``, the load error cleared. Runs in the batch's transaction."""
    cur.executemany(
        "UPDATE ah.source_file SET indexed_offset = %s, line_count = %s, head_sha256 = %s, "
        "checkpoint_sha256 = %s, parser_version = %s, parser_state = %s, status = 'ok', last_error = NULL, "
        "last_indexed_at = now(), size = %s, mtime_ns = %s, prefix_windows = %s, prefix_crc32 = %s "
        "WHERE id = %s",
        files,
    )


def reset_for_rewrite(conn: psycopg.Connection, source_id: int) -> None:
    """Set file `source_id` back to byte 0 (offset, line count, state, signature and prefix
    hashes cleared; ``rewrite_count`` + 1): it is read again from the start. Its rows are the
    caller's to purge in the same transaction."""
    conn.execute(
        "UPDATE ah.source_file SET indexed_offset = 0, line_count = 0, parser_state = NULL, "
        "rewrite_count = rewrite_count + 1, size = NULL, mtime_ns = NULL, prefix_windows = NULL, "
        "prefix_crc32 = NULL WHERE id = %s",
        (source_id,),
    )


def mark_parser_upgraded(conn: psycopg.Connection, source_id: int) -> None:
    """Status ``parser_upgraded``: read by an older parser, left for `rebuild`."""
    conn.execute("UPDATE ah.source_file SET status = 'parser_upgraded' WHERE id = %s", (source_id,))


def mark_error(conn: psycopg.Connection, source_id: int, detail: str) -> int:
    """Status ``error`` with `detail` as ``last_error``; returns the file's ``indexed_offset``
    (bytes: where its unwritten part starts)."""
    conn.execute("UPDATE ah.source_file SET status = 'error', last_error = %s WHERE id = %s", (detail, source_id))
    return conn.execute("SELECT indexed_offset FROM ah.source_file WHERE id = %s", (source_id,)).fetchone()[0]


def save_signature(conn: psycopg.Connection, source_id: int, size: int, mtime_ns: int) -> None:
    """Save file `source_id`'s size (bytes) and mtime (ns) as last indexed, now: the next pass
    skips it unread while both stay the same."""
    conn.execute(
        "UPDATE ah.source_file SET size = %s, mtime_ns = %s, last_indexed_at = now() WHERE id = %s",
        (size, mtime_ns, source_id),
    )


# -- whole documents ----------------------------------------------------------------------------


def document_state(conn: psycopg.Connection, source_id: int) -> tuple | None:
    """``(content_sha256, parser_version)`` of document `source_id` as last indexed, or None."""
    return conn.execute(
        "SELECT content_sha256, parser_version FROM ah.source_file WHERE id = %s", (source_id,)
    ).fetchone()


def parser_state(conn: psycopg.Connection, source_id: int) -> dict | None:
    """The ``parser_state`` JSON saved for file `source_id` (None: none)."""
    return conn.execute("SELECT parser_state FROM ah.source_file WHERE id = %s", (source_id,)).fetchone()[0]


def save_documents(cur: psycopg.Cursor, docs: list[tuple]) -> None:
    """Save each document of a batch as read, one ``executemany``: per document
    ``(content_sha256, size, mtime_ns, indexed_offset, line_count, parser_version,
    Jsonb(parser_state) | None, id)``; kind ``document``, status ``ok``, the load error cleared.
    Runs in the batch's transaction."""
    cur.executemany(
        "UPDATE ah.source_file SET kind = 'document', content_sha256 = %s, size = %s, mtime_ns = %s, "
        "indexed_offset = %s, line_count = %s, parser_version = %s, parser_state = %s, status = 'ok', "
        "last_error = NULL, last_indexed_at = now() WHERE id = %s",
        docs,
    )


# -- databases ----------------------------------------------------------------------------------


def database_cursor(conn: psycopg.Connection, source_id: int) -> tuple:
    """``(db_cursor, parser_version)`` of database source `source_id`: where its tables' reads
    stand (JSON, None before the first read) and the parser that read them."""
    return conn.execute("SELECT db_cursor, parser_version FROM ah.source_file WHERE id = %s", (source_id,)).fetchone()


def save_database_cursor(conn: psycopg.Connection, source_id: int, cursor: dict, parser_version: int) -> None:
    """Save database source `source_id`'s advanced `cursor` (kind ``database``, status ``ok``,
    the load error cleared), in the transaction of the rows it covers."""
    conn.execute(
        "UPDATE ah.source_file SET kind = 'database', db_cursor = %s, parser_version = %s, status = 'ok', "
        "last_error = NULL, last_indexed_at = now() WHERE id = %s",
        (Jsonb(cursor), parser_version, source_id),
    )


def mark_database_read(conn: psycopg.Connection, source_id: int) -> None:
    """Kind ``database``, status ``ok``: a file that is not a readable database, its issue recorded."""
    conn.execute("UPDATE ah.source_file SET kind = 'database', status = 'ok' WHERE id = %s", (source_id,))


# -- this machine's files (docs/design.md §7 "Many machines") ----------------------------------


def host_files_in(conn: psycopg.Connection, host: str | None, namespaces: set[str]) -> list[tuple[int, str, bool]]:
    """``(id, path, is missing)`` of `host`'s files in `namespaces`."""
    return conn.execute(
        "SELECT id, path, status = 'missing' FROM ah.source_file "
        "WHERE namespace = ANY(%s) AND origin_host IS NOT DISTINCT FROM %s",
        (list(namespaces), host),
    ).fetchall()


def host_files_at(conn: psycopg.Connection, host: str | None, paths: set[str]) -> list[tuple[int, str, bool]]:
    """``(id, path, is missing)`` of `host`'s files at `paths`."""
    return conn.execute(
        "SELECT id, path, status = 'missing' FROM ah.source_file "
        "WHERE path = ANY(%s) AND origin_host IS NOT DISTINCT FROM %s",
        (list(paths), host),
    ).fetchall()


def mark_missing(conn: psycopg.Connection, ids: list[int]) -> None:
    """Status ``missing`` for files `ids` (gone from disk; their rows stay)."""
    conn.execute("UPDATE ah.source_file SET status = 'missing' WHERE id = ANY(%s)", (ids,))


def mark_returned(conn: psycopg.Connection, ids: list[int]) -> None:
    """Give files `ids`, marked missing and listed again, their status back: ``error`` with a
    load error, ``new`` when never read, ``parser_upgraded`` with that issue, else ``ok``."""
    conn.execute(
        "UPDATE ah.source_file AS f SET status = CASE WHEN f.last_error IS NOT NULL THEN 'error' "
        "WHEN f.size IS NULL AND f.indexed_offset = 0 THEN 'new' "
        "WHEN EXISTS (SELECT 1 FROM ah.parse_issue AS i WHERE i.source_id = f.id "
        "AND i.kind = 'parser_upgraded') THEN 'parser_upgraded' ELSE 'ok' END WHERE f.id = ANY(%s)",
        (ids,),
    )


def nothing_to_claim(conn: psycopg.Connection, host: str) -> bool:
    """True when no file is of unknown host and no other host's file is in a ``*-local``
    namespace: `claim_files` would change nothing (the usual case once every machine has run)."""
    return conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM ah.source_file WHERE origin_host IS NULL "
        "OR (origin_host <> %s AND namespace LIKE '%%-local'))",
        (host,),
    ).fetchone()[0]


def claim_files(
    conn: psycopg.Connection, host: str, paths: list[str], namespaces: list[str], legacy: list[str]
) -> list[tuple[int, str, str]]:
    """Give `host` the files at `paths` (element-wise with the namespace each is listed under and
    its ``<agent>-local`` namespace `legacy`) whose row is of unknown host in either namespace,
    or another host's in the ``-local`` namespace it is listed under; each takes the listed
    namespace, unless `host` already has a row at that path. Returns ``(id, namespace, former
    namespace)`` per file claimed (rows locked ``FOR UPDATE``)."""
    return conn.execute(
        "WITH f AS (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]) AS f(path, namespace, legacy)), "
        "prior AS (SELECT sf.id, sf.namespace AS was FROM ah.source_file sf JOIN f ON sf.path = f.path "
        "AND sf.namespace IN (f.namespace, f.legacy) WHERE sf.origin_host IS NULL "
        # one laptop whose system name changed: its single-machine namespace is its own
        "OR (sf.namespace = f.legacy AND f.namespace = f.legacy AND sf.origin_host <> %s) "
        "FOR UPDATE OF sf) "
        "UPDATE ah.source_file sf SET origin_host = %s, namespace = f.namespace FROM f, prior "
        "WHERE prior.id = sf.id AND sf.path = f.path "
        "AND NOT EXISTS (SELECT 1 FROM ah.source_file x WHERE x.path = sf.path AND x.origin_host = %s) "
        "RETURNING sf.id, sf.namespace, prior.was",
        (paths, namespaces, legacy, host, host, host),
    ).fetchall()


def claim_sessions(conn: psycopg.Connection, host: str, source_ids: list[int]) -> None:
    """Give `host` the sessions of files `source_ids` (claimed by `claim_files`)."""
    conn.execute(
        "UPDATE ah.session SET origin_host = %s WHERE source_id = ANY(%s) AND origin_host IS DISTINCT FROM %s",
        (host, source_ids, host),
    )


def move_namespaces(conn: psycopg.Connection, moved: list[tuple[int, str]]) -> None:
    """Move the sessions and messages of each file ``(id, namespace)`` of `moved` to its new
    namespace (one statement per table)."""
    for table in ("session", "message"):
        conn.execute(
            f"UPDATE ah.{table} t SET namespace = m.namespace FROM unnest(%s::bigint[], %s::text[]) "
            "AS m(id, namespace) WHERE t.source_id = m.id AND t.namespace IS DISTINCT FROM m.namespace",
            ([i for i, _ in moved], [ns for _, ns in moved]),
        )


# -- rebuild-check --verify -----------------------------------------------------------------------

PREFIX_ROWS = (
    "SELECT id, path, namespace, kind, indexed_offset, prefix_crc32, size, mtime_ns, head_sha256, "
    "checkpoint_sha256, content_sha256 FROM ah.source_file ORDER BY namespace, path"
)
"""Every catalogued file with what its indexed prefix is checked against (streamed by the caller
through a server-side cursor: `ingest.verify.stream_rows`)."""


def prefix_windows(conn: psycopg.Connection, source_id: int) -> list | None:
    """The sampled prefix windows saved for file `source_id` (JSON; None before they were kept)."""
    return conn.execute("SELECT prefix_windows FROM ah.source_file WHERE id = %s", (source_id,)).fetchone()[0]
