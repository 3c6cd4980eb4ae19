-- Efficiency classifier (docs/design.md §11, issue 11): what triggered every model call.
--
-- SQL twin of the pure package agent_history.classify: the same rules, written twice on
-- purpose; tests/test_efficiency_contract.py runs the same tool calls and messages through both
-- and expects the same answer. Every regex literal here is the one in
-- agent_history/classify/rules.py (written in the syntax Python re and PostgreSQL ARE share:
-- no \b, no lazy quantifiers, no inline flags). Change both or neither.
--
-- The post-pass (agent_history.ingest.postpass) calls ah.refresh_efficiency(ids) after
-- ah.refresh_sessions(ids), over the dirty sessions only.
--
-- Idempotent: re-applied by agent_history.db.migrate whenever this file's hash changes.


-- A tool call's stored input → its JSON object; NULL when absent, not JSON or not an object
-- (classify.commands.parse_object).
CREATE OR REPLACE FUNCTION ah.eff_input(input text) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE
        WHEN input IS NOT NULL AND pg_input_is_valid(input, 'jsonb') AND jsonb_typeof(input::jsonb) = 'object'
        THEN input::jsonb
    END;

-- The shell text of a shell tool's arguments (classify.commands.command_text): `command` as a
-- string, or an argv list whose ["bash", "-lc", script] wrapper is unwrapped (else joined by
-- spaces), else `cmd`; NULL when neither is there.
CREATE OR REPLACE FUNCTION ah.eff_command_text(args jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE jsonb_typeof(args -> 'command')
        WHEN 'string' THEN args ->> 'command'
        WHEN 'array' THEN
            CASE WHEN jsonb_array_length(args -> 'command') >= 3
                  AND jsonb_typeof(args -> 'command' -> 0) = 'string'
                  AND jsonb_typeof(args -> 'command' -> 1) = 'string'
                  AND regexp_replace(args -> 'command' ->> 0, '^.*/', '') IN ('bash', 'sh', 'zsh', 'dash', 'ksh', 'fish')
                  AND args -> 'command' ->> 1 IN ('-c', '-lc', '-ic', '-lic', '-cl')
                 THEN CASE WHEN jsonb_typeof(args -> 'command' -> 2) = 'string'
                           THEN args -> 'command' ->> 2 ELSE (args -> 'command' -> 2)::text END
                 ELSE (SELECT string_agg(CASE WHEN jsonb_typeof(e) = 'string' THEN e #>> '{}' ELSE e::text END,
                                         ' ' ORDER BY n)
                       FROM jsonb_array_elements(args -> 'command') WITH ORDINALITY AS a (e, n))
            END
        ELSE CASE WHEN jsonb_typeof(args -> 'cmd') = 'string' THEN args ->> 'cmd' END
    END;

-- One command segment (no &&, ;, & …) → neutral | wait | status | noop | work
-- (classify.commands.segment_class; rules.COMMAND_RULES, first match wins).
CREATE OR REPLACE FUNCTION ah.eff_segment(segment text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    head text;
BEGIN
    head := btrim(regexp_replace(split_part(segment, '|', 1), '[ \t\r]+', ' ', 'g'), ' ');
    -- rules.SEGMENT_PREFIX: keywords, brackets, VAR=value assignments
    head := btrim(regexp_replace(head,
        '^([{(!] *|(do|then|else|elif|time|nohup|command|exec|sudo|env)( +|$)|[A-Za-z_][A-Za-z0-9_]*=[^ ]* +)*', ''), ' ');
    -- rules.SEGMENT_SUFFIX: closing brackets
    head := regexp_replace(head, ' *[)}]+$', '');
    RETURN CASE
        -- navigation and shell syntax carry no meaning of their own
        WHEN head ~ '^$|^[})]+$|^(cd|pushd|popd|done|fi|esac|set|export|source|local|shopt)( |$)' THEN 'neutral'
        -- sleep, until/while-true loops, gh run watch, gh pr checks --watch, wait
        WHEN head ~ '^sleep( |$)|^until( |$)|^while +(true|:)( |$)|^gh +run +watch( |$)|^gh +pr +checks .*--watch|^wait( |$)'
            THEN 'wait'
        -- git/gh/backlog state, process lists, reading a state/report file
        WHEN head ~ ('^git +(-C +[^ ]+ +)?(status|log|fetch|rev-parse)( |$)'
                     '|^gh +(run|pr) +(view|list|checks|status)( |$)'
                     '|^backlog +task +(list|view)( |$)'
                     '|^(ps|pgrep)( |$)'
                     '|^(cat|head|tail|less|jq) [^>]*(STATE|STATUS|REPORT|PROGRESS|CLOSEOUT|HANDOFF|state|status|report|progress'
                     '|closeout|handoff)[^/ ]*[.](md|json|txt|yaml|yml)( |$|[\"''])')
            THEN 'status'
        -- true, :, pwd, date, clear, exit 0, an echo/printf that writes no file
        WHEN head ~ '^(true|:|pwd|date|clear|exit|exit +0)$|^(echo|printf)( [^>]*)?$' THEN 'noop'
        ELSE 'work'
    END;
END;
$$;

-- A shell command line → work | wait | status | noop (classify.commands.command_trigger): cut at
-- &&, ||, ;, & and newlines after removing `2>&1`-style redirections; work if any segment is
-- work, else wait if any waits, else status if any is a status look, else noop (also NULL).
-- A loop that stops at the first work segment: a heredoc's body is cut into one segment per
-- line, and most commands are work from their first segment on.
CREATE OR REPLACE FUNCTION ah.eff_command(command text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    seg  text;
    c    text;
    seen text[] := '{}';
BEGIN
    IF command IS NULL THEN
        RETURN 'noop';
    END IF;
    FOREACH seg IN ARRAY regexp_split_to_array(regexp_replace(command, '[0-9]*>&[0-9-]*|&>>?', ' ', 'g'),
                                               '&&|[|][|]|;|&|\n')
    LOOP
        c := ah.eff_segment(seg);
        IF c = 'work' THEN
            RETURN 'work';
        END IF;
        seen := seen || c;
    END LOOP;
    RETURN CASE WHEN 'wait' = ANY (seen) THEN 'wait' WHEN 'status' = ANY (seen) THEN 'status' ELSE 'noop' END;
END;
$$;

-- Tool name → rule per harness (rules.TOOL_RULES); 'work' for anything not listed.
CREATE OR REPLACE FUNCTION ah.eff_tool_rule(agent text, tool_name text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(CASE agent
        WHEN 'claude' THEN CASE tool_name
            WHEN 'Bash' THEN 'shell' WHEN 'bash' THEN 'shell' WHEN 'PowerShell' THEN 'shell'
            WHEN 'BashOutput' THEN 'bg_output' WHEN 'TaskOutput' THEN 'bg_output'
            WHEN 'Read' THEN 'read_file'
            WHEN 'Task' THEN 'orchestrate' WHEN 'Agent' THEN 'orchestrate' WHEN 'SendMessage' THEN 'orchestrate'
            WHEN 'TeamCreate' THEN 'orchestrate' WHEN 'ScheduleWakeup' THEN 'orchestrate'
        END
        WHEN 'codex' THEN CASE tool_name
            WHEN 'shell' THEN 'shell' WHEN 'container.exec' THEN 'shell' WHEN 'local_shell' THEN 'shell'
            WHEN 'shell_command' THEN 'shell' WHEN 'exec_command' THEN 'shell'
            WHEN 'write_stdin' THEN 'stdin_poll'
            WHEN 'wait' THEN 'agent_wait' WHEN 'wait_agent' THEN 'agent_wait'
            WHEN 'spawn_agent' THEN 'orchestrate' WHEN 'send_message' THEN 'orchestrate'
            WHEN 'send_input' THEN 'orchestrate' WHEN 'resume_agent' THEN 'orchestrate'
            WHEN 'close_agent' THEN 'orchestrate'
            WHEN 'list_agents' THEN 'status'
        END
        WHEN 'pi' THEN CASE tool_name
            WHEN 'bash' THEN 'shell' WHEN 'read' THEN 'read_file' WHEN 'subagent' THEN 'pi_subagent'
        END
    END, 'work');

-- The trigger a tool call's result is (classify.results.eff_result): work | status | wait |
-- event | noop | orchestrate. `input` is the stored input JSON text, `output` the result text.
CREATE OR REPLACE FUNCTION ah.eff_result(agent text, tool_name text, input text, output text, is_error boolean)
    RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    rule text := ah.eff_tool_rule(agent, tool_name);
    args jsonb;
    path text;
BEGIN
    IF rule IN ('work', 'status', 'orchestrate') THEN
        RETURN rule;
    END IF;
    args := ah.eff_input(input);
    IF rule = 'shell' THEN
        -- a non-JSON input is the command itself
        RETURN ah.eff_command(CASE WHEN args IS NULL THEN input ELSE ah.eff_command_text(args) END);
    ELSIF rule = 'read_file' THEN
        path := CASE WHEN jsonb_typeof(args -> 'file_path') = 'string' AND args ->> 'file_path' <> ''
                     THEN args ->> 'file_path'
                     WHEN jsonb_typeof(args -> 'path') = 'string' THEN args ->> 'path' END;
        RETURN CASE WHEN path ~ ('(STATE|STATUS|REPORT|PROGRESS|CLOSEOUT|HANDOFF|state|status|report|progress'
                                 '|closeout|handoff)[^/ ]*[.](md|json|txt|yaml|yml)$')
                    THEN 'status' ELSE 'work' END;
    ELSIF rule = 'bg_output' THEN
        RETURN CASE WHEN coalesce(output, '') ~ '<status>running</status>|<retrieval_status>(timeout|not_ready)</retrieval_status>'
                    THEN 'wait' ELSE 'event' END;
    ELSIF rule = 'agent_wait' THEN
        IF is_error THEN
            RETURN 'work';
        END IF;
        RETURN CASE WHEN coalesce(output, '') ~ '\"timed_out\" *: *true|[Tt]imed out' THEN 'wait' ELSE 'event' END;
    ELSIF rule = 'stdin_poll' THEN
        IF jsonb_typeof(args -> 'chars') = 'string' AND args ->> 'chars' <> '' THEN
            RETURN 'work';
        END IF;
        RETURN CASE WHEN coalesce(output, '') ~ 'Process running with session ID' THEN 'wait' ELSE 'event' END;
    ELSIF rule = 'pi_subagent' THEN
        RETURN CASE WHEN jsonb_typeof(args -> 'action') = 'string' AND args ->> 'action' IN ('list', 'status', 'get')
                    THEN 'status' ELSE 'orchestrate' END;
    END IF;
    RETURN rule;
END;
$$;

-- The trigger a message is, or NULL when it does not change the agent's state
-- (classify.results.eff_message; rules.MESSAGE_CLASS_TRIGGERS and the message rules after it).
CREATE OR REPLACE FUNCTION ah.eff_message(agent text, message_class text, role text, text text,
                                          record_type text, record_origin text, in_worker boolean)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN role IN ('tool', 'assistant') THEN NULL  -- rules.NON_EVENT_ROLES
        WHEN message_class = 'agent_message' THEN
            CASE WHEN record_origin ~ 'notification' THEN 'event'
                 WHEN in_worker THEN 'user'
                 ELSE 'agent_msg' END
        WHEN message_class IN ('human_prompt', 'queued_prompt', 'command_expansion', 'interrupt_marker',
                               'subagent_brief') THEN 'user'
        WHEN message_class = 'subagent_report' THEN 'agent_msg'
        WHEN message_class IN ('context_injection', 'system_reminder')
             AND coalesce(text, '') ~ '^\s*<task-notification>' THEN 'event'
        WHEN agent = 'pi' AND record_type = 'custom_message' AND record_origin ~ 'loop|watch|wake' THEN 'event'
    END;


-- Roles and triggers of sessions `ids` (unknown ids ignored); returns the number of model
-- calls whose trigger changed.
--
-- a) Roles, for the given sessions and their parents (a parent becomes root when its first
--    child is indexed): worker = a sub-agent thread (is_subagent, else agent_id <> ''); root =
--    it spawned sub-agents (subagent_spawn rows, or sub-agent sessions whose parent it is);
--    else solo. (A loop's root is a root too: ah.loops, issue 12, is added by its own pass.)
-- b) Triggers (classify.attribute): per thread, the non-error model calls, the tool results
--    (at output_byte_offset) and the messages with a trigger, ordered by (source_id, byte
--    offset, result < message < call, uid) — never by timestamp. A call takes the trigger of the
--    entry right before it; after another call it is 'model'; with nothing before it 'user'.
--    API-error notices (is_api_error) are not calls and get NULL.
CREATE OR REPLACE FUNCTION ah.refresh_efficiency(ids bigint[]) RETURNS integer
    LANGUAGE plpgsql VOLATILE
    -- as in ah.refresh_sessions: plan for the actual id arrays (a generic plan would scan them)
    SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    given   bigint[];
    changed integer;
BEGIN
    SELECT coalesce(array_agg(s.id), '{}') INTO given FROM ah.session AS s WHERE s.id = ANY (ids);
    IF cardinality(given) = 0 THEN
        RETURN 0;
    END IF;

    -- a) roles ------------------------------------------------------------------------------
    WITH targets AS (
        SELECT unnest(given) AS id
        UNION
        SELECT s.parent_session_id FROM ah.session AS s
        WHERE s.id = ANY (given) AND s.parent_session_id IS NOT NULL
    ), r AS (
        SELECT s.id,
               CASE WHEN coalesce(s.is_subagent, s.agent_id <> '') THEN 'worker'
                    WHEN EXISTS (SELECT 1 FROM ah.subagent_spawn AS sp WHERE sp.session_id = s.id)
                      OR EXISTS (SELECT 1 FROM ah.session AS c
                                 WHERE c.parent_session_id = s.id AND coalesce(c.is_subagent, c.agent_id <> ''))
                      -- roots a loop (issue 12): ingest.loops runs just before this in the post-pass
                      OR EXISTS (SELECT 1 FROM ah.loops AS l WHERE l.root_session_id = s.id)
                    THEN 'root'
                    ELSE 'solo'
               END AS role
        FROM ah.session AS s
        WHERE s.id IN (SELECT id FROM targets)
    )
    UPDATE ah.session AS s
    SET thread_role = r.role
    FROM r
    WHERE s.id = r.id AND s.thread_role IS DISTINCT FROM r.role;

    -- b) triggers ---------------------------------------------------------------------------
    WITH th AS (
        SELECT s.id, coalesce(s.is_subagent, s.agent_id <> '') AS in_worker
        FROM ah.session AS s
        WHERE s.id = ANY (given)
    ), ev AS (
        SELECT mc.session_id, mc.source_id, mc.byte_offset AS pos, 2 AS kind, mc.call_uid AS uid,
               mc.id AS call_id, NULL::text AS trig
        FROM ah.model_call AS mc
        WHERE mc.session_id = ANY (given) AND NOT coalesce(mc.is_api_error, false) AND mc.byte_offset IS NOT NULL
        UNION ALL
        SELECT tc.session_id, tc.source_id, tc.output_byte_offset, 0, tc.tool_call_uid, NULL,
               ah.eff_result(tc.agent, tc.name, tc.input, tc.output, tc.is_error)
        FROM ah.tool_call AS tc
        WHERE tc.session_id = ANY (given) AND tc.output_byte_offset IS NOT NULL
        UNION ALL
        SELECT m.session_id, m.source_id, m.byte_offset, 1, m.message_uid, NULL, t.trig
        FROM ah.message AS m
        JOIN th ON th.id = m.session_id
        CROSS JOIN LATERAL (SELECT ah.eff_message(m.agent, m.message_class, m.role, m.text, m.record_type,
                                                  m.record_origin, th.in_worker) AS trig) AS t
        WHERE m.session_id = ANY (given) AND m.byte_offset IS NOT NULL AND t.trig IS NOT NULL
    ), seq AS (
        SELECT ev.call_id,
               lag(CASE WHEN ev.kind = 2 THEN 'call' ELSE ev.trig END)
                   OVER (PARTITION BY ev.session_id ORDER BY ev.source_id, ev.pos, ev.kind, ev.uid COLLATE "C")
                   AS prev
        FROM ev
    ), r AS (
        SELECT seq.call_id,
               CASE WHEN seq.prev IS NULL THEN 'user' WHEN seq.prev = 'call' THEN 'model' ELSE seq.prev END AS trig
        FROM seq
        WHERE seq.call_id IS NOT NULL
        UNION ALL
        -- API-error notices are not calls
        SELECT mc.id, NULL
        FROM ah.model_call AS mc
        WHERE mc.session_id = ANY (given) AND (coalesce(mc.is_api_error, false) OR mc.byte_offset IS NULL)
    )
    UPDATE ah.model_call AS mc
    SET trigger = r.trig
    FROM r
    WHERE mc.id = r.call_id AND mc.trigger IS DISTINCT FROM r.trig;
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed;
END;
$$;


-- One row per thread (session row): model calls by trigger, poll share, tokens.
-- calls = non-error model calls; unclassified = those without a trigger; poll_share =
-- (wait + status) / classified calls, 4 decimals, NULL when nothing is classified (never 0);
-- input_tokens = uncached input, cache_read_tokens, output_tokens: sums over the calls, NULL
-- when no call reports the bucket.
-- Columns may only be appended here: CREATE OR REPLACE VIEW cannot drop, rename or reorder.
CREATE OR REPLACE VIEW ah.efficiency AS
SELECT s.id AS session_id,
       s.agent,
       s.namespace,
       s.session_uid,
       s.agent_id,
       s.thread_role AS role,
       s.started_at,
       count(mc.id) AS calls,
       count(mc.id) FILTER (WHERE mc.trigger = 'user')        AS n_user,
       count(mc.id) FILTER (WHERE mc.trigger = 'model')       AS n_model,
       count(mc.id) FILTER (WHERE mc.trigger = 'work')        AS n_work,
       count(mc.id) FILTER (WHERE mc.trigger = 'status')      AS n_status,
       count(mc.id) FILTER (WHERE mc.trigger = 'wait')        AS n_wait,
       count(mc.id) FILTER (WHERE mc.trigger = 'event')       AS n_event,
       count(mc.id) FILTER (WHERE mc.trigger = 'noop')        AS n_noop,
       count(mc.id) FILTER (WHERE mc.trigger = 'orchestrate') AS n_orchestrate,
       count(mc.id) FILTER (WHERE mc.trigger = 'agent_msg')   AS n_agent_msg,
       count(mc.id) FILTER (WHERE mc.trigger IS NULL)         AS unclassified,
       round(count(mc.id) FILTER (WHERE mc.trigger IN ('wait', 'status'))::numeric
             / nullif(count(mc.trigger), 0), 4) AS poll_share,
       sum(mc.input_uncached) AS input_tokens,
       sum(mc.cache_read)     AS cache_read_tokens,
       sum(mc.output)         AS output_tokens
FROM ah.session AS s
LEFT JOIN ah.model_call AS mc ON mc.session_id = s.id AND NOT coalesce(mc.is_api_error, false)
GROUP BY s.id;
