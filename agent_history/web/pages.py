"""What every page handler of `agent-history web` shares: the settings, the error a page
raises, and the templates plus the guarded reader connection (`Pages`).

`web.routes` (the handlers) and `web.app` (the Starlette app that wraps each handler in
`web.app.page`) both import these; neither imports the other's callers.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.responses import HTMLResponse

from agent_history.config import EmbeddingSettings
from agent_history.web.render import environment


@dataclass
class WebSettings:
    """What the app needs. `reader_dsn` is called before each request's connection (so the web
    server starts even while the database is down; `Database.live_reader_dsn` caches and starts a
    stopped embedded server again). `token` None = no token (loopback only). `loopback_only`
    turns on the Host check."""

    reader_dsn: Callable[[], str]
    token: str | None = None
    loopback_only: bool = True
    embedding: EmbeddingSettings | None = None
    statement_timeout_ms: int = 30_000
    plans: dict = field(default_factory=dict)
    """``[plans]`` of the config: agent → `usage.plans.PlanConfig` (the usage page's plan windows)."""


class PageError(Exception):
    """A request the page cannot answer: `status` and a one-line message for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Pages:
    """Shared state of the handlers: settings, templates, the reader DSN."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self.env = environment()

    @property
    def dsn(self) -> str:
        """The reader DSN, asked of `WebSettings.reader_dsn` for each connection."""
        return self.settings.reader_dsn()

    @contextmanager
    def reader(self):
        """A guarded read-only reader connection and (role, transaction_read_only)."""
        from agent_history.mcp.reader import guarded_connection

        with guarded_connection(self.dsn, statement_timeout_ms=self.settings.statement_timeout_ms) as conn:
            role, ro = conn.execute("SELECT current_user, current_setting('transaction_read_only')").fetchone()
            yield conn, (role, ro)

    def html(self, template: str, status: int = 200, **context) -> HTMLResponse:
        """Render `template` with `context` (plus the nav's current page)."""
        body = self.env.get_template(template).render(**context)
        return HTMLResponse(body, status)

    def error(self, status: int, message: str) -> HTMLResponse:
        """The error page."""
        return self.html("error.html", status, page="", title=f"Error {status}", message=message)
