"""`agent-history web`: the local read-only web UI (issue 20). The web stack (Starlette,
uvicorn, Jinja2) is imported only when this command runs."""

from __future__ import annotations

import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import fail


@app.command("web")
def web_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(8765, "--port", help="TCP port (0 = any free port; the URL is printed)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the search page in the default browser."),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow a non-loopback host; needs [web] token, then every request must carry it."
    ),
) -> None:
    """Serve the read-only web UI: search, sessions, a session's timeline, usage charts, status."""
    from agent_history.web.app import WebSettings
    from agent_history.web.bind import BindRefused
    from agent_history.web.serve import serve

    db = database()
    s = db.settings
    settings = WebSettings(
        reader_dsn=db.live_reader_dsn(),  # a stopped embedded server is started again
        embedding=s.embedding,
        statement_timeout_ms=s.statement_timeout_ms,
        plans=s.plans,
    )
    try:
        with db.keep_alive():  # no idle stop of the embedded server while the UI runs
            serve(
                host, port, allow_remote=allow_remote, token=s.web_token, settings=settings, open_browser=open_browser
            )
    except BindRefused as exc:
        fail(str(exc), 2)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", 2)
    except KeyboardInterrupt:
        pass
