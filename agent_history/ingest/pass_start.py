"""The start of an index pass: which files it looks at, what the catalogue knows of them, and
whether it takes the bulk path (docs/design.md §7).

- `list_files`: the sources' files (`discovery.iter_files`; a project file two sources find is
  the first one's) or just the given refs (`index --file`), each with its ``stat``; a missing
  home or an unreadable path is said in the summary, not raised.
- `known_files` / `register`: this host's ``ah.source_file`` rows by path; the new files
  inserted in one statement (status 'new', offset 0).
- `begin_bulk`: open the bulk path (`ingest.bulk`) when the pass takes it, or continue the one
  an earlier pass left unfinished.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

import psycopg

from agent_history.db.tables import source_files
from agent_history.ingest.discovery import FileRef, Source, iter_files, missing_home_reason
from agent_history.ingest.pass_locks import PassLocks
from agent_history.ingest.strategy import KnownFile, PassSummary


def list_files(
    sources: list[Source],
    refs: list[FileRef] | None,
    summary: PassSummary,
    known_cwds: Callable[[], tuple[str, ...]],
) -> tuple[list[tuple[FileRef, os.stat_result]], set[str], set[str]]:
    """The files of this pass with their ``stat``: `refs` when given (no discovery walk), else
    every file the `sources` list. Homes that are missing and paths that cannot be read or
    stat'ed are appended to `summary.skipped_homes` / `skipped_paths`. `known_cwds()`: the
    catalogued working directories (for sources that look only in known projects: Aider,
    Crush). Returns (files, the paths the walk listed, the namespaces it walked); both sets are
    empty for `refs`."""
    files: list[tuple[FileRef, os.stat_result]] = []
    for ref in refs or ():
        try:
            files.append((ref, os.stat(ref.path)))
        except OSError as exc:
            summary.skipped_paths.append(f"{ref.path}: {exc.strerror}")
    listed: set[str] = set()
    walked: set[str] = set()  # the namespaces this pass looked at
    for source in sources if refs is None else ():
        walked.add(source.namespace)
        if not (source.home.is_dir() or source.home.is_file()):  # a file: `--claude-export FILE`
            why = missing_home_reason(source.home)  # "does not exist" | "is a symlink loop"
            summary.skipped_homes.append(f"{source.namespace}: {source.home} {why}")
            continue
        if source.known_projects:  # Aider, Crush: the projects the catalogue already knows
            source = replace(source, project_dirs=known_cwds())
        for ref in iter_files(source, summary.skipped_paths):
            if ref.path in listed:  # a project file found by two sources: the first one's
                continue
            listed.add(ref.path)
            try:
                files.append((ref, os.stat(ref.path)))
            except OSError as exc:
                summary.skipped_paths.append(f"{ref.path}: {exc.strerror}")
    return files, listed, walked


def known_files(conn: psycopg.Connection, host: str | None) -> dict[str, KnownFile]:
    """This host's catalogued files by path (another host's files may have the same paths)."""
    return {r[0]: KnownFile(*r[1:]) for r in source_files.known_files(conn, host)}


def register(conn: psycopg.Connection, host: str | None, refs: list[FileRef], known: dict[str, KnownFile]) -> None:
    """Insert new files into ah.source_file in one statement (status 'new', offset 0, the
    parser version of their agent, None when it has no parser) and add them to `known`."""
    if not refs:
        return
    from agent_history.parsers import parser_class

    versions = {}
    for ref in refs:
        try:
            versions[ref.source.agent] = parser_class(ref.source.agent).VERSION
        except (KeyError, ImportError):
            versions[ref.source.agent] = None
    rows = source_files.register_files(
        conn,
        host,
        [r.path for r in refs],
        [r.source.namespace for r in refs],
        [r.source.agent for r in refs],
        [r.role for r in refs],
        [r.source.tier for r in refs],
        [r.rel_path for r in refs],
        [versions[r.source.agent] for r in refs],
    )
    by_path = {r.path: r for r in refs}
    for path, source_id in rows:
        known[path] = KnownFile(source_id, None, None, 0, 0, None, None, versions[by_path[path].source.agent], "new")


def begin_bulk(
    conn: psycopg.Connection,
    locks: PassLocks,
    files: list[tuple[FileRef, os.stat_result]],
    known: dict[str, KnownFile],
    run_id: int,
    *,
    file_mode: bool,
    mode: str,
    min_bytes: int | None,
):
    """Open the bulk path when this pass takes it (`ingest.bulk`: `mode` is ``[index] bulk``,
    `min_bytes` ``[index] bulk_min_bytes`` or None for `bulk.BULK_MIN_BYTES`), or continue the
    one an earlier pass left unfinished; returns its `bulk.BulkState` or None. `file_mode`:
    ``index --file``, which never starts one. Takes `locks`' bulk lock; a pass that cannot take
    it loads incrementally."""
    from agent_history.ingest import bulk

    if not bulk.can_bulk(conn):  # a non-owning role (ah_writer): incremental only
        return None
    state = bulk.pending(conn)
    if state is not None:
        # one bulk pass at a time (its mark, triggers and dropped indexes are every
        # namespace's); a pass that cannot take it loads incrementally (the end recomputes
        # the statistics from every stored row, the index builds cover every row)
        return state if locks.take_bulk() else None
    if file_mode or mode == "never":
        return None
    new_bytes = sum(
        max(0, st.st_size - known[ref.path].offset)
        for ref, st in files
        if not (known[ref.path].size == st.st_size and known[ref.path].mtime_ns == st.st_mtime_ns)
    )
    least = bulk.BULK_MIN_BYTES if min_bytes is None else min_bytes
    if not bulk.choose(mode, new_bytes=new_bytes, cold=bulk.is_cold(conn), min_bytes=least):
        return None
    # one sort-based build beats row-by-row maintenance when the pass at least doubles the
    # catalogue (docs/performance.md, "Bulk path")
    drop = new_bytes >= source_files.indexed_bytes(conn)
    if not locks.take_bulk():  # another pass is on the bulk path: load incrementally
        return None
    return bulk.begin(conn, run_id, drop_indexes=drop)
