"""`archive --verify`: re-hash every copy of the manifest against its recorded size and sha256."""

from __future__ import annotations

import errno
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pyzstd

from agent_history.ingest.archive import manifest
from agent_history.ingest.archive.copy import hash_copy


@dataclass
class VerifyResult:
    """Copies checked, bytes hashed (uncompressed), and the bad ones: one dict each with the
    copy's namespace, path, version, archive file and why it failed."""

    checked: int = 0
    bytes_hashed: int = 0
    bad: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "checked": self.checked,
            "bytes_hashed": self.bytes_hashed,
            "bad": self.bad,
            "seconds": round(self.seconds, 3),
        }


def verify_copy(root: Path, c: manifest.Copy) -> str | None:
    """Why the copy of row `c` under `root` is bad (missing, unreadable, corrupt, other size or
    sha256), or None when it decompresses to the recorded bytes."""
    path = root / c.archive_file
    try:
        size, sha = hash_copy(path)
    except FileNotFoundError:
        return "the copy is missing"
    except (OSError, pyzstd.ZstdError, EOFError) as exc:
        return f"the copy cannot be read: {exc}"
    if size != c.size:
        return f"decompresses to {size:,} bytes, not {c.size:,}"
    if sha != c.sha256:
        return "sha256 differs from the one recorded when it was copied"
    return None


class ArchiveRootMissing(ValueError):
    """The archive root is not a directory while the manifest lists copies under it (one line)."""


def _not_a_directory(root: Path) -> str | None:
    """Why `root` cannot hold copies ("does not exist", "is a symlink loop", "is not a
    directory"), or None when it is a directory."""
    try:
        mode = root.stat().st_mode
    except OSError as exc:
        return "is a symlink loop" if exc.errno == errno.ELOOP else "does not exist"
    return None if stat.S_ISDIR(mode) else "is not a directory"


def verify_archive(conn: psycopg.Connection, root: Path, host: str = "") -> VerifyResult:
    """Re-hash every copy of this machine's rows (`host`: `manifest.all_copies`; another
    machine's copies are on its disk, not missing here); record each outcome in the manifest
    (``verified_at``, ``verify_error``). Returns what was found. Raises ArchiveRootMissing,
    recording nothing, when `root` is not a directory and copies are listed: a mistyped or
    unmounted ``[archive] path`` is not every copy missing (that marked each one bad, and
    `status` then said so)."""
    started = time.monotonic()
    result = VerifyResult()
    copies = manifest.all_copies(conn, host=host)
    if copies and (why := _not_a_directory(root)):
        raise ArchiveRootMissing(
            f"archive path {root} {why}: nothing verified or recorded ("
            + ("1 copy is" if len(copies) == 1 else f"{len(copies):,} copies are")
            + " listed under it: is [archive] path the one they were written to, and is it mounted?)"
        )
    for c in copies:
        error = verify_copy(root, c)
        result.checked += 1
        if error is None:
            result.bytes_hashed += c.size
        else:
            result.bad.append(
                {
                    "namespace": c.namespace,
                    "path": c.path,
                    "version": c.version,
                    "archive_file": c.archive_file,
                    "error": error,
                }
            )
        with conn.transaction():
            manifest.record_verify(conn, c.id, error)
    result.seconds = time.monotonic() - started
    return result
