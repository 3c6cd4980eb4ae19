-- The agent_efficiency_* figures per thread (docs/metrics.md, issue 32).
--
-- SQL twin of the pure module agent_history.classify.activity (rules:
-- agent_history/classify/activity_rules.py); tests/test_efficiency_contract.py holds the two
-- equal on the same threads, and tests/test_agent_efficiency.py the exported metrics equal to
-- this function on a real catalogue. Every regex literal is the one in activity_rules.py. Change
-- both or neither.
--
-- Idempotent: re-applied by agent_history.db.migrate whenever this file's hash changes.


-- Whether shell text runs `program` (a regex) at a command start (activity.runs):
-- CMD_START + CMD_WRAPPER + (program) + CMD_END, searched before the first '<<' (a heredoc's
-- body is data, activity_rules.HEREDOC).
CREATE OR REPLACE FUNCTION ah.eff_runs(program text, command text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN command IS NOT NULL
       AND split_part(command, '<<', 1) ~ ('(^|[;&|(\n] *)((uv|poetry|pdm|hatch|rye) +run +|python3? +-m +|npx +|bunx +|[.]venv/bin/)?('
                      || program || ')( |$|[;&|)\n])');

-- The shell text of a shell tool call, else NULL (activity.shell_command).
CREATE OR REPLACE FUNCTION ah.eff_shell_command(agent text, tool_name text, input text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN ah.eff_tool_rule(agent, tool_name) = 'shell' THEN
        CASE WHEN ah.eff_input(input) IS NULL THEN input ELSE ah.eff_command_text(ah.eff_input(input)) END
    END;

-- The gate a shell command runs (activity_rules.GATE_RULES, first match), else NULL.
CREATE OR REPLACE FUNCTION ah.eff_gate(command text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN ah.eff_runs('(pytest|py[.]test|tox|nox|jest|vitest|mocha|unittest|(cargo|go|deno|bun|dotnet|mix) +test'
                         '|(npm|pnpm|yarn)( +run)? +test|(just|make) +test)', command) THEN 'test'
        WHEN ah.eff_runs('(ruff +(check|format +--check)|flake8|pylint|eslint|biome +(check|lint)|golangci-lint|shellcheck'
                         '|prettier +--check|cargo +(clippy|fmt +--check)|(npm|pnpm|yarn)( +run)? +lint|(just|make) +lint'
                         '|yamllint|hadolint|promtool +(check|test))', command) THEN 'lint'
        WHEN ah.eff_runs('(mypy|pyright|basedpyright|tsc|cargo +check|(npm|pnpm|yarn)( +run)? +(typecheck|type-check)'
                         '|(just|make) +(typecheck|types))', command) THEN 'typecheck'
        WHEN ah.eff_runs('(cargo +build|go +build|(npm|pnpm|yarn)( +run)? +build|(just|make) +build|make|docker +build'
                         '|docker +compose +build|python3? +-m +build|uv +build|gradle +build|mvn +(package|install)|bazel +build)',
                         command) THEN 'build'
    END;

-- pass | fail | unknown from a tool result (activity.gate_result).
CREATE OR REPLACE FUNCTION ah.eff_gate_result(is_error boolean, exit_code integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN coalesce(is_error, false) OR coalesce(exit_code <> 0, false) THEN 'fail'
        WHEN is_error IS NOT DISTINCT FROM false OR exit_code = 0 THEN 'pass'
        ELSE 'unknown'
    END;

-- The review event a shell call shows (activity_rules.REVIEW_RULES, first match), else NULL.
CREATE OR REPLACE FUNCTION ah.eff_review(command text, output text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN ah.eff_runs('gh +pr +(create|ready)|gh +pr +edit +[^\n]*--add-reviewer', command) THEN 'requested'
        WHEN ah.eff_runs('gh +pr +review +[^\n]*(--approve|-a)', command) THEN 'approved'
        WHEN ah.eff_runs('gh +pr +review +[^\n]*(--request-changes|-r)', command) THEN 'changes_requested'
        WHEN ah.eff_runs('gh +pr +review +[^\n]*(--comment|-c)', command) THEN 'commented'
        WHEN ah.eff_runs('gh +pr +(view|status)', command) AND coalesce(output, '') ~ 'APPROVED' THEN 'approved'
        WHEN ah.eff_runs('gh +pr +(view|status)', command) AND coalesce(output, '') ~ 'CHANGES_REQUESTED'
            THEN 'changes_requested'
    END;

-- The route a tool call spawns on (activity.spawn_route), else NULL.
CREATE OR REPLACE FUNCTION ah.eff_spawn_route(agent text, tool_name text, input text, command text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE
        WHEN agent = 'pi' AND tool_name = 'subagent' THEN
            CASE WHEN jsonb_typeof(ah.eff_input(input) -> 'action') = 'string'
                  AND ah.eff_input(input) ->> 'action' IN ('list', 'status', 'get') THEN NULL ELSE 'sub_agent' END
        WHEN (agent = 'claude' AND tool_name IN ('Task', 'Agent')) OR (agent = 'codex' AND tool_name = 'spawn_agent')
            THEN 'sub_agent'
        WHEN agent = 'claude' AND tool_name = 'ScheduleWakeup' THEN 'wake'
        WHEN command IS NULL THEN NULL
        WHEN ah.eff_runs('(codex +exec|claude +(-p|--print))', command) THEN 'exec_lane'
        WHEN ah.eff_input(input) -> 'run_in_background' = 'true'::jsonb THEN 'background_shell'
    END;

-- A tool call's duration in seconds (activity.tool_seconds).
CREATE OR REPLACE FUNCTION ah.eff_tool_seconds(started_at timestamptz, ended_at timestamptz, duration_ms bigint)
    RETURNS float8
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN started_at IS NOT NULL AND ended_at IS NOT NULL
            THEN greatest(extract(epoch FROM ended_at)::float8 - extract(epoch FROM started_at)::float8, 0)
        WHEN duration_ms IS NOT NULL THEN duration_ms / 1000.0::float8
    END;

-- Per thread of `ids` (NULL: every thread): (session_id, family, labels, value), the figures of
-- classify.activity.thread_figures (family without the agent_efficiency_ prefix; labels without
-- role and loop). A row whose time is ±infinity is unreadable and left out (as the collector
-- counts and skips it). Figures a thread does not show have no row.
CREATE OR REPLACE FUNCTION ah.agent_efficiency(ids bigint[] DEFAULT NULL)
    RETURNS TABLE (session_id bigint, family text, labels jsonb, value float8)
    LANGUAGE sql STABLE
AS $$
WITH th AS (
    SELECT s.id, s.agent, coalesce(s.is_subagent, s.agent_id <> '') AS in_worker
    FROM ah.session AS s
    WHERE ids IS NULL OR s.id = ANY (ids)
), mc AS (
    SELECT mc.*, coalesce(mc.trigger, 'unclassified') AS trig
    FROM ah.model_call AS mc JOIN th ON th.id = mc.session_id
    WHERE (mc.ts IS NULL OR isfinite(mc.ts)) AND NOT coalesce(mc.is_api_error, false)
), tc AS (
    SELECT tc.*, c.cmd,
           CASE WHEN tc.output_byte_offset IS NOT NULL
                THEN ah.eff_result(tc.agent, tc.name, tc.input, tc.output, tc.is_error) END AS trig,
           ah.eff_tool_seconds(tc.started_at, tc.ended_at, tc.duration_ms) AS secs,
           ah.eff_gate(c.cmd) AS gate,
           ah.eff_spawn_route(tc.agent, tc.name, tc.input, c.cmd) AS route,
           CASE WHEN c.cmd IS NOT NULL AND NOT coalesce(tc.is_error, false) THEN ah.eff_review(c.cmd, tc.output) END
               AS review
    FROM ah.tool_call AS tc
    JOIN th ON th.id = tc.session_id
    CROSS JOIN LATERAL (SELECT ah.eff_shell_command(tc.agent, tc.name, tc.input) AS cmd) AS c
    WHERE (tc.started_at IS NULL OR isfinite(tc.started_at)) AND (tc.ended_at IS NULL OR isfinite(tc.ended_at))
), msg AS (
    SELECT m.*, ah.eff_message(m.agent, m.message_class, m.role, m.text, m.record_type, m.record_origin,
                               th.in_worker) AS trig
    FROM ah.message AS m JOIN th ON th.id = m.session_id
    WHERE m.ts IS NULL OR isfinite(m.ts)
), ev AS (  -- the classified sequence (classify.attribute's order) with each event's state
    SELECT mc.session_id, mc.source_id, mc.byte_offset AS pos, 2 AS kind, mc.call_uid AS uid,
           extract(epoch FROM mc.ts)::float8 AS t, 'working' AS state, NULL::boolean AS is_error,
           NULL::text AS cmd, NULL::text AS output, NULL::float8 AS done_at, NULL::text AS message_class
    FROM mc WHERE mc.byte_offset IS NOT NULL
    UNION ALL
    SELECT tc.session_id, tc.source_id, tc.output_byte_offset, 0, tc.tool_call_uid,
           extract(epoch FROM tc.ended_at)::float8,
           CASE WHEN tc.trig <> 'wait' AND ah.eff_tool_rule(tc.agent, tc.name) IN ('agent_wait', 'pi_subagent', 'orchestrate')
                THEN 'waiting_subagent'
                ELSE CASE tc.trig WHEN 'status' THEN 'polling' WHEN 'wait' THEN 'polling'
                                  WHEN 'orchestrate' THEN 'waiting_subagent' ELSE 'waiting_tool' END
           END,
           tc.is_error, tc.cmd, tc.output, extract(epoch FROM coalesce(tc.ended_at, tc.started_at))::float8, NULL
    FROM tc WHERE tc.output_byte_offset IS NOT NULL
    UNION ALL
    SELECT msg.session_id, msg.source_id, msg.byte_offset, 1, msg.message_uid, extract(epoch FROM msg.ts)::float8,
           CASE msg.trig WHEN 'user' THEN 'waiting_human' WHEN 'agent_msg' THEN 'waiting_subagent'
                         ELSE 'waiting_tool' END,
           NULL, NULL, NULL, NULL, msg.message_class
    FROM msg WHERE msg.byte_offset IS NOT NULL AND msg.trig IS NOT NULL
), gaps AS (  -- thread states: each timed interval takes the state of the event that ends it
    SELECT ev.session_id, ev.state,
           ev.t - lag(ev.t) OVER w AS gap  -- NULL for the first timed event (greatest() would make it 0)
    FROM ev
    WHERE ev.t IS NOT NULL
    WINDOW w AS (PARTITION BY ev.session_id ORDER BY ev.source_id, ev.pos, ev.kind, ev.uid COLLATE "C")
), resets AS (  -- corrections: a human prompt whose previous result-or-user event is a failed result
    SELECT ev.kind, ev.message_class,
           lag(ev.kind = 0 AND coalesce(ev.is_error, false)) OVER w AS after_failure,
           ev.session_id
    FROM ev
    WHERE ev.kind = 0 OR (ev.kind = 1 AND ev.state = 'waiting_human')
    WINDOW w AS (PARTITION BY ev.session_id ORDER BY ev.source_id, ev.pos, ev.kind, ev.uid COLLATE "C")
), ci AS (  -- CI waits: a look that saw a run finish, right after a push among pushes and such looks
    SELECT x.session_id, x.is_push, x.done_at,
           lag(x.is_push) OVER w AS after_push, lag(x.done_at) OVER w AS push_at
    FROM (
        SELECT ev.*, ah.eff_runs('git +(-C +[^ ]+ +)?push', ev.cmd) AS is_push,
               ah.eff_runs('gh +(run +(view|watch|list)|pr +(checks|view|status))', ev.cmd)
                   AND coalesce(ev.output, '') ~ 'completed|success|failure|cancelled|✓|✗|\tpass\t|\tfail\t' AS is_look
        FROM ev WHERE ev.kind = 0 AND ev.cmd IS NOT NULL AND NOT coalesce(ev.is_error, false)
    ) AS x
    WHERE x.is_push OR x.is_look
    WINDOW w AS (PARTITION BY x.session_id ORDER BY x.source_id, x.pos, x.kind, x.uid COLLATE "C")
)
SELECT session_id, 'model_calls', jsonb_build_object('trigger', trig), count(*)::float8
FROM mc GROUP BY 1, 3
UNION ALL
SELECT mc.session_id, 'tokens', jsonb_build_object('bucket', b.bucket, 'trigger', mc.trig), sum(b.n)::float8
FROM mc
CROSS JOIN LATERAL (VALUES ('input_uncached', mc.input_uncached), ('cache_read', mc.cache_read),
                           ('cache_write_5m', mc.cache_write_5m), ('cache_write_1h', mc.cache_write_1h),
                           ('output', mc.output), ('reasoning', mc.reasoning)) AS b (bucket, n)
WHERE b.n IS NOT NULL
GROUP BY 1, 3
UNION ALL
SELECT session_id, 'waits', jsonb_build_object('wait_outcome', o), count(*)::float8
FROM (SELECT tc.session_id, CASE tc.trig WHEN 'wait' THEN 'timed_out' ELSE 'delivered' END AS o
      FROM tc WHERE tc.trig IN ('wait', 'event')) AS w GROUP BY 1, 3
UNION ALL
SELECT session_id, 'wait_seconds', jsonb_build_object('wait_outcome', o), sum(secs)
FROM (SELECT tc.session_id, tc.secs, CASE tc.trig WHEN 'wait' THEN 'timed_out' ELSE 'delivered' END AS o
      FROM tc WHERE tc.trig IN ('wait', 'event') AND tc.secs IS NOT NULL) AS w GROUP BY 1, 3
UNION ALL
SELECT session_id, 'polls', '{}'::jsonb, count(*)::float8 FROM tc WHERE trig = 'status' GROUP BY 1
UNION ALL
SELECT session_id, 'poll_seconds', '{}'::jsonb, sum(secs) FROM tc WHERE trig = 'status' AND secs IS NOT NULL GROUP BY 1
UNION ALL
SELECT session_id, 'spawns', jsonb_build_object('route', route), count(*)::float8
FROM tc WHERE route IS NOT NULL GROUP BY 1, 3
UNION ALL
SELECT session_id, 'gate_runs', jsonb_build_object('gate', gate, 'gate_result', ah.eff_gate_result(is_error, exit_code)),
       count(*)::float8
FROM tc WHERE gate IS NOT NULL GROUP BY 1, 3
UNION ALL
SELECT session_id, 'reviews', jsonb_build_object('review_event', review), count(*)::float8
FROM tc WHERE review IS NOT NULL GROUP BY 1, 3
UNION ALL
SELECT session_id, 'tool_failures', jsonb_build_object('error_class', error_class), count(*)::float8
FROM tc WHERE error_class IS NOT NULL GROUP BY 1, 3
UNION ALL
SELECT session_id, 'interventions', jsonb_build_object('intervention', i), count(*)::float8
FROM (SELECT tc.session_id, 'denial' AS i FROM tc WHERE tc.error_class = 'denied'
      UNION ALL
      SELECT msg.session_id, CASE msg.message_class WHEN 'interrupt_marker' THEN 'interrupt' ELSE 'queued_prompt' END
      FROM msg WHERE msg.message_class IN ('interrupt_marker', 'queued_prompt')
      UNION ALL
      SELECT resets.session_id, 'correction' FROM resets
      WHERE resets.kind = 1 AND resets.message_class = 'human_prompt' AND resets.after_failure) AS i
GROUP BY 1, 3
UNION ALL
SELECT session_id, 'thread_state_seconds', jsonb_build_object('state', CASE WHEN gap > 1800 THEN 'idle' ELSE state END),
       sum(greatest(gap, 0))
FROM gaps WHERE gap IS NOT NULL GROUP BY 1, 3
UNION ALL
SELECT session_id, 'ci_waits', '{}'::jsonb, count(*)::float8 FROM ci WHERE NOT is_push AND after_push GROUP BY 1
UNION ALL
SELECT session_id, 'ci_wait_seconds', '{}'::jsonb, sum(greatest(done_at - push_at, 0))
FROM ci WHERE NOT is_push AND after_push AND done_at IS NOT NULL AND push_at IS NOT NULL GROUP BY 1
$$;

-- The loop that owns each thread (its root or a lane; the latest loop when several do) and its
-- label `<repo>/loop<N>` (repo: the characters outside [A-Za-z0-9._/-] replaced by '_', 'unknown'
-- when NULL). The collector bounds the values (telemetry.families.MAX_LOOP_LABELS).
CREATE OR REPLACE VIEW ah.thread_loop AS
SELECT DISTINCT ON (o.session_id)
       o.session_id, l.id AS loop_id, l.started_at,
       regexp_replace(coalesce(nullif(l.repo, ''), 'unknown'), '[^A-Za-z0-9._/-]', '_', 'g') || '/loop' || l.loop_number
           AS loop
FROM (SELECT root_session_id AS session_id, id AS loop_id FROM ah.loops
      UNION
      SELECT session_id, loop_id FROM ah.lane) AS o
JOIN ah.loops AS l ON l.id = o.loop_id
ORDER BY o.session_id, l.started_at DESC NULLS LAST, l.id DESC;
