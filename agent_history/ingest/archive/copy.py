"""Writing and reading one archived copy: zstd, verified before it counts, atomic, never clobbering.

`write_copy` compresses exactly ``size`` bytes of a source into a temporary file next to the
destination, fsyncs it, decompresses and hashes it, and only when the size and sha256 are the
source's links it to its final name (`os.link`: fails rather than replace an existing file;
`os.rename` after an existence check where the filesystem has no hard links) and fsyncs the
directory. Any failure removes the temporary file: a partial copy never has a final name.

Errors: `ArchiveFull` (ENOSPC / EDQUOT while writing), `SourceChanged` (the source ended before
``size`` bytes: truncated or replaced while it was read), `CopyMismatch` (the written copy does
not decompress to the source bytes), other `OSError`s unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pyzstd

from agent_history.ingest.archive.layout import TMP_PREFIX

LEVEL = 3
"""zstd level: zstd's default (fast; transcripts compress ~5–10×)."""
CHUNK = 1024 * 1024
"""Bytes read and written at a time."""
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class ArchiveFull(OSError):
    """The archive's filesystem is full (or over quota): nothing of the copy in progress counts."""


class SourceChanged(Exception):
    """The source file ended before the bytes `stat` promised (truncated or replaced mid-copy)."""


class CopyMismatch(Exception):
    """A written copy does not decompress to the bytes that were read."""


@dataclass(frozen=True, slots=True)
class Written:
    """A verified copy: its name relative to the archive root, the uncompressed size (bytes) and
    sha256, and the compressed size on disk (bytes)."""

    archive_file: str
    size: int
    sha256: bytes
    compressed_size: int
    prefix_sha256: bytes | None = None
    """sha256 of the first `prefix_at` bytes, when `write_copy` was asked for it."""


def _full(exc: OSError, where: Path) -> OSError:
    if exc.errno in FULL_ERRNOS:
        return ArchiveFull(exc.errno, f"the archive's filesystem is full ({os.strerror(exc.errno)}) at {where}")
    return exc


def write_copy(
    src: BinaryIO,
    size: int,
    root: Path,
    name_for: Callable[[bytes, bytes | None], str],
    prefix_at: int | None = None,
) -> Written:
    """Compress `size` bytes of `src` (from its current position) into the archive at `root`, at
    the name `name_for(sha256, prefix_sha256)` gives (relative to `root`); `prefix_sha256` is the
    sha256 of the first `prefix_at` bytes (None when not asked or `prefix_at` > `size`). Returns
    the verified copy.

    Raises SourceChanged, CopyMismatch, ArchiveFull, FileExistsError (a copy with that name
    exists: the same bytes were archived under it already) or OSError."""
    work = root / ".work"
    try:
        work.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=".zst", dir=work)
    except OSError as exc:
        raise _full(exc, root) from exc
    try:
        digest = hashlib.sha256()
        prefix_sha = hashlib.sha256().digest() if prefix_at == 0 else None
        n = 0
        try:
            with os.fdopen(fd, "wb") as raw:
                with pyzstd.ZstdFile(raw, "w", level_or_option=LEVEL) as z:
                    while n < size:
                        want = min(CHUNK, size - n)
                        if prefix_at is not None and n < prefix_at:
                            want = min(want, prefix_at - n)  # stop at the prefix to take its digest
                        chunk = src.read(want)
                        if not chunk:
                            raise SourceChanged(f"the file ended at byte {n:,} of {size:,} while it was copied")
                        digest.update(chunk)
                        z.write(chunk)
                        n += len(chunk)
                        if prefix_at is not None and n == prefix_at:
                            prefix_sha = digest.copy().digest()
                    z.write(b"")  # with the flush: a whole frame even for 0 bytes
                    z.flush(pyzstd.ZstdFile.FLUSH_FRAME)
                raw.flush()
                os.fsync(raw.fileno())
                compressed = raw.tell()
        except OSError as exc:
            raise _full(exc, root) from exc
        sha = digest.digest()
        try:
            got_size, got_sha = hash_copy(Path(tmp))
        except (pyzstd.ZstdError, EOFError) as exc:
            raise CopyMismatch(f"the compressed copy cannot be read back: {exc}") from None
        if (got_size, got_sha) != (size, sha):
            raise CopyMismatch(f"the compressed copy decompresses to {got_size:,} bytes, not the {size:,} read")
        rel = name_for(sha, prefix_sha)
        dest = root / rel
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _place(Path(tmp), dest)
            _fsync_dir(dest.parent)
        except FileExistsError:
            raise
        except OSError as exc:
            raise _full(exc, root) from exc
        return Written(rel, size, sha, compressed, prefix_sha)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _place(tmp: Path, dest: Path) -> None:
    """Give `tmp` the name `dest` without ever replacing an existing `dest`."""
    try:
        os.link(tmp, dest)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if dest.exists():  # no hard links here (FAT, some NFS): check, then rename
            raise FileExistsError(errno.EEXIST, "exists", str(dest)) from None
        os.rename(tmp, dest)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_copy(path: Path) -> BinaryIO:
    """A copy opened for reading its uncompressed bytes (forward reads)."""
    return pyzstd.ZstdFile(path, "r")  # type: ignore[return-value]


def hash_copy(path: Path, limit: int | None = None) -> tuple[int, bytes]:
    """(bytes, sha256) of the uncompressed content of the copy at `path` — of its first `limit`
    bytes when given. Raises OSError or pyzstd.ZstdError for a missing or corrupt copy."""
    digest = hashlib.sha256()
    n = 0
    with open_copy(path) as fh:
        while limit is None or n < limit:
            chunk = fh.read(CHUNK if limit is None else min(CHUNK, limit - n))
            if not chunk:
                break
            digest.update(chunk)
            n += len(chunk)
    return n, digest.digest()


def decompress_to(path: Path, dest: Path) -> int:
    """Write the uncompressed content of the copy at `path` to `dest` (created, parents too);
    returns its size in bytes."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open_copy(path) as src, open(dest, "wb") as out:
        while chunk := src.read(CHUNK):
            out.write(chunk)
            n += len(chunk)
    return n


def snapshot_database(path: str, dest: Path) -> dict[str, int]:
    """A consistent copy of the SQLite database at `path` (read-only, WAL content included) written
    to `dest` with the sqlite3 backup API; returns its rows per table. Raises sqlite3.Error."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    src = sqlite3.connect(uri, uri=True, timeout=30)
    try:
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)
            tables = [r[0] for r in dst.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            return {
                t: dst.execute(f'SELECT count(*) FROM "{t.replace(chr(34), chr(34) * 2)}"').fetchone()[0]
                for t in tables
            }
        finally:
            dst.close()
    finally:
        src.close()
