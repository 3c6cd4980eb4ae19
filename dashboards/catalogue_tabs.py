"""The catalogue dashboard's tabs beyond the first eight (issue 32): cost, tokens and cache, thread
states, gates, CI waits, reviews, human interventions, session health, lanes, collected commits,
tasks, history look-ups, embeddings — and the metric side of every tab (`METRIC_PANELS`).

SQL panels follow `dashboards.catalogue`'s conventions (time picker through ``$__timeFilter``,
the ``namespace``/``agent``/``model`` variables where rows carry them, NULL = unknown). Gates and
reviews are counted by the classifier's rule tables (`classify.activity_rules`) through their SQL
twins, as the ``agent_efficiency_*`` families count them.

The metric side: each tab's Prometheus panels come from `metric_panels(tab)` — the exported
``ah_*`` families, and the ``agent_efficiency_*`` topics of `dashboards.efficiency` beside the
tabs that ask the same question (`EFFICIENCY_TOPICS`).
"""

from __future__ import annotations

from dashboards.catalogue_sql import BUCKETS, COMMAND, COST, MODEL, MSG_TS, TOOL_TS, S
from dashboards.efficiency import efficiency_family_panels
from dashboards.sdk import PromPanel, Section, SqlPanel

#: Runner prefixes stripped from a shell command for the wait/status and CI panels.
RUNNERS = r"^((uv|poetry|pdm|hatch) run|npx|pnpm exec|bunx)\s+"

# The shell command of `t` with leading `cd DIR &&` hops and one runner prefix removed.
PROGRAM = f"regexp_replace(btrim(regexp_replace(({COMMAND}), '^\\s*(cd\\s+[^;&|]+(&&|;)\\s*)+', '')), '{RUNNERS}', '')"


# Gates and reviews use the classifier's own rules (`classify.activity_rules.GATE_RULES`,
# `REVIEW_RULES`) through their SQL twins in sql/36_agent_efficiency.sql, so a panel counts what
# the `agent_efficiency_*` families count.
SHELL = "ah.eff_shell_command(t.agent, t.name, t.input)"
GATE = f"ah.eff_gate({SHELL})"
GATE_RESULT = "ah.eff_gate_result(t.is_error, t.exit_code)"
REVIEW = f"CASE WHEN NOT coalesce(t.is_error, false) THEN ah.eff_review({SHELL}, t.output) END"
CMD = f"CROSS JOIN LATERAL (SELECT {PROGRAM} AS program) AS cmd"

# Calls of the model that are not API-error notices.
CALLS = "FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id"
NOT_API_ERROR = "NOT coalesce(c.is_api_error, false)"
# Input tokens of a call, any bucket (NULL when none is known): the cache hit ratio's denominator.
INPUT = (
    "CASE WHEN num_nonnulls(c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h) > 0 THEN "
    "coalesce(c.input_uncached, 0) + coalesce(c.cache_read, 0) + coalesce(c.cache_write_5m, 0) "
    "+ coalesce(c.cache_write_1h, 0) END"
)
PROJECT = "coalesce(r.name, s.cwd, '(unknown)')"


def _tab(title: str, question: str, key: str, *panels: SqlPanel | PromPanel) -> Section:
    """A tab: its SQL panels, then its metric side (`metric_panels(key)`)."""
    return Section(title, question, (*panels, *metric_panels(key)))


# --- the metric side ------------------------------------------------------------------------------
EFFICIENCY = efficiency_family_panels()

#: Tab key → the `dashboards.efficiency` topic shown as (part of) its metric side.
EFFICIENCY_TOPICS: dict[str, str] = {
    "triggers": "model_calls",
    "thread_states": "thread_states",
    "polls": "polls",
    "subagents": "spawns",
    "gates": "gates",
    "ci_waits": "ci",
    "reviews": "reviews",
    "tool_failures": "failures",
    "human": "interventions",
    "ingest": "collection",
}

METRIC_PANELS: dict[str, tuple[PromPanel, ...]] = {
    "overview": (),  # inline in dashboards.catalogue (exported cost and tokens)
    "cost": (
        PromPanel(
            "Exported cost by model",
            "timeseries",
            (('sum by (model) (ah_cost_usd{agent=~"$agent"})', "{{model}}"),),
            "All-time list-price cost per model as exported, for comparison with the SQL.",
            unit="currencyUSD",
        ),
    ),
    "tokens": (
        PromPanel(
            "Exported cache hit ratio",
            "timeseries",
            (
                (
                    'sum(ah_tokens{bucket="cache_read", agent=~"$agent"}) / sum(ah_tokens{bucket=~'
                    '"input_uncached|cache_read|cache_write_5m|cache_write_1h", agent=~"$agent"})',
                    "cache hit ratio",
                ),
            ),
            "All-time cache reads over all input tokens, as exported.",
            unit="percentunit",
        ),
    ),
    "triggers": (
        PromPanel(
            "Exported model calls by trigger",
            "timeseries",
            (("sum by (trigger) (ah_model_calls)", "{{trigger}}"),),
            "The classifier's counts as exported.",
        ),
        *EFFICIENCY["model_calls"],
    ),
    "thread_states": EFFICIENCY["thread_states"],
    "polls": (
        PromPanel(
            "Exported poll share by role",
            "timeseries",
            (("ah_poll_share_ratio", "{{role}}"),),
            "(wait + status) / classified calls per role, as exported.",
            unit="percentunit",
        ),
        *EFFICIENCY["polls"],
    ),
    "subagents": EFFICIENCY["spawns"],
    "gates": EFFICIENCY["gates"],
    "ci_waits": EFFICIENCY["ci"],
    "reviews": EFFICIENCY["reviews"],
    "tool_failures": EFFICIENCY["failures"],
    "human": EFFICIENCY["interventions"],
    "health": (),  # no exported family: the grades are per session (SQL only)
    "loops": (),  # inline in dashboards.catalogue (ah_loops, ah_loop_root_idle_max_seconds)
    "lanes": (),  # the loop-labelled efficiency panels sit in Gates and Human interventions
    "git": (),  # no exported family for commits
    "tasks": (),  # no exported family for tasks
    "files": (),  # no exported family for file touches
    "search": (),  # no exported family for history look-ups
    "ingest": (
        PromPanel(
            "Exported lag by namespace",
            "timeseries",
            (("ah_catalogue_lag_bytes", "{{namespace}}"),),
            "Bytes on disk not yet indexed, per namespace, as exported (alert: growing for 30 min).",
            unit="bytes",
        ),
        *EFFICIENCY["collection"],
    ),
    "embeddings": (
        PromPanel(
            "Embeddings pending and failed",
            "timeseries",
            (('ah_embeddings{embedding_status=~"pending|failed"}', "{{embedding_status}}"),),
            "Embedding chunks waiting for a vector and those that failed (alert: pending for over 1 h).",
        ),
    ),
}
"""Tab key → its Prometheus panels (the order of `dashboards.catalogue.SECTIONS`)."""


def metric_panels(tab: str) -> tuple[PromPanel, ...]:
    """The metric side of tab `tab` (a `METRIC_PANELS` key). Raises KeyError for an unknown tab."""
    return METRIC_PANELS[tab]


# --- SQL sides ------------------------------------------------------------------------------------
COST_TAB = _tab(
    "Cost by model, agent, project and branch",
    "What does the work cost at list price, per model, agent, project and git branch?",
    "cost",
    SqlPanel(
        "Cost by model",
        "table",
        f"SELECT coalesce(c.model, 'unknown') AS model, count(*) AS calls, round(sum({COST}), 6) AS cost_usd,\n"
        f"  count(*) FILTER (WHERE {COST} IS NULL) AS unpriced_calls\n{CALLS}\n"
        f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1 ORDER BY cost_usd DESC NULLS LAST, model",
        "List-price USD per model; unpriced calls are counted, not costed.",
    ),
    SqlPanel(
        "Cost by agent",
        "barchart",
        f"SELECT s.agent, round(sum({COST}), 6) AS cost_usd\n{CALLS}\n"
        f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1 ORDER BY cost_usd DESC NULLS LAST, s.agent",
        "List-price USD per harness.",
        unit="currencyUSD",
    ),
    SqlPanel(
        "Cost by project",
        "table",
        f"SELECT {PROJECT} AS project, count(DISTINCT s.id) AS sessions, round(sum({COST}), 6) AS cost_usd\n"
        f"{CALLS} LEFT JOIN ah.repo r ON r.id = s.repo_id\n"
        f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\n"
        "GROUP BY 1 ORDER BY cost_usd DESC NULLS LAST, project LIMIT 20",
        "The 20 costliest projects: the session's repository, else its working directory.",
    ),
    SqlPanel(
        "Cost by branch",
        "table",
        f"SELECT {PROJECT} AS project, coalesce(nullif(s.git_branch, ''), '(unknown)') AS branch,\n"
        f"  count(DISTINCT s.id) AS sessions, round(sum({COST}), 6) AS cost_usd\n"
        f"{CALLS} LEFT JOIN ah.repo r ON r.id = s.repo_id\n"
        f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\n"
        "GROUP BY 1, 2 ORDER BY cost_usd DESC NULLS LAST, project, branch LIMIT 20",
        "The 20 costliest (project, git branch) pairs; `(unknown)` when the harness records no branch.",
    ),
)

TOKENS_TAB = _tab(
    "Tokens by bucket and cache hit ratio",
    "Where do the tokens go — uncached input, cache reads and writes, output — and how much input comes from cache?",
    "tokens",
    SqlPanel(
        "Tokens by bucket",
        "barchart",
        f"SELECT b.bucket, sum(b.tokens) AS tokens\n{CALLS}\n{BUCKETS}\n"
        f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1 ORDER BY tokens DESC NULLS LAST",
        "Tokens per disjoint bucket (unknown counts left out, not counted as 0).",
        unit="short",
    ),
    SqlPanel(
        "Cache hit ratio by day",
        "timeseries",
        "SELECT $__timeGroupAlias(c.ts, 1d), 'cache hit ratio' AS metric,\n"
        f"  round(sum(c.cache_read)::numeric / nullif(sum({INPUT}), 0), 4) AS ratio\n{CALLS}\n"
        f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1, 2 ORDER BY 1",
        "Cache reads / all input tokens (uncached + cache read + cache writes), per day; no point without input counts.",
        fmt="time_series",
        unit="percentunit",
    ),
    SqlPanel(
        "Cache hit ratio by model",
        "table",
        "SELECT coalesce(c.model, 'unknown') AS model, sum(c.cache_read) AS cache_read,\n"
        f"  sum({INPUT}) AS input_tokens, round(sum(c.cache_read)::numeric / nullif(sum({INPUT}), 0), 4) AS ratio\n"
        f"{CALLS}\nWHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\n"
        "GROUP BY 1 ORDER BY input_tokens DESC NULLS LAST, model",
        "Per model: cache reads, all input tokens and their ratio (NULL when the model's calls report no input).",
    ),
)

#: Extra panels of the "Model calls by trigger and role" tab (`dashboards.catalogue.TRIGGERS`).
TRIGGER_PANELS = (
    SqlPanel(
        "Model calls by trigger and day",
        "timeseries",
        "SELECT $__timeGroupAlias(c.ts, 1d), coalesce(c.trigger, 'unclassified') AS metric, count(*) AS calls\n"
        f"{CALLS}\nWHERE $__timeFilter(c.ts) AND {S} AND {MODEL} AND {NOT_API_ERROR}\nGROUP BY 1, 2 ORDER BY 1",
        "Model calls per day by trigger (API-error notices left out).",
        fmt="time_series",
    ),
)

THREAD_STATES_TAB = _tab(
    "Thread states",
    "What kinds of threads run (root, worker, solo), and how long do they wait on tools and sub-agents?",
    "thread_states",
    SqlPanel(
        "Threads by role",
        "barchart",
        "SELECT coalesce(s.thread_role, 'unknown') AS role, count(*) AS threads\n"
        f"FROM ah.session s WHERE $__timeFilter(s.started_at) AND {S}\nGROUP BY 1 ORDER BY threads DESC, role",
        "Threads started in the range by role: a root orchestrates workers, a solo thread works alone.",
    ),
    SqlPanel(
        "Time waiting on tools",
        "table",
        "SELECT t.name AS tool, count(t.duration_ms) AS timed_calls,\n"
        "  round(sum(t.duration_ms) / 1000.0, 1) AS seconds, round(avg(t.duration_ms) / 1000.0, 1) AS avg_seconds\n"
        "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND t.duration_ms IS NOT NULL\n"
        "GROUP BY 1 ORDER BY seconds DESC, tool LIMIT 20",
        "Tools by the time their calls ran (calls whose harness records a duration only).",
    ),
    SqlPanel(
        "Time waiting on sub-agents",
        "table",
        "SELECT coalesce(p.subagent_type, 'unknown') AS subagent_type, count(*) AS spawns,\n"
        "  count(ch.duration_ms) AS timed_children, round(sum(ch.duration_ms) / 1000.0, 1) AS child_seconds\n"
        "FROM ah.subagent_spawn p JOIN ah.session s ON s.id = p.session_id\n"
        "LEFT JOIN ah.session ch ON ch.id = p.child_session_id\n"
        f"WHERE $__timeFilter(p.ts) AND {S}\nGROUP BY 1 ORDER BY child_seconds DESC NULLS LAST, subagent_type",
        "Per sub-agent type: the wall time of the children found (the parent may work meanwhile).",
        width=24,
    ),
)

#: Extra panels of the "Polls and waits" tab (`dashboards.catalogue.POLLS`).
POLL_PANELS = (
    SqlPanel(
        "Wait and status calls by day",
        "timeseries",
        "SELECT $__timeGroupAlias(c.ts, 1d), c.trigger AS metric, count(*) AS calls\n"
        f"{CALLS}\nWHERE $__timeFilter(c.ts) AND {S} AND {MODEL} AND c.trigger IN ('wait', 'status')\n"
        "GROUP BY 1, 2 ORDER BY 1",
        "Model calls that followed a wait or a status look, per day.",
        fmt="time_series",
    ),
    SqlPanel(
        "Wait and status commands",
        "table",
        "SELECT ah.eff_command(cmd.program) AS kind, split_part(cmd.program, ' ', 1) AS program,\n"
        "  count(*) AS calls, round(sum(t.duration_ms) / 1000.0, 1) AS seconds\n"
        f"FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n{CMD}\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND ah.eff_command(cmd.program) IN ('wait', 'status')\n"
        "GROUP BY 1, 2 ORDER BY calls DESC, kind, program LIMIT 20",
        "Shell commands the classifier counts as a wait (sleep, watch loops) or a status look (docs/design.md §11).",
    ),
)

GATES_TAB = _tab(
    "Gates",
    "Which test, lint, type-check and build commands did the agents run, and how often did they pass?",
    "gates",
    SqlPanel(
        "Gate runs by kind",
        "barchart",
        f"SELECT {GATE} AS gate,\n"
        f"  count(*) FILTER (WHERE {GATE_RESULT} = 'pass') AS passed, count(*) FILTER (WHERE {GATE_RESULT} = 'fail') AS failed,\n"
        f"  count(*) FILTER (WHERE {GATE_RESULT} = 'unknown') AS unknown\n"
        "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND {GATE} IS NOT NULL\nGROUP BY 1 ORDER BY 1",
        "Shell commands recognised as gates (the classifier's rule table `GATE_RULES`, "
        "agent_history/classify/activity_rules.py): passed, failed (non-zero exit or error), unknown (no result).",
    ),
    SqlPanel(
        "Gate runs by day",
        "timeseries",
        f"SELECT $__timeGroupAlias({TOOL_TS}, 1d), {GATE} || ' ' || {GATE_RESULT} AS metric, count(*) AS runs\n"
        "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND {GATE} IS NOT NULL\nGROUP BY 1, 2 ORDER BY 1",
        "Gate runs per day by gate and outcome.",
        fmt="time_series",
    ),
    SqlPanel(
        "Sessions with failing gates",
        "table",
        f"SELECT coalesce(s.title, s.session_uid) AS session, s.agent, {GATE} AS gate,\n"
        f"  count(*) FILTER (WHERE {GATE_RESULT} = 'fail') AS failed, count(*) AS runs, left(min({SHELL}), 120) AS example\n"
        "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND {GATE} IS NOT NULL\n"
        f"GROUP BY s.id, 3 HAVING count(*) FILTER (WHERE {GATE_RESULT} = 'fail') > 0\n"
        "ORDER BY failed DESC, runs DESC, gate LIMIT 20",
        "Sessions whose gates failed, per gate, with one command.",
        width=24,
    ),
)

CI_TAB = _tab(
    "CI waits",
    "How long do agents wait on CI, how often do they look, and how do the runs end?",
    "ci_waits",
    SqlPanel(
        "CI looks and watches",
        "table",
        "SELECT CASE WHEN cmd.program ~ '^gh run watch|--watch' THEN 'watch' ELSE 'look' END AS kind,\n"
        "  count(*) AS calls, round(sum(t.duration_ms) / 1000.0, 1) AS seconds, count(*) FILTER (WHERE t.is_error) AS failed\n"
        f"FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n{CMD}\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND cmd.program ~ '^gh (run (watch|view|list)|pr checks)( |$)'\n"
        "GROUP BY 1 ORDER BY 1",
        "GitHub CLI commands that watch a run (blocking) or look at CI status, with the time they ran.",
    ),
    SqlPanel(
        "CI runs by conclusion",
        "barchart",
        "SELECT coalesce(ci.conclusion, ci.status, 'unknown') AS conclusion, count(*) AS runs,\n"
        "  round(avg(extract(epoch FROM ci.updated_at - ci.created_at))::numeric, 1) AS avg_seconds\n"
        "FROM ah.ci_run ci WHERE $__timeFilter(ci.created_at)\nGROUP BY 1 ORDER BY runs DESC, conclusion",
        "CI runs of the collected repositories (`collect`) by conclusion, with their average duration.",
    ),
)

REVIEWS_TAB = _tab(
    "Reviews",
    "How often do agents ask for a review, who reviews (a sub-agent or a person on GitHub), and what came back?",
    "reviews",
    SqlPanel(
        "Review sub-agents",
        "table",
        "SELECT coalesce(p.subagent_type, 'unknown') AS subagent_type, count(*) AS spawns,\n"
        "  count(ch.id) AS children_found, round(sum(ch.cost_usd), 6) AS child_cost_usd\n"
        "FROM ah.subagent_spawn p JOIN ah.session s ON s.id = p.session_id\n"
        "LEFT JOIN ah.session ch ON ch.id = p.child_session_id\n"
        f"WHERE $__timeFilter(p.ts) AND {S}\n"
        "  AND (p.subagent_type ~* 'review' OR p.description ~* 'review')\nGROUP BY 1 ORDER BY spawns DESC, subagent_type",
        "Sub-agents spawned to review (type or description names a review).",
    ),
    SqlPanel(
        "Review commands",
        "barchart",
        f"SELECT {REVIEW} AS event, count(*) AS calls\n"
        "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND {REVIEW} IS NOT NULL\nGROUP BY 1 ORDER BY calls DESC, event",
        "Review requests and outcomes the transcripts show (the classifier's rule table `REVIEW_RULES`, "
        "agent_history/classify/activity_rules.py; calls that failed are not counted).",
    ),
)

# One row per human intervention: interrupts, denials, queued prompts, corrections after a failure
# (a person's prompt whose last tool call before it failed).
INTERVENTIONS = f"""(SELECT 'interrupt' AS kind, m.session_id, {MSG_TS} AS ts FROM ah.message m
    JOIN ah.session s ON s.id = m.session_id WHERE m.message_class = 'interrupt_marker'
  UNION ALL SELECT 'queued prompt', m.session_id, {MSG_TS} FROM ah.message m
    JOIN ah.session s ON s.id = m.session_id WHERE m.message_class = 'queued_prompt'
  UNION ALL SELECT 'denial', t.session_id, {TOOL_TS} FROM ah.tool_call t
    JOIN ah.session s ON s.id = t.session_id WHERE t.error_class = 'denied'
  UNION ALL SELECT 'correction after a failure', m.session_id, {MSG_TS} FROM ah.message m
    JOIN ah.session s ON s.id = m.session_id
    WHERE m.message_class = 'human_prompt' AND (SELECT t.is_error FROM ah.tool_call t
      WHERE t.session_id = m.session_id AND t.byte_offset < m.byte_offset
      ORDER BY t.byte_offset DESC LIMIT 1)) AS i
JOIN ah.session s ON s.id = i.session_id"""

HUMAN_TAB = _tab(
    "Human interventions",
    "How often do people step in — interrupting, denying a tool, correcting after a failure, queueing prompts?",
    "human",
    SqlPanel(
        "Interventions by kind",
        "barchart",
        f"SELECT i.kind, count(*) AS interventions, count(DISTINCT i.session_id) AS sessions\nFROM {INTERVENTIONS}\n"
        f"WHERE $__timeFilter(i.ts) AND {S}\nGROUP BY 1 ORDER BY interventions DESC, kind",
        "Interrupt markers, denied tool calls, queued prompts, and a person's prompts right after a failed tool call.",
    ),
    SqlPanel(
        "Interventions by day",
        "timeseries",
        f"SELECT $__timeGroupAlias(i.ts, 1d), i.kind AS metric, count(*) AS interventions\nFROM {INTERVENTIONS}\n"
        f"WHERE $__timeFilter(i.ts) AND {S}\nGROUP BY 1, 2 ORDER BY 1",
        "Interventions per day by kind.",
        fmt="time_series",
    ),
    SqlPanel(
        "Sessions with the most interventions",
        "table",
        "SELECT coalesce(s.title, s.session_uid) AS session, s.agent, count(*) AS interventions,\n"
        "  string_agg(DISTINCT i.kind, ', ' ORDER BY i.kind) AS kinds\n"
        f"FROM {INTERVENTIONS}\nWHERE $__timeFilter(i.ts) AND {S}\n"
        "GROUP BY s.id ORDER BY interventions DESC, session LIMIT 20",
        "Sessions where people stepped in most.",
        width=24,
    ),
)

HEALTH = "JOIN ah.session_health h ON h.session_id = s.id"

HEALTH_TAB = _tab(
    "Session health",
    "Which sessions went badly (grade A–F from failures, retries, interrupts, compactions, polling, the end), and why?",
    "health",
    SqlPanel(
        "Sessions by grade",
        "barchart",
        "SELECT coalesce(h.grade, 'unknown') AS grade, count(*) AS sessions\n"
        f"FROM ah.session s {HEALTH}\nWHERE $__timeFilter(s.started_at) AND {S}\nGROUP BY 1 ORDER BY 1",
        "Threads started in the range by health grade (docs/health.md); `unknown`: every signal unknown.",
    ),
    SqlPanel(
        "Grades by agent",
        "table",
        "SELECT s.agent, count(*) FILTER (WHERE h.grade = 'A') AS a, count(*) FILTER (WHERE h.grade = 'B') AS b,\n"
        "  count(*) FILTER (WHERE h.grade = 'C') AS c, count(*) FILTER (WHERE h.grade = 'D') AS d,\n"
        "  count(*) FILTER (WHERE h.grade = 'F') AS f, round(avg(h.score), 1) AS avg_score\n"
        f"FROM ah.session s {HEALTH}\nWHERE $__timeFilter(s.started_at) AND {S}\nGROUP BY 1 ORDER BY 1",
        "Per harness: threads per grade and the average score.",
    ),
    SqlPanel(
        "Signals that cost points",
        "table",
        "SELECT hs.label AS signal, count(*) AS sessions\n"
        f"FROM ah.session s {HEALTH}\nCROSS JOIN LATERAL unnest(h.reasons) AS r(reason)\n"
        "JOIN ah.health_signal hs ON r.reason LIKE hs.label || ' %'\n"
        f"WHERE $__timeFilter(s.started_at) AND {S}\nGROUP BY hs.label, hs.position ORDER BY sessions DESC, hs.position",
        "How many threads lost points to each signal.",
        width=24,
        height=6,
    ),
    SqlPanel(
        "Worst sessions",
        "table",
        "SELECT s.started_at AS time, s.agent, coalesce(s.title, s.session_uid) AS session, h.grade, h.score,\n"
        "  array_to_string(h.reasons, '; ') AS reasons, array_to_string(h.unknown, ', ') AS unknown\n"
        f"FROM ah.session s {HEALTH}\nWHERE $__timeFilter(s.started_at) AND {S} AND h.score < 100\n"
        "ORDER BY h.score, s.started_at DESC LIMIT 30",
        "The lowest-scoring threads with their reasons and the signals their harness does not record.",
        width=24,
    ),
)

LANES_TAB = _tab(
    "Lanes",
    "Which lanes did the loops run, how were they linked to their loop, and what did they return?",
    "lanes",
    SqlPanel(
        "Lanes by link and return",
        "barchart",
        "SELECT ln.link_method, count(*) FILTER (WHERE ln.return_status = 'complete') AS complete,\n"
        "  count(*) FILTER (WHERE ln.return_status IS DISTINCT FROM 'complete') AS other\n"
        "FROM ah.lane ln JOIN ah.session s ON s.id = ln.session_id\n"
        f"WHERE $__timeFilter(s.started_at) AND {S}\nGROUP BY 1 ORDER BY 1",
        "Lanes (worker sessions attached to a loop) by how they were linked and whether they returned complete.",
        width=24,
        height=6,
    ),
    SqlPanel(
        "Lane sessions",
        "table",
        "SELECT s.started_at AS time, coalesce(l.repo, '?') || ' #' || coalesce(l.loop_number::text, l.id::text) AS loop,\n"
        "  s.session_uid, ln.link_method, ln.return_status, s.model_call_count, s.cost_usd\n"
        "FROM ah.lane ln JOIN ah.loops l ON l.id = ln.loop_id JOIN ah.session s ON s.id = ln.session_id\n"
        f"WHERE $__timeFilter(s.started_at) AND {S}\nORDER BY s.started_at DESC, s.session_uid LIMIT 50",
        "Each lane with its loop, link method, return and cost.",
        width=24,
    ),
)

#: Extra panel of the "Git and commits" tab (`dashboards.catalogue.GIT`): the collected history.
COLLECTED_COMMITS = SqlPanel(
    "Collected commits by repository",
    "table",
    "SELECT r.name AS repository, count(*) AS commits, count(*) FILTER (WHERE c.on_default_branch) AS on_default,\n"
    "  sum(c.lines_added) AS lines_added, sum(c.lines_deleted) AS lines_deleted\n"
    "FROM ah.repo_commit c JOIN ah.repository r ON r.id = c.repository_id\n"
    "WHERE $__timeFilter(c.committed_at)\nGROUP BY 1 ORDER BY commits DESC, repository",
    "Commits of the collected repositories (`collect`), whoever wrote them, with the lines they changed.",
    width=24,
)

TASKS_TAB = _tab(
    "Tasks",
    "Which backlog tasks exist in the collected repositories, in which status, and how did they move?",
    "tasks",
    SqlPanel(
        "Tasks by status",
        "barchart",
        "SELECT coalesce(t.status, 'unknown') AS status, count(*) AS tasks\n"
        "FROM ah.backlog_task t JOIN ah.repository r ON r.id = t.repository_id\n"
        "WHERE $__timeFilter(r.changed_at)\nGROUP BY 1 ORDER BY tasks DESC, status",
        "Backlog.md tasks in the work trees of repositories collected in the range, by status.",
    ),
    SqlPanel(
        "Status changes by day",
        "timeseries",
        "SELECT $__timeGroupAlias(c.changed_at, 1d), coalesce(c.new_status, 'removed') AS metric, count(*) AS changes\n"
        "FROM ah.backlog_status_change c WHERE $__timeFilter(c.changed_at)\nGROUP BY 1, 2 ORDER BY 1",
        "Status flips on the default branch per day, by the status reached.",
        fmt="time_series",
    ),
)

# A look-up of the history: an agent-history MCP tool call, or an `agent-history` shell command.
LOOKUP = (
    "CASE WHEN t.name ~ '^mcp__agent[-_]history__' THEN regexp_replace(t.name, '^mcp__agent[-_]history__', '')\n"
    "  WHEN cmd.program ~ '^agent-history ' THEN split_part(cmd.program, ' ', 2) END"
)

SEARCH_TAB = _tab(
    "Search and recall use",
    "How often do agents look up their own history (search, find_sessions, recall, why …), and with what?",
    "search",
    SqlPanel(
        "History look-ups by tool",
        "barchart",
        f"SELECT {LOOKUP} AS lookup, count(*) AS calls, count(*) FILTER (WHERE t.is_error) AS failed\n"
        f"FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n{CMD}\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND {LOOKUP} IS NOT NULL\nGROUP BY 1 ORDER BY calls DESC, lookup",
        "agent-history MCP tools (`mcp__agent-history__…`) and `agent-history` commands the agents ran.",
        width=24,
        height=6,
    ),
    SqlPanel(
        "Latest history queries",
        "table",
        f"SELECT {TOOL_TS} AS time, s.agent, {LOOKUP} AS lookup,\n"
        "  left(coalesce(CASE WHEN t.input IS JSON OBJECT THEN t.input::jsonb ->> 'query' END, cmd.program), 200) AS query\n"
        f"FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n{CMD}\n"
        f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND {LOOKUP} IS NOT NULL\n"
        "ORDER BY time DESC NULLS LAST, t.byte_offset DESC NULLS LAST, t.id DESC LIMIT 30",
        "The 30 latest look-ups with what was asked (calls without a time of their own: later in the file first).",
        width=24,
    ),
)

EMBEDDINGS_TAB = _tab(
    "Embeddings",
    "Are the transcripts embedded: how many chunks have a vector per model, what is spent, and what failed?",
    "embeddings",
    SqlPanel(
        "Chunks by model and state",
        "table",
        "SELECT m.model, count(*) AS chunks, count(e.input_sha256) AS embedded, count(*) - count(e.input_sha256) AS pending\n"
        "FROM ah.chunk k JOIN ah.chunk_source cs ON cs.message_id IS NOT DISTINCT FROM k.message_id\n"
        "  AND cs.tool_call_id IS NOT DISTINCT FROM k.tool_call_id\n"
        "CROSS JOIN ah.embedding_model m\n"
        "LEFT JOIN ah.embedding e ON e.model = m.model AND e.input_sha256 = k.input_sha256\n"
        "WHERE $__timeFilter(cs.chunked_at)\nGROUP BY 1 ORDER BY 1",
        "Chunks written in the range, per configured embedding model: with a vector, and still pending.",
    ),
    SqlPanel(
        "Embedding spend by day",
        "timeseries",
        "SELECT $__timeGroupAlias(u.day::timestamptz, 1d), u.model AS metric, sum(u.tokens) AS tokens\n"
        "FROM ah.embedding_usage u WHERE $__timeFilter(u.day::timestamptz)\nGROUP BY 1, 2 ORDER BY 1",
        "Tokens sent to the embedding endpoint per day and model.",
        fmt="time_series",
        unit="short",
    ),
    SqlPanel(
        "Embedding failures by model",
        "table",
        "SELECT e.model, count(*) AS failed, max(e.failed_at) AS last_failure, left(min(e.error), 200) AS example\n"
        "FROM ah.embedding_failure e WHERE $__timeFilter(e.failed_at)\nGROUP BY 1 ORDER BY failed DESC",
        "Chunks the embedding endpoint refused, per model, with one error message.",
    ),
)
