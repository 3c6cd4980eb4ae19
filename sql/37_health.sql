-- Session health (issue 32; docs/health.md): per session the measured signals, then the grade
-- A–F, the score and the reasons, by the rule in ah.health_signal / ah.health_rule /
-- ah.health_grade (loaded from agent_history/classify/health.py by agent_history/db/health.py).
--
-- A signal whose capability the session's harness does not declare (ah.harness_capability,
-- from the harness registry) is NULL: unknown, listed in `unknown`, never graded. A signal
-- that is NULL for want of data (no tool call, no classified model call) is listed too.
-- Both views are computed when read; a filter on session_id reaches the per-session subqueries.
-- A session still marked dirty (loaded by a pass that stopped before its post-passes: maybe only
-- part of its file) gets no score and no grade until a pass rolls it up.

-- Columns may only be appended here: CREATE OR REPLACE VIEW cannot drop, rename or reorder.
CREATE OR REPLACE VIEW ah.session_health_signals AS
SELECT s.id AS session_id,
       s.agent,
       CASE WHEN cap.tool_results THEN t.with_result END AS tool_calls,
       CASE WHEN cap.tool_results THEN t.failures END AS tool_failures,
       CASE WHEN cap.tool_results THEN round(t.failures::numeric / nullif(t.with_result, 0), 4)
       END AS tool_failure_rate,
       CASE WHEN cap.tool_results THEN t.retries END AS retries,
       CASE WHEN cap.interrupts THEN
            (SELECT count(*) FROM ah.message m
             WHERE m.session_id = s.id AND m.message_class = 'interrupt_marker')
            + t.interrupted
       END AS interrupts,
       CASE WHEN cap.compactions THEN (SELECT count(*) FROM ah.compaction c WHERE c.session_id = s.id)
       END AS compactions,
       (SELECT e.poll_share FROM ah.efficiency e WHERE e.session_id = s.id) AS poll_share,
       CASE WHEN cap.tool_results THEN coalesce(last_event.is_error, false) END AS ended_in_error
FROM ah.session AS s
CROSS JOIN LATERAL (
    SELECT coalesce(bool_or(hc.capability = 'tool_results'), false) AS tool_results,
           coalesce(bool_or(hc.capability = 'interrupts'), false) AS interrupts,
           coalesce(bool_or(hc.capability = 'compactions'), false) AS compactions
    FROM ah.harness_capability hc WHERE hc.agent = s.agent
) AS cap
CROSS JOIN LATERAL (
    -- A retry: a failed call whose next tool call in file order is the same tool, same input.
    SELECT count(*) FILTER (WHERE o.is_error IS NOT NULL) AS with_result,
           count(*) FILTER (WHERE o.is_error) AS failures,
           count(*) FILTER (WHERE o.is_error AND o.next_name = o.name
                            AND o.next_input IS NOT DISTINCT FROM o.input) AS retries,
           -- an interrupted call followed by an interrupt marker (before the next call) is one
           -- interrupt, counted with the markers (Claude Code writes both)
           count(*) FILTER (WHERE o.error_class = 'interrupted' AND NOT EXISTS (
               SELECT 1 FROM ah.message m
               WHERE m.session_id = s.id AND m.message_class = 'interrupt_marker'
                 AND m.byte_offset > o.byte_offset AND (o.next_offset IS NULL OR m.byte_offset < o.next_offset)
           )) AS interrupted
    FROM (SELECT tc.name, tc.input, tc.is_error, tc.error_class, tc.byte_offset,
                 lead(tc.name) OVER w AS next_name, lead(tc.input) OVER w AS next_input,
                 lead(tc.byte_offset) OVER w AS next_offset
          FROM ah.tool_call tc WHERE tc.session_id = s.id
          WINDOW w AS (ORDER BY tc.byte_offset, tc.id)) AS o
) AS t
LEFT JOIN LATERAL (
    -- The last tool result or model call in file order: did the session stop on an error?
    SELECT ev.is_error FROM (
        SELECT tc.byte_offset, tc.id, tc.is_error FROM ah.tool_call tc
        WHERE tc.session_id = s.id AND tc.is_error IS NOT NULL
        UNION ALL
        SELECT mc.byte_offset, mc.id, coalesce(mc.is_api_error, false) FROM ah.model_call mc
        WHERE mc.session_id = s.id
    ) AS ev ORDER BY ev.byte_offset DESC NULLS LAST, ev.id DESC LIMIT 1
) AS last_event ON true;


-- How a signal's value or threshold is shown in a reason: a share as a percentage (one decimal
-- at most), a count as a whole number, a flag as nothing (its label says it).
CREATE OR REPLACE FUNCTION ah.health_shown(unit text, value numeric) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE unit WHEN 'share' THEN trim_scale(round(value * 100, 1))::text || '%'
                     WHEN 'count' THEN trim_scale(value)::text
                     ELSE '' END
$$;


-- score = 100 − Σ over signals of the points of the highest-points rule met (never below 0);
-- grade = the band of the score; NULL (no grade) when every signal is unknown.
-- reasons: one text per rule met, most points first: "<label> <value> ≥ <threshold> (−points)"
-- ("<label> (−points)" for a flag). unknown: the signals that are NULL, in declaration order.
-- Columns may only be appended here: CREATE OR REPLACE VIEW cannot drop, rename or reorder.
CREATE OR REPLACE VIEW ah.session_health AS
SELECT g.*,
       CASE WHEN k.n_known > 0 AND NOT k.dirty THEN greatest(0, 100 - k.points) END AS score,
       CASE WHEN k.n_known > 0 AND NOT k.dirty THEN
            (SELECT hg.grade FROM ah.health_grade hg
             WHERE hg.min_score <= greatest(0, 100 - k.points)
             ORDER BY hg.min_score DESC LIMIT 1)
       END AS grade,
       k.reasons,
       k.unknown
FROM ah.session_health_signals AS g
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE sv.value IS NOT NULL) AS n_known,
           -- a session whose rows are not rolled up yet (an interrupted pass) is not graded
           EXISTS (SELECT 1 FROM ah.dirty_session d WHERE d.session_id = g.session_id) AS dirty,
           coalesce(array_agg(sv.name ORDER BY sv.position) FILTER (WHERE sv.value IS NULL), '{}') AS unknown,
           coalesce(sum(sv.points), 0)::integer AS points,
           coalesce(array_agg(sv.reason ORDER BY sv.points DESC, sv.position) FILTER (WHERE sv.points IS NOT NULL),
                    '{}') AS reasons
    FROM (
        SELECT hs.name, hs.position, v.value, best.points,
               CASE WHEN hs.unit = 'flag' THEN hs.label || ' (−' || best.points || ')'
                    ELSE hs.label || ' ' || ah.health_shown(hs.unit, v.value) || ' ≥ '
                         || ah.health_shown(hs.unit, best.threshold) || ' (−' || best.points || ')'
               END AS reason
        FROM ah.health_signal AS hs
        JOIN (VALUES ('tool_failure_rate', g.tool_failure_rate), ('retries', g.retries::numeric),
                     ('interrupts', g.interrupts::numeric), ('compactions', g.compactions::numeric),
                     ('poll_share', g.poll_share), ('ended_in_error', g.ended_in_error::int::numeric))
             AS v (signal, value) ON v.signal = hs.name
        LEFT JOIN LATERAL (
            SELECT r.points, r.threshold FROM ah.health_rule r
            WHERE r.signal = hs.name AND v.value >= r.threshold
            ORDER BY r.points DESC LIMIT 1
        ) AS best ON true
    ) AS sv
) AS k;
