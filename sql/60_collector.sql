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
