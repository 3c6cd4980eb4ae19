-- Journal summaries ↔ sessions (issue 15). Re-applied when this file changes.
-- Links every summary to the session with its natural key (agent, session_uid, agent_id), and
-- unlinks those whose session is gone; called by journal-sync and by the post-pass, so a summary
-- synced before its session is indexed gets linked when the session appears. Returns the number
-- of summaries whose link changed.
CREATE OR REPLACE FUNCTION ah.link_session_summaries() RETURNS integer
LANGUAGE sql AS $$
    WITH m AS (
        SELECT ss.id, s.id AS sid
        FROM ah.session_summary ss
        LEFT JOIN ah.session s
          ON s.agent = ss.agent AND s.session_uid = ss.session_uid AND s.agent_id = ss.agent_id
    ), u AS (
        UPDATE ah.session_summary ss SET session_id = m.sid
        FROM m WHERE m.id = ss.id AND ss.session_id IS DISTINCT FROM m.sid
        RETURNING 1
    )
    SELECT count(*)::integer FROM u
$$;
