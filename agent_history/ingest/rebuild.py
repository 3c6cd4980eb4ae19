"""`rebuild` and `rebuild-check` (docs/design.md §7): re-derive the catalogue from hot and cold copies.

Every catalogued transcript must still exist in the hot home or in its namespace's cold archive
(config ``cold_sources``, same relative layout). `rebuild_check` counts per namespace; `rebuild`
refuses — before truncating anything — when a catalogued file is missing from both tiers, then
empties the derived tables (keeping ``meta``, ``model_pricing``, ``index_run`` and any cache
tables listed in `KEPT_TABLES`), re-reads every hot file, then every cold file whose relative path
is not present hot.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from agent_history.db.roles import COLLECTOR_TABLES
from agent_history.harnesses import BY_NAME
from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import INDEX_LOCK, AnotherPassRunning, Loader, PassSummary
from agent_history.ingest.writer import EVENT_TABLES, PER_SOURCE_TABLES

DERIVED_TABLES: tuple[str, ...] = (
    *EVENT_TABLES,
    *PER_SOURCE_TABLES,
    "dirty_session",
    "session",
    "repo",
    "source_file",
    "chunk",
    "chunk_source",
    "embedding_failure",
    "loops",  # issue 12: derived by ingest.loops from the transcripts
    "lane",
    "loop_closeout",
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
)
"""Tables a rebuild keeps: the embedding cache by (model, input sha256) makes re-embedding free
and the collector tables are authoritative data."""


def truncate_derived(conn: psycopg.Connection) -> None:
    """Empty every derived table (no CASCADE: a new foreign key into them must be listed here)."""
    with conn.transaction():
        conn.execute("TRUNCATE " + ", ".join(f"ah.{t}" for t in DERIVED_TABLES) + " RESTART IDENTITY")
        # kept journal summaries: unlinked now (ids restart), relinked by the post-pass
        if conn.execute("SELECT to_regclass('ah.session_summary')").fetchone()[0] is not None:
            conn.execute("UPDATE ah.session_summary SET session_id = NULL WHERE session_id IS NOT NULL")


class RebuildRefused(Exception):
    """A catalogued transcript is missing from both the hot and the cold tier."""


@dataclass
class CheckResult:
    """Per-namespace counts of catalogued files: where a rebuild would find them."""

    namespaces: dict[str, dict[str, int]] = field(default_factory=dict)
    missing_files: list[str] = field(default_factory=list)

    @property
    def would_refuse(self) -> bool:
        """True when some catalogued file exists in neither tier."""
        return bool(self.missing_files)

    def as_dict(self) -> dict:
        """JSON-ready form (missing file list capped at 100)."""
        return {
            "namespaces": self.namespaces,
            "would_refuse": self.would_refuse,
            "missing_files": self.missing_files[:100],
        }


def catalogued_sources(conn: psycopg.Connection) -> list[Source]:
    """The hot homes the catalogue was built from (home = path minus its relative path)."""
    out: dict[tuple[str, str], Source] = {}
    for namespace, agent, path, rel in conn.execute(
        "SELECT DISTINCT ON (namespace, left(path, length(path) - length(rel_path) - 1)) namespace, agent, path, rel_path "
        "FROM ah.source_file WHERE tier = 'hot' AND rel_path IS NOT NULL AND path LIKE '%%/' || rel_path"
    ):
        home = path[: len(path) - len(rel) - 1]
        row = BY_NAME.get(agent)
        if row is not None and row.layout.home_may_be_file:  # a claude.ai export: the source is the file
            home = path
        out[(namespace, home)] = Source(namespace, agent, Path(home))
    return list(out.values())


def rebuild_check(conn: psycopg.Connection, cold: list[Source]) -> CheckResult:
    """Count catalogued files per namespace: hot (the catalogued hot file exists), cold (a copy
    exists under the namespace's cold archive at the same relative path), cold_only, missing."""
    cold_home = {s.namespace: s.home for s in cold}
    result = CheckResult()
    for namespace, path, rel, tier in conn.execute(
        "SELECT namespace, path, rel_path, tier FROM ah.source_file ORDER BY namespace, path"
    ):
        counts = result.namespaces.setdefault(namespace, {"hot": 0, "cold": 0, "cold_only": 0, "missing": 0})
        in_hot = tier == "hot" and os.path.isfile(path)
        if tier == "cold":
            in_cold = os.path.isfile(path)
        else:
            in_cold = bool(rel) and namespace in cold_home and os.path.isfile(cold_home[namespace] / rel)
        counts["hot"] += in_hot
        counts["cold"] += in_cold
        counts["cold_only"] += in_cold and not in_hot
        if not in_hot and not in_cold:
            counts["missing"] += 1
            result.missing_files.append(path)
    return result


def rebuild(
    conn: psycopg.Connection, hot: list[Source], cold: list[Source], *, allow_missing: bool = False, **loader_kw
) -> PassSummary:
    """Empty the derived tables and re-read hot then cold-only copies; returns the pass summary.

    `hot` adds to the homes the catalogue was built from (`catalogued_sources`).
    `allow_missing` drops the transcripts that are gone from both tiers instead of refusing
    (the way to retire a deleted home).

    Raises RebuildRefused (nothing truncated) if a catalogued file is in neither tier, and
    AnotherPassRunning if an index pass holds the lock.
    """
    if not conn.execute("SELECT pg_try_advisory_lock(%s)", (INDEX_LOCK,)).fetchone()[0]:
        raise AnotherPassRunning("another index pass is running")
    try:
        known = {(s.namespace, s.home) for s in hot}
        hot = [*hot, *(s for s in catalogued_sources(conn) if (s.namespace, s.home) not in known)]
        check = rebuild_check(conn, cold)
        if check.would_refuse and not allow_missing:
            raise RebuildRefused(
                f"{len(check.missing_files)} catalogued transcript(s) are missing from both hot and cold copies "
                f"(first: {check.missing_files[0]}); nothing was changed — `rebuild --allow-missing` drops them"
            )
        truncate_derived(conn)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (INDEX_LOCK,))
    hot_homes = {s.namespace: s.home for s in hot}
    shadowed = [
        dataclasses.replace(s, tier="cold", shadowed_by=(hot_homes[s.namespace],) if s.namespace in hot_homes else ())
        for s in cold
    ]
    return Loader(conn, **loader_kw).run([*hot, *shadowed])
