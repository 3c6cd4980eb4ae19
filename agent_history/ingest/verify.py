"""`rebuild-check --verify`: re-hash every catalogued file's indexed prefix (issue 10, defect 3).

An index pass only samples a grown file's prefix (`agent_history.ingest.prefix`); this reads the
first ``indexed_offset`` bytes of every catalogued file that still exists and compares their
CRC-32 with ``source_file.prefix_crc32``. Each changed file is listed with whether the next
index pass will notice it by itself (it shrank, or its size/mtime moved and a sampled check
fails: it will be purged and re-read) or not (a same-length edit between the windows, or one
that restored the mtime): those stay stale until `agent-history rebuild`.

Read-only: nothing in the catalogue is changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg

from agent_history.db.tables.source_files import PREFIX_ROWS, prefix_windows
from agent_history.ingest.prefix import crc_range, prefix_change

MAX_LISTED = 1000
"""Changed files listed in full (the counts cover all of them)."""


@dataclass
class Changed:
    """One catalogued file whose indexed prefix no longer matches."""

    path: str
    namespace: str
    indexed_offset: int
    size: int
    reason: str
    """``truncated`` (shorter than the indexed prefix) or ``content_changed``."""
    noticed_by_index: bool
    """True when the next index pass re-reads it on its own."""


@dataclass
class VerifyResult:
    """Counts of a whole-prefix check; `changed` lists the first `MAX_LISTED` files that differ
    (`changed_count` and `unnoticed` count all of them)."""

    files_checked: int = 0
    bytes_hashed: int = 0
    no_baseline: int = 0
    """Files indexed before prefix CRCs were kept (they get one when they next grow)."""
    absent: int = 0
    """Catalogued files not at their catalogued path (rebuild-check's counts say where they are)."""
    changed: list[Changed] = field(default_factory=list)
    changed_count: int = 0
    unnoticed: int = 0
    """Changed files the next index pass would not re-read."""

    def add(self, c: Changed) -> None:
        """Count changed file `c`; keep it in `changed` while fewer than MAX_LISTED are."""
        self.changed_count += 1
        self.unnoticed += not c.noticed_by_index
        if len(self.changed) < MAX_LISTED:
            self.changed.append(c)

    def as_dict(self) -> dict:
        """JSON-ready form (changed files capped at MAX_LISTED)."""
        return {
            "files_checked": self.files_checked,
            "bytes_hashed": self.bytes_hashed,
            "no_baseline": self.no_baseline,
            "absent": self.absent,
            "changed": self.changed_count,
            "unnoticed": self.unnoticed,
            "changed_files": [c.__dict__ for c in self.changed],
        }


def _noticed(fh, st: os.stat_result, offset: int, size, mtime_ns, head, ckpt, windows) -> bool:
    """Would the loader's next pass purge and re-read this file (see loader._index_file)?"""
    if st.st_size == size and st.st_mtime_ns == mtime_ns:
        return False  # skipped unread
    return st.st_size < offset or prefix_change(fh, offset, head, ckpt, windows) is not None


STREAM_ROWS = 2000
"""Catalogue rows fetched per round trip: the check holds this many at a time, never the table."""


def stream_rows(conn: psycopg.Connection, sql: str, params: tuple | dict = (), *, name: str) -> Iterator[tuple]:
    """The rows of `sql`, `STREAM_ROWS` at a time through a server-side cursor `name` (inside a
    transaction, or a savepoint of the caller's): memory bounded whatever the catalogue's size."""
    with conn.transaction(), conn.cursor(name=name) as cur:
        cur.itersize = STREAM_ROWS
        cur.execute(sql, params)
        yield from cur


def verify_prefixes(conn: psycopg.Connection) -> VerifyResult:
    """Re-hash the indexed prefix of every catalogued file (bytes [0, indexed_offset)), one file
    at a time: rows streamed (`stream_rows`), files hashed in `prefix.CRC_CHUNK` pieces,
    documents by sha256 in `HASH_CHUNK` pieces, a changed file's prefix windows fetched only for
    it — memory does not grow with the catalogue or the files.

    Files with offset 0 are counted as checked (nothing indexed); a file that cannot be opened
    counts as absent. Raises psycopg errors only.
    """
    result = VerifyResult()
    rows = stream_rows(conn, PREFIX_ROWS, name="ah_verify_prefixes")
    for source_id, path, namespace, kind, offset, crc, size, mtime_ns, head, ckpt, sha in rows:
        if kind == "database":  # databases are read by cursor, not by prefix (issue 16)
            result.files_checked += os.path.isfile(path)
            result.absent += not os.path.isfile(path)
            continue
        if kind == "document":  # whole documents: the sha256 of the bytes last indexed (issue 16)
            _verify_document(result, path, namespace, offset, sha, size, mtime_ns)
            continue
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below, after the stat
        except OSError:
            result.absent += 1
            continue
        with fh:
            st = os.fstat(fh.fileno())
            result.files_checked += 1
            if offset == 0:
                continue
            if crc is None:
                result.no_baseline += 1
                continue
            if st.st_size < offset:
                result.add(Changed(path, namespace, offset, st.st_size, "truncated", True))
                continue
            now = crc_range(fh, 0, offset)
            result.bytes_hashed += offset
            if now != crc:
                windows = prefix_windows(conn, source_id)
                noticed = _noticed(fh, st, offset, size, mtime_ns, head, ckpt, windows)
                result.add(Changed(path, namespace, offset, st.st_size, "content_changed", noticed))
    return result


HASH_CHUNK = 1 << 20
"""Bytes of a document hashed at a time (1 MiB)."""


def _verify_document(result: VerifyResult, path: str, namespace: str, offset: int, sha, size, mtime_ns) -> None:
    """A whole document: changed when its sha256 differs from the one indexed; the next pass
    notices unless size and mtime are both unchanged (it skips the file unread then). Hashed
    in `HASH_CHUNK` pieces (a data export can be hundreds of MB)."""
    import hashlib

    digest = hashlib.sha256()
    nbytes = 0
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if sha is not None:
                while chunk := fh.read(HASH_CHUNK):
                    digest.update(chunk)
                    nbytes += len(chunk)
    except OSError:
        result.absent += 1
        return
    result.files_checked += 1
    if sha is None:
        result.no_baseline += 1
        return
    result.bytes_hashed += nbytes
    if digest.hexdigest() != sha:
        noticed = not (st.st_size == size and st.st_mtime_ns == mtime_ns)
        result.add(Changed(path, namespace, offset, st.st_size, "content_changed", noticed))
