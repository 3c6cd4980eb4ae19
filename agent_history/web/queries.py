"""SQL the pages need beyond `agent_history.read`: a sortable session listing with sub-agents,
a paginated timeline that never reads more than one page of text, a hit's position in its
timeline, per-session analytics and the status page's server facts. Read-only statements only.

Timeline order is the rule of `agent_history.read.timeline` (physical: source file, byte
offset, then compaction < message < tool call < spawn < git for one line), with the row id as
the last tie-breaker so a page boundary is stable. Numbering is computed over keys only (ids and
offsets), and text is fetched for the page's events alone, so a 10 k-event session costs one
sort of 10 k small rows plus one page of text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

import psycopg
from psycopg import sql

from agent_history.session.filters import session_filter

SORTS: dict[str, str] = {
    "date": "coalesce(s.started_at, s.ended_at) DESC NULLS LAST",
    "tokens": "tokens DESC NULLS LAST",
    "cost": "s.cost_usd DESC NULLS LAST",
    "duration": "s.duration_ms DESC NULLS LAST",
    "errors": "s.tool_error_count DESC NULLS LAST",
}
"""Sessions page sort keys → ORDER BY (largest first; unknown last)."""

PAGE_EVENTS = 200
"""Timeline events per page."""
IDLE_GAP = timedelta(minutes=5)
"""Active duration: gaps between consecutive events longer than this count as this long (the
person or agent was away). A convention of this UI, shown next to the figure."""

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
    conn: psycopg.Connection,
    *,
    agents: tuple[str, ...] = (),
    namespaces: tuple[str, ...] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    project: str | None = None,
    sort: str = "date",
    limit: int = 50,
    offset: int = 0,
    health: tuple[str, ...] = (),
) -> tuple[list[SessionRow], bool]:
    """Main threads matching the filters (`health`: only these grades), sorted by `sort` (a
    `SORTS` key), each followed by its sub-agent threads (any depth, by start time) nested under
    it; and whether more main threads follow. Raises ValueError for an unknown sort."""
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r} (known: {', '.join(SORTS)})")
    shared, params = session_filter(agents=agents, namespaces=namespaces, since=since, until=until, project=project)
    conds = [sql.SQL("s.agent_id = '' AND NOT coalesce(s.is_subagent, false)"), *shared]
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


_KEYS_SQL = """
WITH keys AS (
    SELECT 1 AS k, 'compaction' AS kind, id, source_id, byte_offset, ts FROM ah.compaction WHERE session_id = %(sid)s
    UNION ALL
    SELECT 2, 'message', id, source_id, byte_offset, ts FROM ah.message WHERE session_id = %(sid)s
    UNION ALL
    SELECT 3, 'tool_call', id, source_id, byte_offset, started_at FROM ah.tool_call WHERE session_id = %(sid)s
    UNION ALL
    SELECT 4, 'spawn', id, source_id, byte_offset, ts FROM ah.subagent_spawn WHERE session_id = %(sid)s
    UNION ALL
    SELECT 5, 'git', id, source_id, byte_offset, ts FROM ah.git_event WHERE session_id = %(sid)s
), numbered AS (
    SELECT row_number() OVER (ORDER BY source_id, byte_offset NULLS LAST, k, ts NULLS LAST, id) AS seq,
           count(*) OVER () AS total, kind, id
    FROM keys
)
"""

_CONTENT_SQL: dict[str, str] = {
    "compaction": "SELECT id, ts, byte_offset, line_number, trigger, NULL::text, "
    "jsonb_build_object('tokens_before', tokens_before, 'tokens_after', tokens_after) "
    "FROM ah.compaction WHERE id = ANY(%(ids)s)",
    "message": "SELECT id, ts, byte_offset, line_number, message_class, left(text, %(chars)s), "
    "jsonb_strip_nulls(jsonb_build_object('role', role, 'model', model, 'chars', length(text), "
    "'on_active_branch', on_active_branch)) FROM ah.message WHERE id = ANY(%(ids)s)",
    "tool_call": "SELECT id, started_at, byte_offset, line_number, name, left(input, %(chars)s), "
    "jsonb_strip_nulls(jsonb_build_object('outcome', outcome, 'is_error', is_error, 'exit_code', exit_code, "
    "'error_class', error_class, 'error_excerpt', error_excerpt, 'duration_ms', duration_ms, "
    "'output', left(output, %(chars)s), 'output_chars', length(output), 'input_chars', length(input))) "
    "FROM ah.tool_call WHERE id = ANY(%(ids)s)",
    "spawn": "SELECT p.id, p.ts, p.byte_offset, p.line_number, p.subagent_type, left(p.brief, %(chars)s), "
    "jsonb_strip_nulls(jsonb_build_object('description', p.description, 'child_session_uid', ch.session_uid, "
    "'child_agent_id', ch.agent_id)) FROM ah.subagent_spawn AS p "
    "LEFT JOIN ah.session AS ch ON ch.id = p.child_session_id WHERE p.id = ANY(%(ids)s)",
    "git": "SELECT id, ts, byte_offset, line_number, op, subject, "
    "jsonb_strip_nulls(jsonb_build_object('sha', sha, 'old_sha', old_sha, 'branch', branch, 'remote_ref', remote_ref)) "
    "FROM ah.git_event WHERE id = ANY(%(ids)s)",
}
"""Per event kind: (id, ts, byte_offset, line_number, label, text, detail) for the page's ids."""

TEXT_CHARS = 20_000
"""Longest text shown per event (characters; the rest is cut and marked)."""


@dataclass(slots=True)
class Event:
    """One timeline event of a page (see `agent_history.read.timeline.TimelineEvent`)."""

    seq: int
    kind: str
    id: int
    ts: datetime | None
    byte_offset: int | None
    line_number: int | None
    label: str | None
    text: str | None
    detail: dict


def timeline_page(
    conn: psycopg.Connection, session_id: int, page: int, size: int = PAGE_EVENTS
) -> tuple[int, list[Event]]:
    """(total events, the events of 1-based `page`) of session `session_id`, in timeline order."""
    lo = (max(1, page) - 1) * size + 1
    rows = conn.execute(
        _KEYS_SQL + "SELECT seq, total, kind, id FROM numbered WHERE seq BETWEEN %(lo)s AND %(hi)s ORDER BY seq",
        {"sid": session_id, "lo": lo, "hi": lo + size - 1},
    ).fetchall()
    total = (
        rows[0][1]
        if rows
        else conn.execute(_KEYS_SQL + "SELECT count(*) FROM numbered", {"sid": session_id}).fetchone()[0]
    )
    by_kind: dict[str, list[int]] = {}
    for _seq, _total, kind, eid in rows:
        by_kind.setdefault(kind, []).append(eid)
    content: dict[tuple[str, int], tuple] = {}
    for kind, ids in by_kind.items():
        for r in conn.execute(_CONTENT_SQL[kind], {"ids": ids, "chars": TEXT_CHARS}):
            content[(kind, r[0])] = r
    events = []
    for seq, _total, kind, eid in rows:
        _id, ts, off, line, label, text, detail = content[(kind, eid)]
        events.append(Event(seq, kind, eid, ts, off, line, label, text, dict(detail or {})))
    return total, events


def event_position(conn: psycopg.Connection, kind: str, event_id: int) -> tuple[int, int] | None:
    """(session id, 1-based timeline number) of a message or tool call; None if it does not exist."""
    table = {"message": "ah.message", "tool_call": "ah.tool_call"}.get(kind)
    if table is None:
        return None
    row = conn.execute(f"SELECT session_id FROM {table} WHERE id = %s", (event_id,)).fetchone()
    if row is None:
        return None
    seq = conn.execute(
        _KEYS_SQL + "SELECT seq FROM numbered WHERE kind = %(kind)s AND id = %(id)s",
        {"sid": row[0], "kind": kind, "id": event_id},
    ).fetchone()
    return (row[0], seq[0]) if seq else None


@dataclass(slots=True)
class SessionAnalytics:
    """Per-session figures: `by_model` rows (model, calls, tokens, output, cost USD, unpriced
    calls, recorded cost USD), `tools` rows (name, calls, errors, error classes, total ms),
    counts of prompts and tool calls, and the active duration (None when fewer than two
    timestamped events)."""

    by_model: list[tuple]
    tools: list[tuple]
    prompts: int
    tool_calls: int
    tool_errors: int
    active: timedelta | None


def session_analytics(conn: psycopg.Connection, session_id: int) -> SessionAnalytics:
    """Analytics of one thread (its own rows; sub-agents have their own pages)."""
    from agent_history.web.usage import PRICED_CALLS_SQL

    by_model = conn.execute(
        sql.SQL(
            PRICED_CALLS_SQL
            + """
            SELECT model, count(*), sum(tokens)::bigint, sum(output)::bigint, sum(cost),
                   count(*) FILTER (WHERE cost IS NULL), sum(recorded_cost_usd)
            FROM priced GROUP BY 1 ORDER BY 3 DESC NULLS LAST, 1
            """
        ).format(where=sql.SQL("mc.session_id = %(sid)s")),
        {"sid": session_id},
    ).fetchall()
    tools = conn.execute(
        """
        SELECT name, count(*), count(*) FILTER (WHERE coalesce(is_error, false)),
               string_agg(DISTINCT error_class, ', ' ORDER BY error_class), sum(duration_ms)::bigint
        FROM ah.tool_call WHERE session_id = %s GROUP BY 1 ORDER BY 2 DESC, 1
        """,
        (session_id,),
    ).fetchall()
    prompts = conn.execute(
        "SELECT count(*) FROM ah.message WHERE session_id = %s AND message_class = 'human_prompt'", (session_id,)
    ).fetchone()[0]
    active = conn.execute(
        """
        SELECT CASE WHEN count(gap) > 0 THEN sum(least(gap, %(cap)s)) END
        FROM (SELECT ts - lag(ts) OVER (ORDER BY ts) AS gap
              FROM (SELECT ts FROM ah.message WHERE session_id = %(sid)s AND ts IS NOT NULL
                    UNION ALL
                    SELECT started_at FROM ah.tool_call WHERE session_id = %(sid)s AND started_at IS NOT NULL) AS t
             ) AS g
        """,
        {"sid": session_id, "cap": IDLE_GAP},
    ).fetchone()[0]
    return SessionAnalytics(
        by_model=by_model,
        tools=tools,
        prompts=prompts,
        tool_calls=sum(t[1] for t in tools),
        tool_errors=sum(t[2] for t in tools),
        active=active,
    )


def server_facts(conn: psycopg.Connection) -> dict:
    """PostgreSQL version, pgvector version, keyword backend and schema revision (None when the
    role cannot read the version table), for the status page."""
    from agent_history.db.migrate import VERSION_TABLE, head_revision

    pg = conn.execute("SHOW server_version").fetchone()[0].split()[0]
    vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    backend = conn.execute("SELECT value FROM ah.meta WHERE key = 'keyword_backend'").fetchone()
    revision = None
    readable = conn.execute(
        "SELECT CASE WHEN to_regclass(%(t)s) IS NOT NULL THEN has_table_privilege(%(t)s, 'SELECT') ELSE false END",
        {"t": f"public.{VERSION_TABLE}"},
    ).fetchone()[0]
    if readable:
        row = conn.execute(f"SELECT version_num FROM public.{VERSION_TABLE}").fetchone()
        revision = row[0] if row else None
    return {
        "postgres_version": pg,
        "pgvector_version": vec[0] if vec else None,
        "keyword_backend": backend[0] if backend else None,
        "schema_revision": revision,
        "schema_head": head_revision(),
    }
