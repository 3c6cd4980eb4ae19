"""SQL conditions for a `SearchRequest`'s filters, shared by the FTS and BM25 backends.

Messages are filtered on their own columns (``agent``, ``namespace``, ``message_class``, ``ts``);
tool calls carry no namespace or class, so namespace goes through their session, and time is
``started_at``. Project (cwd prefix) and session uid always go through ``ah.session`` as an
``= ANY(ARRAY(SELECT …))`` so PostgreSQL evaluates the session list once (an InitPlan) and the
text-search scan filters on ``session_id``.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from agent_history.model import classes
from agent_history.read.common import MIN_UID_PREFIX
from agent_history.search.request import SearchRequest

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


CORPUS_TABLE = {"message": "message", "tool_call": "tool_call"}


@dataclass(frozen=True, slots=True)
class Filter:
    """A conjunction of SQL conditions on table alias `alias` and its parameters."""

    sql: sql.Composable
    params: dict


def like_prefix(prefix: str) -> str:
    """A LIKE pattern matching strings that start with `prefix` (metacharacters escaped)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def build_filter(req: SearchRequest, corpus: str, alias: str = "d") -> Filter:
    """Conditions for documents of `corpus` ('message' | 'tool_call'): the request's filters,
    ``exclude_agents`` and ``source_types`` included, and always "not in a curated-out session"."""
    a = sql.Identifier(alias)
    conds: list[sql.Composable] = []
    params: dict = {}
    session_conds: list[sql.Composable] = []
    if req.agents:
        conds.append(sql.SQL("{}.agent = ANY(%(f_agents)s)").format(a))
        params["f_agents"] = list(req.agents)
    if req.exclude_agents:
        conds.append(sql.SQL("{}.agent <> ALL(%(f_exclude_agents)s)").format(a))
        params["f_exclude_agents"] = list(req.exclude_agents)
    if req.source_types:
        session_conds.append(sql.SQL("s.source_type = ANY(%(f_source_types)s)"))
        params["f_source_types"] = list(req.source_types)
    if req.namespaces:
        params["f_namespaces"] = list(req.namespaces)
        if corpus == "message":
            conds.append(sql.SQL("{}.namespace = ANY(%(f_namespaces)s)").format(a))
        else:
            session_conds.append(sql.SQL("s.namespace = ANY(%(f_namespaces)s)"))
    if corpus == "message" and req.classes and set(req.classes) != set(classes.ALL):
        conds.append(sql.SQL("{}.message_class = ANY(%(f_classes)s)").format(a))
        params["f_classes"] = list(req.classes)
    ts = sql.Identifier("ts" if corpus == "message" else "started_at")
    if req.since is not None:
        conds.append(sql.SQL("{}.{} >= %(f_since)s").format(a, ts))
        params["f_since"] = req.since
    if req.until is not None:
        conds.append(sql.SQL("{}.{} < %(f_until)s").format(a, ts))
        params["f_until"] = req.until
    if req.project:
        session_conds.append(sql.SQL("(s.cwd = %(f_project)s OR s.cwd LIKE %(f_project_like)s)"))
        params["f_project"] = req.project.rstrip("/") or "/"
        params["f_project_like"] = like_prefix(req.project.rstrip("/") + "/")
    if req.session:
        session_conds.append(
            sql.SQL(
                "(s.session_uid = %(f_session)s OR (length(%(f_session)s) >= %(f_session_min)s "
                "AND s.session_uid LIKE %(f_session_like)s))"
            )
        )
        params["f_session_min"] = MIN_UID_PREFIX
        params["f_session"] = req.session
        params["f_session_like"] = like_prefix(req.session)
    # Curated-out sessions (`sessions exclude`, ah.session_exclusion): never retrieved.
    conds.append(sql.SQL("{}.session_id <> ALL(ARRAY({}))").format(a, sql.SQL(EXCLUDED_SESSION_IDS)))
    if session_conds:
        conds.append(
            sql.SQL("{}.session_id = ANY(ARRAY(SELECT s.id FROM ah.session AS s WHERE {}))").format(
                a, sql.SQL(" AND ").join(session_conds)
            )
        )
    return Filter(sql.SQL(" AND ").join(conds) if conds else sql.SQL("TRUE"), params)
