"""The catalogue dashboard: what the agents did and cost, how loops went, whether the indexer keeps
up (issue 14) — 21 tabs (Grafana rows), each answering the question its first panel states
(issue 32; the newer tabs are in `dashboards.catalogue_tabs`). SQL panels read schema ``ah`` as
``ah_reader``; each tab ends with its metric side (`catalogue_tabs.metric_panels`), Prometheus
panels over the exported families.

Every SQL panel is filtered by the time picker through ``$__timeFilter`` and, where the rows carry
them, by the ``namespace``, ``agent`` and ``model`` variables (``IN ($var)``: Grafana expands a
multi-value PostgreSQL variable to a quoted, comma-separated list, *All* to every option).
Events without a timestamp of their own (legacy Codex tool calls, some messages and file touches)
are placed at their session's start. Models are shown as ``unknown`` when a call does not name one. Costs are list prices of priced
calls only: an unpriced model's calls cost NULL (unknown), never 0.

The efficiency and loops panels use the shared interface fixed by the lead (issues 11 and 12):
``ah.efficiency``, ``ah.loops``, ``ah.lane``.
"""

from __future__ import annotations

from dashboards.catalogue_sql import BUCKETS, COMMAND, COST, LOOP_S, MODEL, MSG_TS, TOOL_TS, TOUCH_TS, F, S
from dashboards.catalogue_tabs import (
    CI_TAB,
    COLLECTED_COMMITS,
    COST_TAB,
    EMBEDDINGS_TAB,
    GATES_TAB,
    HEALTH_TAB,
    HUMAN_TAB,
    LANES_TAB,
    POLL_PANELS,
    REVIEWS_TAB,
    SEARCH_TAB,
    TASKS_TAB,
    THREAD_STATES_TAB,
    TOKENS_TAB,
    TRIGGER_PANELS,
    metric_panels,
)
from dashboards.sdk import PromPanel, Section, SqlPanel, dashboard, sql_variable

UID = "ah-catalogue"

OVERVIEW = Section(
    "Overview",
    "How much did the agents do and what did it cost, by day, agent, namespace and model?",
    (
        SqlPanel(
            "Sessions",
            "stat",
            f"SELECT count(*) AS sessions FROM ah.session s WHERE $__timeFilter(s.started_at) AND {S}",
            "Threads (main sessions and sub-agents) started in the range.",
            width=4,
            height=4,
        ),
        SqlPanel(
            "Messages",
            "stat",
            "SELECT count(*) AS messages FROM ah.message m JOIN ah.session s ON s.id = m.session_id\n"
            f"WHERE $__timeFilter({MSG_TS}) AND {S}",
            "Messages of every class written in the range.",
            width=4,
            height=4,
        ),
        SqlPanel(
            "Model calls",
            "stat",
            "SELECT count(*) AS model_calls FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}",
            "Model API calls (responses) in the range.",
            width=4,
            height=4,
        ),
        SqlPanel(
            "Tokens",
            "stat",
            "SELECT sum(b.tokens) AS tokens\n"
            f"FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n{BUCKETS}\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}",
            "Tokens of every bucket (unknown counts left out, not counted as 0).",
            unit="short",
            width=4,
            height=4,
        ),
        SqlPanel(
            "List-price cost",
            "stat",
            f"SELECT round(sum({COST}), 6) AS cost_usd\n"
            "FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}",
            "USD at list price over priced calls (see Unpriced calls).",
            unit="currencyUSD",
            width=4,
            height=4,
        ),
        SqlPanel(
            "Unpriced calls",
            "stat",
            f"SELECT count(*) FILTER (WHERE {COST} IS NULL) AS unpriced_calls\n"
            "FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}",
            "Calls whose cost is unknown (no list price for the model, or no usage recorded): not in the cost.",
            width=4,
            height=4,
        ),
        SqlPanel(
            "Sessions by day and agent",
            "timeseries",
            "SELECT $__timeGroupAlias(s.started_at, 1d), s.agent AS metric, count(*) AS sessions\n"
            f"FROM ah.session s WHERE $__timeFilter(s.started_at) AND {S}\nGROUP BY 1, 2 ORDER BY 1",
            "Threads started per day, one series per agent.",
            fmt="time_series",
        ),
        SqlPanel(
            "Tokens by day and bucket",
            "timeseries",
            "SELECT $__timeGroupAlias(c.ts, 1d), b.bucket AS metric, sum(b.tokens) AS tokens\n"
            f"FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n{BUCKETS}\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1, 2 ORDER BY 1",
            "Tokens per day by bucket (uncached input, cache read, cache writes, output). Unknown counts "
            "are left out of the sums, not counted as 0.",
            fmt="time_series",
            unit="short",
        ),
        SqlPanel(
            "List-price cost by day and model",
            "timeseries",
            f"SELECT $__timeGroupAlias(c.ts, 1d), coalesce(c.model, 'unknown') AS metric, sum({COST}) AS cost_usd\n"
            "FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1, 2 ORDER BY 1",
            "USD per day at list price, one series per model (priced calls only).",
            fmt="time_series",
            unit="currencyUSD",
        ),
        SqlPanel(
            "By agent and namespace",
            "table",
            "SELECT s.agent, s.namespace, count(*) AS sessions, sum(s.message_count) AS messages,\n"
            "  sum(s.model_call_count) AS model_calls, sum(s.tokens_total) AS tokens, sum(s.cost_usd) AS cost_usd\n"
            f"FROM ah.session_overview s WHERE $__timeFilter(s.started_at) AND {S}\n"
            "GROUP BY 1, 2 ORDER BY cost_usd DESC NULLS LAST, sessions DESC",
            "Per agent and namespace: threads started in the range with their rolled-up counts, tokens and cost.",
        ),
        SqlPanel(
            "By model",
            "table",
            "SELECT coalesce(c.model, 'unknown') AS model, count(*) AS calls,\n"
            "  sum(c.input_uncached) AS input_uncached, sum(c.cache_read) AS cache_read,\n"
            "  sum(c.cache_write_5m) AS cache_write_5m, sum(c.cache_write_1h) AS cache_write_1h,\n"
            f"  sum(c.output) AS output, sum({COST}) AS cost_usd\n"
            "FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id\n"
            f"WHERE $__timeFilter(c.ts) AND {S} AND {MODEL}\nGROUP BY 1 ORDER BY calls DESC",
            "Per model: calls, tokens by bucket and list-price cost.",
        ),
        PromPanel(
            "Exported cost by agent",
            "timeseries",
            (('sum by (agent) (ah_cost_usd{agent=~"$agent"})', "{{agent}}"),),
            "The metrics' view of the same cost (all time, priced calls), for comparison with the exporter.",
            unit="currencyUSD",
        ),
        PromPanel(
            "Exported tokens by bucket",
            "timeseries",
            (('sum by (bucket) (ah_tokens{agent=~"$agent"})', "{{bucket}}"),),
            "All-time tokens by bucket as exported.",
            unit="short",
        ),
        *metric_panels("overview"),
    ),
)

TOOLS = Section(
    "Tool failures by class",
    "Which tools and commands fail, how, and with what message?",
    (
        SqlPanel(
            "Tool calls by day",
            "timeseries",
            f"SELECT $__timeGroupAlias({TOOL_TS}, 1d),\n"
            "  CASE t.is_error WHEN true THEN 'error' WHEN false THEN 'ok' ELSE 'unknown' END AS metric,\n"
            "  count(*) AS calls\n"
            "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
            f"WHERE $__timeFilter({TOOL_TS}) AND {S}\nGROUP BY 1, 2 ORDER BY 1",
            "Tool calls per day: ok, error, or unknown (no result seen).",
            fmt="time_series",
        ),
        SqlPanel(
            "Error classes",
            "barchart",
            "SELECT t.error_class, count(*) AS calls\n"
            "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
            f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND t.error_class IS NOT NULL\n"
            "GROUP BY 1 ORDER BY calls DESC",
            "Failed tool calls by error class (docs/design.md §6: denied, timeout, interrupted, validation_error, "
            "not_found, permission, network, nonzero_exit, tool_error, other).",
        ),
        SqlPanel(
            "Top failing tools",
            "table",
            "SELECT t.name AS tool, count(*) AS calls, count(*) FILTER (WHERE t.is_error) AS errors,\n"
            "  round(count(*) FILTER (WHERE t.is_error)::numeric / count(*), 4) AS error_share\n"
            "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
            f"WHERE $__timeFilter({TOOL_TS}) AND {S}\n"
            "GROUP BY 1 HAVING count(*) FILTER (WHERE t.is_error) > 0\nORDER BY errors DESC, tool LIMIT 20",
            "Tools with the most failed calls, with their share of failures.",
            unit="short",
        ),
        SqlPanel(
            "Top failing commands",
            "table",
            # leading `cd DIR &&` / `cd DIR;` hops are skipped: the program is what ran there
            "SELECT split_part(btrim(regexp_replace(cmd.command, '^\\s*(cd\\s+[^;&|]+(&&|;)\\s*)+', '')), ' ', 1)\n"
            "  AS program, count(*) AS failures,\n"
            "  left(min(cmd.command), 200) AS example\n"
            "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
            f"CROSS JOIN LATERAL (SELECT {COMMAND} AS command) AS cmd\n"
            f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND t.is_error AND cmd.command IS NOT NULL\n"
            "GROUP BY 1 ORDER BY failures DESC, program LIMIT 20",
            "Failed shell commands grouped by the program they run (after any leading `cd DIR &&`), with one example.",
        ),
        SqlPanel(
            "Latest error excerpts",
            "table",
            f"SELECT {TOOL_TS} AS time, s.agent, t.name AS tool, t.error_class,\n"
            "  left(t.error_excerpt, 300) AS excerpt, coalesce(s.title, s.session_uid) AS session\n"
            "FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id\n"
            f"WHERE $__timeFilter({TOOL_TS}) AND {S} AND t.error_excerpt IS NOT NULL\n"
            "ORDER BY time DESC NULLS LAST LIMIT 50",
            "The 50 most recent failures with the most informative part of their output.",
            width=24,
        ),
        *metric_panels("tool_failures"),
    ),
)

SUBAGENTS = Section(
    "Sub-agents and spawns",
    "How often do agents spawn sub-agents, of which type, and what do the children cost?",
    (
        SqlPanel(
            "Spawns by day and type",
            "timeseries",
            "SELECT $__timeGroupAlias(p.ts, 1d), coalesce(p.subagent_type, 'unknown') AS metric, count(*) AS spawns\n"
            "FROM ah.subagent_spawn p JOIN ah.session s ON s.id = p.session_id\n"
            f"WHERE $__timeFilter(p.ts) AND {S}\nGROUP BY 1, 2 ORDER BY 1",
            "Sub-agent spawns per day by sub-agent type.",
            fmt="time_series",
        ),
        SqlPanel(
            "Child cost by type",
            "table",
            "SELECT coalesce(p.subagent_type, 'unknown') AS subagent_type, count(*) AS spawns,\n"
            "  count(ch.id) AS children_found, sum(ch.model_call_count) AS child_model_calls,\n"
            "  sum(ch.cost_usd) AS child_cost_usd\n"
            "FROM ah.subagent_spawn p JOIN ah.session s ON s.id = p.session_id\n"
            "LEFT JOIN ah.session ch ON ch.id = p.child_session_id\n"
            f"WHERE $__timeFilter(p.ts) AND {S}\nGROUP BY 1 ORDER BY spawns DESC",
            "Per sub-agent type: spawns, children whose transcript was found, their calls and cost.",
        ),
        SqlPanel(
            "Most expensive parents",
            "table",
            "SELECT coalesce(s.title, s.session_uid) AS parent, s.agent, count(*) AS spawns,\n"
            "  sum(ch.cost_usd) AS child_cost_usd, max(s.cost_usd) AS parent_cost_usd\n"
            "FROM ah.subagent_spawn p JOIN ah.session s ON s.id = p.session_id\n"
            "LEFT JOIN ah.session ch ON ch.id = p.child_session_id\n"
            f"WHERE $__timeFilter(p.ts) AND {S}\n"
            "GROUP BY s.id ORDER BY child_cost_usd DESC NULLS LAST, spawns DESC LIMIT 20",
            "Threads that spawned sub-agents, by the children's list-price cost.",
            width=24,
        ),
        *metric_panels("subagents"),
    ),
)

TRIGGERS = Section(
    "Model calls by trigger and role",
    "What made the agents call the model — a person, their own reply, tool work, a status look, a wait — "
    "in root, worker and solo threads?",
    (
        SqlPanel(
            "Triggers by role",
            "barchart",
            'SELECT e.role, sum(e.n_user) AS "user", sum(e.n_model) AS model, sum(e.n_work) AS work,\n'
            "  sum(e.n_status) AS status, sum(e.n_wait) AS wait, sum(e.n_event) AS event, sum(e.n_noop) AS noop,\n"
            "  sum(e.n_orchestrate) AS orchestrate, sum(e.n_agent_msg) AS agent_msg,\n"
            "  sum(e.unclassified) AS unclassified\n"
            "FROM ah.efficiency e\n"
            "WHERE $__timeFilter(e.started_at) AND e.namespace IN ($namespace) AND e.agent IN ($agent)\n"
            "GROUP BY 1 ORDER BY 1",
            "Model calls by what last changed the agent's state (docs/design.md §11), per thread role.",
        ),
        *TRIGGER_PANELS,
        *metric_panels("triggers"),
    ),
)

POLLS = Section(
    "Polls and waits",
    "How much of the agents' calling is waiting or checking status, in which threads, and on which commands?",
    (
        SqlPanel(
            "Poll share of roots over time",
            "timeseries",
            "SELECT $__timeGroupAlias(e.started_at, 1d), 'roots' AS metric,\n"
            "  round(sum(e.n_wait + e.n_status)::numeric\n"
            "    / nullif(sum(e.calls - e.unclassified), 0), 4) AS poll_share\n"
            "FROM ah.efficiency e\n"
            "WHERE $__timeFilter(e.started_at) AND e.namespace IN ($namespace) AND e.agent IN ($agent)\n"
            "  AND e.role = 'root'\nGROUP BY 1, 2 ORDER BY 1",
            "(wait + status) / classified calls over root threads started each day; no point when nothing "
            "was classified.",
            fmt="time_series",
            unit="percentunit",
        ),
        POLL_PANELS[0],
        SqlPanel(
            "Poll share per root",
            "table",
            "SELECT e.started_at AS time, e.agent, e.namespace, e.session_uid, e.calls, e.poll_share,\n"
            "  e.n_wait, e.n_status, e.input_tokens, e.cache_read_tokens, e.output_tokens\n"
            "FROM ah.efficiency e\n"
            "WHERE $__timeFilter(e.started_at) AND e.namespace IN ($namespace) AND e.agent IN ($agent)\n"
            "  AND e.role = 'root'\nORDER BY e.poll_share DESC NULLS LAST, e.calls DESC LIMIT 50",
            "Root threads with the highest poll share.",
            width=24,
        ),
        POLL_PANELS[1],
        *metric_panels("polls"),
    ),
)


LOOPS = Section(
    "Loops",
    "How did the long-running loops go: which are running, waiting or stale, what did each cost, "
    "how many lanes, what landed?",
    (
        SqlPanel(
            "Loops by status",
            "barchart",
            f"SELECT l.status, count(*) AS loops FROM ah.loops l {LOOP_S}\n"
            f"WHERE $__timeFilter(l.started_at) AND {S}\nGROUP BY 1 ORDER BY 1",
            "Loops started in the range by status (finished, waiting, paused, running, stale).",
            width=24,
            height=6,
        ),
        SqlPanel(
            "Loop status",
            "table",
            "SELECT l.id, l.repo, l.loop_number, l.status, l.started_at, l.waiting_until, l.ended_at,\n"
            "  l.root_last_active_at, l.lanes, l.model_calls, l.cost_usd, l.errors, l.commits, l.pushes,\n"
            "  l.landed, l.parked, l.closeout_path\n"
            f"FROM ah.loops l {LOOP_S}\nWHERE $__timeFilter(l.started_at) AND {S}\n"
            "ORDER BY l.started_at DESC LIMIT 100",
            "One row per loop run; progress columns are empty when unknown.",
            width=24,
        ),
        SqlPanel(
            "Cost and lanes per loop",
            "barchart",
            "SELECT coalesce(l.repo, '?') || ' #' || coalesce(l.loop_number::text, l.id::text) AS loop,\n"
            "  l.cost_usd, count(ln.id) AS lanes\n"
            f"FROM ah.loops l {LOOP_S}\nLEFT JOIN ah.lane ln ON ln.loop_id = l.id\n"
            f"WHERE $__timeFilter(l.started_at) AND {S}\n"
            "GROUP BY l.id ORDER BY l.started_at DESC LIMIT 30",
            "List-price cost and attached lanes of the latest loops.",
        ),
        SqlPanel(
            "Landed and parked per repo",
            "table",
            "SELECT l.repo, count(*) AS loops, sum(l.commits) AS commits, sum(l.pushes) AS pushes,\n"
            "  sum(l.landed) AS landed, sum(l.parked) AS parked\n"
            f"FROM ah.loops l {LOOP_S}\nWHERE $__timeFilter(l.started_at) AND {S}\n"
            "GROUP BY 1 ORDER BY loops DESC",
            "What the loops delivered per repository.",
        ),
        PromPanel(
            "Exported loops by status",
            "timeseries",
            (("ah_loops", "{{loop_status}}"),),
            "Loops by status as exported.",
        ),
        PromPanel(
            "Longest silent running root",
            "timeseries",
            (("ah_loop_root_idle_max_seconds", "idle"),),
            "Time since a running loop's root was last active (alert above 20 min).",
            unit="s",
        ),
        *metric_panels("loops"),
    ),
)

GIT = Section(
    "Git and commits",
    "What did the agents commit and push, in which repository, and why?",
    (
        SqlPanel(
            "Commits and pushes per repo",
            "barchart",
            "SELECT coalesce(r.name, '(no repo)') AS repo,\n"
            "  count(*) FILTER (WHERE g.op = 'commit') AS commits, count(*) FILTER (WHERE g.op = 'push') AS pushes\n"
            "FROM ah.git_event g JOIN ah.session s ON s.id = g.session_id LEFT JOIN ah.repo r ON r.id = s.repo_id\n"
            f"WHERE $__timeFilter(g.ts) AND {S}\nGROUP BY 1 ORDER BY commits DESC, repo",
            "Commits and pushes seen in tool output, per repository of the session.",
        ),
        SqlPanel(
            "Latest commits and why",
            "table",
            "SELECT g.ts AS time, coalesce(r.name, '(no repo)') AS repo, left(g.sha, 12) AS sha, g.subject,\n"
            "  coalesce(s.title, s.session_uid) AS session, left(pr.text, 300) AS prompt_before\n"
            "FROM ah.git_event g JOIN ah.session s ON s.id = g.session_id LEFT JOIN ah.repo r ON r.id = s.repo_id\n"
            "LEFT JOIN LATERAL (SELECT m.text FROM ah.message m WHERE m.session_id = g.session_id\n"
            "    AND m.message_class IN ('human_prompt', 'subagent_brief') AND m.byte_offset < g.byte_offset\n"
            "    ORDER BY m.byte_offset DESC LIMIT 1) AS pr ON true\n"
            f"WHERE $__timeFilter(g.ts) AND {S} AND g.op = 'commit'\n"
            "ORDER BY g.ts DESC NULLS LAST LIMIT 30",
            "The latest commits with the session and the last prompt (or sub-agent brief) before each — "
            "`agent-history why <sha>` gives the full trace.",
        ),
        COLLECTED_COMMITS,
        *metric_panels("git"),
    ),
)

FILES = Section(
    "Files most touched",
    "Which files do the agents touch most, and how?",
    (
        SqlPanel(
            "Most touched files",
            "table",
            "SELECT f.path, count(*) AS touches, count(DISTINCT f.session_id) AS sessions,\n"
            f"  count(*) FILTER (WHERE f.op <> 'read') AS writes, max({TOUCH_TS}) AS last_touched\n"
            "FROM ah.file_touch f JOIN ah.session s ON s.id = f.session_id\n"
            f"WHERE $__timeFilter({TOUCH_TS}) AND {S}\nGROUP BY 1 ORDER BY touches DESC, f.path LIMIT 30",
            "Paths by number of touches (reads, creates, edits, deletes) in the range.",
            width=24,
        ),
        *metric_panels("files"),
    ),
)


INGEST = Section(
    "Ingest health",
    "Does the indexer keep up: last good pass, bytes not yet read, parse issues, pending post-pass and embedding work?",
    (
        SqlPanel(
            "Last successful index pass",
            "stat",
            "SELECT extract(epoch FROM max(r.finished_at)) * 1000 AS last_success\n"
            "FROM ah.index_run r WHERE $__timeFilter(r.finished_at) AND r.status = 'ok'",
            "End of the last index pass that succeeded in the range.",
            unit="dateTimeFromNow",
            width=6,
            height=4,
        ),
        SqlPanel(
            "Dirty sessions",
            "stat",
            "SELECT count(*) AS dirty_sessions FROM ah.dirty_session d WHERE $__timeFilter(d.marked_at)",
            "Sessions waiting for the post-pass (marked in the range).",
            width=6,
            height=4,
        ),
        SqlPanel(
            "Lag by namespace",
            "table",
            "SELECT f.namespace, count(*) AS files,\n"
            "  count(*) FILTER (WHERE f.size > f.indexed_offset) AS files_behind,\n"
            "  sum(greatest(f.size - f.indexed_offset, 0)) AS lag_bytes\n"
            "FROM ah.source_file f\n"
            f"WHERE $__timeFilter(to_timestamp(f.mtime_ns / 1e9)) AND {F} AND f.status <> 'missing'\n"
            "GROUP BY 1 ORDER BY lag_bytes DESC NULLS LAST, f.namespace",
            "Bytes on disk not yet indexed, over files modified in the range.",
            width=12,
            height=4,
        ),
        SqlPanel(
            "Parse issues by kind",
            "barchart",
            "SELECT p.kind, count(*) AS issues\n"
            "FROM ah.parse_issue p JOIN ah.source_file f ON f.id = p.source_id\n"
            f"WHERE $__timeFilter(p.created_at) AND {F}\nGROUP BY 1 ORDER BY issues DESC",
            "Parse issues recorded in the range, by kind.",
        ),
        SqlPanel(
            "Index pass duration",
            "timeseries",
            "SELECT r.started_at AS time, r.status AS metric,\n"
            "  extract(epoch FROM r.finished_at - r.started_at) AS seconds\n"
            "FROM ah.index_run r WHERE $__timeFilter(r.started_at) AND r.finished_at IS NOT NULL\nORDER BY 1",
            "Duration of each finished index pass, by its outcome.",
            fmt="time_series",
            unit="s",
        ),
        *metric_panels("ingest"),
    ),
)

#: The 21 tabs, each answering the question in its description (issue 32).
SECTIONS = (
    OVERVIEW,
    COST_TAB,
    TOKENS_TAB,
    TRIGGERS,
    THREAD_STATES_TAB,
    POLLS,
    SUBAGENTS,
    GATES_TAB,
    CI_TAB,
    REVIEWS_TAB,
    TOOLS,
    HUMAN_TAB,
    HEALTH_TAB,
    LOOPS,
    LANES_TAB,
    GIT,
    TASKS_TAB,
    FILES,
    SEARCH_TAB,
    INGEST,
    EMBEDDINGS_TAB,
)

VARIABLES = (
    sql_variable(
        "namespace",
        "Namespace",
        "SELECT DISTINCT namespace FROM ah.session WHERE namespace IS NOT NULL ORDER BY 1",
    ),
    sql_variable("agent", "Agent", "SELECT DISTINCT agent FROM ah.session ORDER BY 1"),
    sql_variable("model", "Model", "SELECT DISTINCT coalesce(model, 'unknown') FROM ah.model_call ORDER BY 1"),
)


def build():
    """The catalogue dashboard as an SDK ``Dashboard`` builder (``.build()`` gives the model)."""
    return dashboard(
        UID,
        "agent-history · catalogue",
        "What the coding agents did and cost, how loops went and whether the indexer keeps up "
        "(generated by dashboards/catalogue.py; do not edit in Grafana).",
        SECTIONS,
        VARIABLES,
    )
