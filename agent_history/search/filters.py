"""SQL conditions for a `SearchRequest`'s filters, shared by the FTS and BM25 backends.

Messages are filtered on their own columns (``agent``, ``namespace``, ``message_class``, ``ts``);
tool calls carry no namespace or class, so namespace goes through their session, and time is
``started_at``. Project (cwd prefix) and session uid always go through ``ah.session`` as an
``= ANY(ARRAY(SELECT …))`` so PostgreSQL evaluates the session list once (an InitPlan) and the
text-search scan filters on ``session_id``. Curated-out sessions are never retrieved
(`session.exclusions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from agent_history.model import classes
from agent_history.search.request import SearchRequest
from agent_history.session.exclusions import EXCLUDED_SESSION_IDS, key_not_excluded, not_excluded
from agent_history.session.filters import like_prefix
from agent_history.session.refs import MIN_UID_PREFIX, uid_spellings

__all__ = ["EXCLUDED_SESSION_IDS", "Filter", "build_filter", "key_not_excluded", "like_prefix", "not_excluded"]

CORPUS_TABLE = {"message": "message", "tool_call": "tool_call"}


@dataclass(frozen=True, slots=True)
class Filter:
    """A conjunction of SQL conditions on table alias `alias` and its parameters."""

    sql: sql.Composable
    params: dict


def build_filter(req: SearchRequest, corpus: str, alias: str = "d", *, broad_class_index: bool = True) -> Filter:
    """Conditions for documents of `corpus` ('message' | 'tool_call'): the request's filters,
    ``exclude_agents`` and ``source_types`` included, and always "not in a curated-out session".
    `broad_class_index` False: a class filter covering every conversational class (≈ 70 % of
    messages, the default) is written so that no index can serve it — the FTS candidate scans
    (`search.fts`) would otherwise AND their GIN bitmap with a bitmap of ≈ 790 k rows at 1 M
    messages (≈ 1/3 of a common-term scan's CPU); it is then tested on each fetched row. (The
    ParadeDB path keeps the plain column condition: it pushes it into its index.)"""
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
        broad = set(req.classes) >= set(classes.CONVERSATIONAL)
        column = "({}.message_class || '')" if broad and not broad_class_index else "{}.message_class"
        conds.append(sql.SQL(column + " = ANY(%(f_classes)s)").format(a))
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
                "(s.session_uid = ANY(%(f_session)s) OR (%(f_session_len)s >= %(f_session_min)s "
                "AND s.session_uid LIKE ANY(%(f_session_like)s)))"
            )
        )
        # a hexadecimal uid (prefix) in any case (`session.refs.uid_spellings`)
        params["f_session_min"] = MIN_UID_PREFIX
        params["f_session_len"] = len(req.session)
        params["f_session"] = uid_spellings(req.session)
        params["f_session_like"] = [like_prefix(u) for u in uid_spellings(req.session)]
    # Curated-out sessions (`sessions exclude`, ah.session_exclusion): never retrieved.
    conds.append(sql.SQL("{}.session_id <> ALL(ARRAY({}))").format(a, sql.SQL(EXCLUDED_SESSION_IDS)))
    if session_conds:
        conds.append(
            sql.SQL("{}.session_id = ANY(ARRAY(SELECT s.id FROM ah.session AS s WHERE {}))").format(
                a, sql.SQL(" AND ").join(session_conds)
            )
        )
    return Filter(sql.SQL(" AND ").join(conds) if conds else sql.SQL("TRUE"), params)
