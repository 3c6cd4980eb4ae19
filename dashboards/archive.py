"""The archive dashboard (issue 32; the archive of issue 29, docs/design.md §18): six tabs —
tiers, freshness, copies missing, sizes and growth, rebuild readiness, filesystem — each with
SQL panels over the manifest ``ah.archive_copy`` and the catalogue's ``ah.source_file`` (read as
``ah_reader``) beside the exported archive families (``ah_archive_*``, ``ah_filesystem_used_ratio``).

A transcript's hot file is its ``ah.source_file`` row; its archived copies are the manifest
rows of the same (namespace, path), one per version. Whether a hot file still exists on disk is
not in the catalogue: the exported ``ah_archive_files_missing`` (the collector looks at the
disk) says which catalogued files are gone from a tier. The time picker filters by when a copy was archived (or a hot file last changed); the
``namespace`` variable by the rows' namespace (Prometheus panels match it as a regex).
"""

from __future__ import annotations

from dashboards.sdk import PromPanel, Section, SqlPanel, dashboard, sql_variable

UID = "ah-archive"

NS_F = "f.namespace IN ($namespace)"
NS_A = "a.namespace IN ($namespace)"
PROM_NS = 'namespace=~"$namespace"'
TIER = "{{namespace}} {{tier}}"
HOT_TS = "to_timestamp(f.mtime_ns / 1e9)"
# Hot files and their newest copy (NULL when none): one row per catalogued transcript file.
NEWEST_COPY = """LEFT JOIN LATERAL (SELECT a.* FROM ah.archive_copy a
    WHERE a.namespace = f.namespace AND a.path = f.path ORDER BY a.version DESC LIMIT 1) AS a ON true"""


def _prom(title: str, expr: str, legend: str, meaning: str, unit: str | None = None, **size) -> PromPanel:
    return PromPanel(title, "timeseries", ((expr, legend),), meaning, unit=unit, **size)


TIERS = Section(
    "Tiers",
    "What does each tier hold: transcript files in the hot tier, archived copies in the cold tier, per namespace?",
    (
        SqlPanel(
            "Files and copies by namespace",
            "table",
            "SELECT f.namespace, count(*) AS catalogued_files, count(a.id) AS archived_files,\n"
            "  sum(a.version - 1) FILTER (WHERE a.version > 1) AS extra_versions\n"
            f"FROM ah.source_file f {NEWEST_COPY}\n"
            f"WHERE $__timeFilter({HOT_TS}) AND {NS_F}\nGROUP BY 1 ORDER BY 1",
            "Catalogued transcript files, how many have an archived copy, and versions kept beyond the first "
            "(a file that shrank or was rewritten).",
            width=24,
        ),
        SqlPanel(
            "Copies by kind",
            "barchart",
            "SELECT a.kind, count(*) AS copies FROM ah.archive_copy a\n"
            f"WHERE $__timeFilter(a.archived_at) AND {NS_A}\nGROUP BY 1 ORDER BY copies DESC, kind",
            "Archived copies by source kind (JSONL, document, database snapshot, Markdown).",
        ),
        _prom(
            "Exported files by tier", f"ah_archive_files{{{PROM_NS}}}", TIER, "Transcript files found on disk per tier."
        ),
        _prom(
            "Exported tier available",
            f"ah_archive_tier_available{{{PROM_NS}}}",
            TIER,
            "1 when the tier's directory is readable (alert: cold tier unavailable).",
            width=24,
            height=6,
        ),
    ),
)

FRESHNESS = Section(
    "Freshness",
    "How current is the archive: when was each namespace last copied, and which hot files changed since their copy?",
    (
        SqlPanel(
            "Last copy by namespace",
            "table",
            "SELECT a.namespace, max(a.archived_at) AS last_archived, max(a.verified_at) AS last_verified,\n"
            "  count(*) AS copies\nFROM ah.archive_copy a\n"
            f"WHERE $__timeFilter(a.archived_at) AND {NS_A}\nGROUP BY 1 ORDER BY 1",
            "When each namespace's newest copy was written and last re-hashed.",
        ),
        SqlPanel(
            "Hot files ahead of their copy",
            "table",
            "SELECT f.namespace, f.path, f.size AS hot_bytes, a.source_size AS copied_bytes,\n"
            "  to_timestamp(f.mtime_ns / 1e9) AS hot_changed, a.archived_at\n"
            f"FROM ah.source_file f {NEWEST_COPY}\n"
            f"WHERE $__timeFilter({HOT_TS}) AND {NS_F} AND a.id IS NOT NULL\n"
            "  AND (f.size IS DISTINCT FROM a.source_size OR f.mtime_ns IS DISTINCT FROM a.source_mtime_ns)\n"
            "ORDER BY hot_changed DESC LIMIT 50",
            "Files whose size or modification time differs from what their newest copy saw: the next archive pass "
            "copies them.",
        ),
        _prom(
            "Exported newest file age",
            f"time() - ah_archive_newest_mtime_timestamp_seconds{{{PROM_NS}}}",
            TIER,
            "Age of the newest file per tier (alert: hot older than 36 h while cold is newer).",
            unit="s",
            width=24,
        ),
    ),
)

MISSING = Section(
    "Copies missing",
    "Which catalogued transcripts have no archived copy yet, and which are gone from a tier?",
    (
        SqlPanel(
            "Not archived by namespace",
            "barchart",
            "SELECT f.namespace, count(*) FILTER (WHERE a.id IS NULL) AS not_archived, count(a.id) AS archived\n"
            f"FROM ah.source_file f {NEWEST_COPY}\nWHERE $__timeFilter({HOT_TS}) AND {NS_F}\nGROUP BY 1 ORDER BY 1",
            "Catalogued files without an archived copy yet, and those with one (a rebuild can read them back if "
            "the harness deletes them).",
        ),
        SqlPanel(
            "Files without a copy",
            "table",
            "SELECT f.namespace, f.path, f.size AS bytes, to_timestamp(f.mtime_ns / 1e9) AS changed\n"
            f"FROM ah.source_file f {NEWEST_COPY}\nWHERE $__timeFilter({HOT_TS}) AND {NS_F} AND a.id IS NULL\n"
            "ORDER BY changed DESC NULLS LAST, f.path LIMIT 50",
            "The 50 most recently changed catalogued files with no archived copy.",
        ),
        _prom(
            "Exported retention backlog",
            f"ah_archive_uncopied_files{{{PROM_NS}}}",
            "{{namespace}}",
            "Hot files with no cold copy yet (alert: not cleared for 26 h).",
        ),
        _prom(
            "Exported catalogued files missing",
            f"ah_archive_files_missing{{{PROM_NS}}}",
            TIER,
            "Catalogued files no longer found in the tier.",
        ),
    ),
)

SIZES = Section(
    "Sizes and growth",
    "How big is the archive, how well does it compress, and how fast does it grow?",
    (
        SqlPanel(
            "Archive size by namespace",
            "table",
            "SELECT a.namespace, count(*) AS copies, sum(a.size) AS bytes, sum(a.compressed_size) AS stored_bytes,\n"
            "  round(sum(a.size)::numeric / nullif(sum(a.compressed_size), 0), 2) AS compression_ratio\n"
            f"FROM ah.archive_copy a\nWHERE $__timeFilter(a.archived_at) AND {NS_A}\nGROUP BY 1 ORDER BY 1",
            "Uncompressed and stored (zstd) bytes of the copies, and how many times smaller they are stored.",
        ),
        SqlPanel(
            "Bytes archived by day",
            "timeseries",
            "SELECT $__timeGroupAlias(a.archived_at, 1d), a.namespace AS metric, sum(a.compressed_size) AS stored_bytes\n"
            f"FROM ah.archive_copy a\nWHERE $__timeFilter(a.archived_at) AND {NS_A}\nGROUP BY 1, 2 ORDER BY 1",
            "Stored bytes of the copies written each day (a grown file's copy counts on the day it was replaced).",
            fmt="time_series",
            unit="bytes",
        ),
        _prom(
            "Exported bytes by tier", f"ah_archive_bytes{{{PROM_NS}}}", TIER, "Bytes of the files per tier.", "bytes"
        ),
        _prom(
            "Exported archive growth",
            f'sum by (namespace) (delta(ah_archive_bytes{{tier="cold", {PROM_NS}}}[1d]))',
            "{{namespace}}",
            "Change of the cold tier's bytes over the last day.",
            "bytes",
        ),
    ),
)

READINESS = Section(
    "Rebuild readiness",
    "Could the catalogue be rebuilt from the archive: is every catalogued file copied and every copy verified?",
    (
        SqlPanel(
            "Readiness by namespace",
            "table",
            "SELECT f.namespace, count(*) AS files, count(a.id) AS archived,\n"
            "  count(*) FILTER (WHERE a.id IS NOT NULL AND a.verify_error IS NULL) AS verified_good,\n"
            "  count(*) FILTER (WHERE a.verify_error IS NOT NULL) AS failing_verification,\n"
            "  round(count(*) FILTER (WHERE a.id IS NOT NULL AND a.verify_error IS NULL)::numeric / count(*), 4) AS ready_share\n"
            f"FROM ah.source_file f {NEWEST_COPY}\nWHERE $__timeFilter({HOT_TS}) AND {NS_F}\nGROUP BY 1 ORDER BY 1",
            "Per namespace: the share of catalogued files whose newest copy exists and passed its last hash check.",
            width=24,
        ),
        SqlPanel(
            "Copies failing verification",
            "table",
            "SELECT a.namespace, a.rel_path, a.version, a.verified_at, left(a.verify_error, 200) AS error\n"
            f"FROM ah.archive_copy a\nWHERE $__timeFilter(a.archived_at) AND {NS_A} AND a.verify_error IS NOT NULL\n"
            "ORDER BY a.verified_at DESC, a.rel_path LIMIT 50",
            "Copies whose last `archive --verify` failed (missing, unreadable, or bytes that no longer hash).",
            width=24,
        ),
    ),
)

FILESYSTEM = Section(
    "Filesystem",
    "Is the filesystem under either tier filling up, and how much of it do the transcripts take?",
    (
        SqlPanel(
            "Bytes per tier",
            "barchart",
            "SELECT 'hot' AS tier, sum(f.size) AS bytes FROM ah.source_file f\n"
            f"WHERE $__timeFilter({HOT_TS}) AND {NS_F}\n"
            "UNION ALL SELECT 'cold', sum(a.compressed_size) FROM ah.archive_copy a\n"
            f"WHERE $__timeFilter(a.archived_at) AND {NS_A}",
            "What the catalogued hot files and the stored copies take on disk.",
            unit="bytes",
        ),
        _prom(
            "Exported filesystem used",
            f"ah_filesystem_used_ratio{{{PROM_NS}}}",
            TIER,
            "Used fraction of the filesystem holding each tier (alerts: hot > 85 %, cold > 90 %).",
            "percentunit",
        ),
    ),
)

SECTIONS = (TIERS, FRESHNESS, MISSING, SIZES, READINESS, FILESYSTEM)

VARIABLES = (
    sql_variable(
        "namespace",
        "Namespace",
        "SELECT namespace FROM ah.source_file UNION SELECT namespace FROM ah.archive_copy ORDER BY 1",
    ),
)


def build():
    """The archive dashboard as an SDK ``Dashboard`` builder."""
    return dashboard(
        UID,
        "agent-history · archive",
        "The transcript archive: tiers, freshness, missing copies, sizes, rebuild readiness and filesystem "
        "(generated by dashboards/archive.py; do not edit in Grafana).",
        SECTIONS,
        VARIABLES,
    )
