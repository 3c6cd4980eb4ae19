"""One handler per page: parse the query string, call the read layer, render a template.

Each handler is ``(request, conn, pages) -> Response`` and runs inside `app.page` (one guarded
reader connection per request). Filters are plain GET parameters, so every page works without
JavaScript and every view is a URL that can be bookmarked. The list pages (``/search``,
``/sessions``, ``/usage`` and its charts' ``/api/usage``) refuse a namespace no file has with
the CLI's line, a 400 (`read.catalog.check_filter_values`, as the JSON routes of `web.api`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote

import psycopg
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from agent_history.classify.rules import TRIGGERS
from agent_history.db.status import CORE_TABLES
from agent_history.embed.status import embedding_status
from agent_history.ingest.status import catalogue_status
from agent_history.model import classes
from agent_history.model.classes import CLASS_GROUPS
from agent_history.read.analytics import IDLE_GAP, row_counts, server_facts, session_analytics
from agent_history.read.catalog import catalogue_agents, catalogue_namespaces, check_filter_values
from agent_history.read.efficiency import efficiency_report, totals_of
from agent_history.read.loops import list_loops, loops_by_session
from agent_history.read.requests import agents_of, search_request, sessions_request, time_range, usage_request
from agent_history.read.resume import resume_of_ref
from agent_history.read.sessions import check_hosts, summary_of
from agent_history.read.shared import shared_elsewhere
from agent_history.read.threads import SORTS, list_threads, sub_threads, thread_key
from agent_history.read.timeline_pages import PAGE_EVENTS, event_position, timeline_page
from agent_history.read.usage import plan_snapshot
from agent_history.read.usage_cells import usage_cells
from agent_history.search import hybrid
from agent_history.search.request import parse_when
from agent_history.session.refs import resolve_session
from agent_history.web.api import request_params
from agent_history.web.pages import PageError, Pages
from agent_history.web.render import query
from agent_history.web.usage import chart_payload, rollup

SEARCH_LIMIT = 50
SESSIONS_PER_PAGE = 50


@dataclass(frozen=True)
class Filters:
    """The filters the list pages share (GET parameters of the same names)."""

    agents: tuple[str, ...]
    namespaces: tuple[str, ...]
    since: datetime | None
    until: datetime | None
    project: str | None
    params: dict  # the raw values, to refill the form and build links


def filters_of(request: Request) -> Filters:
    """Filters from the query string, checked as every front end checks them (`read.requests`).
    Raises RequestError (a ValueError → 400) for a time that is not one or an unknown agent."""
    q = request.query_params
    agents = agents_of(a for a in q.getlist("agent") if a)
    namespaces = tuple(dict.fromkeys(n for n in q.getlist("namespace") if n))
    since, until = time_range({"since": q.get("since"), "until": q.get("until")}, flags=False)
    project = q.get("project") or None
    params = {
        "agent": list(agents),
        "namespace": list(namespaces),
        "since": q.get("since", ""),
        "until": q.get("until", ""),
        "project": q.get("project", ""),
    }
    return Filters(agents, namespaces, since, until, project, params)


def _choices(conn: psycopg.Connection) -> dict:
    """Agents and namespaces present in the catalogue (the filter forms' options)."""
    return {
        "all_agents": catalogue_agents(conn),
        "all_namespaces": catalogue_namespaces(conn),
    }


def _int(request: Request, name: str, default: int, lo: int = 1, hi: int = 2**63 - 1) -> int:
    """GET parameter `name` as a whole number `lo` … `hi` (`default` when absent or empty).
    Raises ValueError (a 400) for anything else."""
    raw = request.query_params.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value < lo:
        raise ValueError(f"{name} must be at least {lo}, got {value}")
    if value > hi:
        raise ValueError(f"{name} must be at most {hi}, got {value}")
    return value


def search_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Search: query, mode, filters; hits with highlighted snippets, provenance and a link to the
    hit. A namespace no file has is a 400 with the CLI's line (as ``/api/search``)."""
    f = filters_of(request)
    check_filter_values(conn, f.namespaces, flags=False)
    q = request.query_params
    text = q.get("q", "").strip()
    group = q.get("class", "conversational")
    corpus = q.get("in", "messages")
    if corpus not in ("messages", "tools", "all"):
        raise ValueError(f"unknown search scope {corpus!r} (messages, tools, all)")
    default_mode = hybrid.default_mode(conn, pages.settings.embedding)
    modes = ["keyword"] + (["hybrid"] if default_mode is hybrid.Mode.HYBRID else [])
    mode = q.get("mode") or str(default_mode)
    if mode not in modes:
        raise ValueError(f"mode {mode!r} is not available here (available: {', '.join(modes)})")
    result = None
    if text:
        req = search_request(
            {
                "query": text,
                "limit": SEARCH_LIMIT,
                "in": corpus,
                "agents": list(f.agents),
                "namespaces": list(f.namespaces),
                "classes": [group],
                "since": f.params["since"],
                "until": f.params["until"],
                "project": f.project,
            },
            flags=False,
        )
        try:
            result = hybrid.run_search(conn, req, mode, pages.settings.embedding)
        except hybrid.VectorUnavailable as exc:
            raise PageError(503, f"vector search unavailable: {exc}") from None
    params = {**f.params, "q": text, "class": group, "in": corpus, "mode": mode}
    return pages.html(
        "search.html",
        page="search",
        title="Search",
        params=params,
        result=result,
        modes=modes,
        groups=list(CLASS_GROUPS),
        all_classes=classes.ALL,
        **_choices(conn),
    )


def hit_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/hit/{kind}/{id}: redirect to the session page holding that message or tool call, at it."""
    kind = request.path_params["kind"]
    try:
        event_id = int(request.path_params["id"])
    except ValueError:
        raise PageError(404, f"no {kind} {request.path_params['id']!r}") from None
    pos = event_position(conn, kind, event_id)
    if pos is None:
        raise PageError(404, f"no {kind} {event_id} in the catalogue (it may have been re-indexed)")
    session_id, seq = pos
    uid, agent_id = thread_key(conn, session_id)
    target = f"/session/{quote(uid)}?" + query({}, agent_id=agent_id, page=(seq - 1) // PAGE_EVENTS + 1) + f"#e{seq}"
    return RedirectResponse(target, 303)


def _form(request: Request, agents: tuple[str, ...], namespaces: tuple[str, ...]) -> dict:
    """The filter form's values as the person gave them (to refill it and build links); agents
    and namespaces as the request read them."""
    q = request.query_params
    return {
        "agent": list(agents),
        "namespace": list(namespaces),
        "since": q.get("since", ""),
        "until": q.get("until", ""),
        "project": q.get("project", ""),
    }


def sessions_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Sessions: filters, sort, sub-agents nested under their parent, loop badges, paging. The
    filters build `read.requests.SessionsRequest` (`sessions_request`, as ``/api/sessions`` and
    the CLI do): an unknown parameter, a bad time or health grade, an unknown agent, host or
    namespace is a 400 with the request's one-line error."""
    params, own = request_params(request, local=("sort", "page"))
    req = sessions_request({**params, "limit": SESSIONS_PER_PAGE}, flags=False)
    check_filter_values(conn, req.namespaces, flags=False)
    check_hosts(conn, req.hosts, flags=False)
    sort = own.get("sort") or "date"
    n = _int(request, "page", 1, hi=(2**63 - 1) // SESSIONS_PER_PAGE)  # the offset is a bigint
    rows, more = list_threads(conn, req, sort=sort, offset=(n - 1) * SESSIONS_PER_PAGE)
    loops = loops_by_session(conn, [r.id for r in rows]) if rows else {}
    for r in rows:
        r.loops = loops.get(r.id, [])
    health = request.query_params.get("health") or ""
    form = {**_form(request, req.agents, req.namespaces), "host": list(req.hosts), "sort": sort, "health": health}
    return pages.html(
        "sessions.html",
        page="sessions",
        title="Sessions",
        rows=rows,
        sorts=list(SORTS),
        params=form,
        page_no=n,
        more=more,
        **_choices(conn),
    )


def session_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Session: header, analytics, and one page of the timeline in file order."""
    agent_id = request.query_params.get("agent_id")
    ref = resolve_session(conn, request.path_params["uid"], agent_id if agent_id is not None else None)
    n = _int(request, "page", 1)
    total, events = timeline_page(conn, ref.id, n)
    pages_total = max(1, (total + PAGE_EVENTS - 1) // PAGE_EVENTS)
    if n > pages_total:
        raise PageError(404, f"session {ref.session_uid} has {pages_total} page(s) of events, not {n}")
    threads = sub_threads(conn, ref.id)
    return pages.html(
        "session.html",
        page="sessions",
        title=ref.title or ref.session_uid,
        ref=ref,
        summary=summary_of(conn, ref.id),
        analytics=session_analytics(conn, ref.id),
        events=events,
        total=total,
        page_no=n,
        pages_total=pages_total,
        page_size=PAGE_EVENTS,
        idle_gap=IDLE_GAP,
        threads=threads,
        resume=resume_of_ref(conn, ref),
        shared=shared_elsewhere(conn, ref.id),
        params={"agent_id": ref.agent_id},
    )


EXPORT_TYPES = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8", "json": "application/json"}


def session_export(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Session export (`agent-history export`): ``?format=md|html|json`` (default md), secret-shaped
    spans redacted, as a download named ``<uid>.<format>``; the main thread with sub-agents inline."""
    from agent_history.read.export import export_session
    from agent_history.read.export_render import RENDERERS

    fmt = request.query_params.get("format", "md")
    if fmt not in EXPORT_TYPES:
        raise PageError(400, f"unknown export format {fmt!r} (known: {', '.join(EXPORT_TYPES)})")
    ref = resolve_session(conn, request.path_params["uid"], "")
    body = RENDERERS[fmt](export_session(conn, ref.session_uid))
    return Response(
        body,
        media_type=EXPORT_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{ref.session_uid}.{fmt}"'},
    )


SECRETS_SHOWN = 500


def secrets_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Secrets: the findings of the last `agent-history secrets` scan (detector, session, where,
    file and byte offset, redacted preview — never the secret), counts by detector."""
    from agent_history.read.secrets import list_secrets, secret_counts

    found = list_secrets(conn, limit=SECRETS_SHOWN)
    return pages.html(
        "secrets.html", page="secrets", title="Secrets", found=found, counts=secret_counts(conn), shown=SECRETS_SHOWN
    )


def _usage(request: Request, conn: psycopg.Connection):
    """``(request, form values, usage cells)`` for the usage page and its charts' JSON: the
    filters build `read.requests.UsageRequest` (`usage_request`, as ``/api/usage/report`` and the
    CLI do) with the page's days in UTC (`read.usage_cells.usage_cells` buckets by UTC day); a
    namespace no file has is a 400 with the CLI's line."""
    params, _own = request_params(request, local=("now",))
    req = usage_request({**params, "timezone": "UTC"}, flags=False)
    check_filter_values(conn, req.namespaces, flags=False)
    cells = usage_cells(
        conn,
        agents=req.agents,
        namespaces=req.namespaces,
        since=req.since,
        until=req.until,
        project=req.project,
        model=req.model,
    )
    return req, _form(request, req.agents, req.namespaces), cells


def usage_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Usage: charts (tokens by agent, cost by model, per day), breakdown tables, efficiency by
    role, loops — every one narrowed by the same filters (``project`` included)."""
    req, form, cells = _usage(request, conn)
    # the same range as the charts (threads and loops by their start)
    report = efficiency_report(
        conn, agents=req.agents, namespaces=req.namespaces, since=req.since, until=req.until, project=req.project
    )
    by_role: dict[str, list] = {}
    for t in report.threads:
        by_role.setdefault(t.role or "unknown", []).append(t)
    roles = {role: totals_of(ts) for role, ts in sorted(by_role.items())}
    loops = list_loops(conn, since=req.since, until=req.until, namespaces=req.namespaces, project=req.project, limit=50)
    # the plan windows at `now` (default the present; an ISO time shows them as they were then)
    clock = parse_when(request.query_params["now"], option="now") if request.query_params.get("now") else None
    plans = plan_snapshot(conn, pages.settings.plans, clock or datetime.now(UTC), req.agents)
    return pages.html(
        "usage.html",
        page="usage",
        title="Usage",
        params=form,
        api=f"/api/usage?{query(form)}",
        by_day=rollup(cells, "day"),
        by_model=rollup(cells, "model"),
        by_agent=rollup(cells, "agent"),
        by_project=rollup(cells, "project"),
        by_branch=rollup(cells, "branch"),
        by_host=rollup(cells, "host"),
        roles=roles,
        triggers=TRIGGERS,
        loops=loops,
        plans=plans,
        **_choices(conn),
    )


def usage_api(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/api/usage: the charts' JSON (`web.usage.chart_payload`)."""
    _req, _form_values, cells = _usage(request, conn)
    return JSONResponse(chart_payload(cells))


def status_page(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """Status: server facts, namespaces with files by status and parse issues by kind, last
    pass, embedding coverage, row counts."""
    counts = row_counts(conn, CORE_TABLES)
    return pages.html(
        "status.html",
        page="status",
        title="Status",
        facts=server_facts(conn),
        catalogue=catalogue_status(conn),
        embedding=embedding_status(conn, pages.settings.embedding),
        counts=counts,
    )


PAGES: tuple[tuple[str, object], ...] = (
    ("/search", search_page),
    ("/hit/{kind}/{id}", hit_page),
    ("/sessions", sessions_page),
    ("/session/{uid}", session_page),
    ("/session/{uid}/export", session_export),
    ("/usage", usage_page),
    ("/secrets", secrets_page),
    ("/api/usage", usage_api),
    ("/status", status_page),
)
"""Every page route (GET) and its handler."""
