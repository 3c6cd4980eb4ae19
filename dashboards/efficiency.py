"""Metric panels of the ``agent_efficiency_*`` families (issue 32), grouped by topic.

:func:`efficiency_family_panels` is the one entry point: the operations dashboard shows every
topic as a section of its own (:data:`SECTIONS`), and the catalogue dashboard may put a topic's
panels beside its SQL panels. Every PromQL name is a family of
``agent_history/telemetry/families.py`` (``tests/test_dashboards_promql.py``); the families are
gauges of what the catalogue holds, so a panel shows a total, a breakdown, or a ``delta`` per
Grafana interval (work done in it).
"""

from __future__ import annotations

from dashboards.sdk import PromPanel, Section

#: (topic, section title, the question the section answers), in display order.
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("model_calls", "Model calls, triggers and roles", "What triggered the model calls, in which kind of thread, and what did they cost in tokens?"),
    ("thread_states", "Thread states", "Where does the agents' time go: working, waiting on tools, sub-agents or people, polling or idle?"),
    ("polls", "Polls and waits", "How much do agents poll and wait, for how long, and do their waits deliver or time out?"),
    ("spawns", "Spawns", "How do agents start work elsewhere: sub-agents, background shells, exec lanes, wakes?"),
    ("gates", "Gates", "How often do tests, lint, type checks and builds run, and how often do they fail, per loop?"),
    ("ci", "CI waits", "How long do agents wait between a push and seeing CI finish?"),
    ("reviews", "Reviews", "How many reviews do agents request, and what outcomes do the transcripts show?"),
    ("failures", "Tool failures", "Which classes of tool failure happen, and where?"),
    ("interventions", "Human interventions", "How often do people interrupt, deny, correct or queue prompts for the agents?"),
    ("collection", "Efficiency collection", "Does the efficiency collector keep up, and does it skip unreadable records?"),
)  # fmt: skip


def _series(title: str, expr: str, legend: str, meaning: str, *, unit: str | None = None, width: int = 12) -> PromPanel:
    return PromPanel(title, "timeseries", ((expr, legend),), meaning, unit=unit, width=width)


def _delta(family: str, by: str) -> str:
    """Growth of gauge `family` per Grafana interval, summed by `by` (work done in the interval)."""
    return f"sum by ({by}) (delta({family}[$__rate_interval]))"


def efficiency_family_panels() -> dict[str, tuple[PromPanel, ...]]:
    """Topic (the first item of each :data:`TOPICS` entry) → its metric panels, in display order.

    Panels are :class:`dashboards.sdk.PromPanel` values (width 12 or 24, height 8); callers lay
    them out (``dashboards.sdk.dashboard`` does). Pure: no I/O."""
    root_share = (
        'sum by (loop) (agent_efficiency_model_calls{role="root",trigger=~"wait|status"})'
        ' / sum by (loop) (agent_efficiency_model_calls{role="root",trigger!="unclassified"})'
    )
    return {
        "model_calls": (
            _series("Model calls by trigger", "sum by (trigger) (agent_efficiency_model_calls)", "{{trigger}}", "Model calls (no API-error notices) by what triggered them."),
            _series("Model calls by role", "sum by (role) (agent_efficiency_model_calls)", "{{role}}", "Model calls of root, worker and solo threads."),
            _series("Tokens by trigger", "sum by (trigger) (agent_efficiency_tokens)", "{{trigger}}", "Tokens of all buckets by the trigger of the call that spent them."),
            _series("Efficiency tokens by bucket", "sum by (bucket) (agent_efficiency_tokens)", "{{bucket}}", "Tokens by bucket (unknown counts add nothing)."),
        ),
        "thread_states": (
            _series("Time per thread state", "sum by (state) (agent_efficiency_thread_state_seconds)", "{{state}}", "Time between consecutive timed events by the state the ending event names (over 30 min: idle).", unit="s"),
            _series("Thread-state time per interval", _delta("agent_efficiency_thread_state_seconds", "state"), "{{state}}", "Time per state added in each interval.", unit="s"),
            _series("Thread states by role", "sum by (role, state) (agent_efficiency_thread_state_seconds)", "{{role}} {{state}}", "Time per state in root, worker and solo threads.", unit="s", width=24),
        ),
        "polls": (
            _series("Waits by outcome", "sum by (wait_outcome) (agent_efficiency_waits)", "{{wait_outcome}}", "Waits (sleeps, background-output and agent waits) that timed out or delivered."),
            _series("Wait time by outcome", "sum by (wait_outcome) (agent_efficiency_wait_seconds)", "{{wait_outcome}}", "Time spent in those waits.", unit="s"),
            _series("Polls", "sum(agent_efficiency_polls)", "polls", "Status looks: git/gh/backlog state, process lists, state files."),
            _series("Poll time", "sum(agent_efficiency_poll_seconds)", "poll time", "Time spent in status looks.", unit="s"),
            _series("Root poll share by loop", root_share, "{{loop}}", "(wait + status) / classified calls of root threads per loop (alert: over 0.5 for 30 min).", unit="percentunit", width=24),
        ),
        "spawns": (
            _series("Spawns by route", "sum by (route) (agent_efficiency_spawns)", "{{route}}", "Sub-agents, background shells, exec lanes (codex exec, claude -p) and wakes started."),
            _series("Spawns per interval", _delta("agent_efficiency_spawns", "route"), "{{route}}", "Spawns started in each interval."),
        ),
        "gates": (
            _series("Gate runs by result", "sum by (gate, gate_result) (agent_efficiency_gate_runs)", "{{gate}} {{gate_result}}", "Test, lint, typecheck and build runs by pass, fail or unknown."),
            _series("Gate failures by loop", _delta('agent_efficiency_gate_runs{gate_result="fail"}', "loop, gate"), "{{loop}} {{gate}}", "Failed gate runs per interval and loop (alert: 3 failures in 1 h and no pass)."),
        ),
        "ci": (
            _series("Pushes with a CI wait", "sum(agent_efficiency_ci_waits)", "CI waits", "Pushes followed by a CI look that saw the run finish."),
            _series("Mean CI wait", "sum(agent_efficiency_ci_wait_seconds) / sum(agent_efficiency_ci_waits)", "mean", "Mean time from a push to seeing its CI run finish.", unit="s"),
        ),
        "reviews": (
            _series("Reviews by event", "sum by (review_event) (agent_efficiency_reviews)", "{{review_event}}", "Review requests and the outcomes the transcripts show.", width=24),
        ),
        "failures": (
            _series("Exported tool failures by class", "sum by (error_class) (agent_efficiency_tool_failures)", "{{error_class}}", "Failed tool calls by error class."),
            _series("Tool failures per interval", _delta("agent_efficiency_tool_failures", "error_class"), "{{error_class}}", "Failed tool calls added in each interval."),
        ),
        "interventions": (
            _series("Exported interventions by kind", "sum by (intervention) (agent_efficiency_interventions)", "{{intervention}}", "Interrupts, denials, corrections after a failure and queued prompts."),
            _series("Interventions per interval by loop", _delta("agent_efficiency_interventions", "loop"), "{{loop}}", "Interventions added in each interval (alert: a spike over the day's hourly average)."),
        ),
        "collection": (
            _series("Unreadable records", "agent_efficiency_unreadable_records", "{{agent}}", "Catalogued records the collector could not read (a time of ±infinity) and skipped."),
            _series("Threads waiting to be read", "agent_efficiency_backlog_threads", "backlog", "Changed threads the collector's 10 s budget has not reached yet."),
        ),
    }  # fmt: skip


SECTIONS: tuple[Section, ...] = tuple(
    Section(title, question, efficiency_family_panels()[topic]) for topic, title, question in TOPICS
)
"""One operations-dashboard section per topic."""
