"""Run the web UI: check the bind (`web.bind`), bind the socket, print the URL, serve with uvicorn.

The socket is bound before uvicorn starts, so ``--port 0`` (any free port) works and the printed
URL — the first line on stdout, ``serving http://HOST:PORT/ …`` — is the real one; a browser
opened with ``--open`` before uvicorn accepts just waits in the listen backlog.
"""

from __future__ import annotations

import socket

from agent_history.web.app import WebSettings, create_app
from agent_history.web.bind import check_bind


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (IPv6 when `host` is a v6 literal). Raises OSError
    (address in use, cannot assign) with the OS's message."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port/`` of a bound socket (v6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(
    host: str,
    port: int,
    *,
    allow_remote: bool,
    token: str | None,
    settings: WebSettings,
    open_browser: bool = False,
) -> None:
    """Check the bind, serve until interrupted. Raises `bind.BindRefused` (refused host/token)
    or OSError (cannot bind)."""
    import uvicorn

    check_bind(host, port, allow_remote=allow_remote, token=token)
    settings.token = token if allow_remote else None
    settings.loopback_only = not allow_remote
    sock = bind_socket(host, port)
    url = url_of(sock)
    mode = "token required" if allow_remote else "loopback only"
    print(f"serving {url} (read-only, reader role, {mode}); Ctrl-C stops", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url + "search")
    config = uvicorn.Config(create_app(settings), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
