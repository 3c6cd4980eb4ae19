"""`sessions`: recent sessions with title, agent, tokens, cost, duration and sub-agent count.

Main threads only by default (sub-agent transcripts are counted in ``subagent_count`` and their
usage is added to the ``*_with_subagents`` totals through ``root_session_id``). Token totals are
the sum of the disjoint buckets (input uncached + cache read + cache writes + output); like
every rollup they are NULL when no model call reported them, never 0. Cost is list-price USD.
Health (``health_*``) is the session's grade A–F, score and reasons from ``ah.session_health``
(`classify.health`; docs/health.md); ``health_unknown`` names the signals its harness does not
record or that had no data — never graded. ``shared_elsewhere`` (as in ``session --json``) names the sessions that own (and
count) rows this session's transcript holds a copy of (`read.shared`), so a whole copy's
``message_count`` of 0 is explained, as the ``session`` view does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from decimal import Decimal

import psycopg
from psycopg import sql

from agent_history.read.requests import SessionsRequest
from agent_history.read.shared import SharedRows, shared_by_session
from agent_history.session.exclusions import not_excluded
from agent_history.session.filters import session_filter


@dataclass(slots=True)
class SessionSummary:
    """One session row of the `sessions` listing. Units: tokens, USD, milliseconds."""

    session_uid: str
    agent_id: str
    agent: str
    namespace: str | None
    title: str | None
    cwd: str | None
    model: str | None
    started_at: datetime | None
    ended_at: datetime | None
    duration_ms: int | None
    message_count: int | None
    prompt_count: int | None
    tool_call_count: int | None
    tool_error_count: int | None
    subagent_count: int | None
    tokens: int | None
    cost_usd: Decimal | None
    tokens_with_subagents: int | None
    cost_usd_with_subagents: Decimal | None
    health_grade: str | None = None
    health_score: int | None = None
    health_reasons: list[str] = field(default_factory=list)
    health_unknown: list[str] = field(default_factory=list)
    origin_host: str | None = None
    """The machine that indexed the session (migration 0024; None = unknown)."""
    shared_elsewhere: list[SharedRows] = field(default_factory=list)
    """Messages and model calls its transcript holds that another session owns and counts — a
    whole copy shows 0 messages here (`read.shared`); [] when it owns every row it holds."""

    def as_dict(self) -> dict:
        """JSON-ready form."""
        d = asdict(self)
        for k in ("cost_usd", "cost_usd_with_subagents"):
            d[k] = float(d[k]) if d[k] is not None else None
        return d


_TOKENS = (
    "CASE WHEN num_nonnulls({a}.input_uncached, {a}.cache_read, {a}.cache_write_5m, {a}.cache_write_1h, {a}.output) > 0 "
    "THEN coalesce({a}.input_uncached, 0) + coalesce({a}.cache_read, 0) + coalesce({a}.cache_write_5m, 0) "
    "+ coalesce({a}.cache_write_1h, 0) + coalesce({a}.output, 0) END"
)


def request_filter(req: SessionsRequest) -> tuple[list[sql.Composable], dict]:
    """``(conditions, parameters)`` of `req`'s session filters — agents, namespaces, since/until,
    project, hosts — over alias ``s`` (`session.filters.session_filter`): the listing's and the
    sessions page's (`read.threads.list_threads`) one reading of a `SessionsRequest`."""
    return session_filter(
        agents=req.agents,
        namespaces=req.namespaces,
        since=req.since,
        until=req.until,
        project=req.project,
        hosts=req.hosts,
    )


def list_sessions(conn: psycopg.Connection, req: SessionsRequest = SessionsRequest()) -> list[SessionSummary]:
    """Sessions of `req` newest first (by start, else end): ``project`` is a cwd prefix;
    ``since`` (inclusive) and ``until`` (exclusive) bound the start (or end) time; ``hosts``
    keeps the sessions these machines indexed (``origin_host``); ``health`` keeps only sessions
    graded one of these letters (`classify.health.grades_in` parses ``C-F``); at most
    ``limit``. Curated-out sessions (`search.filters.not_excluded`) are left out. The hosts are
    not checked here (`sessions_of` does)."""
    conds: list[sql.Composable] = [sql.SQL(not_excluded("s"))]  # curated out (`sessions exclude`)
    if not req.include_subagents:
        conds.append(sql.SQL("s.agent_id = '' AND NOT coalesce(s.is_subagent, false)"))
    shared, params = request_filter(req)
    conds += shared
    if req.health:
        conds.append(sql.SQL("h.grade = ANY(%(health)s)"))
        params["health"] = list(req.health)
    params["limit"] = req.limit
    where = sql.SQL(" AND ").join(conds)
    return _select(conn, where, params, by_health=bool(req.health))


def check_hosts(conn: psycopg.Connection, hosts: tuple[str, ...] | list[str], *, flags: bool = True) -> None:
    """Raise `read.requests.RequestError` (one line, the same from every front end but the
    option's name: ``--host`` on the CLI, ``host`` elsewhere) when a host names no machine any
    session was indexed by (`known_hosts`)."""
    if not hosts:
        return
    from agent_history.read.requests import RequestError

    known = known_hosts(conn)
    for name in hosts:
        if name not in known:
            option = "--host" if flags else "host"
            raise RequestError(
                f"{option} {name}: no session was indexed by it (hosts: {', '.join(known) or 'none recorded'})"
            )


def sessions_of(conn: psycopg.Connection, req: SessionsRequest, *, flags: bool = False) -> list[SessionSummary]:
    """The answer to a `read.requests.SessionsRequest` (`list_sessions`): the one listing the CLI's
    ``sessions``, the MCP ``sessions`` tool and the web UI's ``/api/sessions`` give. Raises
    RequestError for an unknown host (`check_hosts`; `flags`: name it as the CLI option)."""
    check_hosts(conn, req.hosts, flags=flags)
    return list_sessions(conn, req)


def known_hosts(conn: psycopg.Connection) -> list[str]:
    """The machines that indexed a session (``session.origin_host``), sorted."""
    return [
        r[0]
        for r in conn.execute("SELECT DISTINCT origin_host FROM ah.session WHERE origin_host IS NOT NULL ORDER BY 1")
    ]


def summary_of(conn: psycopg.Connection, session_id: int) -> SessionSummary | None:
    """The summary of one session by surrogate id (None if it does not exist)."""
    rows = _select(conn, sql.SQL("s.id = %(id)s"), {"id": session_id, "limit": 1})
    return rows[0] if rows else None


# A session's health (`ah.session_health`), computed per row: join it after the LIMIT unless the
# WHERE filters on it (the view costs ≈ 1–3 ms per session on the corpus, so grading every
# session of a large catalogue to list 20 would dominate the listing).
_HEALTH_JOIN = "LEFT JOIN LATERAL (SELECT * FROM ah.session_health AS sh WHERE sh.session_id = s.id) AS h ON true"


def _select(
    conn: psycopg.Connection, where: sql.Composable, params: dict, *, by_health: bool = False
) -> list[SessionSummary]:
    stmt = sql.SQL(
        """
        WITH picked AS (
            SELECT s.id FROM ah.session AS s {filter_join}
            WHERE {where}
            ORDER BY coalesce(s.started_at, s.ended_at) DESC NULLS LAST, s.id DESC
            LIMIT %(limit)s
        )
        SELECT s.session_uid, s.agent_id, s.agent, s.namespace, s.title, s.cwd, s.model,
               s.started_at, s.ended_at, s.duration_ms, s.message_count, s.prompt_count,
               s.tool_call_count, s.tool_error_count, s.subagent_count,
               {own_tokens}, s.cost_usd, tree.tokens, tree.cost_usd,
               h.grade, h.score, coalesce(h.reasons, '{{}}'), coalesce(h.unknown, '{{}}'), s.origin_host, s.id
        FROM picked JOIN ah.session AS s ON s.id = picked.id
        {health_join}
        LEFT JOIN LATERAL (
            SELECT sum({sub_tokens})::bigint AS tokens, sum(d.cost_usd) AS cost_usd
            FROM ah.session AS d
            WHERE d.root_session_id = s.id OR d.id = s.id
        ) AS tree ON true
        ORDER BY coalesce(s.started_at, s.ended_at) DESC NULLS LAST, s.id DESC
        """
    ).format(
        own_tokens=sql.SQL(_TOKENS.format(a="s")),
        sub_tokens=sql.SQL(_TOKENS.format(a="d")),
        where=where,
        filter_join=sql.SQL(_HEALTH_JOIN if by_health else ""),
        health_join=sql.SQL(_HEALTH_JOIN),
    )
    rows = conn.execute(stmt, params).fetchall()
    shared = shared_by_session(conn, [r[-1] for r in rows])  # a copied transcript: where its rows count
    return [SessionSummary(*r[:-1], shared_elsewhere=shared.get(r[-1], [])) for r in rows]


def health_by_session(conn: psycopg.Connection, session_ids: list[int]) -> dict[int, dict]:
    """Session row id → ``{"grade", "score", "reasons", "unknown"}`` from ``ah.session_health``
    (docs/health.md); grade and score are None when every signal is unknown. Ids not in the
    catalogue are absent."""
    rows = conn.execute(
        "SELECT session_id, grade, score, reasons, unknown FROM ah.session_health WHERE session_id = ANY(%s)",
        (list(session_ids),),
    ).fetchall()
    return {r[0]: {"grade": r[1], "score": r[2], "reasons": list(r[3]), "unknown": list(r[4])} for r in rows}


def hosts_by_session(conn: psycopg.Connection, session_ids: list[int]) -> dict[int, str | None]:
    """Session row id → the machine that indexed it (``ah.session.origin_host``; None: not
    recorded). Ids not in the catalogue are absent."""
    rows = conn.execute("SELECT id, origin_host FROM ah.session WHERE id = ANY(%s)", (list(session_ids),)).fetchall()
    return {r[0]: r[1] for r in rows}


def is_excluded(conn: psycopg.Connection, session_id: int) -> bool:
    """True when session row `session_id` (or its root) is curated out
    (`session.exclusions.not_excluded`); False for a row that does not exist."""
    row = conn.execute(f"SELECT NOT {not_excluded('s')} FROM ah.session AS s WHERE s.id = %s", (session_id,)).fetchone()
    return bool(row and row[0])


def exclusion_recorded(conn: psycopg.Connection, agent: str, session_uid: str) -> bool:
    """True when ``ah.session_exclusion`` holds the natural key (`agent`, `session_uid`)."""
    row = conn.execute(
        "SELECT 1 FROM ah.session_exclusion WHERE agent = %s AND session_uid = %s", (agent, session_uid)
    ).fetchone()
    return row is not None


def uids_in_namespaces(conn: psycopg.Connection, uids: list[str], namespaces: list[str]) -> list[str]:
    """Those of session `uids` (in their order) with a thread in one of `namespaces`."""
    if not uids:
        return []
    rows = conn.execute(
        "SELECT DISTINCT session_uid FROM ah.session WHERE session_uid = ANY (%s) AND namespace = ANY (%s)",
        (list(uids), list(namespaces)),
    ).fetchall()
    keep = {r[0] for r in rows}
    return [u for u in uids if u in keep]
