"""The metric families agent-history exports, declared as data (pure: no I/O, no OTel import).

One :class:`Family` per exported metric. The OTLP instrument name *is* the name Prometheus shows:
names already end in the unit suffix that Prometheus' OTLP translation would append (``_bytes``
for unit ``By``, ``_seconds`` for ``s``, ``_ratio`` for ``1``) and counters end in ``_total``, so
the translation changes nothing and dashboards, alert rules and this table use one spelling.

Label values come from small fixed sets (:data:`LABEL_VALUES`); a set given as ``None`` is
filled at run time from configuration (namespaces: the configured ones; models: the priced
models plus ``[metrics] models``, anything else reported as ``other``). A path, session id,
prompt, file name or host is never a label.

Collectors: ``archive`` (files on disk per namespace and tier), ``catalogue`` (database
contents, the collected repositories too), ``runs`` (index / embed / journal-sync / collect
passes), ``efficiency`` (classifier and loops),
``activity`` (the ``agent_efficiency_*`` families: each thread's classified sequence, read
incrementally; rules in `agent_history.classify.activity_rules`), ``self`` (each collector's own
health).

The ``loop`` label is not a closed set but a pattern (:data:`LABEL_PATTERNS`): ``<repo>/loop<N>``
of the loop that owns a thread (its root or a lane), ``none`` for a thread no loop owns, and
``other`` beyond the most recent :data:`MAX_LOOP_LABELS` loops, so its values stay bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_history.classify import activity_rules
from agent_history.embed.redact import DETECTORS
from agent_history.harnesses import NAMES
from agent_history.model.tables import DERIVED_TABLES, PARSED_TABLES
from agent_history.parsers.common.errors import ERROR_CLASSES

Kind = Literal["gauge", "counter"]

#: Closed label-value sets. ``None``: resolved at run time from configuration (see module doc).
LABEL_VALUES: dict[str, tuple[str, ...] | None] = {
    # source: agent_history.harnesses.NAMES (the `ah.session.agent` values; a memory is a session
    # of its harness's agent with source_type='memory', not an agent of its own)
    "agent": NAMES,
    "namespace": None,
    "model": None,
    "table": PARSED_TABLES + DERIVED_TABLES,  # source: agent_history.model.tables
    "kind": (
        "blank_line",
        "invalid_json",
        "invalid_utf8",
        "non_object",
        "line_too_long",
        "record_before_header",
        "unknown_record_type",
        "recovered_object",
        "fused_line",
        "bad_record",
        # value limits (agent_history.model.limits, model.values) and per-record parser failures
        "key_too_long",
        "value_out_of_range",
        "bad_value",
        "lone_surrogate",
        "too_deep",
        "non_finite_number",
        "parser_error",
        "postpass_error",
        "source_rewritten",
        "parser_upgraded",
        "load_error",
        "uid_conflict",
        "rows_shared",
        "other",
    ),
    "trigger": ("user", "model", "work", "status", "wait", "event", "noop", "orchestrate", "agent_msg", "unclassified"),
    "role": ("root", "worker", "solo"),
    "tier": ("hot", "cold", "archive"),  # archive: `agent-history archive` copies (compressed bytes)
    "collector": ("archive", "catalogue", "runs", "efficiency", "activity", "self"),
    "run": ("index", "embed", "journal_sync", "collect"),
    "bucket": ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"),
    "embedding_status": ("pending", "failed", "done"),
    "detector": DETECTORS,  # source: agent_history.embed.redact (the scanner's rule families)
    "loop_status": ("finished", "waiting", "paused", "running", "stale"),
    "outcome": ("success", "failure"),
    "family": None,  # the family names of FAMILIES
    # the agent_efficiency_* families (source: agent_history.classify.activity_rules)
    "state": activity_rules.STATES,
    "wait_outcome": tuple(activity_rules.WAIT_OUTCOMES.values()),
    "route": activity_rules.ROUTES,
    "gate": activity_rules.GATES,
    "gate_result": activity_rules.GATE_RESULTS,
    "review_event": activity_rules.REVIEW_EVENTS,
    "error_class": ERROR_CLASSES,  # source: agent_history.parsers.common.errors (docs/design.md §6)
    "intervention": activity_rules.INTERVENTIONS,
    "loop": None,  # LABEL_PATTERNS
    # the repository collector (issue 30; source: agent_history.ingest.collect)
    "repo_state": ("collected", "gone"),
    "author": ("me", "other", "unknown"),  # ah.repo_commit.authored_by_me true / false / NULL
    "ci_conclusion": ("success", "failure", "running", "other"),  # running: no conclusion yet
    "collect_issue_kind": (
        "not_a_repository",
        "shallow_clone",
        "bad_frontmatter",
        "bad_state_line",
        "unreadable_config",
        "other",
    ),  # fmt: skip
}

#: Labels checked against a pattern (full match) instead of a set; their values are bounded by
#: the collector (``loop``: at most MAX_LOOP_LABELS loop values plus ``none`` and ``other``).
LABEL_PATTERNS: dict[str, str] = {"loop": r"none|other|[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?/loop[0-9]+"}
#: The most recent loops that get a ``loop`` value of their own; older ones are ``other``.
MAX_LOOP_LABELS = 20


@dataclass(frozen=True, slots=True)
class Family:
    """One metric family: OTLP instrument = Prometheus series name, its type, unit and labels."""

    name: str
    kind: Kind
    unit: str  # UCUM as OTLP wants it: "" (a count), "By", "s", "1"
    labels: tuple[str, ...]
    collector: str
    meaning: str


def _f(name: str, kind: Kind, unit: str, labels: tuple[str, ...], collector: str, meaning: str) -> Family:
    return Family(name, kind, unit, labels, collector, meaning)


FAMILIES: tuple[Family, ...] = (
    # --- archive: the agent homes on disk (hot) and their archive copies (cold) ---------------
    _f("ah_archive_files", "gauge", "", ("namespace", "tier"), "archive", "transcript files found on disk"),
    _f("ah_archive_bytes", "gauge", "By", ("namespace", "tier"), "archive", "bytes of those files"),
    _f(
        "ah_archive_newest_mtime_timestamp_seconds",
        "gauge",
        "s",
        ("namespace", "tier"),
        "archive",
        "modification time of the newest file (Unix seconds)",
    ),
    _f(
        "ah_archive_files_missing",
        "gauge",
        "",
        ("namespace", "tier"),
        "archive",
        "catalogued files no longer found in this tier",
    ),
    _f(
        "ah_archive_tier_available",
        "gauge",
        "",
        ("namespace", "tier"),
        "archive",
        "1 when the tier's directory is readable, 0 when it is configured but unavailable",
    ),
    _f(
        "ah_archive_uncopied_files",
        "gauge",
        "",
        ("namespace",),
        "archive",
        "hot files with no cold copy yet (namespaces with a cold source only): the retention backlog",
    ),
    _f(
        "ah_filesystem_used_ratio",
        "gauge",
        "1",
        ("namespace", "tier"),
        "archive",
        "used fraction of the filesystem holding the tier's directory (0..1)",
    ),
    # --- catalogue: what the database holds -------------------------------------------------
    _f("ah_catalogue_rows", "gauge", "", ("table",), "catalogue", "rows per catalogue table"),
    _f("ah_catalogue_sessions", "gauge", "", ("agent",), "catalogue", "sessions (threads) per agent"),
    _f("ah_catalogue_dirty_sessions", "gauge", "", (), "catalogue", "sessions waiting for the post-pass"),
    _f("ah_catalogue_parse_issues", "gauge", "", ("kind",), "catalogue", "parse issues by kind"),
    _f(
        "ah_catalogue_lag_bytes",
        "gauge",
        "By",
        ("namespace",),
        "catalogue",
        "bytes on disk not yet indexed (size minus indexed offset, summed over files)",
    ),
    _f("ah_embeddings", "gauge", "", ("embedding_status",), "catalogue", "embedding chunks by status"),
    _f(
        "ah_secrets_found",
        "gauge",
        "",
        ("detector",),
        "catalogue",
        "secret-shaped spans in stored messages and tool input/output, as of the last `secrets` scan",
    ),
    # --- runs: index / embed / journal-sync passes ------------------------------------------
    _f("ah_runs_total", "counter", "", ("run", "outcome"), "runs", "passes finished, by outcome"),
    _f("ah_run_success", "gauge", "", ("run",), "runs", "1 when the last pass succeeded, 0 when it failed"),
    _f("ah_run_duration_seconds", "gauge", "s", ("run",), "runs", "duration of the last pass"),
    _f("ah_run_files_changed", "gauge", "", ("run",), "runs", "files changed in the last pass"),
    _f("ah_run_read_bytes", "gauge", "By", ("run",), "runs", "bytes read by the last pass"),
    _f("ah_run_rows_written", "gauge", "", ("run",), "runs", "rows written by the last pass"),
    _f(
        "ah_run_last_success_timestamp_seconds",
        "gauge",
        "s",
        ("run",),
        "runs",
        "end of the last successful pass (Unix seconds)",
    ),
    _f("ah_run_lock_held", "gauge", "", ("run",), "runs", "1 while a pass holds the run's advisory lock"),
    # --- catalogue, the repository half: what `collect` read (issue 30) ------------------------
    _f("ah_repo_repositories", "gauge", "", ("repo_state",), "catalogue", "repositories collected, and gone"),
    _f("ah_repo_commits", "gauge", "", ("author",), "catalogue", "collected commits by author (me: [identity])"),
    _f("ah_repo_backlog_tasks", "gauge", "", (), "catalogue", "Backlog.md tasks in the collected work trees"),
    _f("ah_repo_ci_runs", "gauge", "", ("ci_conclusion",), "catalogue", "GitHub Actions runs read with gh"),
    _f("ah_repo_collect_issues", "gauge", "", ("collect_issue_kind",), "catalogue", "what collect could not read"),
    # --- efficiency: classifier and loops ---------------------------------------------------
    _f("ah_model_calls", "gauge", "", ("trigger", "role"), "efficiency", "model calls by trigger and thread role"),
    _f(
        "ah_poll_share_ratio",
        "gauge",
        "1",
        ("role",),
        "efficiency",
        "(wait + status) / classified calls per role; absent when nothing is classified",
    ),
    _f("ah_tokens", "gauge", "", ("bucket", "agent", "model"), "efficiency", "tokens by bucket"),
    _f("ah_cost_usd", "gauge", "", ("agent", "model"), "efficiency", "list-price cost in USD (priced calls only)"),
    _f("ah_loops", "gauge", "", ("loop_status",), "efficiency", "loops by status"),
    _f(
        "ah_loop_root_idle_max_seconds",
        "gauge",
        "s",
        (),
        "efficiency",
        "longest time since a running loop's root was last active; absent with no running loop",
    ),
    # --- activity: the agent_efficiency_* families (classify.activity; SQL twin ah.agent_efficiency) --
    _f(
        "agent_efficiency_model_calls",
        "gauge",
        "",
        ("trigger", "role", "loop"),
        "activity",
        "model calls (no API-error notices) by the classifier's trigger and thread role",
    ),
    _f(
        "agent_efficiency_tokens",
        "gauge",
        "",
        ("bucket", "trigger", "role", "loop"),
        "activity",
        "tokens by bucket and the trigger and role of the call that spent them (unknown counts add nothing)",
    ),
    _f(
        "agent_efficiency_thread_state_seconds",
        "gauge",
        "s",
        ("state", "role", "loop"),
        "activity",
        "time between consecutive timed events, by the state the ending event names (> 30 min: idle)",
    ),
    _f(
        "agent_efficiency_waits",
        "gauge",
        "",
        ("wait_outcome", "loop"),
        "activity",
        "waits (sleeps, background-output and agent waits) that timed out or delivered",
    ),
    _f(
        "agent_efficiency_wait_seconds",
        "gauge",
        "s",
        ("wait_outcome", "loop"),
        "activity",
        "time spent in those waits (calls with a known duration)",
    ),
    _f(
        "agent_efficiency_polls", "gauge", "", ("loop",), "activity", "status looks (git/gh/backlog state, state files)"
    ),
    _f(
        "agent_efficiency_poll_seconds",
        "gauge",
        "s",
        ("loop",),
        "activity",
        "time spent in status looks (calls with a known duration)",
    ),
    _f(
        "agent_efficiency_spawns",
        "gauge",
        "",
        ("route", "loop"),
        "activity",
        "work started elsewhere: sub-agent, background shell, exec lane (codex exec, claude -p), wake",
    ),
    _f(
        "agent_efficiency_gate_runs",
        "gauge",
        "",
        ("gate", "gate_result", "loop"),
        "activity",
        "test / lint / typecheck / build commands run, by pass, fail or unknown from the tool result",
    ),
    _f(
        "agent_efficiency_ci_waits",
        "gauge",
        "",
        ("loop",),
        "activity",
        "pushes followed by a CI look that saw the run finish",
    ),
    _f(
        "agent_efficiency_ci_wait_seconds",
        "gauge",
        "s",
        ("loop",),
        "activity",
        "time from each such push to that look (both times known)",
    ),
    _f(
        "agent_efficiency_reviews",
        "gauge",
        "",
        ("review_event", "loop"),
        "activity",
        "review requests and the review outcomes the transcript shows",
    ),
    _f(
        "agent_efficiency_tool_failures",
        "gauge",
        "",
        ("error_class", "loop"),
        "activity",
        "failed tool calls by error class",
    ),
    _f(
        "agent_efficiency_interventions",
        "gauge",
        "",
        ("intervention", "loop"),
        "activity",
        "interrupts, denials, corrections after a failed tool result, and prompts queued while the agent worked",
    ),
    _f(
        "agent_efficiency_unreadable_records",
        "gauge",
        "",
        ("agent",),
        "activity",
        "catalogued records the activity collector could not read (a time of ±infinity) and skipped",
    ),
    _f(
        "agent_efficiency_backlog_threads",
        "gauge",
        "",
        (),
        "activity",
        "changed threads not read yet: the 10 s parse budget of a collection ran out before them",
    ),
    # --- self: each collector's own health ----------------------------------------------------
    _f("ah_collector_success", "gauge", "", ("collector",), "self", "1 when the collector's last run succeeded"),
    _f(
        "ah_collector_last_success_timestamp_seconds",
        "gauge",
        "s",
        ("collector",),
        "self",
        "end of the collector's last successful run (Unix seconds)",
    ),
    _f("ah_collector_duration_seconds", "gauge", "s", ("collector",), "self", "duration of the collector's last run"),
    _f("ah_collector_errors_total", "counter", "", ("collector",), "self", "collector runs that failed or ran late"),
    _f(
        "ah_telemetry_dropped_samples_total",
        "counter",
        "",
        ("family",),
        "self",
        "samples dropped because a label value was outside its declared set",
    ),
)

BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}
