"""The operations dashboard (Prometheus only): are the indexer, embedder, journal-sync and the
metric collectors healthy; how big are the hot and cold archive tiers; is a filesystem filling up?

Every metric name is a family of ``agent_history/telemetry/families.py``. The ``namespace``
variable filters the families that carry that label.
"""

from __future__ import annotations

from dashboards.sdk import PromPanel, Section, dashboard, prom_variable

UID = "ah-operations"

NS = 'namespace=~"$namespace"'


def _run_section(run: str, title: str, question: str, extra: tuple[PromPanel, ...] = ()) -> Section:
    """The panels every pass kind (index, embed, journal_sync) shares."""
    sel = f'{{run="{run}"}}'
    return Section(
        title,
        question,
        (
            PromPanel(
                f"{title}: last pass succeeded",
                "stat",
                ((f"ah_run_success{sel}", "success"),),
                "1 when the last pass succeeded, 0 when it failed.",
                width=6,
                height=4,
                instant=True,
            ),
            PromPanel(
                f"{title}: since last success",
                "stat",
                ((f"time() - ah_run_last_success_timestamp_seconds{sel}", "age"),),
                "Time since the last successful pass ended.",
                unit="s",
                width=6,
                height=4,
                instant=True,
            ),
            PromPanel(
                f"{title}: pass holds the lock",
                "stat",
                ((f"ah_run_lock_held{sel}", "lock"),),
                "1 while a pass holds the run's advisory lock.",
                width=6,
                height=4,
                instant=True,
            ),
            PromPanel(
                f"{title}: passes by outcome",
                "timeseries",
                ((f"sum by (outcome) (increase(ah_runs_total{sel}[$__rate_interval]))", "{{outcome}}"),),
                "Passes finished per interval, by outcome.",
                width=6,
                height=4,
            ),
            PromPanel(
                f"{title}: pass duration",
                "timeseries",
                ((f"ah_run_duration_seconds{sel}", "duration"),),
                "Duration of the last pass.",
                unit="s",
                width=8,
            ),
            PromPanel(
                f"{title}: work per pass",
                "timeseries",
                (
                    (f"ah_run_files_changed{sel}", "files changed"),
                    (f"ah_run_rows_written{sel}", "rows written"),
                ),
                "Files changed and rows written by the last pass.",
                width=8,
            ),
            PromPanel(
                f"{title}: bytes read per pass",
                "timeseries",
                ((f"ah_run_read_bytes{sel}", "read"),),
                "Bytes read by the last pass.",
                unit="bytes",
                width=8,
            ),
            *extra,
        ),
    )


INDEXER = _run_section(
    "index",
    "Indexer",
    "Does the indexer run, succeed and keep up with the transcripts on disk?",
    (
        PromPanel(
            "Lag by namespace",
            "timeseries",
            ((f"ah_catalogue_lag_bytes{{{NS}}}", "{{namespace}}"),),
            "Bytes on disk not yet indexed (alert: not decreasing for 1 h).",
            unit="bytes",
            width=8,
        ),
        PromPanel(
            "Dirty sessions",
            "timeseries",
            (("ah_catalogue_dirty_sessions", "dirty"),),
            "Sessions waiting for the post-pass.",
            width=8,
        ),
        PromPanel(
            "Parse issues by kind",
            "timeseries",
            (("ah_catalogue_parse_issues", "{{kind}}"),),
            "Parse issues in the catalogue by kind (alerts: new issues in 6 h; load errors).",
            width=8,
        ),
        PromPanel(
            "Catalogue rows by table",
            "timeseries",
            (("ah_catalogue_rows", "{{table}}"),),
            "Rows per catalogue table.",
            width=12,
        ),
        PromPanel(
            "Sessions by agent",
            "timeseries",
            (("ah_catalogue_sessions", "{{agent}}"),),
            "Sessions (threads) per agent.",
            width=12,
        ),
    ),
)

EMBEDDER = _run_section(
    "embed",
    "Embedder",
    "Does the embedder run, and does pending work drain?",
    (
        PromPanel(
            "Embedding chunks by status",
            "timeseries",
            (("ah_embeddings", "{{embedding_status}}"),),
            "Chunks pending, failed and done (alert: pending for over 1 h).",
            width=24,
        ),
    ),
)

JOURNAL = _run_section("journal_sync", "Journal sync", "Are session summaries synced from the journal database?")

COLLECTORS = Section(
    "Collectors",
    "Do the metric collectors themselves run on time and without errors?",
    (
        PromPanel(
            "Collector succeeded",
            "timeseries",
            (("ah_collector_success", "{{collector}}"),),
            "1 when the collector's last run succeeded (alert: failing for 30 min).",
            width=8,
        ),
        PromPanel(
            "Since collector success",
            "timeseries",
            (("time() - ah_collector_last_success_timestamp_seconds", "{{collector}}"),),
            "Time since each collector last succeeded.",
            unit="s",
            width=8,
        ),
        PromPanel(
            "Collection duration",
            "timeseries",
            (("ah_collector_duration_seconds", "{{collector}}"),),
            "Duration of each collector's last run (alert: over 60 s for 10 min).",
            unit="s",
            width=8,
        ),
        PromPanel(
            "Collector errors",
            "timeseries",
            (("sum by (collector) (increase(ah_collector_errors_total[$__rate_interval]))", "{{collector}}"),),
            "Collector runs that failed or ran late, per interval.",
            width=12,
        ),
        PromPanel(
            "Dropped samples",
            "timeseries",
            (("sum by (family) (increase(ah_telemetry_dropped_samples_total[$__rate_interval]))", "{{family}}"),),
            "Samples dropped because a label value was outside its declared set (a code bug if not 0).",
            width=12,
        ),
    ),
)

ARCHIVE = Section(
    "Archive",
    "How many transcript files and bytes sit in the hot and cold tiers, is the cold tier reachable and "
    "current, and is anything missing or waiting to be copied?",
    (
        PromPanel(
            "Files by tier",
            "timeseries",
            ((f"ah_archive_files{{{NS}}}", "{{namespace}} {{tier}}"),),
            "Transcript files found on disk.",
            width=8,
        ),
        PromPanel(
            "Bytes by tier",
            "timeseries",
            ((f"ah_archive_bytes{{{NS}}}", "{{namespace}} {{tier}}"),),
            "Bytes of those files.",
            unit="bytes",
            width=8,
        ),
        PromPanel(
            "Newest file age",
            "timeseries",
            ((f"time() - ah_archive_newest_mtime_timestamp_seconds{{{NS}}}", "{{namespace}} {{tier}}"),),
            "Age of the newest file per tier (alert: hot older than 36 h while cold is newer).",
            unit="s",
            width=8,
        ),
        PromPanel(
            "Tier available",
            "stat",
            ((f"ah_archive_tier_available{{{NS}}}", "{{namespace}} {{tier}}"),),
            "1 when the tier's directory is readable (alert: cold tier unavailable).",
            width=8,
            instant=True,
        ),
        PromPanel(
            "Catalogued files missing",
            "timeseries",
            ((f"ah_archive_files_missing{{{NS}}}", "{{namespace}} {{tier}}"),),
            "Catalogued files no longer found in the tier.",
            width=8,
        ),
        PromPanel(
            "Retention backlog",
            "timeseries",
            ((f"ah_archive_uncopied_files{{{NS}}}", "{{namespace}}"),),
            "Hot files with no cold copy yet (alert: not cleared for 26 h).",
            width=8,
        ),
    ),
)

FILESYSTEM = Section(
    "Filesystem",
    "Is the filesystem under either tier filling up?",
    (
        PromPanel(
            "Filesystem used",
            "timeseries",
            ((f"ah_filesystem_used_ratio{{{NS}}}", "{{namespace}} {{tier}}"),),
            "Used fraction of the filesystem holding each tier (alerts: hot > 85 %, cold > 90 %).",
            unit="percentunit",
            width=24,
        ),
    ),
)

SECTIONS = (INDEXER, EMBEDDER, JOURNAL, COLLECTORS, ARCHIVE, FILESYSTEM)

VARIABLES = (prom_variable("namespace", "Namespace", "label_values(ah_archive_files, namespace)"),)


def build():
    """The operations dashboard as an SDK ``Dashboard`` builder."""
    return dashboard(
        UID,
        "agent-history · operations",
        "Health of the indexer, embedder, journal-sync and metric collectors; archive tiers and "
        "filesystem pressure (generated by dashboards/operations.py; do not edit in Grafana).",
        SECTIONS,
        VARIABLES,
        time_from="now-24h",
    )
