"""Activity queries: root sessions with events in a time window (the MCP `active_sessions` tool),
and tool calls that may run a remote command (`infra_actions`: candidates from the tool-call text
index, ``tool_call.terms``' GIN index — the term ids of the programs' lexemes, migration
0028_term_ids — and the time window on ``started_at``). Read-only.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from agent_history.session.exclusions import not_excluded

# Events per session in the window, rolled up to roots. Messages and model calls carry indexed
# timestamps; tool calls happen between them, so they add nothing to "is it active".
ACTIVE_SQL = (
    """
WITH ev AS (
    SELECT session_id, ts FROM ah.message WHERE ts > %(lo)s AND ts <= %(hi)s
    UNION ALL
    SELECT session_id, ts FROM ah.model_call WHERE ts > %(lo)s AND ts <= %(hi)s
), per_session AS (
    SELECT session_id, count(*) AS n, max(ts) AS last_ts FROM ev GROUP BY session_id
)
SELECT root.session_uid, root.agent, root.namespace, coalesce(root.title, root.custom_title, root.ai_title),
       root.cwd, root.started_at, max(p.last_ts) AS last_ts, sum(p.n)::bigint AS events,
       array_remove(array_agg(DISTINCT CASE WHEN s.id <> root.id THEN
           CASE WHEN s.session_uid = root.session_uid THEN s.agent_id ELSE s.session_uid || '/' || s.agent_id END
       END), NULL) AS subagents,
       (SELECT left(m.text, %(prompt_chars)s) FROM ah.message AS m
         WHERE m.session_id = root.id AND m.message_class = 'human_prompt'
         ORDER BY m.source_id DESC, m.byte_offset DESC LIMIT 1) AS last_prompt
FROM per_session AS p
JOIN ah.session AS s ON s.id = p.session_id
JOIN ah.session AS root ON root.id = coalesce(s.root_session_id, s.id)
WHERE (%(namespaces)s::text[] IS NULL OR root.namespace = ANY(%(namespaces)s::text[]))
  AND """
    + not_excluded("s")
    + """
GROUP BY root.id
ORDER BY last_ts DESC
LIMIT %(limit)s
"""
)

INFRA_SQL = """
SELECT t.started_at, t.name, t.input, t.is_error, t.exit_code, t.outcome, t.error_class,
       s.session_uid, s.agent_id, s.agent, s.namespace, r.session_uid, s.cwd, f.path, t.byte_offset, t.line_number
FROM ah.tool_call AS t
JOIN ah.session AS s ON s.id = t.session_id
LEFT JOIN ah.session AS r ON r.id = s.root_session_id
LEFT JOIN ah.source_file AS f ON f.id = t.source_id
WHERE t.terms && (SELECT coalesce(array_agg(st.id), '{}')::int4[] FROM ah.search_term AS st
                  WHERE st.corpus = 'tool_call'
                    AND st.lexeme = ANY(tsvector_to_array(to_tsvector('ah.search', %(programs)s))))
  AND (%(since)s::timestamptz IS NULL OR t.started_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR t.started_at < %(until)s)
  AND (%(host)s::text IS NULL OR strpos(lower(t.input), lower(%(host)s)) > 0)
  AND (%(namespaces)s::text[] IS NULL OR s.namespace = ANY(%(namespaces)s::text[]))
ORDER BY t.started_at DESC NULLS LAST, t.id DESC
LIMIT %(candidates)s
"""


def active_roots(
    conn: psycopg.Connection,
    lo: datetime,
    hi: datetime,
    *,
    namespaces: list[str] | None,
    limit: int,
    prompt_chars: int,
) -> list[tuple]:
    """Root sessions with events (messages or model calls) in ``(lo, hi]``, newest activity first:
    ``(session_uid, agent, namespace, title, cwd, started_at, last_event_at, events, sub-agent
    threads, last human prompt ≤ `prompt_chars` characters)``. `namespaces` None = every one."""
    params = {"lo": lo, "hi": hi, "namespaces": namespaces, "limit": limit, "prompt_chars": prompt_chars}
    return conn.execute(ACTIVE_SQL, params).fetchall()


def remote_candidates(
    conn: psycopg.Connection,
    programs: list[str],
    *,
    since: datetime | None,
    until: datetime | None,
    host: str | None,
    namespaces: list[str] | None,
    candidates: int,
) -> list[tuple]:
    """At most `candidates` tool calls, newest first, whose text names one of `programs` (and
    contains `host`, case-insensitive, when given) started in ``[since, until)``: ``(started_at,
    name, input, is_error, exit_code, outcome, error_class, session_uid, agent_id, agent,
    namespace, root session_uid, cwd, source path, byte_offset, line_number)``."""
    params = {
        "programs": " ".join(programs),
        "since": since,
        "until": until,
        "host": host,
        "namespaces": namespaces,
        "candidates": candidates,
    }
    return conn.execute(INFRA_SQL, params).fetchall()
