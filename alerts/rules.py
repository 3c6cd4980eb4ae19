"""Prometheus alerting rules for agent-history, declared as data with their promtool unit tests.

Each :class:`Rule` carries its PromQL, ``for`` duration, severity, summary, description, runbook
line and at least one firing and one quiet :class:`Case`; ``dashboards.generate`` writes
``alerts/agent-history.rules.yml`` (loaded by Prometheus) and ``alerts/agent-history.test.yml``
(``promtool test rules``). The thresholds are issue 14's. Every metric is a family of
``agent_history/telemetry/families.py``.

Annotations may reference ``{{ $labels.<name> }}`` only (no ``$value``): the expected annotations
of the unit tests are rendered from the case's labels, so they stay exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Severity = Literal["critical", "warning"]


@dataclass(frozen=True, slots=True)
class Case:
    """One promtool test: input series ``(selector, values)`` sampled every ``interval``, the alert
    evaluated at ``eval_time``, and the label sets of the alerts expected to fire (empty: quiet)."""

    name: str
    series: tuple[tuple[str, str], ...]
    eval_time: str
    fires: tuple[dict[str, str], ...] = ()
    interval: str = "1m"


@dataclass(frozen=True, slots=True)
class Rule:
    """An alerting rule and its tests. ``for_`` is a Prometheus duration ('' = fire at once)."""

    group: str
    alert: str
    expr: str
    for_: str
    severity: Severity
    summary: str
    description: str
    runbook: str
    cases: tuple[Case, ...]
    #: promtool evaluation step of this rule's tests: rules over day-long windows use 10m, so their
    #: tests evaluate 240 steps instead of 2,400 (their cases must then sample every 10m too).
    eval_interval: str = "1m"

    def annotations(self) -> dict[str, str]:
        """The rule's annotations (templates unrendered)."""
        return {"summary": self.summary, "description": self.description, "runbook": self.runbook}


def render(template: str, labels: dict[str, str]) -> str:
    """Render the ``{{ $labels.x }}`` references of an annotation the way Prometheus would.

    Raises ValueError for any other template syntax (the tests could not predict it)."""
    out = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), template)
    if "{{" in out or "}}" in out:
        raise ValueError(f"unsupported template in annotation: {template!r}")
    return out


HOUR = 3600

RULES: tuple[Rule, ...] = (
    # --- indexer ------------------------------------------------------------------------------
    Rule(
        "agent-history.indexer",
        "AhIndexStale",
        'time() - ah_run_last_success_timestamp_seconds{run="index"} > 30 * 60',
        "",
        "critical",
        "No successful index pass for 30 minutes",
        "The indexer has not finished a successful pass for more than 30 minutes; new transcripts "
        "are not reaching the catalogue.",
        "Check the indexer service logs (`docker compose logs indexer`) and `agent-history status`; "
        "a pass that cannot take its advisory lock says so.",
        (
            Case(
                "stale", (('ah_run_last_success_timestamp_seconds{run="index"}', "0x60"),), "40m", ({"run": "index"},)
            ),
            Case("fresh", (('ah_run_last_success_timestamp_seconds{run="index"}', "0+60x60"),), "40m"),
            Case("just under 30 min", (('ah_run_last_success_timestamp_seconds{run="index"}', "0x60"),), "29m"),
        ),
    ),
    Rule(
        "agent-history.indexer",
        "AhIndexRunFailed",
        'ah_run_success{run="index"} == 0',
        "",
        "warning",
        "The last index pass failed",
        "The most recent index pass ended in failure.",
        "Read the indexer's last error (`docker compose logs indexer`, `agent-history status`); "
        "a database outage or a full disk are the usual causes.",
        (
            Case("failed", (('ah_run_success{run="index"}', "1x5 0x5"),), "8m", ({"run": "index"},)),
            Case("succeeded", (('ah_run_success{run="index"}', "0x5 1x5"),), "8m"),
        ),
    ),
    Rule(
        "agent-history.indexer",
        "AhIndexLagStuck",
        "min_over_time(ah_catalogue_lag_bytes[1h]) > 0\nand ah_catalogue_lag_bytes >= ah_catalogue_lag_bytes offset 1h",
        "",
        "warning",
        "Index lag of {{ $labels.namespace }} not decreasing for 1 h",
        "Bytes on disk not yet indexed in {{ $labels.namespace }} stayed above zero for the whole "
        "last hour and are not lower than an hour ago: the indexer is not catching up.",
        "Compare `agent-history status` with the files on disk; look for a file stuck on a load "
        "error or a pass that never finishes (lock held).",
        (
            Case(
                "growing for an hour",
                (('ah_catalogue_lag_bytes{namespace="claude-local"}', "1000+10x90"),),
                "70m",
                ({"namespace": "claude-local"},),
            ),
            Case(
                "draining",
                (('ah_catalogue_lag_bytes{namespace="claude-local"}', "100000-1000x90"),),
                "70m",
            ),
            Case(
                "caught up once in the hour",
                (('ah_catalogue_lag_bytes{namespace="claude-local"}', "1000+10x30 0 1000+10x60"),),
                "70m",
            ),
            Case(
                "less than an hour of data",
                (('ah_catalogue_lag_bytes{namespace="claude-local"}', "1000+10x90"),),
                "30m",
            ),
        ),
    ),
    Rule(
        "agent-history.indexer",
        "AhNewParseIssues",
        # load_error has its own rule; rows_shared is informational (copies counted in their owner)
        'ah_catalogue_parse_issues{kind!~"load_error|rows_shared"}\n'
        '> min_over_time(ah_catalogue_parse_issues{kind!~"load_error|rows_shared"}[6h])',
        "",
        "warning",
        "New parse issues of kind {{ $labels.kind }}",
        "Parse issues of kind {{ $labels.kind }} increased within the last 6 hours: a transcript "
        "format may have changed or a file was rewritten.",
        'List them with `agent-history sql "SELECT * FROM ah.parse_issue ORDER BY created_at DESC LIMIT 20"` '
        "and check the record types seen (`ah.record_type_seen`).",
        (
            Case(
                "increased",
                (('ah_catalogue_parse_issues{kind="invalid_json"}', "3x6 5x6"),),
                "90m",
                ({"kind": "invalid_json"},),
                interval="10m",
            ),
            Case("constant", (('ah_catalogue_parse_issues{kind="invalid_json"}', "3x6"),), "30m", interval="10m"),
            Case(
                "increase older than 6 h",
                (('ah_catalogue_parse_issues{kind="invalid_json"}', "3x3 5x42"),),
                "7h",
                interval="10m",
            ),
            Case(
                "load errors are another rule",
                (('ah_catalogue_parse_issues{kind="load_error"}', "0x6 2x6"),),
                "90m",
                interval="10m",
            ),
        ),
        eval_interval="10m",
    ),
    Rule(
        "agent-history.indexer",
        "AhLoadErrors",
        'ah_catalogue_parse_issues{kind="load_error"} > 0',
        "",
        "warning",
        "Transcript files failed to load",
        "At least one file's batch was rolled back and skipped (parse issue `load_error`); its "
        "newer records are not in the catalogue.",
        'Find the files with `agent-history sql "SELECT f.path, p.detail FROM ah.parse_issue p JOIN '
        "ah.source_file f ON f.id = p.source_id WHERE p.kind = 'load_error'\"`, fix the cause, then "
        "`agent-history rebuild`.",
        (
            Case(
                "present", (('ah_catalogue_parse_issues{kind="load_error"}', "2x10"),), "5m", ({"kind": "load_error"},)
            ),
            Case("none", (('ah_catalogue_parse_issues{kind="load_error"}', "0x10"),), "5m"),
        ),
    ),
    # --- embedder -----------------------------------------------------------------------------
    Rule(
        "agent-history.embedder",
        "AhEmbedRunFailed",
        'ah_run_success{run="embed"} == 0',
        "",
        "warning",
        "The last embedder pass failed",
        "The most recent embed pass ended in failure; vector and hybrid search miss new chunks.",
        "Check the embedder logs and the embedding endpoint (`agent-history embed` once by hand); "
        "failed chunks are listed in `ah.embedding_failure`.",
        (
            Case("failed", (('ah_run_success{run="embed"}', "0x10"),), "5m", ({"run": "embed"},)),
            Case("succeeded", (('ah_run_success{run="embed"}', "1x10"),), "5m"),
        ),
    ),
    Rule(
        "agent-history.embedder",
        "AhEmbeddingsPendingTooLong",
        'ah_embeddings{embedding_status="pending"} > 0',
        "1h",
        "critical",
        "Embedding chunks pending for over an hour",
        "Chunks have been waiting for a vector for more than an hour without the backlog ever draining.",
        "Check that the embedder runs (`embed --every`), that its endpoint answers and that the "
        "per-day token cap is not exhausted (`agent-history status`).",
        (
            Case(
                "pending over an hour",
                (('ah_embeddings{embedding_status="pending"}', "50x90"),),
                "70m",
                ({"embedding_status": "pending"},),
            ),
            Case("pending under an hour", (('ah_embeddings{embedding_status="pending"}', "50x90"),), "50m"),
            Case("drained once", (('ah_embeddings{embedding_status="pending"}', "50x30 0 50x60"),), "70m"),
        ),
    ),
    # --- metrics pipeline ---------------------------------------------------------------------
    Rule(
        "agent-history.metrics",
        "AhMetricsStale",
        "absent_over_time(ah_collector_success[5m])",
        "",
        "critical",
        "No agent-history metrics for 5 minutes",
        "Prometheus has received no agent-history sample for 5 minutes: the exporter, the OTel "
        "Collector or the scrape is down, and every other alert is blind.",
        "Check the metrics service and the otel-collector container (`docker compose --profile "
        "observability ps`), then the Prometheus target page.",
        (
            Case("gone", (("ah_collector_success", "1x10"),), "20m", ({},)),
            Case("present", (("ah_collector_success", "1x30"),), "20m"),
        ),
    ),
    Rule(
        "agent-history.metrics",
        "AhCollectorFailing",
        "ah_collector_success == 0",
        "30m",
        "warning",
        "Collector {{ $labels.collector }} failing for 30 minutes",
        "The {{ $labels.collector }} collector's runs have failed for 30 minutes; its metrics are stale.",
        "Read the metrics service log for the collector's error (a failed query or an unreadable directory).",
        (
            Case(
                "failing", (('ah_collector_success{collector="archive"}', "0x40"),), "35m", ({"collector": "archive"},)
            ),
            Case("failing briefly", (('ah_collector_success{collector="archive"}', "0x40"),), "25m"),
            Case("ok", (('ah_collector_success{collector="archive"}', "1x40"),), "35m"),
        ),
    ),
    Rule(
        "agent-history.metrics",
        "AhCollectionSlow",
        "ah_collector_duration_seconds > 60",
        "10m",
        "warning",
        "Collector {{ $labels.collector }} takes over 60 s",
        "The {{ $labels.collector }} collector has needed more than 60 s per run for 10 minutes.",
        "Look for a slow catalogue query (`pg_stat_statements`) or a huge archive directory; raise the "
        "collection interval if the work is legitimate.",
        (
            Case(
                "slow",
                (('ah_collector_duration_seconds{collector="catalogue"}', "90x20"),),
                "15m",
                ({"collector": "catalogue"},),
            ),
            Case("slow once", (('ah_collector_duration_seconds{collector="catalogue"}', "90x5 30 90x14"),), "15m"),
            Case("fast", (('ah_collector_duration_seconds{collector="catalogue"}', "5x20"),), "15m"),
        ),
    ),
    # --- archive ------------------------------------------------------------------------------
    Rule(
        "agent-history.archive",
        "AhArchiveStale",
        '(time() - ah_archive_newest_mtime_timestamp_seconds{tier="hot"} > 36 * 3600)\n'
        "and ignoring (tier)\n"
        '(ah_archive_newest_mtime_timestamp_seconds{tier="cold"}\n'
        ' > ignoring (tier) ah_archive_newest_mtime_timestamp_seconds{tier="hot"})',
        "",
        "warning",
        "Hot tier of {{ $labels.namespace }} older than 36 h while the cold tier is newer",
        "The newest file in the hot tier of {{ $labels.namespace }} is more than 36 hours old, yet "
        "the cold tier holds a newer one: the hot directory is probably not the live agent home "
        "any more (moved, unmounted or replaced).",
        "Compare the configured source directory of the namespace with where the agent writes now; "
        "fix the mount or the `sources` entry.",
        (
            Case(
                "hot stale, cold newer",
                (
                    ('ah_archive_newest_mtime_timestamp_seconds{namespace="claude-local",tier="hot"}', "0x250"),
                    ('ah_archive_newest_mtime_timestamp_seconds{namespace="claude-local",tier="cold"}', "100000x250"),
                ),
                "40h",
                ({"namespace": "claude-local", "tier": "hot"},),
                interval="10m",
            ),
            Case(
                "hot stale, cold not newer",
                (
                    ('ah_archive_newest_mtime_timestamp_seconds{namespace="claude-local",tier="hot"}', "1000x250"),
                    ('ah_archive_newest_mtime_timestamp_seconds{namespace="claude-local",tier="cold"}', "500x250"),
                ),
                "40h",
                interval="10m",
            ),
            Case(
                "hot under 36 h",
                (
                    ('ah_archive_newest_mtime_timestamp_seconds{namespace="claude-local",tier="hot"}', "0x250"),
                    ('ah_archive_newest_mtime_timestamp_seconds{namespace="claude-local",tier="cold"}', "100000x250"),
                ),
                "30h",
                interval="10m",
            ),
        ),
        eval_interval="10m",
    ),
    Rule(
        "agent-history.archive",
        "AhColdTierUnavailable",
        'ah_archive_tier_available{tier=~"cold|archive"} == 0',
        "5m",
        "critical",
        "{{ $labels.tier }} tier of {{ $labels.namespace }} unavailable",
        "The {{ $labels.tier }} directory of {{ $labels.namespace }} (a configured cold source, or the "
        "archive that `agent-history archive` writes) is configured but not readable: nothing is "
        "archived and a rebuild would refuse.",
        "Check the archive mount (NFS/USB disk) and its permissions; `agent-history rebuild-check` "
        "shows per-namespace counts, `agent-history archive --verify` the archive's copies.",
        (
            Case(
                "cold unavailable",
                (('ah_archive_tier_available{namespace="claude-local",tier="cold"}', "0x10"),),
                "8m",
                ({"namespace": "claude-local", "tier": "cold"},),
            ),
            Case(
                "archive unavailable",
                (('ah_archive_tier_available{namespace="codex-local",tier="archive"}', "0x10"),),
                "8m",
                ({"namespace": "codex-local", "tier": "archive"},),
            ),
            Case(
                "available",
                (
                    ('ah_archive_tier_available{namespace="claude-local",tier="cold"}', "1x10"),
                    ('ah_archive_tier_available{namespace="claude-local",tier="archive"}', "1x10"),
                ),
                "8m",
            ),
        ),
    ),
    Rule(
        "agent-history.archive",
        "AhArchiveCopiesMissing",
        'ah_archive_files_missing{tier="archive"} > 0',
        "26h",
        "warning",
        "Transcripts of {{ $labels.namespace }} without an archive copy for 26 h",
        "Catalogued transcripts of {{ $labels.namespace }} have had no good copy in the archive for 26 "
        "hours (a daily archive pass plus slack): the archive pass is not running or keeps failing, "
        "and a transcript the agent deletes now would be lost.",
        "Run `agent-history archive` by hand and read its errors; check that the indexer runs with "
        "`--archive` (compose) or that the archive's schedule runs; `agent-history archive --verify` "
        "lists bad copies.",
        (
            Case(
                "never copied",
                (('ah_archive_files_missing{namespace="claude-local",tier="archive"}', "3x170"),),
                "27h",
                ({"namespace": "claude-local", "tier": "archive"},),
                interval="10m",
            ),
            Case(
                "copied daily",
                (('ah_archive_files_missing{namespace="claude-local",tier="archive"}', "3x126 0 3x40"),),
                "27h",
                interval="10m",
            ),
            Case(
                "a cold source's missing files are not the archive's",
                (('ah_archive_files_missing{namespace="claude-local",tier="cold"}', "3x170"),),
                "27h",
                interval="10m",
            ),
        ),
        eval_interval="10m",
    ),
    Rule(
        "agent-history.archive",
        "AhHotFilesystemFull",
        'ah_filesystem_used_ratio{tier="hot"} > 0.85',
        "10m",
        "warning",
        "Hot filesystem of {{ $labels.namespace }} over 85 % full",
        "The filesystem holding the hot tier of {{ $labels.namespace }} is more than 85 % used.",
        "Free space or move old transcripts to the cold tier once they have a cold copy.",
        (
            Case(
                "full",
                (('ah_filesystem_used_ratio{namespace="claude-local",tier="hot"}', "0.9x20"),),
                "15m",
                ({"namespace": "claude-local", "tier": "hot"},),
            ),
            Case("at 80 %", (('ah_filesystem_used_ratio{namespace="claude-local",tier="hot"}', "0.8x20"),), "15m"),
        ),
    ),
    Rule(
        "agent-history.archive",
        "AhColdFilesystemFull",
        'ah_filesystem_used_ratio{tier=~"cold|archive"} > 0.90',
        "10m",
        "warning",
        "{{ $labels.tier }} filesystem of {{ $labels.namespace }} over 90 % full",
        "The filesystem holding the {{ $labels.tier }} tier of {{ $labels.namespace }} is more than 90 % used.",
        "Grow the archive volume or prune archived transcripts that are no longer needed.",
        (
            Case(
                "full",
                (('ah_filesystem_used_ratio{namespace="claude-local",tier="cold"}', "0.95x20"),),
                "15m",
                ({"namespace": "claude-local", "tier": "cold"},),
            ),
            Case(
                "archive full",
                (('ah_filesystem_used_ratio{namespace="claude-local",tier="archive"}', "0.95x20"),),
                "15m",
                ({"namespace": "claude-local", "tier": "archive"},),
            ),
            Case("at 88 %", (('ah_filesystem_used_ratio{namespace="claude-local",tier="cold"}', "0.88x20"),), "15m"),
        ),
    ),
    Rule(
        "agent-history.archive",
        "AhHotRetentionBacklog",
        "ah_archive_uncopied_files > 0",
        "26h",
        "warning",
        "Hot files of {{ $labels.namespace }} not copied to the cold tier for 26 h",
        "Hot files of {{ $labels.namespace }} without a cold copy have not been cleared for 26 hours "
        "(a daily archive copy plus slack): the archive job is not running.",
        "Run the archive copy by hand and check its schedule (cron/systemd timer).",
        (
            Case(
                "never cleared",
                (('ah_archive_uncopied_files{namespace="claude-local"}', "5x170"),),
                "27h",
                ({"namespace": "claude-local"},),
                interval="10m",
            ),
            Case(
                "cleared daily",
                (('ah_archive_uncopied_files{namespace="claude-local"}', "5x126 0 5x40"),),
                "27h",
                interval="10m",
            ),
        ),
        eval_interval="10m",
    ),
    # --- loops --------------------------------------------------------------------------------
    Rule(
        "agent-history.loops",
        "AhLoopRootStalled",
        "ah_loop_root_idle_max_seconds > 20 * 60",
        "",
        "warning",
        "A running loop's root has been silent for over 20 minutes",
        "The root session of a running loop has written nothing for more than 20 minutes.",
        "`agent-history loops` shows the running loop and its root; look at the root's terminal or "
        "its last messages (`agent-history sessions`).",
        (
            Case("silent", (("ah_loop_root_idle_max_seconds", "1500x10"),), "5m", ({},)),
            Case("active", (("ah_loop_root_idle_max_seconds", "600x10"),), "5m"),
        ),
    ),
    # --- agent efficiency (the agent_efficiency_* families, issue 32) ---------------------------
    Rule(
        "agent-history.efficiency",
        "AhRootPollingHeavily",
        'sum by (loop) (delta(agent_efficiency_model_calls{role="root",trigger=~"wait|status"}[30m]))'
        ' / sum by (loop) (delta(agent_efficiency_model_calls{role="root",trigger!="unclassified"}[30m])) > 0.5'
        ' and on (loop) sum by (loop) (delta(agent_efficiency_model_calls{role="root"}[30m])) >= 10',
        "30m",
        "warning",
        "Roots of {{ $labels.loop }} spend over half their model calls polling",
        "For 30 minutes more than half of the model calls of root threads in {{ $labels.loop }} followed a "
        "status look or a wait that timed out (at least 10 calls per 30 minutes): the root is polling "
        "instead of waiting for an event.",
        "Look at the root's recent calls (`agent-history efficiency`, `agent-history session`): a "
        "`sleep`/`gh run view` loop is better replaced by a blocking wait or a wake.",
        (
            Case(
                "two of three calls poll",
                (
                    ('agent_efficiency_model_calls{role="root",trigger="status",loop="widgets/loop1"}', "0+2x90"),
                    ('agent_efficiency_model_calls{role="root",trigger="work",loop="widgets/loop1"}', "0+1x90"),
                ),
                "70m",
                ({"loop": "widgets/loop1"},),
            ),
            Case(
                "a quarter polls",
                (
                    ('agent_efficiency_model_calls{role="root",trigger="wait",loop="widgets/loop1"}', "0+1x90"),
                    ('agent_efficiency_model_calls{role="root",trigger="work",loop="widgets/loop1"}', "0+3x90"),
                ),
                "70m",
            ),
            Case(
                "polling for 20 minutes only",
                (
                    ('agent_efficiency_model_calls{role="root",trigger="status",loop="widgets/loop1"}', "0x50 0+2x40"),
                    ('agent_efficiency_model_calls{role="root",trigger="work",loop="widgets/loop1"}', "0+1x90"),
                ),
                "70m",
            ),
            Case(
                "too few calls to judge",
                (
                    ('agent_efficiency_model_calls{role="root",trigger="status",loop="widgets/loop1"}', "0+0.2x90"),
                    ('agent_efficiency_model_calls{role="root",trigger="work",loop="widgets/loop1"}', "0+0.05x90"),
                ),
                "70m",
            ),
        ),
    ),
    Rule(
        "agent-history.efficiency",
        "AhGateFailingRepeatedly",
        'sum by (loop, gate) (delta(agent_efficiency_gate_runs{gate_result="fail",loop!="none"}[1h])) >= 3'
        ' unless on (loop, gate) sum by (loop, gate) (delta(agent_efficiency_gate_runs{gate_result="pass",loop!="none"}[1h])) > 0',
        "",
        "warning",
        "The {{ $labels.gate }} gate keeps failing in {{ $labels.loop }}",
        "In the last hour the {{ $labels.gate }} runs of {{ $labels.loop }} failed at least 3 times and never passed.",
        "Read the failing runs' output (`agent-history search` for the command, `agent-history session`); "
        "the loop may be retrying a change that cannot pass.",
        (
            Case(
                "four failures, no pass",
                (
                    (
                        'agent_efficiency_gate_runs{gate="test",gate_result="fail",loop="widgets/loop1"}',
                        "0x30 1 2 3 4x30",
                    ),
                    ('agent_efficiency_gate_runs{gate="test",gate_result="pass",loop="widgets/loop1"}', "2x64"),
                ),
                "60m",
                ({"loop": "widgets/loop1", "gate": "test"},),
            ),
            Case(
                "failures then a pass",
                (
                    (
                        'agent_efficiency_gate_runs{gate="test",gate_result="fail",loop="widgets/loop1"}',
                        "0x30 1 2 3 4x30",
                    ),
                    ('agent_efficiency_gate_runs{gate="test",gate_result="pass",loop="widgets/loop1"}', "2x40 3x24"),
                ),
                "60m",
            ),
            Case(
                "two failures",
                (('agent_efficiency_gate_runs{gate="lint",gate_result="fail",loop="widgets/loop1"}', "0x30 1 2x32"),),
                "60m",
            ),
            Case(
                "failures outside any loop",
                (('agent_efficiency_gate_runs{gate="test",gate_result="fail",loop="none"}', "0x30 1 2 3 4x30"),),
                "60m",
            ),
        ),
    ),
    Rule(
        "agent-history.efficiency",
        "AhHumanInterventionSpike",
        "sum(delta(agent_efficiency_interventions[1h])) >= 5"
        " and sum(delta(agent_efficiency_interventions[1h])) > 3 * sum(delta(agent_efficiency_interventions[1d] offset 1h)) / 24",
        "",
        "warning",
        "Human interventions spiked in the last hour",
        "At least 5 interrupts, denials, corrections or queued prompts in the last hour, more than three "
        "times the hourly average of the day before: agents are going astray.",
        "Break the family down by `intervention` and `loop` on the operations dashboard and read the "
        "sessions behind it (`agent-history sessions`).",
        (
            Case(
                "six in an hour after a quiet day",
                (('agent_efficiency_interventions{intervention="interrupt",loop="none"}', "0x150 1 2 3 4 5 6"),),
                "26h",
                ({},),
                interval="10m",
            ),
            Case(
                "six an hour all day",
                (('agent_efficiency_interventions{intervention="interrupt",loop="none"}', "0+1x156"),),
                "26h",
                interval="10m",
            ),
            Case(
                "three in an hour",
                (('agent_efficiency_interventions{intervention="denial",loop="none"}', "0x150 1 2 3x4"),),
                "26h",
                interval="10m",
            ),
        ),
        eval_interval="10m",
    ),
    # --- journal-sync -------------------------------------------------------------------------
    Rule(
        "agent-history.journal",
        "AhJournalSyncFailing",
        'ah_run_success{run="journal_sync"} == 0',
        "15m",
        "warning",
        "Journal sync failing for 15 minutes",
        "journal-sync passes have failed for 15 minutes; session summaries are not updated.",
        "Check the journal database is reachable with the configured DSN and the journal-sync service log.",
        (
            Case("failing", (('ah_run_success{run="journal_sync"}', "0x30"),), "20m", ({"run": "journal_sync"},)),
            Case("failing briefly", (('ah_run_success{run="journal_sync"}', "0x30"),), "10m"),
            Case("ok", (('ah_run_success{run="journal_sync"}', "1x30"),), "20m"),
        ),
    ),
)
