"""Curated-out sessions (`sessions exclude`, ``ah.session_exclusion``) as SQL conditions.

A session is excluded by its natural key (agent, session uid); its sub-agent threads go with
it — those that share the uid, and those with a uid of their own whose root is excluded (e.g.
Codex workers). Every reader (search, recall, listings, MCP, web) puts one of these conditions
in its WHERE, so an excluded session is never retrieved.
"""

from __future__ import annotations

EXCLUDED_SESSION_IDS = (
    "SELECT s.id FROM ah.session AS s JOIN ah.session_exclusion AS x "
    "ON x.agent = s.agent AND x.session_uid = s.session_uid "
    "UNION SELECT t.id FROM ah.session AS t JOIN ah.session AS s ON s.id = t.root_session_id "
    "JOIN ah.session_exclusion AS x ON x.agent = s.agent AND x.session_uid = s.session_uid"
)
"""Surrogate ids of the sessions excluded by curation and of their sub-agent threads (those that
share the uid, and those with a uid of their own whose root is excluded, e.g. Codex workers)."""


def not_excluded(alias: str) -> str:
    """The SQL condition "session `alias` is not curated out" (`EXCLUDED_SESSION_IDS`, evaluated
    once per statement); true when `alias` is NULL (a LEFT JOIN that found no session)."""
    return f"({alias}.id IS NULL OR {alias}.id <> ALL(ARRAY({EXCLUDED_SESSION_IDS})))"


def key_not_excluded(alias: str) -> str:
    """The SQL condition "the natural key (`alias`.agent, `alias`.session_uid) is not curated out",
    for rows keyed like ``ah.session_exclusion`` that may outlive their session (journal summaries)."""
    return (
        f"NOT EXISTS (SELECT 1 FROM ah.session_exclusion AS x "
        f"WHERE x.agent = {alias}.agent AND x.session_uid = {alias}.session_uid)"
    )
