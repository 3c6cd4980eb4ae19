"""The browsable session listing (the web UI's sessions page): main threads matching the shared
filters (`session.filters.session_filter`) and a health grade, sorted by date, tokens, cost,
duration or errors, paged, each followed by its sub-agent threads nested under it (`nest`);
and the small lookups the session page needs (`thread_key`, `sub_threads`). Read-only.
Units: tokens, USD, ms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

import psycopg
from psycopg import sql

from agent_history.read.requests import SessionsRequest
from agent_history.read.sessions import request_filter

SORTS: dict[str, str] = {
    "date": "coalesce(s.started_at, s.ended_at) DESC NULLS LAST",
    "tokens": "tokens DESC NULLS LAST",
    "cost": "s.cost_usd DESC NULLS LAST",
    "duration": "s.duration_ms DESC NULLS LAST",
    "errors": "s.tool_error_count DESC NULLS LAST",
}
"""Sessions page sort keys → ORDER BY (largest first; unknown last)."""


_TOKENS = (
    "CASE WHEN num_nonnulls(s.input_uncached, s.cache_read, s.cache_write_5m, s.cache_write_1h, s.output) > 0 "
    "THEN coalesce(s.input_uncached, 0) + coalesce(s.cache_read, 0) + coalesce(s.cache_write_5m, 0) "
    "+ coalesce(s.cache_write_1h, 0) + coalesce(s.output, 0) END"
)


@dataclass(slots=True)
class SessionRow:
    """One row of the sessions page. Units: tokens, USD, ms. `depth` 0 = listed thread,
    1+ = sub-agent nested under it; `loops` = loop ids it roots or lanes."""

    id: int
    session_uid: str
    agent_id: str
    agent: str
    namespace: str | None
    title: str | None
    cwd: str | None
    model: str | None
    started_at: datetime | None
    duration_ms: int | None
    message_count: int | None
    prompt_count: int | None
    tool_call_count: int | None
    tool_error_count: int | None
    subagent_count: int | None
    tokens: int | None
    cost_usd: Decimal | None
    parent_session_id: int | None
    root_session_id: int | None
    subagent_type: str | None
    health_grade: str | None = None
    depth: int = 0
    loops: list[int] = field(default_factory=list)


_SESSION_COLS = (
    "s.id, s.session_uid, s.agent_id, s.agent, s.namespace, s.title, s.cwd, s.model, s.started_at, "
    "s.duration_ms, s.message_count, s.prompt_count, s.tool_call_count, s.tool_error_count, "
    f"s.subagent_count, ({_TOKENS})::bigint AS tokens, s.cost_usd, s.parent_session_id, s.root_session_id, "
    "s.subagent_type"
)
# The session's health grade (`ah.session_health`, docs/health.md): joined only to filter by it;
# the listed rows' grades are read after the LIMIT (`_grades`), so a page grades ≤ 50 threads.
_HEALTH_JOIN = (
    "LEFT JOIN LATERAL (SELECT sh.grade FROM ah.session_health AS sh WHERE sh.session_id = s.id) AS h ON true"
)


def list_threads(
    conn: psycopg.Connection, req: SessionsRequest, *, sort: str = "date", offset: int = 0
) -> tuple[list[SessionRow], bool]:
    """Main threads matching `req`'s filters (agents, namespaces, since/until, project, hosts;
    ``health``: only these grades; ``include_subagents`` does not apply: sub-agents are nested),
    sorted by `sort` (a `SORTS` key), ``req.limit`` of them from `offset`, each followed by its
    sub-agent threads (any depth, by start time) nested under it; and whether more main threads
    follow. Raises ValueError for an unknown sort."""
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r} (known: {', '.join(SORTS)})")
    shared, params = request_filter(req)
    conds = [sql.SQL("s.agent_id = '' AND NOT coalesce(s.is_subagent, false)"), *shared]
    health, limit = req.health, req.limit
    if health:
        conds.append(sql.SQL("h.grade = ANY(%(health)s)"))
        params["health"] = list(health)
    params |= {"limit": limit + 1, "offset": offset}
    stmt = sql.SQL(
        "SELECT {cols}, NULL AS health_grade FROM ah.session AS s {health} WHERE {where} ORDER BY {order}, s.id DESC "
        "LIMIT %(limit)s OFFSET %(offset)s"
    ).format(
        cols=sql.SQL(_SESSION_COLS),
        health=sql.SQL(_HEALTH_JOIN if health else ""),
        where=sql.SQL(" AND ").join(conds),
        order=sql.SQL(SORTS[sort]),
    )
    mains = [SessionRow(*r) for r in conn.execute(stmt, params)]
    more = len(mains) > limit
    mains = mains[:limit]
    ids = [m.id for m in mains]
    kids = [
        SessionRow(*r)
        for r in conn.execute(
            f"SELECT {_SESSION_COLS}, NULL AS health_grade FROM ah.session AS s WHERE s.root_session_id = ANY(%s) AND s.id <> ALL(%s) "
            "ORDER BY s.started_at NULLS LAST, s.id",
            (ids, ids),
        )
    ]
    rows = nest(mains, kids)
    grades = _grades(conn, [r.id for r in rows])
    for r in rows:
        r.health_grade = grades.get(r.id)
    return rows, more


def _grades(conn: psycopg.Connection, ids: list[int]) -> dict[int, str | None]:
    """Session row id → health grade (None: every signal unknown) for `ids`."""
    rows = conn.execute("SELECT session_id, grade FROM ah.session_health WHERE session_id = ANY(%s)", (ids,))
    return dict(rows.fetchall())


def nest(mains: list[SessionRow], kids: list[SessionRow]) -> list[SessionRow]:
    """`mains` in order, each followed depth-first by its descendants among `kids` (linked by
    parent_session_id, else root_session_id); sets `depth`. A kid whose parent is not present
    hangs under its root. Pure."""
    present = {m.id for m in mains} | {k.id for k in kids}
    children: dict[int, list[SessionRow]] = {}
    for k in kids:
        parent = k.parent_session_id if k.parent_session_id in present else k.root_session_id
        children.setdefault(parent, []).append(k)
    out: list[SessionRow] = []
    seen: set[int] = set()

    def walk(row: SessionRow, depth: int) -> None:
        if row.id in seen:
            return
        seen.add(row.id)
        row.depth = depth
        out.append(row)
        for child in children.get(row.id, []):
            walk(child, depth + 1)

    for m in mains:
        walk(m, 0)
    return out


def thread_key(conn: psycopg.Connection, session_id: int) -> tuple[str, str]:
    """(session uid, agent id) of session row `session_id`. Raises LookupError when it is gone."""
    row = conn.execute("SELECT session_uid, agent_id FROM ah.session WHERE id = %s", (session_id,)).fetchone()
    if row is None:
        raise LookupError(f"no session row {session_id}")
    return row[0], row[1]


def sub_threads(conn: psycopg.Connection, session_id: int) -> list[tuple]:
    """The threads under session row `session_id` (rooted in it or spawned by it), by start:
    ``(session_uid, agent_id, subagent_type, title)`` each."""
    return conn.execute(
        "SELECT session_uid, agent_id, subagent_type, title FROM ah.session "
        "WHERE (root_session_id = %(id)s OR parent_session_id = %(id)s) AND id <> %(id)s "
        "ORDER BY started_at NULLS LAST, id",
        {"id": session_id},
    ).fetchall()
