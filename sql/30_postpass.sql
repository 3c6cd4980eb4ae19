-- Post-passes over dirty sessions (docs/design.md §2, §5, §7): lineage, spawn → child, repo, rollups.
--
-- The loader calls, in the transaction that clears the marks (agent_history.ingest.postpass):
--
--   WITH d AS (DELETE FROM ah.dirty_session RETURNING session_id)
--   SELECT ah.refresh_sessions(coalesce(array_agg(session_id), '{}')) FROM d
--
-- Every statement is set-based over the given ids (plus the neighbours whose derived columns
-- depend on them) and guarded by IS DISTINCT FROM, so a second call with the same ids updates
-- no row. Derived columns follow "NULL means unknown": a session with no model call reporting
-- a bucket has NULL in that bucket, never 0; cost is NULL when no call could be priced.
--
-- Idempotent: re-applied by agent_history.db.migrate whenever this file's hash changes.


-- A cwd as a repo key: trailing path separators removed ('/' stays '/'); NULL for NULL or ''.
CREATE OR REPLACE FUNCTION ah.repo_root_path(cwd text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN cwd IS NULL OR cwd = '' THEN NULL
        WHEN cwd ~ '^[/\\]+$' THEN left(cwd, 1)
        ELSE regexp_replace(cwd, '[/\\]+$', '')
    END;

-- A repo's display name: the last path component ('/' or '\' separated) of its root path,
-- e.g. '/home/user/my_proj.v2/sub-dir' → 'sub-dir' (field case E15); the path itself for '/'.
CREATE OR REPLACE FUNCTION ah.repo_name(root_path text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(nullif(regexp_replace(root_path, '^.*[/\\]', ''), ''), root_path);


-- Refresh the derived columns of sessions `ids` (unknown ids are ignored); returns how many of
-- the given sessions exist and were rolled up.
--
-- a) Lineage. parent_session_id = the session (same agent) keyed (parent_session_uid,
--    coalesce(parent_agent_id, '')); a Claude sub-agent transcript (agent_id <> '', no
--    parent_session_uid) hangs under its main thread (session_uid, ''). Done for the given
--    sessions and for sessions that name one of them as parent (a parent indexed after its
--    child). root_session_id = the top of the parent chain (the session itself when it has no
--    parent), recomputed for those sessions and all their descendants; the walk is capped at 50
--    levels, and a cycle resolves to its smallest id so every member agrees.
-- b) Spawn → child. subagent_spawn.child_session_id = the session keyed (child_session_uid,
--    coalesce(child_agent_id, '')), else the session whose spawn_uid is the spawn's (smallest
--    id on ties); never the spawning session itself. Done for spawns of the given sessions and
--    for spawns whose child is (or now resolves to) one of them.
-- c) Repo. ah.repo is upserted by root path (ah.repo_root_path(cwd)); session.repo_id follows
--    (NULL when cwd is NULL). Existing repo rows are left alone (name, remote_url).
-- d) Rollup, per given session:
--      message_count     every message
--      prompt_count      messages of class human_prompt or queued_prompt
--      tool_call_count   every tool call; tool_error_count those with is_error or an error_class
--      model_call_count  calls that are not API-error notices (is_api_error); NULL (unknown,
--                        not 0) when the session has assistant messages and no model call at
--                        all: its transcript recorded no usage (Codex field cases E22/E23)
--      subagent_count    the session's sub-agents: its child sessions (parent_session_id = it;
--                        the threads its *_with_subagents totals add up, whether or not a spawn
--                        record names them — legacy Claude agent-*.jsonl have none), plus each
--                        other child a spawn of it resolves to, plus each spawn of it with no
--                        child session (transcript not indexed); a parent outside the given
--                        sessions whose children changed (a child indexed after it, or
--                        re-parented) has this count refreshed too
--      token buckets     sums over non-error calls; NULL when no such call reports the bucket
--      cost_usd          sum of ah.priced_cost_usd over non-error calls, priced on the UTC day
--                        of the call's ts (else the session start) for the call's model (else
--                        the session's) — the same as summing ah.call_cost_usd; unpriced calls
--                        add nothing; NULL when no call is priced
--      title             custom_title, else ai_title, else first_prompt, else the first
--                        human_prompt message — cut to 200 characters
--      duration_ms       ended_at − started_at, each falling back to max/min message ts;
--                        NULL when unknown or negative
--      rolled_up_at      now(), set only when some rollup column changed (or never set)
CREATE OR REPLACE FUNCTION ah.refresh_sessions(ids bigint[]) RETURNS integer
    LANGUAGE plpgsql VOLATILE
    -- Plan every statement for the actual id arrays: a cached generic plan would test
    -- `x = ANY (given)` by linear search per row (only constant arrays are hashed), which is
    -- quadratic for a bulk load's dirty set, and would guess row counts blindly.
    SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    given   bigint[];  -- the existing sessions among `ids`
    lineage bigint[];  -- given + sessions whose parent key names one of them
    tree    bigint[];  -- lineage + every descendant (their roots may change)
    parents bigint[];  -- the parents of lineage, before and after its parent links change
BEGIN
    SELECT coalesce(array_agg(DISTINCT s.id), '{}') INTO given
    FROM ah.session AS s
    WHERE s.id = ANY (ids);
    IF cardinality(given) = 0 THEN
        RETURN 0;
    END IF;

    -- 0) Claude Code `summary` records name a conversation through `leafUuid`, which may point
    -- into another file. The parser stores each as a message 'summary:<leaf>' whose parent_uid is
    -- the leaf; the session owning the leaf takes the latest such summary as its ai_title (unless
    -- it has one), in whichever order the two files were indexed. Those sessions join `given`.
    WITH pairs AS (
        SELECT leaf.session_id, sm.text, sm.source_id, sm.byte_offset
        FROM ah.message AS sm
        -- digests compared too: the natural key indexes (agent, ah.key_digest(message_uid)) (0030_key_digests)
        JOIN ah.message AS leaf ON leaf.agent = sm.agent AND ah.key_digest(leaf.message_uid) = ah.key_digest(sm.parent_uid)
                               AND leaf.message_uid = sm.parent_uid
        WHERE sm.agent = 'claude' AND sm.message_uid LIKE 'summary:%' AND sm.session_id = ANY (given)
        UNION ALL
        SELECT leaf.session_id, sm.text, sm.source_id, sm.byte_offset
        FROM ah.message AS leaf
        JOIN ah.message AS sm
          ON sm.agent = leaf.agent AND sm.parent_uid = leaf.message_uid AND sm.message_uid LIKE 'summary:%'
        WHERE leaf.agent = 'claude' AND leaf.session_id = ANY (given)
    ), latest AS (
        SELECT DISTINCT ON (session_id) session_id, text
        FROM pairs
        WHERE nullif(text, '') IS NOT NULL
        ORDER BY session_id, source_id DESC, byte_offset DESC
    ), upd AS (
        UPDATE ah.session AS s
        SET ai_title = l.text
        FROM latest AS l
        WHERE s.id = l.session_id AND s.ai_title IS NULL
        RETURNING s.id
    )
    SELECT coalesce(array_agg(DISTINCT x), '{}') INTO given
    FROM (SELECT unnest(given) AS x UNION SELECT id FROM upd) AS u;

    -- a) lineage ----------------------------------------------------------------------------
    SELECT coalesce(array_agg(DISTINCT x.id), '{}') INTO lineage
    FROM (
        SELECT unnest(given) AS id
        UNION
        -- children that name a given session by (parent_session_uid, parent_agent_id)
        SELECT c.id
        FROM ah.session AS g
        JOIN ah.session AS c
          ON c.agent = g.agent
         AND c.parent_session_uid = g.session_uid
         AND coalesce(c.parent_agent_id, '') = g.agent_id
        WHERE g.id = ANY (given)
        UNION
        -- Claude sub-agent transcripts of a given main thread (same session_uid, no parent key)
        SELECT c.id
        FROM ah.session AS g
        JOIN ah.session AS c
          ON c.agent = g.agent
         AND c.session_uid = g.session_uid
         AND c.agent_id <> ''
         AND c.parent_session_uid IS NULL
        WHERE g.id = ANY (given)
          AND g.agent_id = ''
    ) AS x;

    SELECT coalesce(array_agg(DISTINCT s.parent_session_id), '{}') INTO parents
    FROM ah.session AS s
    WHERE s.id = ANY (lineage) AND s.parent_session_id IS NOT NULL;

    -- The parent key is computed first so the join is an equality on the natural key (index).
    WITH k AS (
        SELECT c.id,
               c.agent,
               coalesce(c.parent_session_uid, CASE WHEN c.agent_id <> '' THEN c.session_uid END) AS p_uid,
               CASE WHEN c.parent_session_uid IS NOT NULL THEN coalesce(c.parent_agent_id, '') ELSE '' END AS p_aid
        FROM ah.session AS c
        WHERE c.id = ANY (lineage)
    ), r AS (
        SELECT k.id, p.id AS parent_id
        FROM k
        LEFT JOIN ah.session AS p
          ON p.agent = k.agent
         AND p.session_uid = k.p_uid
         AND p.agent_id = k.p_aid
         AND p.id <> k.id
    )
    UPDATE ah.session AS s
    SET parent_session_id = r.parent_id
    FROM r
    WHERE s.id = r.id
      AND s.parent_session_id IS DISTINCT FROM r.parent_id;

    -- Descendants through the (just updated) parent links; the depth cap bounds a cycle.
    WITH RECURSIVE down (id, depth) AS (
        SELECT unnest(lineage), 0
        UNION
        SELECT c.id, d.depth + 1
        FROM down AS d
        JOIN ah.session AS c ON c.parent_session_id = d.id
        WHERE d.depth < 50
    )
    SELECT coalesce(array_agg(DISTINCT id), '{}') INTO tree FROM down;

    -- Walk up from each session. A walk ends at a session without parent (its root), at a
    -- dangling parent id or the depth cap (the farthest session reached), or on a cycle: then
    -- the root is the smallest id on the cycle itself, so every session on or below it agrees.
    -- Each session has one parent, so a walk is a chain with at most one is_cycle row, whose
    -- id is the first session seen twice; the cycle is that session and everything above it.
    WITH RECURSIVE up (start_id, id, parent_id, depth) AS (
        SELECT s.id, s.id, s.parent_session_id, 0
        FROM ah.session AS s
        WHERE s.id = ANY (tree)
        UNION ALL
        SELECT u.start_id, p.id, p.parent_session_id, u.depth + 1
        FROM up AS u
        JOIN ah.session AS p ON p.id = u.parent_id
        WHERE u.depth < 50
    ) CYCLE id SET is_cycle USING path,
    cyc AS (
        SELECT u.start_id, min(u.depth) AS from_depth
        FROM up AS u
        JOIN up AS again ON again.start_id = u.start_id AND again.is_cycle AND again.id = u.id
        WHERE NOT u.is_cycle
        GROUP BY u.start_id
    ),
    r AS (
        SELECT u.start_id,
               CASE WHEN cyc.from_depth IS NULL THEN (array_agg(u.id ORDER BY u.depth DESC))[1]
                    ELSE min(u.id) FILTER (WHERE u.depth >= cyc.from_depth)
               END AS root_id
        FROM up AS u
        LEFT JOIN cyc ON cyc.start_id = u.start_id
        WHERE NOT u.is_cycle
        GROUP BY u.start_id, cyc.from_depth
    )
    UPDATE ah.session AS s
    SET root_session_id = r.root_id
    FROM r
    WHERE s.id = r.start_id
      AND s.root_session_id IS DISTINCT FROM r.root_id;

    -- b) spawn → child ----------------------------------------------------------------------
    WITH cand AS (
        SELECT sp.id FROM ah.subagent_spawn AS sp WHERE sp.session_id = ANY (given)
        UNION
        SELECT sp.id FROM ah.subagent_spawn AS sp WHERE sp.child_session_id = ANY (given)
        UNION
        SELECT sp.id
        FROM ah.session AS g
        JOIN ah.subagent_spawn AS sp
          ON sp.agent = g.agent
         AND sp.child_session_uid = g.session_uid
         AND coalesce(sp.child_agent_id, '') = g.agent_id
        WHERE g.id = ANY (given)
        UNION
        SELECT sp.id
        FROM ah.session AS g
        JOIN ah.subagent_spawn AS sp ON sp.agent = g.agent AND sp.spawn_uid = g.spawn_uid
        WHERE g.id = ANY (given)
    ), r AS (
        SELECT sp.id,
               coalesce(
                   (SELECT c.id
                    FROM ah.session AS c
                    WHERE c.agent = sp.agent
                      AND c.session_uid = sp.child_session_uid
                      AND c.agent_id = coalesce(sp.child_agent_id, '')
                      AND c.id <> sp.session_id),
                   (SELECT min(c.id)
                    FROM ah.session AS c
                    WHERE c.agent = sp.agent
                      AND c.spawn_uid = sp.spawn_uid
                      AND c.id <> sp.session_id)
               ) AS child_id
        FROM ah.subagent_spawn AS sp
        WHERE sp.id IN (SELECT id FROM cand)
    )
    UPDATE ah.subagent_spawn AS sp
    SET child_session_id = r.child_id
    FROM r
    WHERE sp.id = r.id
      AND sp.child_session_id IS DISTINCT FROM r.child_id;

    -- c) repo from cwd ----------------------------------------------------------------------
    -- NOT EXISTS first: ON CONFLICT alone would draw (and waste) a sequence value per
    -- existing repo on every run; ON CONFLICT still covers a concurrent insert.
    INSERT INTO ah.repo (root_path, name)
    SELECT DISTINCT k.root_path, ah.repo_name(k.root_path)
    FROM ah.session AS s
    CROSS JOIN LATERAL (SELECT ah.repo_root_path(s.cwd) AS root_path) AS k
    WHERE s.id = ANY (given)
      AND k.root_path IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM ah.repo AS r WHERE r.root_path = k.root_path)
    ON CONFLICT (root_path) DO NOTHING;

    UPDATE ah.session AS s
    SET repo_id = r.id
    FROM ah.session AS s2
    LEFT JOIN ah.repo AS r ON r.root_path = ah.repo_root_path(s2.cwd)
    WHERE s2.id = ANY (given)
      AND s.id = s2.id
      AND s.repo_id IS DISTINCT FROM r.id;

    -- d) rollup -----------------------------------------------------------------------------
    WITH m AS (
        SELECT session_id,
               count(*) AS message_count,
               count(*) FILTER (WHERE message_class IN ('human_prompt', 'queued_prompt')) AS prompt_count,
               count(*) FILTER (WHERE role = 'assistant') AS reply_count,
               min(ts) AS first_ts,
               max(ts) AS last_ts,
               -- file-order key of the first human prompt (arrays compare element-wise)
               min(ARRAY[source_id, byte_offset, id]) FILTER (WHERE message_class = 'human_prompt') AS first_prompt_key
        FROM ah.message
        WHERE session_id = ANY (given)
        GROUP BY session_id
    ), t AS (
        SELECT session_id,
               count(*) AS tool_call_count,
               count(*) FILTER (WHERE is_error OR error_class IS NOT NULL) AS tool_error_count
        FROM ah.tool_call
        WHERE session_id = ANY (given)
        GROUP BY session_id
    ), calls AS (
        -- non-error calls, with the model (else the session's) and UTC day (else the session
        -- start's, else today) they are priced at
        SELECT mc.session_id,
               coalesce(mc.model, s.model) AS model,
               coalesce((coalesce(mc.ts, s.started_at) AT TIME ZONE 'UTC')::date, current_date) AS day,
               mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.cache_write_1h, mc.output, mc.reasoning
        FROM ah.model_call AS mc
        JOIN ah.session AS s ON s.id = mc.session_id
        WHERE mc.session_id = ANY (given)
          AND NOT coalesce(mc.is_api_error, false)
    ), prices AS (
        -- one price lookup per (model, day) rather than per call
        SELECT d.model, d.day, ah.price_for(d.model, d.day) AS price
        FROM (SELECT DISTINCT model, day FROM calls WHERE model IS NOT NULL) AS d
    ), c AS (
        SELECT k.session_id,
               count(*) AS model_call_count,
               sum(k.input_uncached) AS input_uncached,
               sum(k.cache_read)     AS cache_read,
               sum(k.cache_write_5m) AS cache_write_5m,
               sum(k.cache_write_1h) AS cache_write_1h,
               sum(k.output)         AS output,
               sum(k.reasoning)      AS reasoning,
               sum(ah.priced_cost_usd(pr.price, k.input_uncached, k.cache_read, k.cache_write_5m,
                                      k.cache_write_1h, k.output)) AS cost_usd
        FROM calls AS k
        LEFT JOIN prices AS pr ON pr.model = k.model AND pr.day = k.day
        GROUP BY k.session_id
    ), sp AS (
        -- child sessions ∪ spawns' children ∪ unresolved spawns (by spawn id), each once
        SELECT u.session_id, count(*) AS subagent_count
        FROM (
            SELECT c.parent_session_id AS session_id, c.id AS child_id, NULL::bigint AS spawn_id
            FROM ah.session AS c
            WHERE c.parent_session_id = ANY (given)
            UNION
            SELECT x.session_id, x.child_session_id, CASE WHEN x.child_session_id IS NULL THEN x.id END
            FROM ah.subagent_spawn AS x
            WHERE x.session_id = ANY (given)
        ) AS u
        GROUP BY u.session_id
    ), r AS (
        SELECT s.id,
               -- coalesce stops at the first non-NULL, so the message is read only when needed
               left(coalesce(nullif(s.custom_title, ''), nullif(s.ai_title, ''), nullif(s.first_prompt, ''),
                             (SELECT nullif(msg.text, '') FROM ah.message AS msg
                              WHERE msg.id = m.first_prompt_key[3])), 200) AS title,
               coalesce(m.message_count, 0)    AS message_count,
               coalesce(m.prompt_count, 0)     AS prompt_count,
               coalesce(t.tool_call_count, 0)  AS tool_call_count,
               coalesce(t.tool_error_count, 0) AS tool_error_count,
               CASE WHEN c.model_call_count IS NULL AND m.reply_count > 0
                         AND NOT EXISTS (SELECT 1 FROM ah.model_call AS x WHERE x.session_id = s.id)
                    THEN NULL ELSE coalesce(c.model_call_count, 0) END AS model_call_count,
               coalesce(sp.subagent_count, 0)  AS subagent_count,
               c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output, c.reasoning,
               -- rounded to the column's scale, or the guard below would never see "equal"; NULL when
               -- it does not fit the column (ah.stored_usd)
               ah.stored_usd(c.cost_usd) AS cost_usd,
               CASE WHEN coalesce(s.ended_at, m.last_ts) >= coalesce(s.started_at, m.first_ts)
                    THEN round(extract(epoch FROM coalesce(s.ended_at, m.last_ts)
                                                - coalesce(s.started_at, m.first_ts)) * 1000)::bigint
               END AS duration_ms
        FROM ah.session AS s
        LEFT JOIN m  ON m.session_id = s.id
        LEFT JOIN t  ON t.session_id = s.id
        LEFT JOIN c  ON c.session_id = s.id
        LEFT JOIN sp ON sp.session_id = s.id
        WHERE s.id = ANY (given)
    )
    UPDATE ah.session AS s
    SET title            = r.title,
        message_count    = r.message_count,
        prompt_count     = r.prompt_count,
        tool_call_count  = r.tool_call_count,
        tool_error_count = r.tool_error_count,
        model_call_count = r.model_call_count,
        subagent_count   = r.subagent_count,
        input_uncached   = r.input_uncached,
        cache_read       = r.cache_read,
        cache_write_5m   = r.cache_write_5m,
        cache_write_1h   = r.cache_write_1h,
        output           = r.output,
        reasoning        = r.reasoning,
        cost_usd         = r.cost_usd,
        duration_ms      = r.duration_ms,
        rolled_up_at     = now()
    FROM r
    WHERE s.id = r.id
      AND (s.rolled_up_at IS NULL
           OR (s.title, s.message_count, s.prompt_count, s.tool_call_count, s.tool_error_count,
               s.model_call_count, s.subagent_count, s.input_uncached, s.cache_read,
               s.cache_write_5m, s.cache_write_1h, s.output, s.reasoning, s.cost_usd, s.duration_ms)
              IS DISTINCT FROM
              (r.title, r.message_count, r.prompt_count, r.tool_call_count, r.tool_error_count,
               r.model_call_count, r.subagent_count, r.input_uncached, r.cache_read,
               r.cache_write_5m, r.cache_write_1h, r.output, r.reasoning, r.cost_usd, r.duration_ms));

    -- e) sub-agent count of the parents outside `given` whose children changed -----------------
    WITH p AS (
        SELECT unnest(parents) AS id
        UNION
        SELECT s.parent_session_id FROM ah.session AS s
        WHERE s.id = ANY (lineage) AND s.parent_session_id IS NOT NULL
    ), r AS (
        -- the same count as `sp` of (d)
        SELECT p.id,
               (SELECT count(*)
                FROM (SELECT c.id AS child_id, NULL::bigint AS spawn_id
                      FROM ah.session AS c
                      WHERE c.parent_session_id = p.id
                      UNION
                      SELECT x.child_session_id, CASE WHEN x.child_session_id IS NULL THEN x.id END
                      FROM ah.subagent_spawn AS x
                      WHERE x.session_id = p.id) AS u) AS subagent_count
        FROM p
        WHERE NOT (p.id = ANY (given))
    )
    UPDATE ah.session AS s
    SET subagent_count = r.subagent_count,
        rolled_up_at   = CASE WHEN s.rolled_up_at IS NOT NULL THEN now() END
    FROM r
    WHERE s.id = r.id
      AND s.subagent_count IS DISTINCT FROM r.subagent_count;

    RETURN cardinality(given);
END;
$$;


-- One row per session for `agent-history sessions` and the MCP `find_sessions` tool.
-- tokens_total = input_uncached + cache_read + cache_write_5m + cache_write_1h + output
-- (reasoning is part of output), NULL when every bucket is unknown.
-- Columns may only be appended here: CREATE OR REPLACE VIEW cannot drop, rename or reorder.
CREATE OR REPLACE VIEW ah.session_overview AS
SELECT s.id,
       s.agent,
       s.namespace,
       s.session_uid,
       s.agent_id,
       s.title,
       s.cwd,
       s.started_at,
       s.ended_at,
       s.duration_ms,
       s.prompt_count,
       s.message_count,
       s.tool_call_count,
       s.tool_error_count,
       s.model_call_count,
       s.subagent_count,
       CASE WHEN num_nonnulls(s.input_uncached, s.cache_read, s.cache_write_5m, s.cache_write_1h, s.output) > 0
            THEN coalesce(s.input_uncached, 0) + coalesce(s.cache_read, 0) + coalesce(s.cache_write_5m, 0)
               + coalesce(s.cache_write_1h, 0) + coalesce(s.output, 0)
       END AS tokens_total,
       s.cost_usd,
       coalesce(s.is_subagent, s.agent_id <> '') AS is_subagent,
       s.root_session_id,
       s.parent_session_id,
       r.name AS repo_name
FROM ah.session AS s
LEFT JOIN ah.repo AS r ON r.id = s.repo_id;
