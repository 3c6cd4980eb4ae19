"""The operations dashboard (Prometheus only): are the indexer, embedder, journal-sync, collect and the
metric collectors healthy; how big are the hot and cold archive tiers; is a filesystem filling up;
and the agents' efficiency (the ``agent_efficiency_*`` sections, `dashboards.efficiency`)?

Every metric name is a family of ``agent_history/telemetry/families.py``. The ``namespace``
variable filters the families that carry that label.
"""

from __future__ import annotations

from dashboards import efficiency
from dashboards.repositories import repository_metric_panels
from dashboards.sdk import PromPanel, Section, dashboard, prom_variable

UID = "ah-operations"

NS = 'namespace=~"$namespace"'


def _stat(title: str, expr: str, legend: str, meaning: str, *, unit: str | None = None, **size) -> PromPanel:
    """A stat panel of one instant query (6 × 4 unless `size` says otherwise)."""
    return PromPanel(
        title, "stat", ((expr, legend),), meaning, unit=unit, instant=True, **({"width": 6, "height": 4} | size)
    )


def _series(title: str, expr: str, legend: str, meaning: str, *, unit: str | None = None, **size) -> PromPanel:
    """A time-series panel of one query (8 wide unless `size` says otherwise)."""
    return PromPanel(title, "timeseries", ((expr, legend),), meaning, unit=unit, **({"width": 8} | size))


def _increase(expr: str, by: str) -> str:
    """Increase per Grafana rate interval of counter selector `expr`, summed by label `by`."""
    return f"sum by ({by}) (increase({expr}[$__rate_interval]))"


def _run_section(run: str, title: str, question: str, extra: tuple[PromPanel, ...] = ()) -> Section:
    """The panels every pass kind (index, embed, journal_sync) shares."""
    sel = f'{{run="{run}"}}'
    return Section(
        title,
        question,
        (
            _stat(f"{title}: last pass succeeded", f"ah_run_success{sel}", "success", "1 when the last pass succeeded, 0 when it failed."),
            _stat(f"{title}: since last success", f"time() - ah_run_last_success_timestamp_seconds{sel}", "age", "Time since the last successful pass ended.", unit="s"),
            _stat(f"{title}: pass holds the lock", f"ah_run_lock_held{sel}", "lock", "1 while a pass holds the run's advisory lock."),
            _series(f"{title}: passes by outcome", _increase(f"ah_runs_total{sel}", "outcome"), "{{outcome}}", "Passes finished per interval, by outcome.", width=6, height=4),
            _series(f"{title}: pass duration", f"ah_run_duration_seconds{sel}", "duration", "Duration of the last pass.", unit="s"),
            PromPanel(
                f"{title}: work per pass",
                "timeseries",
                ((f"ah_run_files_changed{sel}", "files changed"), (f"ah_run_rows_written{sel}", "rows written")),
                "Files changed and rows written by the last pass.",
                width=8,
            ),
            _series(f"{title}: bytes read per pass", f"ah_run_read_bytes{sel}", "read", "Bytes read by the last pass.", unit="bytes"),
            *extra,
        ),
    )  # fmt: skip


INDEXER = _run_section(
    "index",
    "Indexer",
    "Does the indexer run, succeed and keep up with the transcripts on disk?",
    (
        _series("Lag by namespace", f"ah_catalogue_lag_bytes{{{NS}}}", "{{namespace}}", "Bytes on disk not yet indexed (alert: not decreasing for 1 h).", unit="bytes"),
        _series("Dirty sessions", "ah_catalogue_dirty_sessions", "dirty", "Sessions waiting for the post-pass."),
        _series("Parse issues by kind", "ah_catalogue_parse_issues", "{{kind}}", "Parse issues in the catalogue by kind (alerts: new issues in 6 h; load errors)."),
        _series("Catalogue rows by table", "ah_catalogue_rows", "{{table}}", "Rows per catalogue table.", width=12),
        _series("Sessions by agent", "ah_catalogue_sessions", "{{agent}}", "Sessions (threads) per agent.", width=12),
    ),
)  # fmt: skip

EMBEDDER = _run_section(
    "embed",
    "Embedder",
    "Does the embedder run, and does pending work drain?",
    (
        _series("Embedding chunks by status", "ah_embeddings", "{{embedding_status}}", "Chunks pending, failed and done (alert: pending for over 1 h).", width=24),
        _series("Secret-shaped spans by detector", "ah_secrets_found", "{{detector}}", "Findings of the last `agent-history secrets` scan in stored messages and tool I/O (0 before the first scan).", width=24),
    ),
)  # fmt: skip

JOURNAL = _run_section("journal_sync", "Journal sync", "Are session summaries synced from the journal database?")

COLLECT = _run_section(
    "collect",
    "Collect",
    "Does `collect` read the repositories (commits, Backlog tasks, CI runs), and what could it not read?",
    repository_metric_panels(),
)

COLLECTORS = Section(
    "Collectors",
    "Do the metric collectors themselves run on time and without errors?",
    (
        _series("Collector succeeded", "ah_collector_success", "{{collector}}", "1 when the collector's last run succeeded (alert: failing for 30 min)."),
        _series("Since collector success", "time() - ah_collector_last_success_timestamp_seconds", "{{collector}}", "Time since each collector last succeeded.", unit="s"),
        _series("Collection duration", "ah_collector_duration_seconds", "{{collector}}", "Duration of each collector's last run (alert: over 60 s for 10 min).", unit="s"),
        _series("Collector errors", _increase("ah_collector_errors_total", "collector"), "{{collector}}", "Collector runs that failed or ran late, per interval.", width=12),
        _series("Dropped samples", _increase("ah_telemetry_dropped_samples_total", "family"), "{{family}}", "Samples dropped because a label value was outside its declared set (a code bug if not 0).", width=12),
    ),
)  # fmt: skip

TIER = "{{namespace}} {{tier}}"

ARCHIVE = Section(
    "Archive",
    "How many transcript files and bytes sit in the hot and cold tiers, is the cold tier reachable and "
    "current, and is anything missing or waiting to be copied?",
    (
        _series("Files by tier", f"ah_archive_files{{{NS}}}", TIER, "Transcript files found on disk."),
        _series("Bytes by tier", f"ah_archive_bytes{{{NS}}}", TIER, "Bytes of those files.", unit="bytes"),
        _series("Newest file age", f"time() - ah_archive_newest_mtime_timestamp_seconds{{{NS}}}", TIER, "Age of the newest file per tier (alert: hot older than 36 h while cold is newer).", unit="s"),
        _stat("Tier available", f"ah_archive_tier_available{{{NS}}}", TIER, "1 when the tier's directory is readable (alert: cold tier unavailable).", width=8, height=8),
        _series("Catalogued files missing", f"ah_archive_files_missing{{{NS}}}", TIER, "Catalogued files no longer found in the tier."),
        _series("Retention backlog", f"ah_archive_uncopied_files{{{NS}}}", "{{namespace}}", "Hot files with no cold copy yet (alert: not cleared for 26 h)."),
    ),
)  # fmt: skip

FILESYSTEM = Section(
    "Filesystem",
    "Is the filesystem under either tier filling up?",
    (
        _series("Filesystem used", f"ah_filesystem_used_ratio{{{NS}}}", TIER, "Used fraction of the filesystem holding each tier (alerts: hot > 85 %, cold > 90 %).", unit="percentunit", width=24),
    ),
)  # fmt: skip

SECTIONS = (INDEXER, EMBEDDER, JOURNAL, COLLECT, COLLECTORS, ARCHIVE, FILESYSTEM, *efficiency.SECTIONS)

VARIABLES = (prom_variable("namespace", "Namespace", "label_values(ah_archive_files, namespace)"),)


def build():
    """The operations dashboard as an SDK ``Dashboard`` builder."""
    return dashboard(
        UID,
        "agent-history · operations",
        "Health of the indexer, embedder, journal-sync and metric collectors; archive tiers and "
        "filesystem pressure; agent efficiency (generated by dashboards/operations.py; do not edit in Grafana).",
        SECTIONS,
        VARIABLES,
        time_from="now-24h",
    )
