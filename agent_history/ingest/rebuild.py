"""`rebuild` and `rebuild-check` (docs/design.md §7): re-derive the catalogue from hot and cold copies.

Every catalogued transcript must still exist in the hot home, in its namespace's cold copy
(config ``cold_sources``, same relative layout) or in the archive (`agent_history.ingest.archive`:
compressed, versioned copies listed in ``ah.archive_copy``). `rebuild_check` counts per namespace;
`rebuild` refuses — before truncating anything — when a catalogued file is missing from every
tier, then empties the derived tables (keeping ``meta``, ``model_pricing``, ``index_run``, the
archive manifest and the tables listed in `KEPT_TABLES`), re-reads every hot file, then every
cold file whose relative path is not present hot, then the archived transcripts whose hot file is
gone (decompressed into a staging home, `archive.restore.stage`; their rows keep the original
path with ``tier = 'archive'``).

Many machines (docs/design.md §7 "Many machines"): a rebuild run with a host name covers *its
scope* — the files that host indexed (``origin_host``), and the unknown-host rows (loaded before
migration 0024) of the namespaces it indexes (`Scope`). When the catalogue holds nothing else
and no other pass runs, the derived tables are emptied as before; otherwise only the scope's
files and sessions are deleted (their rows follow by cascade) and another host's rows are
untouched.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from agent_history.db.roles import COLLECTOR_TABLES
from agent_history.db.tables import purge
from agent_history.db.tables.merges import EVENT_TABLES, PER_SOURCE_TABLES
from agent_history.harnesses import BY_NAME
from agent_history.ingest.archive.restore import Staged, archived, relocate, stage
from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import AnotherPassRunning, Loader, PassLocks, PassSummary
from agent_history.ingest.pass_locks import hold_rebuild, rebuild_running, release_rebuild

DERIVED_TABLES: tuple[str, ...] = (
    *EVENT_TABLES,
    *PER_SOURCE_TABLES,
    "dirty_session",
    "row_claim",  # owners of shared rows (migration 0026_owner): claimed again as files are read
    "session",
    "repo",
    "source_file",
    "chunk",
    "chunk_source",
    "embedding_failure",
    "loops",  # issue 12: derived by ingest.loops from the transcripts
    "lane",
    "loop_closeout",
    "secret_finding",  # issue 29: refilled by the secrets scan from the stored text
    "secret_scan",
)
"""Tables a rebuild empties."""
KEPT_TABLES: tuple[str, ...] = (
    "meta",
    "model_pricing",
    "model_price_ref",  # model names → price rows: re-resolved when the price data changes
    "index_run",
    "embedding",
    "embedding_model",
    "embedding_usage",
    "session_summary",  # journal-sync: not derived from transcripts; relinked by the post-pass
    "session_topic",
    "journal_sync_run",
    "session_exclusion",  # curation (issue 17): a person's decision, keyed by natural key
    *COLLECTOR_TABLES,  # collect (issue 30): read from repositories, not from transcripts
    "archive_copy",  # the archive's manifest (issue 29): authoritative, how deleted transcripts come back
)
"""Tables a rebuild keeps: the embedding cache by (model, input sha256) makes re-embedding free
and the collector tables are authoritative data."""


def truncate_derived(conn: psycopg.Connection, *, started: bool = False) -> None:
    """Empty every derived table (no CASCADE: a new foreign key into them must be listed here).
    With `started`, record in the same transaction that a rebuild is under way (`REBUILD_KEY`)."""
    with conn.transaction():
        purge.truncate(conn, DERIVED_TABLES)
        if started:
            purge.mark_started(conn, REBUILD_KEY)
        # kept journal summaries: unlinked now (ids restart), relinked by the post-pass
        purge.unlink_summaries(conn)


@dataclass(frozen=True)
class Scope:
    """The catalogued files a rebuild (or rebuild-check) covers: every file when `host` is None,
    else those whose ``origin_host`` is `host` and the unknown-host ones (NULL) of `namespaces`."""

    host: str | None = None
    namespaces: frozenset[str] = frozenset()

    def params(self) -> dict:
        """The query parameters of the scope's condition (`db.tables.purge.SCOPE`)."""
        return {"host": self.host, "ns": sorted(self.namespaces)}


def scope_namespaces(conn: psycopg.Connection, scope: Scope) -> list[str]:
    """The namespaces of the scope's catalogued files and of `scope.namespaces`, sorted."""
    return sorted(purge.scope_namespaces(conn, scope.params()) | set(scope.namespaces))


def outside_scope(conn: psycopg.Connection, scope: Scope) -> bool:
    """Whether the catalogue holds a file outside `scope` (another host's)."""
    return purge.outside_scope(conn, scope.params())


def purge_scope(conn: psycopg.Connection, scope: Scope, namespaces: list[str], *, started: bool = False) -> None:
    """Delete the scope's catalogued files and their sessions (every row of theirs follows by
    cascade; sessions whose file is gone, in `namespaces`, too), in one transaction, leaving every
    other host's rows untouched. With `started`, record that host's `rebuild_keys` key in the same
    transaction."""
    with conn.transaction():
        purge.delete_scope(conn, scope.params(), namespaces)
        if started:
            purge.mark_started(conn, rebuild_keys(scope.host)[-1])


class RebuildRefused(Exception):
    """A catalogued transcript is missing from both the hot and the cold tier."""


@dataclass
class CheckResult:
    """Per-namespace counts of catalogued files: where a rebuild would find them (``hot``, ``cold``
    copy, ``archive``, ``cold_only`` = in a cold copy or the archive but not hot, ``missing``)."""

    namespaces: dict[str, dict[str, int]] = field(default_factory=dict)
    missing_files: list[str] = field(default_factory=list)
    """The first `MAX_LISTED_MISSING` missing files (`missing_count` counts them all)."""
    missing_count: int = 0

    @property
    def would_refuse(self) -> bool:
        """True when some catalogued file exists in neither tier."""
        return self.missing_count > 0

    def add_missing(self, path: str) -> None:
        """Count a file missing from every tier; list it while fewer than the cap are."""
        self.missing_count += 1
        if len(self.missing_files) < MAX_LISTED_MISSING:
            self.missing_files.append(path)

    def as_dict(self) -> dict:
        """JSON-ready form (missing file list capped at `MAX_LISTED_MISSING`)."""
        return {
            "namespaces": self.namespaces,
            "would_refuse": self.would_refuse,
            "missing_count": self.missing_count,
            "missing_files": self.missing_files,
        }


MAX_LISTED_MISSING = 100
"""Missing files `rebuild_check` keeps by path (what `rebuild-check` prints; the counts cover all)."""


def catalogued_sources(conn: psycopg.Connection, scope: Scope = Scope()) -> list[Source]:
    """The hot homes the catalogue (within `scope`: this host's files) was built from (home =
    path minus its relative path)."""
    out: dict[tuple[str, str], Source] = {}
    for namespace, agent, path, rel in purge.hot_files(conn, scope.params()):
        home = path[: len(path) - len(rel) - 1]
        row = BY_NAME.get(agent)
        if row is not None and row.layout.home_may_be_file:  # a claude.ai export: the source is the file
            home = path
        out[(namespace, home)] = Source(namespace, agent, Path(home))
    return list(out.values())


def rebuild_check(
    conn: psycopg.Connection, cold: list[Source], archive: Path | None = None, scope: Scope = Scope()
) -> CheckResult:
    """Count catalogued files (within `scope`: this host's) per namespace: hot (the catalogued
    hot file exists), cold (a copy exists under the namespace's cold copy at the same relative
    path), archive (a good copy is in the archive at `archive`), cold_only (cold or archive, not
    hot), missing. The catalogue is streamed (`verify.stream_rows`) and at most
    `MAX_LISTED_MISSING` paths kept: memory stays bounded whatever its size (the archive's good
    copies are held as a set of keys)."""
    from agent_history.ingest.verify import stream_rows

    cold_home = {s.namespace: s.home for s in cold}
    in_archive = archived(conn, archive, None) if archive is not None else set()  # files are scoped
    result = CheckResult()
    for namespace, path, rel, tier in stream_rows(conn, purge.CHECK_ROWS, scope.params(), name="ah_rebuild_check"):
        counts = result.namespaces.setdefault(
            namespace, {"hot": 0, "cold": 0, "archive": 0, "cold_only": 0, "missing": 0}
        )
        in_hot = tier in ("hot", "archive") and os.path.isfile(path)
        if tier == "cold":
            in_cold = os.path.isfile(path)
        else:
            in_cold = bool(rel) and namespace in cold_home and os.path.isfile(cold_home[namespace] / rel)
        archived_copy = bool(rel) and (namespace, rel) in in_archive
        counts["hot"] += in_hot
        counts["cold"] += in_cold
        counts["archive"] += archived_copy
        counts["cold_only"] += (in_cold or archived_copy) and not in_hot
        if not in_hot and not in_cold and not archived_copy:
            counts["missing"] += 1
            result.add_missing(path)
    return result


def rebuild(
    conn: psycopg.Connection,
    hot: list[Source],
    cold: list[Source],
    *,
    allow_missing: bool = False,
    archive: Path | None = None,
    staging: Path | None = None,
    scope: Scope = Scope(),
    host: str | None = None,
    **loader_kw,
) -> PassSummary:
    """Empty the derived tables and re-read hot, then cold-only, then archive-only copies; returns
    the pass summary.

    `hot` adds to the homes the catalogue was built from (`catalogued_sources`). `archive` is the
    archive's root (None: no archive), `staging` the directory its copies are decompressed under
    for the pass (a temporary directory inside it, removed afterwards; default the system's).
    `allow_missing` drops the transcripts that are gone from every tier instead of refusing
    (the way to retire a deleted home).

    `scope` limits the rebuild to one host's files (`Scope`; the default: the whole catalogue,
    one machine) — the unknown-host files of the given sources' namespaces are in it too —,
    leaving every other host's rows untouched. `host` is the ``origin_host`` the re-read rows get.

    Raises RebuildRefused (nothing truncated) if a catalogued file is in neither tier, and
    AnotherPassRunning if another rebuild runs or an index pass holds the lock of a namespace in
    scope. Holds `pass_locks.REBUILD_LOCK` from start to end.
    """
    if scope.host is not None:
        scope = Scope(scope.host, frozenset({*scope.namespaces, *(s.namespace for s in [*hot, *cold])}))
    hold_rebuild(conn)  # held to the end: while it is, the rebuild mark means "under way"
    try:
        return _rebuild(conn, hot, cold, allow_missing, archive, staging, scope, host, loader_kw)
    finally:
        release_rebuild(conn)


def _rebuild(
    conn: psycopg.Connection,
    hot: list[Source],
    cold: list[Source],
    allow_missing: bool,
    archive: Path | None,
    staging: Path | None,
    scope: Scope,
    host: str | None,
    loader_kw: dict,
) -> PassSummary:
    """`rebuild` under `REBUILD_LOCK` (`pass_locks.hold_rebuild`)."""
    locks = PassLocks(conn)
    locks.take(scope_namespaces(conn, scope))
    work: Path | None = None
    try:
        known = {(s.namespace, s.home) for s in hot}
        hot = [*hot, *(s for s in catalogued_sources(conn, scope) if (s.namespace, s.home) not in known)]
        check = rebuild_check(conn, cold, archive, scope)
        if check.would_refuse and not allow_missing:
            n = check.missing_count
            raise RebuildRefused(
                f"{n:,} catalogued {'transcript is' if n == 1 else 'transcripts are'} missing from hot, cold and "
                "archive copies "
                f"(first: {check.missing_files[0]}); nothing was changed — `rebuild --allow-missing` drops them"
            )
        staged = Staged()
        if archive is not None:
            # read the archive back *before* emptying anything: a copy that cannot be read refuses
            # the rebuild the way a missing file does, and the catalogue is left as it was
            if staging is not None:
                staging.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix="ah-restore-", dir=staging))
            mine = set(scope_namespaces(conn, scope)) if scope.host is not None else None
            staged = stage(conn, archive, [*hot, *cold], work, mine)
            if staged.unreadable and not allow_missing:
                raise RebuildRefused(
                    f"{len(staged.unreadable)} archived transcript(s) have no readable copy (first: "
                    f"{staged.unreadable[0]}); nothing was changed — `archive` re-copies files still on disk, "
                    "`rebuild --allow-missing` drops the others"
                )
        # the whole catalogue only when it is all in scope and no other pass runs
        if not outside_scope(conn, scope) and locks.take_all():
            truncate_derived(conn, started=True)
        else:
            purge_scope(conn, scope, scope_namespaces(conn, scope), started=True)
    except BaseException:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        locks.release()
    hot_homes = {s.namespace: s.home for s in hot}
    shadowed = [
        dataclasses.replace(s, tier="cold", shadowed_by=(hot_homes[s.namespace],) if s.namespace in hot_homes else ())
        for s in cold
    ]
    try:
        summary = Loader(conn, host=host, **loader_kw).run([*hot, *shadowed, *staged.sources])
        if summary is None:
            raise AnotherPassRunning("another index pass is running")
        relocate(conn, staged.paths)
        if not summary.interrupted:
            finish_rebuild(conn, scope.host)
        return summary
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


REBUILD_KEY = "rebuild:started_at"
"""``ah.meta`` key set (to the start time) in the transaction that empties the derived tables and
removed when the re-read completes: while it is there the catalogue is a partial rebuild."""


def rebuild_keys(host: str | None = None) -> list[str]:
    """The `REBUILD_KEY`s a machine's rebuild sets: the whole catalogue's, and with `host` its
    own scope's (``rebuild:started_at:<host>``): another host's rebuild under way is not this
    machine's interrupted one."""
    return [REBUILD_KEY, *([f"{REBUILD_KEY}:{host}"] if host else [])]


def finish_rebuild(conn: psycopg.Connection, host: str | None = None) -> None:
    """Mark the rebuild complete (remove `rebuild_keys`)."""
    purge.clear_started(conn, rebuild_keys(host))


def rebuild_interrupted(conn: psycopg.Connection, host: str | None = None) -> str | None:
    """When a rebuild emptied the catalogue (with `host`: or that host's scope) and did not
    finish re-reading: the time it started (ISO 8601 text), else None. `index` and `status` say
    so: only `rebuild` brings back the transcripts that exist only in cold copies and the archive.
    None too while a rebuild holds `REBUILD_LOCK`: its mark then means under way, not interrupted."""
    at = purge.started_at(conn, rebuild_keys(host))
    return None if at is None or rebuild_running(conn) else at
