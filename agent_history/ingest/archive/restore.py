"""The archive as `rebuild`'s cold tier: which transcripts it holds, and staging them to be read.

A transcript is *in the archive* when a copy of it (namespace, home-relative path) is in the
manifest with no failed verification and its file is on disk. `rebuild` reads the archived
transcripts whose hot file is gone: `stage` decompresses, for each, the version `choose_version`
picks — the newest version that is not a truncation of another (a file that shrank keeps its
longer copy as the one read back) — into a staging directory laid out like the homes, which the
loader reads as cold sources shadowed by the hot homes; `relocate` then records those rows under
the transcript's original path with ``tier = 'archive'``, so the catalogue names the file the
agent wrote, not the staging copy. Each staged copy is checked against the manifest's size and
sha256 as it is decompressed; one that fails (a truncated or corrupt file) gives way to the next
good version, and a transcript with no readable version is listed in `Staged.unreadable` —
`rebuild` stages before it empties anything, so such a transcript refuses the rebuild like a
missing one.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pyzstd

from agent_history.db.tables import archive
from agent_history.ingest.archive import manifest
from agent_history.ingest.archive.copy import decompress_to, hash_copy
from agent_history.ingest.archive.manifest import Copy
from agent_history.ingest.discovery import Source


@dataclass
class Staged:
    """Staged archive copies: the cold sources to read, staged path → original path, and the
    transcripts none of whose copies could be read back (``"<original path>: <error>"``)."""

    sources: list[Source] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)


def archived(conn: psycopg.Connection, root: Path, host: str | None = "") -> set[tuple[str, str]]:
    """(namespace, rel_path) of every transcript with a good copy on disk under `root`, of
    machine `host`'s copies (`manifest.all_copies`; None: every machine's). Reads only those
    three columns of the good copies, row by row (no `manifest.Copy` per version)."""
    out: set[tuple[str, str]] = set()
    for namespace, rel_path, archive_file in archive.good_copies(conn, host):
        if (namespace, rel_path) not in out and (root / archive_file).is_file():
            out.add((namespace, rel_path))
    return out


def _is_truncation(root: Path, c: Copy, of: Copy) -> bool:
    """True when copy `c` is a proper prefix of copy `of` (its bytes are `of`'s first bytes)."""
    if of.size <= c.size:
        return False
    try:
        return hash_copy(root / of.archive_file, c.size) == (c.size, c.sha256)
    except (OSError, pyzstd.ZstdError, EOFError):
        return False


def choose_version(root: Path, copies: list[Copy]) -> Copy | None:
    """The version of one transcript to read back: the newest good one (no failed verification,
    file on disk) that is not a truncation of another good one; None when none is good."""
    good = [c for c in copies if c.verify_error is None and (root / c.archive_file).is_file()]
    for c in sorted(good, key=lambda x: x.version, reverse=True):
        if not any(_is_truncation(root, c, w) for w in good if w is not c):
            return c
    return None


def stage(
    conn: psycopg.Connection, root: Path, hot: list[Source], staging: Path, namespaces: set[str] | None = None
) -> Staged:
    """Decompress into `staging` (``<staging>/<namespace>/<rel_path>``) the chosen version of every
    archived transcript (of `namespaces` when given: one machine's rebuild, another machine's
    copies are in its own archive) whose file is neither at its recorded path nor under a hot home
    of its namespace; returns the cold sources to read (shadowed by the hot homes) and the path map."""
    homes: dict[str, list[Path]] = defaultdict(list)
    for s in hot:
        homes[s.namespace].append(s.home)
    by_key: dict[tuple[str, str], list[Copy]] = defaultdict(list)
    for c in manifest.all_copies(conn, host=None):  # by namespace: one machine's are its own
        if namespaces is None or c.namespace in namespaces:
            by_key[(c.namespace, c.rel_path)].append(c)
    out = Staged()
    agents: dict[str, str] = {}
    for (namespace, rel), copies in sorted(by_key.items()):
        if any(os.path.isfile(c.path) for c in copies) or any((h / rel).is_file() for h in homes.get(namespace, ())):
            continue
        dest = staging / namespace / rel
        chosen, errors = _stage_one(root, copies, dest)
        if chosen is None:
            if errors:
                out.unreadable.append(f"{copies[0].path}: {errors[-1]}")
            continue
        out.paths[str(dest)] = chosen.path
        agents[namespace] = chosen.agent
    out.sources = [
        Source(ns, agent, staging / ns, tier="cold", shadowed_by=tuple(homes.get(ns, ())))
        for ns, agent in sorted(agents.items())
    ]
    return out


def _stage_one(root: Path, copies: list[Copy], dest: Path) -> tuple[Copy | None, list[str]]:
    """Decompress the version `choose_version` picks to `dest`, checked against the manifest's
    size and sha256; a copy that fails (truncated or corrupt zstd, wrong content) is left out and
    the next choice tried. Returns the copy staged (None when none could be) and the errors."""
    left, errors = list(copies), []
    while (chosen := choose_version(root, left)) is not None:
        try:
            if hash_copy(root / chosen.archive_file) != (chosen.size, chosen.sha256):
                raise ValueError("its content does not match the manifest's sha256")
            decompress_to(root / chosen.archive_file, dest)
        except (OSError, pyzstd.ZstdError, EOFError, ValueError) as exc:
            errors.append(f"copy {chosen.archive_file} unreadable ({type(exc).__name__}: {exc})".replace("\n", " "))
            left.remove(chosen)
            continue
        os.utime(dest, ns=(chosen.source_mtime_ns, chosen.source_mtime_ns))
        return chosen, errors
    return None, errors


def relocate(conn: psycopg.Connection, paths: dict[str, str]) -> int:
    """Record the rows read from staged copies under their transcripts' original paths, tier
    ``archive`` (a path another row already holds keeps the staged name). Returns rows moved."""
    if not paths:
        return 0
    with conn.transaction():
        return archive.relocate(conn, list(paths), list(paths.values()))
