-- Collected commits ↔ the transcript sessions that made them (issue 30). Re-applied when this
-- file changes. A git event names a commit by the sha the agent printed (7–40 hex digits, most
-- often abbreviated); it made collected commit c when c's full sha starts with it. One row per
-- (commit, session), with the first time the session printed it. Read by `read.tasks` / `why`.
CREATE OR REPLACE VIEW ah.repo_commit_session AS
SELECT c.id AS commit_id, c.repository_id, c.sha, g.session_id, min(g.ts) AS printed_at
FROM ah.repo_commit AS c
JOIN ah.git_event AS g
  ON g.op = 'commit' AND g.sha IS NOT NULL AND length(g.sha) >= 7 AND starts_with(c.sha, lower(g.sha))
GROUP BY c.id, c.repository_id, c.sha, g.session_id;

COMMENT ON VIEW ah.repo_commit_session IS 'Collected commits and the sessions whose git events printed them (sha prefix).';

-- Sessions that used an installed skill or plugin (migration 0022): a `Skill` tool call naming
-- one of its own harness's skills (the call's agent is the skill's harness: Claude Code's
-- input {"skill": name}, older {"command": name}; a plugin's skills are called
-- "<plugin>:<skill>"), a read of its SKILL.md (Codex and pi read the file itself), or its body
-- injected naming its SKILL.md (Codex's explicit `$skill` invocation: a user message
-- "<skill>\n<name>…</name>\n<path>/…/SKILL.md</path>\n…</skill>", class skill_body).
CREATE OR REPLACE VIEW ah.skill_use AS
WITH called AS (
    SELECT t.session_id, t.agent, t.started_at AS ts,
           coalesce(t.input::jsonb ->> 'skill', t.input::jsonb ->> 'command') AS called
    FROM ah.tool_call AS t
    WHERE t.name = 'Skill' AND pg_input_is_valid(t.input, 'jsonb') AND jsonb_typeof(t.input::jsonb) = 'object'
), injected AS (
    SELECT m.session_id, m.ts, substring(m.text FROM '<path>([^<\n]*)</path>') AS path
    FROM ah.message AS m
    WHERE m.message_class = 'skill_body' AND starts_with(ltrim(m.text, E' \t\r\n'), '<skill>')
), used AS (
    SELECT k.id AS skill_id, c.session_id, c.ts
    FROM ah.installed_skill AS k
    JOIN called AS c
      ON c.agent = k.harness
     AND ((k.kind = 'skill' AND (c.called = k.name OR right(c.called, length(k.name) + 1) = ':' || k.name))
       OR (k.kind = 'plugin' AND starts_with(c.called, k.name || ':')))
    UNION ALL
    SELECT k.id, f.session_id, f.ts
    FROM ah.installed_skill AS k
    JOIN ah.file_touch AS f ON f.path = k.path AND f.op = 'read'
    WHERE k.kind = 'skill'
    UNION ALL
    SELECT k.id, i.session_id, i.ts
    FROM ah.installed_skill AS k
    JOIN injected AS i ON i.path = k.path
    WHERE k.kind = 'skill'
)
SELECT skill_id, session_id, count(*) AS uses, min(ts) AS first_used_at, max(ts) AS last_used_at
FROM used
GROUP BY skill_id, session_id;

COMMENT ON VIEW ah.skill_use IS 'Sessions that used an installed skill: Skill tool calls naming it, reads of its SKILL.md, its body injected naming its path.';
