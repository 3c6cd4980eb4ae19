"""The web UI's JSON routes for five questions — search, sessions, usage, why, touched — answering the same
request objects (`read.requests`) with the same read functions as the CLI's ``--json`` and the
MCP tools, so the three front ends give the same result for the same question.

A route only parses its GET parameters into the request's mapping (`request_params`: repeated
``agent``, ``namespace``, ``exclude_agent``, ``source_type``, ``class`` become lists, ``q`` is
the query, ``subagents`` a bool spelled true/false, 1/0, yes/no or on/off — any other spelling
is a 400 naming it) and renders JSON; an unknown parameter, a bad time or an unknown agent is a 400 with
the request's one-line error, the text the CLI and the MCP server give. ``/api/search`` also
refuses, as ``search`` does, a ``session`` that names no session (a uid prefix shorter than 6
characters says so), and every route but ``/api/why`` a ``namespace`` no file has, as the CLI's
``--namespace`` does (`read.catalog.check_filter_values`).

- ``/api/search?q=…`` — ``{"query", "namespaces", "mode", "note", "hits": [hit…]}`` (the CLI's
  ``search --json``; ``mode``: keyword | vector | hybrid, default as the search page).
- ``/api/sessions`` — ``{"sessions": [session…]}`` (the rows of ``sessions --json``).
- ``/api/usage/report`` — ccusage's shape plus ``timezone`` (``usage --json``).
- ``/api/why?sha=…`` — ``{"sha", "matches": [origin…], "collected": [commit…]}`` (``why --json``).
- ``/api/touched?pattern=…`` — ``{"pattern", "sessions": [session…]}`` (``touched --json``;
  ``op`` repeatable).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
from starlette.requests import Request
from starlette.responses import Response

from agent_history.mcp.render import dumps
from agent_history.read.catalog import check_filter_values
from agent_history.read.requests import (
    cancelled,
    search_request,
    sessions_request,
    touched_request,
    usage_request,
    why_request,
)
from agent_history.read.sessions import sessions_of
from agent_history.read.touched import touched_of
from agent_history.read.usage import usage_report
from agent_history.web.pages import PageError, Pages

LISTS = {
    "agent": "agents",
    "namespace": "namespaces",
    "exclude_agent": "exclude_agents",
    "source_type": "source_types",
    "class": "classes",
    "host": "hosts",
    "op": "ops",
}
"""Repeatable GET parameters → the request key holding their list."""
RENAMED = {"q": "query"}
"""Single GET parameters named otherwise in the request."""
BOOLEANS = frozenset({"subagents"})
"""GET parameters that are yes/no (the request's bools): `query_bool` reads them."""
TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off", "")
"""A boolean GET parameter's spellings, case-insensitive: ``on`` is what an HTML checkbox sends,
an empty value (a form's blank field) is false; anything else is a 400 (`query_bool`)."""


def query_bool(name: str, raw: str) -> bool:
    """GET parameter `name`'s value `raw` as a bool (`TRUE`, `FALSE`). Raises ValueError (a 400)
    naming the parameter for any other spelling — ``subagents=maybe`` is not taken as false."""
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValueError(f"{name} must be true or false (also 1/0, yes/no, on/off), got {raw!r}")


def request_params(request: Request, *, local: tuple[str, ...] = ()) -> tuple[dict[str, Any], dict[str, str]]:
    """``(request mapping, this route's own parameters)`` from the query string: `local` names the
    parameters the route reads itself (e.g. ``mode``); every other parameter goes to the request
    (an unknown one is the request builder's error)."""
    q = request.query_params
    params: dict[str, Any] = {}
    own: dict[str, str] = {}
    for name in dict.fromkeys(q.keys()):
        if name in local:
            own[name] = q[name]
        elif name in LISTS:
            params[LISTS[name]] = [v for v in q.getlist(name) if v]
        else:
            params[RENAMED.get(name, name)] = q[name]
    for name in BOOLEANS & params.keys():
        params[name] = query_bool(name, params[name])
    return params, own


def json_response(data: Any, status: int = 200) -> Response:
    """`data` as JSON (Decimal as a number, dates ISO 8601: `mcp.render.dumps`)."""
    return Response(dumps(data), status_code=status, media_type="application/json")


def search_api(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/api/search: the hits of one search (`search.hybrid.run_search`)."""
    from agent_history.search import hybrid

    params, own = request_params(request, local=("mode",))
    req = search_request(params, flags=False)
    check_filter_values(conn, req.namespaces, req.session, flags=False)  # the CLI's check: 400, its line
    if names := cancelled(req):
        note = f"--agent and --exclude-agent both name {names[0]}"
        return json_response({"query": req.query, "hits": [], "note": note})
    try:
        result = hybrid.run_search(conn, req, own.get("mode") or None, pages.settings.embedding)
    except hybrid.VectorUnavailable as exc:
        raise PageError(503, f"vector search unavailable: {exc}") from None
    return json_response(
        {
            "query": req.query,
            "namespaces": list(req.namespaces) or None,
            "mode": result.mode,
            "note": result.note,
            "hits": [h.as_dict() for h in result.hits],
        }
    )


def sessions_api(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/api/sessions: recent sessions (`read.sessions.sessions_of`)."""
    params, _ = request_params(request)
    req = sessions_request(params, flags=False)
    check_filter_values(conn, req.namespaces, flags=False)  # `sessions --namespace` refuses one no file has
    return json_response({"sessions": [r.as_dict() for r in sessions_of(conn, req)]})


def usage_report_api(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/api/usage/report: the usage report (`read.usage.usage_report`) at the present time."""
    params, _ = request_params(request)
    req = usage_request(params, flags=False)
    check_filter_values(conn, req.namespaces, flags=False)  # as `usage --namespace`
    return json_response(usage_report(conn, req, datetime.now(UTC)))


def why_api(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/api/why: where a commit came from (`read.why.why_of`), as ``why --json`` prints it."""
    from agent_history.read.why import why_of

    params, _ = request_params(request)
    origins, collected = why_of(conn, why_request(params, flags=False))
    sha = params.get("sha")
    return json_response(
        {"sha": sha, "matches": [o.as_dict() for o in origins], "collected": [c.as_dict() for c in collected]}
    )


def touched_api(request: Request, conn: psycopg.Connection, pages: Pages) -> Response:
    """/api/touched: sessions that touched matching files (`read.touched.touched_of`), as
    ``touched --json`` prints them."""
    params, _ = request_params(request)
    req = touched_request(params, flags=False)
    check_filter_values(conn, req.namespaces, flags=False)  # as `touched --namespace`
    rows = touched_of(conn, req)
    return json_response({"pattern": params.get("pattern"), "sessions": [r.as_dict() for r in rows]})


API: tuple[tuple[str, object], ...] = (
    ("/api/search", search_api),
    ("/api/sessions", sessions_api),
    ("/api/usage/report", usage_report_api),
    ("/api/why", why_api),
    ("/api/touched", touched_api),
)
"""The JSON routes (GET) and their handlers."""
