"""The Starlette application of `agent-history web`.

Every page handler runs in a worker thread with one fresh connection from
`agent_history.mcp.reader.guarded_connection` — the reader role, a READ ONLY transaction, the
MCP server's role guard run first — and closes it afterwards, so no route can write. Each
response names the role and the transaction's read-only flag (``X-AH-Role``,
``X-AH-Read-Only``) and the server time (``Server-Timing: app;dur=<ms>``).

Middleware, outermost first (`WebSettings` decides):
- Host check: on a loopback bind only ``Host`` headers naming a loopback address are served (a
  DNS-rebinding page cannot reach the catalogue through the person's browser).
- Token: with ``--allow-remote`` every request needs the token — ``Authorization: Bearer <t>``,
  the ``ah_web_token`` cookie, or ``?token=<t>`` once (answered with the cookie and a redirect
  to the same URL without it). Compared in constant time.
- Security headers on every response: a CSP without inline script (``script-src 'self'``),
  nosniff, no referrer, no framing, no caching of pages.

Failures become a page with one line and a status: 400 (bad filter, a NUL byte in a URL
parameter), 404 (no such session),
503 (role guard refused / database unreachable), 500 (anything else; logged to stderr). A value
the line echoes is cut past 200 characters, saying its size (`echo.clip_echoes`, the CLI's rule).
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agent_history.echo import clip_echoes
from agent_history.web import api, routes
from agent_history.web.bind import is_loopback
from agent_history.web.pages import PageError, Pages, WebSettings

__all__ = ["PageError", "Pages", "WebSettings", "create_app", "page"]

log = logging.getLogger("agent_history.web")

STATIC = Path(__file__).parent / "static"
TOKEN_COOKIE = "ah_web_token"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
"""Sent with every response (OWASP Secure Headers; CSP level 3)."""


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")] if "]" in host_header else host_header
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class _Guard(BaseHTTPMiddleware):
    def __init__(self, app, settings: WebSettings) -> None:
        super().__init__(app)
        self.settings = settings

    async def dispatch(self, request: Request, call_next) -> Response:
        s = self.settings
        if s.loopback_only and not is_loopback(_host_name(request.headers.get("host", ""))):
            return _secure(PlainTextResponse("this server answers only to loopback host names\n", 421))
        if s.token:
            given = request.query_params.get("token")
            if given is not None and hmac.compare_digest(given.encode(), s.token.encode()):
                rest = urlencode([(k, v) for k, v in parse_qsl(request.url.query) if k != "token"])
                target = request.url.path + (f"?{rest}" if rest else "")
                resp = RedirectResponse(target, 303)
                resp.set_cookie(TOKEN_COOKIE, s.token, httponly=True, samesite="strict")
                return _secure(resp)
            auth = request.headers.get("authorization", "")
            presented = auth[7:] if auth.lower().startswith("bearer ") else request.cookies.get(TOKEN_COOKIE, "")
            if not hmac.compare_digest(presented.encode(), s.token.encode()):
                return _secure(PlainTextResponse("token required (see [web] token in the config)\n", 401))
        return _secure(await call_next(request))


def _secure(resp: Response) -> Response:
    for k, v in SECURITY_HEADERS.items():
        resp.headers[k] = v
    if not resp.headers.get("cache-control"):
        resp.headers["Cache-Control"] = "no-store"
    return resp


def _refuse_nul(request: Request) -> None:
    """Raise PageError 400 when a URL parameter (query or path) holds a NUL byte: PostgreSQL
    text cannot hold one (psycopg refuses to send it), so no catalogue value can match it."""
    named = [*request.path_params.items(), *request.query_params.multi_items()]
    for name, value in named:
        if "\x00" in name or "\x00" in str(value):
            raise PageError(400, f"URL parameter {name!r} contains a NUL byte (%00), which no catalogue text holds")


def page(pages: Pages, handler: Callable) -> Callable:
    """Wrap `handler(request, conn, pages) -> Response` as a sync Starlette endpoint with one
    guarded reader connection, timing and role headers, and error pages."""
    import psycopg

    from agent_history.db.errors import DatabaseError
    from agent_history.mcp.guard import GuardRefused
    from agent_history.session.refs import AmbiguousSession, SessionNotFound

    @wraps(handler)
    def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        role = None

        def error(status: int, message: str) -> Response:  # a JSON route fails in JSON
            message = clip_echoes(message)  # a value it echoes: cut past 200 characters (the CLI's rule)
            if request.url.path.startswith("/api/"):
                return JSONResponse({"error": message}, status_code=status)
            return pages.error(status, message)

        try:
            _refuse_nul(request)
            with pages.reader() as (conn, role):
                resp = handler(request, conn, pages)
        except PageError as exc:
            resp = error(exc.status, str(exc))
        except (SessionNotFound, AmbiguousSession) as exc:
            resp = error(404, str(exc))
        except ValueError as exc:
            resp = error(400, str(exc).splitlines()[0] if str(exc) else "bad request")
        except (GuardRefused, DatabaseError) as exc:
            resp = error(503, str(exc).splitlines()[0])
        except psycopg.errors.QueryCanceled:
            resp = error(
                503, f"the query took longer than {pages.settings.statement_timeout_ms} ms: narrow the filters"
            )
        except psycopg.OperationalError as exc:
            resp = error(503, f"database connection lost: {(str(exc).strip().splitlines() or ['?'])[0]}")
        except Exception as exc:  # noqa: BLE001 - a page, not a traceback, for the person
            log.exception("web: %s %s failed", request.method, request.url.path)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            resp = error(500, f"internal error ({type(exc).__name__}): {first}")
        if role is not None:
            resp.headers["X-AH-Role"] = role[0]
            resp.headers["X-AH-Read-Only"] = role[1]
        resp.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
        return resp

    return endpoint


def create_app(settings: WebSettings) -> Starlette:
    """The ASGI app serving every page, the JSON routes (`/api/usage`, `web.api`) and `/static/`."""
    pages = Pages(settings)
    table = [Route(path, page(pages, fn), methods=["GET"]) for path, fn in (*routes.PAGES, *api.API)]
    table.append(Route("/", lambda request: RedirectResponse("/search", 303), methods=["GET"]))
    table.append(Route("/favicon.ico", lambda request: Response(status_code=204), methods=["GET"]))
    table.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    return Starlette(routes=table, middleware=[Middleware(_Guard, settings=settings)])
