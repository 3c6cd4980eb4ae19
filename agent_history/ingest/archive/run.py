"""One archive pass: every file of every configured home → new copies and new versions.

Per discovered file (`ingest.discovery.iter_files`, so every harness and source kind of the
registry), against the newest version of its copy (`manifest.newest_versions`):

| the hot file …                                   | JSONL, markdown  | document        | database                 |
| ------------------------------------------------ | ---------------- | --------------- | ------------------------ |
| has no copy                                      | version 1        | version 1       | version 1                |
| same size and mtime as when copied               | skipped unread   | skipped unread  | skipped (file and -wal)  |
| same bytes (sha256), new mtime                   | manifest updated | manifest updated| manifest updated         |
| a superset, not older than the copy (`GROWN`)    | copy replaced    | copy replaced   | copy replaced            |
| its copy failed `--verify` or is not in this archive | copy replaced (`repaired`) | copy replaced | copy replaced |
| anything else: shrunk, rewritten, older          | next version     | next version    | next version             |

"A superset" per kind (`is_superset`): JSONL and markdown (both append-only) — longer, with the copied bytes as its prefix by
`ingest.prefix` evidence (head, checkpoint, sampled windows at the copied size); document — not
shorter (documents are rewritten whole as they grow); database — no table of the snapshot has
fewer rows than in the copy. A replaced copy's old file is removed after the manifest commits; a
new version's old copy is never touched. A copy whose manifest row cannot be written (a kind the
manifest refuses) is removed again and the file reported in `ArchiveSummary.skipped`; a file of a
kind not in `harnesses.spec.SOURCE_KINDS` is reported there unread.

The pass holds its own advisory locks, one per namespace it archives (`(ARCHIVE_LOCK_CLASS,
hashtext(namespace))`, not the index locks: archiving and indexing run side by side, and two
machines archive their own namespaces at once). Errors are per file and one line each (`ArchiveSummary.skipped`), except a full
archive filesystem (`ArchiveFull`: the pass stops, nothing of the copy in progress counts) and an
archive root that cannot be written (`ArchiveUnwritable`, before anything is read).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pyzstd

from agent_history.harnesses.spec import SOURCE_KINDS
from agent_history.ingest.archive import manifest
from agent_history.ingest.archive.copy import (
    ArchiveFull,
    CopyMismatch,
    SourceChanged,
    Written,
    hash_copy,
    snapshot_database,
    write_copy,
)
from agent_history.ingest.archive.layout import archive_file
from agent_history.ingest.archive.manifest import Copy
from agent_history.ingest.discovery import FileRef, Source, iter_files
from agent_history.ingest.prefix import edge_hashes, prefix_change, update_windows

ARCHIVE_LOCK_CLASS = 0x61686172  # 'ahar': (ARCHIVE_LOCK_CLASS, hashtext(namespace)), one per namespace


class AnotherArchivePass(Exception):
    """Another archive pass holds the advisory lock."""


class NotRecorded(Exception):
    """The manifest refused a copy's row (message: one line); the copy was removed."""


class ArchiveUnwritable(Exception):
    """The archive root cannot be created or written (message: one line for the user)."""


@dataclass
class ArchiveSummary:
    """What one pass did. Units: bytes, seconds."""

    files_seen: int = 0
    copied: int = 0
    """Files copied for the first time (version 1)."""
    grown: int = 0
    """Copies replaced by a larger copy of the same version."""
    new_versions: int = 0
    """Files that shrank or were rewritten: a new version beside the old copy."""
    unchanged: int = 0
    touched: int = 0
    repaired: int = 0
    """Copies that failed `archive --verify` or are missing from this archive (its path changed,
    a file deleted), replaced by a fresh copy of the hot file."""
    bytes_read: int = 0
    bytes_written: int = 0
    skipped: list[str] = field(default_factory=list)
    """One line per file not copied this pass (vanished, changed while copied, unreadable)."""
    interrupted: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "files_seen": self.files_seen,
            "copied": self.copied,
            "grown": self.grown,
            "new_versions": self.new_versions,
            "unchanged": self.unchanged,
            "touched": self.touched,
            "repaired": self.repaired,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "skipped": self.skipped[:100],
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
        }


def check_writable(root: Path) -> None:
    """Create `root` if needed and prove a file can be written in it. Raises ArchiveUnwritable."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except FileExistsError:  # a file, or a symlink loop, where the directory would be
        raise ArchiveUnwritable(f"archive path {root} is not a directory") from None
    except OSError as exc:
        raise ArchiveUnwritable(f"archive path {root} is not writable: {exc.strerror or exc}") from None


def source_stat(ref: FileRef) -> tuple[int, int]:
    """(size, mtime_ns) the archive compares: a database's file and its ``-wal`` together
    (size summed, newest mtime). Raises OSError when the file is gone."""
    st = os.stat(ref.path)
    size, mtime = st.st_size, st.st_mtime_ns
    if ref.kind == "database":
        with contextlib.suppress(FileNotFoundError):
            wal = os.stat(ref.path + "-wal")
            size, mtime = size + wal.st_size, max(mtime, wal.st_mtime_ns)
    return size, mtime


# Source kinds read by offset (`harnesses.spec.SOURCE_KINDS`): appended to, never rewritten, so a
# grown file keeps its copied bytes as its prefix. Every other kind but "database" is a document.
APPEND_ONLY = frozenset({"jsonl", "markdown"})


def is_superset(kind: str, old: Copy, new_size: int, *, fh=None, tables: dict | None = None) -> bool:
    """Whether the hot file (`new_size` bytes; open as `fh` for JSONL, a database's snapshot row
    counts as `tables`) holds everything of copy `old` — the rule per kind in the module docstring."""
    if kind in APPEND_ONLY:
        return new_size > old.size and (
            fh is not None
            and prefix_change(fh, old.size, old.head_sha256, old.checkpoint_sha256, old.prefix_windows) is None
        )
    if kind == "database":
        before = old.table_rows or {}
        return tables is not None and all(tables.get(t, 0) >= n for t, n in before.items())
    return new_size >= old.size


def _sha256_of(fh, size: int) -> bytes:
    fh.seek(0)
    digest, n = hashlib.sha256(), 0
    while n < size:
        chunk = fh.read(min(1024 * 1024, size - n))
        if not chunk:
            break
        digest.update(chunk)
        n += len(chunk)
    return digest.digest()


class _Pass:
    def __init__(self, conn, root: Path, summary: ArchiveSummary, on_file, host: str = ""):
        self.conn, self.root, self.summary, self.on_file, self.host = conn, root, summary, on_file, host
        self.newest = manifest.newest_versions(conn, host)

    def one(self, ref: FileRef) -> None:
        s = self.summary
        key = (ref.source.namespace, ref.rel_path)
        old = self.newest.get(key)
        try:
            size, mtime = source_stat(ref)
        except OSError as exc:
            s.skipped.append(f"{ref.path}: {exc.strerror} (vanished before it was copied)")
            return
        bad = old is not None and self._unusable(old)
        if old is not None and not bad and old.source_size == size and old.source_mtime_ns == mtime:
            s.unchanged += 1
            return
        if ref.kind not in SOURCE_KINDS:
            s.skipped.append(f"{ref.path}: unknown source kind {ref.kind!r}; not archived")
            return
        if self.on_file is not None:
            self.on_file(ref)
        try:
            if ref.kind == "database":
                self._database(ref, old, size, mtime, repair=bad)
            else:
                self._file(ref, old, size, mtime, repair=bad)
        except FileNotFoundError:
            s.skipped.append(f"{ref.path}: vanished before it was copied")
        except SourceChanged as exc:
            s.skipped.append(f"{ref.path}: {exc}; copied next pass")
        except (CopyMismatch, NotRecorded) as exc:
            s.skipped.append(f"{ref.path}: {exc}; nothing kept")
        except ArchiveFull:
            raise
        except OSError as exc:
            s.skipped.append(f"{ref.path}: {exc.strerror or exc}")

    def _unusable(self, old: Copy) -> bool:
        """Whether `old`'s copy cannot be read back: missing from this archive, or it failed
        `archive --verify` and still does (re-hashed here: a copy that now matches is cleared; one
        that does not is removed, so the fresh copy can take its name)."""
        path = self.root / old.archive_file
        if not path.is_file():
            return True
        if old.verify_error is None:
            return False
        try:
            good = hash_copy(path) == (old.size, old.sha256)
        except (OSError, pyzstd.ZstdError, EOFError):
            good = False
        if good:
            with self.conn.transaction():
                manifest.record_verify(self.conn, old.id, None)
            old.verify_error = None
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True

    def _file(self, ref: FileRef, old: Copy | None, size: int, mtime: int, *, repair: bool = False) -> None:
        """Copy a JSONL, markdown or document file. With `repair` (`old`'s copy is bad or
        missing), the fresh copy takes `old`'s place: same version, the bad file removed."""
        with open(ref.path, "rb") as fh:
            if not repair and old is not None and size == old.size and _sha256_of(fh, size) == old.sha256:
                self._touch(old, size, mtime)
                return
            may_grow = repair or (
                old is not None and mtime >= old.source_mtime_ns and is_superset(ref.kind, old, size, fh=fh)
            )
            fh.seek(0)
            # JSONL: the cheap prefix evidence said "grown"; the copy's own read confirms it
            # exactly (the sha256 of the first `old.size` bytes is the copy's sha256)
            exact = ref.kind in APPEND_ONLY and may_grow and not repair
            written, grow = self._write(fh, size, ref, old, may_grow, old.size if exact and old else None)
            evidence: tuple = (None, None, None)
            if ref.kind in APPEND_ONLY:
                head, ckpt = edge_hashes(fh, size)
                evidence = (head, ckpt, update_windows(fh, size, old.prefix_windows if grow and old else None))
        self._record(ref, old, grow, written, size, mtime, evidence, None, repair=repair)

    def _database(self, ref: FileRef, old: Copy | None, size: int, mtime: int, *, repair: bool = False) -> None:
        work = self.root / ".work"
        work.mkdir(parents=True, exist_ok=True)
        fd, snap = tempfile.mkstemp(prefix=".snapshot-", suffix=".db", dir=work)
        os.close(fd)
        try:
            try:
                tables = snapshot_database(ref.path, Path(snap))
            except OSError:
                raise
            except Exception as exc:  # sqlite3.Error: locked, corrupt, not a database
                raise SourceChanged(f"cannot snapshot the database: {exc}") from None
            snap_size = os.path.getsize(snap)
            with open(snap, "rb") as fh:
                if not repair and old is not None and snap_size == old.size and _sha256_of(fh, snap_size) == old.sha256:
                    self._touch(old, size, mtime)
                    return
                may_grow = repair or (
                    old is not None
                    and mtime >= old.source_mtime_ns
                    and is_superset("database", old, snap_size, tables=tables)
                )
                fh.seek(0)
                written, grow = self._write(fh, snap_size, ref, old, may_grow, None)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(snap)
        self._record(ref, old, grow, written, size, mtime, (None, None, None), tables, repair=repair)

    def _write(
        self, fh, size: int, ref: FileRef, old: Copy | None, may_grow: bool, prefix_at: int | None
    ) -> tuple[Written, bool]:
        """Copy `size` bytes of `fh`; returns the copy and whether it replaces `old`'s version
        (`may_grow`, and when `prefix_at` is given, the first `prefix_at` bytes are `old`'s)."""
        ns, rel = ref.source.namespace, ref.rel_path
        decided: dict[str, bool] = {}

        def name_for(sha: bytes, prefix_sha: bytes | None) -> str:
            grow = may_grow and (prefix_at is None or prefix_sha == old.sha256)  # type: ignore[union-attr]
            decided["grow"] = grow
            version = old.version if grow and old else (old.version + 1 if old else 1)
            return archive_file(ns, rel, version, sha)

        try:
            written = write_copy(fh, size, self.root, name_for, prefix_at)
        except FileExistsError:
            # these very bytes were archived under this name before (a manifest row lost with a
            # database restore): keep that file once it re-hashes to them
            fh.seek(0)
            sha = _sha256_of(fh, size)
            name = name_for(sha, old.sha256 if decided.get("grow") and old else None)
            if hash_copy(self.root / name) != (size, sha):
                raise CopyMismatch(f"{name} exists with other content") from None
            written = Written(name, size, sha, os.path.getsize(self.root / name))
        self.summary.bytes_read += size
        self.summary.bytes_written += written.compressed_size
        return written, decided["grow"]

    def _touch(self, old: Copy, size: int, mtime: int) -> None:
        with self.conn.transaction():
            manifest.touch(self.conn, old.id, size, mtime)
        old.source_size, old.source_mtime_ns = size, mtime
        self.summary.touched += 1

    def _record(self, ref, old, grow, written: Written, size, mtime, evidence, tables, *, repair: bool = False) -> None:
        head, ckpt, windows = evidence
        row = Copy(
            old.id if grow and old else 0,
            ref.source.namespace,
            ref.source.agent,
            ref.kind,
            ref.path,
            ref.rel_path,
            old.version if grow and old else (old.version + 1 if old else 1),
            written.archive_file,
            written.size,
            written.sha256,
            written.compressed_size,
            size,
            mtime,
            head,
            ckpt,
            windows,
            tables,
            None,  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
            None,
        )
        try:
            with self.conn.transaction():
                if grow and old is not None:
                    manifest.replace(self.conn, row)
                else:
                    row.id = manifest.insert(self.conn, row, self.host)
        except psycopg.Error as exc:
            # no row names the copy just written: remove it (never an orphan in the archive)
            if old is None or old.archive_file != written.archive_file:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.root / written.archive_file)
            if isinstance(exc, psycopg.errors.IntegrityError):
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise NotRecorded(f"the archive manifest refused the copy ({first})") from None
            raise
        if grow and old is not None:
            if old.archive_file != written.archive_file:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.root / old.archive_file)
            if repair:
                self.summary.repaired += 1
            else:
                self.summary.grown += 1
        elif old is not None:
            self.summary.new_versions += 1
        else:
            self.summary.copied += 1
        self.newest[(ref.source.namespace, ref.rel_path)] = row


def archive_pass(
    conn: psycopg.Connection,
    sources: Iterable[Source],
    root: Path,
    *,
    stop: threading.Event | None = None,
    on_file: Callable[[FileRef], None] | None = None,
    host: str = "",
) -> ArchiveSummary:
    """Copy what changed in `sources` (hot homes) into the archive at `root`; see the module
    docstring. `on_file(ref)` is called before a file is read for copying (progress). `host`:
    this machine's ``origin_host`` in the manifest (`config.Settings.archive_host`).

    Raises ArchiveUnwritable (nothing read), AnotherArchivePass, ArchiveFull (the pass stops;
    copies made before it count, the one in progress does not)."""
    check_writable(root)
    sources = list(sources)
    held: list[str] = []
    for namespace in sorted({s.namespace for s in sources}):
        if not conn.execute(
            "SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (ARCHIVE_LOCK_CLASS, namespace)
        ).fetchone()[0]:
            _unlock(conn, held)
            raise AnotherArchivePass(f"another archive pass is running (it is archiving {namespace})")
        held.append(namespace)
    started = time.monotonic()
    summary = ArchiveSummary()
    try:
        one = _Pass(conn, root, summary, on_file, host)
        for source in sources:
            if source.tier != "hot" or not (source.home.is_dir() or source.home.is_file()):
                continue
            for ref in iter_files(source, summary.skipped):
                if stop is not None and stop.is_set():
                    summary.interrupted = True
                    return summary
                summary.files_seen += 1
                one.one(ref)
        return summary
    finally:
        summary.seconds = time.monotonic() - started
        _unlock(conn, held)


def _unlock(conn: psycopg.Connection, namespaces: list[str]) -> None:
    """Release the archive locks of `namespaces` (a lost connection has released them)."""
    with contextlib.suppress(psycopg.Error):
        for namespace in namespaces:
            conn.execute("SELECT pg_advisory_unlock(%s::int, hashtext(%s))", (ARCHIVE_LOCK_CLASS, namespace))


__all__ = [
    "ARCHIVE_LOCK_CLASS",
    "AnotherArchivePass",
    "ArchiveFull",
    "ArchiveSummary",
    "ArchiveUnwritable",
    "archive_pass",
    "check_writable",
    "is_superset",
]
