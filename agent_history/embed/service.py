"""The warm embedding service: one local process holding the sentence-transformers model, shared
by the CLI, the MCP server and the embed worker (issue 18: a hybrid `search` that loads torch and
the model itself takes ~8 s; through the warm service it does not load them at all).

Started on demand, like the embedded PostgreSQL server (`agent_history.db.embedded`): the first
caller that needs a vector spawns ``python -m agent_history.embed.service serve …`` detached (its
own session, stdin closed, stdout/stderr into the log) and waits until it answers; later callers
find it again through its files in ``<data_dir>/embed-service/`` (directory mode 0700):

- ``service.sock`` — the only way in: HTTP over a unix socket (mode 0600; no TCP at all);
- ``service.pid``  — JSON ``{"pid", "model_path", "socket", "idle_timeout_s", "started"}``,
  written once the model is loaded and the socket listens, removed when the service exits;
- ``service.lock`` — ``flock``-ed by a caller while it checks and starts the service, so two
  callers never start two services; a stale pid/socket (process gone, or nothing answering)
  is removed by the caller holding the lock before it starts a new one;
- ``service.log``  — what the service did (start, model load time, why it stopped) and any crash.

It exits by itself after ``[embedding] service_idle_s`` seconds with no request, status checks
included (default
`DEFAULT_IDLE_S`; 0 in the config turns the service off: the model loads in each process), on
``agent-history embed-service stop`` (``POST /stop``) or SIGTERM/SIGINT.

Routes (JSON bodies; the standard library's `http.server` on the server side and `http.client`
over the unix socket on the client side — no HTTP library to import, issue 18's start-up time):

- ``GET /status`` → ``{"pid", "model_path", "idle_timeout_s", "uptime_s", "idle_s", "requests",
  "texts"}``;
- ``POST /embed`` ``{"texts": [str], "batch_size": int}`` → ``{"vectors": [[float]]}`` — the
  vectors `LocalEmbedder.embed` computes in process, bit for bit (floats go through JSON as
  shortest round-trip decimals);
- ``POST /stop`` → ``{"stopping": true}``.

This module imports no torch: the server loads the model through
`agent_history.embed.local_model.load_local_model` (as the in-process provider does).
"""

from __future__ import annotations

import argparse
import fcntl
import http.client
import json
import logging
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from agent_history.embed.errors import EmbeddingError
from agent_history.embed.local_model import encode, load_local_model

DEFAULT_IDLE_S = 600.0
"""Seconds without a request after which the service exits (``[embedding] service_idle_s``)."""
START_TIMEOUT_S = 180.0
"""How long a caller waits for a new service to load its model and answer (first load of torch
on a busy 2-core machine takes tens of seconds)."""
SOCKET_PATH_MAX = 107
"""AF_UNIX path limit on Linux (``sun_path`` is 108 bytes with the terminating NUL)."""
log = logging.getLogger("agent_history.embed.service")
CHECK_EVERY_S = 0.5
"""How often the serving loop wakes to check the idle timeout and a stop request."""


class ServiceUnavailable(Exception):
    """The service cannot be started or reached (one line, for the notice): the reason."""


@dataclass(frozen=True, slots=True)
class ServicePaths:
    """A service's files under ``<data_dir>/<name>`` (``embed-service`` here; the resident query
    process, `agent_history.cli.resident_server`, keeps the same files in ``query-service``)."""

    dir: Path
    socket: Path
    pid: Path
    lock: Path
    log: Path

    @classmethod
    def of(cls, data_dir: Path, name: str = "embed-service") -> ServicePaths:
        # realpath, not Path.resolve: a data dir that is a symlink loop is then a place where
        # nothing runs (and starting there fails with ELOOP), not a RuntimeError
        d = Path(os.path.realpath(Path(data_dir).expanduser())) / name
        return cls(d, d / "service.sock", d / "service.pid", d / "service.lock", d / "service.log")


def read_pid_file(paths: ServicePaths) -> dict[str, Any] | None:
    """The pid file's JSON, or None when it is missing or unreadable."""
    try:
        data = json.loads(paths.pid.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pid"), int) else None


def alive(pid: int) -> bool:
    """Whether process `pid` exists (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- client -------------------------------------------------------------------------------------


class _UnixHTTPConnection(http.client.HTTPConnection):
    """The standard library's HTTP/1.1 client, connected to a unix socket instead of TCP."""

    def __init__(self, path: str, timeout: float | None):
        super().__init__("embed-service", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class ServiceClient:
    """HTTP over the service's unix socket (`http.client`; one connection per request — a unix
    socket connects in microseconds, and the stdlib client costs a tenth of httpx's import)."""

    def __init__(self, paths: ServicePaths):
        self.paths = paths

    def status(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """``GET /status``. Raises ServiceUnavailable when nothing answers."""
        return self._call("GET", "/status", None, timeout_s)

    def embed(self, texts: list[str], batch_size: int, timeout_s: float | None = None) -> list[list[float]]:
        """Vectors for `texts`, in order; `timeout_s` (per socket operation) None waits as long
        as encoding takes. Raises ServiceUnavailable (TimeoutError when `timeout_s` passes)."""
        vectors = self._call("POST", "/embed", {"texts": texts, "batch_size": batch_size}, timeout_s)["vectors"]
        if len(vectors) != len(texts):
            raise ServiceUnavailable(f"embedding service returned {len(vectors)} vectors for {len(texts)} inputs")
        return vectors

    def stop(self) -> None:
        """``POST /stop``. Raises ServiceUnavailable when nothing answers."""
        self._call("POST", "/stop", {}, 5.0)

    def _call(self, method: str, path: str, body: dict | None, timeout_s: float | None) -> dict[str, Any]:
        conn = _UnixHTTPConnection(str(self.paths.socket), timeout_s)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except TimeoutError:
            if path == "/embed":
                raise
            raise ServiceUnavailable(f"embedding service at {self.paths.socket} did not answer") from None
        except (OSError, http.client.HTTPException) as exc:
            raise ServiceUnavailable(f"embedding service at {self.paths.socket}: {type(exc).__name__}: {exc}") from None
        finally:
            conn.close()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {}
        if response.status != 200 or not isinstance(payload, dict):
            error = payload.get("error", "") if isinstance(payload, dict) else ""
            raise ServiceUnavailable(f"embedding service: HTTP {response.status} {error}".rstrip())
        return payload

    def close(self) -> None:
        """Nothing held between requests."""


def _answering(paths: ServicePaths, model_path: str | None) -> ServiceClient | None:
    """A client of the running service (serving `model_path`, when given), or None."""
    info = read_pid_file(paths)
    if info is None or not alive(info["pid"]) or not paths.socket.exists():
        return None
    client = ServiceClient(paths)
    try:
        status = client.status()
    except ServiceUnavailable:
        client.close()
        return None
    if model_path is not None and status.get("model_path") != model_path:
        client.close()
        raise ServiceUnavailable(
            f"the embedding service in {paths.dir} serves {status.get('model_path')}, not {model_path} "
            "(agent-history embed-service stop, then retry)"
        )
    return client


@contextmanager
def start_lock(paths: ServicePaths) -> Iterator[None]:
    with open(paths.lock, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def log_tail(paths: ServicePaths) -> str:
    try:
        lines = [line.strip() for line in paths.log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def remove_stale(paths: ServicePaths) -> None:
    """Remove a pid file and socket no live service answers on (called under the start lock)."""
    for path in (paths.pid, paths.socket):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def ensure_service(model_path: str, data_dir: Path, idle_s: float = DEFAULT_IDLE_S) -> ServiceClient:
    """A client of the warm service for `model_path`, starting it when none answers.

    Raises ServiceUnavailable (one line: why) when the data dir cannot hold it, the socket path is
    too long, a service for another model runs there, or a new service exits or does not answer
    within `START_TIMEOUT_S` (its log says more).
    """
    paths = ServicePaths.of(data_dir)
    if len(os.fsencode(paths.socket)) > SOCKET_PATH_MAX:
        raise ServiceUnavailable(f"socket path {paths.socket} is longer than {SOCKET_PATH_MAX} bytes")
    client = _answering(paths, model_path)
    if client is not None:
        return client
    try:
        paths.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ServiceUnavailable(f"cannot create {paths.dir}: {exc.strerror}") from None
    with start_lock(paths):
        client = _answering(paths, model_path)  # another caller may have started it meanwhile
        if client is not None:
            return client
        remove_stale(paths)
        with open(os.open(paths.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as log_file:
            process = subprocess.Popen(
                [sys.executable, "-m", "agent_history.embed.service", "serve", "--model", model_path,
                 "--data-dir", str(data_dir), "--idle-timeout", repr(float(idle_s))],
                stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file, start_new_session=True, close_fds=True,
            )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = log_tail(paths)
                raise ServiceUnavailable(
                    f"the embedding service exited at start ({tail or f'exit {process.returncode}'}); see {paths.log}"
                )
            client = _answering(paths, model_path)
            if client is not None:
                # the service outlives this caller's interest: reap it whenever it exits, so a
                # long-lived caller (the MCP server) keeps no zombie that looks alive
                threading.Thread(target=process.wait, name="embed-service-reaper", daemon=True).start()
                return client
            time.sleep(0.1)
        raise ServiceUnavailable(
            f"the embedding service did not answer within {START_TIMEOUT_S:.0f} s; see {paths.log}"
        )


def service_status(data_dir: Path) -> dict[str, Any]:
    """``{"running": bool, "socket", "log", ...}`` plus the service's ``/status`` when it answers,
    or ``"stale": true`` when a pid file names a process that does not answer."""
    paths = ServicePaths.of(data_dir)
    out: dict[str, Any] = {"running": False, "socket": str(paths.socket), "log": str(paths.log)}
    client = _answering(paths, None)
    if client is None:
        if read_pid_file(paths) is not None or paths.socket.exists():
            out["stale"] = True
        return out
    try:
        out.update(client.status(), running=True)
    except ServiceUnavailable:
        pass
    finally:
        client.close()
    return out


def stop_service(data_dir: Path, wait_s: float = 30.0) -> bool:
    """Stop the service (``POST /stop``, SIGTERM when it does not answer) and wait until its
    process is gone; removes stale files. Returns False when none was running."""
    paths = ServicePaths.of(data_dir)
    info = read_pid_file(paths)
    client = _answering(paths, None)
    if client is None:
        if paths.dir.exists():
            with start_lock(paths):
                remove_stale(paths)
        return False
    try:
        client.stop()
    except ServiceUnavailable:
        if info is not None:
            os.kill(info["pid"], signal.SIGTERM)
    finally:
        client.close()
    deadline = time.monotonic() + wait_s
    while info is not None and alive(info["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


# --- server -------------------------------------------------------------------------------------


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, paths: ServicePaths, model: Any, model_path: str, idle_s: float):
        self.paths, self.model, self.model_path, self.idle_s = paths, model, model_path, idle_s
        self.started = time.time()
        self.last_request = time.monotonic()
        self.busy = 0
        self.requests = 0
        self.texts = 0
        self.stopping = threading.Event()
        self.state = threading.Lock()
        self.encode_lock = threading.Lock()  # one encode at a time: torch already uses every core
        super().__init__(str(paths.socket), _Handler)

    def status(self) -> dict[str, Any]:
        with self.state:
            return {
                "pid": os.getpid(),
                "model_path": self.model_path,
                "idle_timeout_s": self.idle_s,
                "uptime_s": round(time.time() - self.started, 3),
                "idle_s": round(time.monotonic() - self.last_request, 3) if not self.busy else 0.0,
                "requests": self.requests,
                "texts": self.texts,
            }

    def idle_expired(self) -> bool:
        with self.state:
            return not self.busy and time.monotonic() - self.last_request > self.idle_s


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def address_string(self) -> str:  # a unix socket has no peer address
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server API
        pass  # no line per request in the log

    def _reply(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller gave up (its query deadline passed)

    def _begin(self) -> None:
        with self.server.state:
            self.server.busy += 1
            self.server.requests += 1
            self.server.last_request = time.monotonic()

    def _end(self) -> None:
        with self.server.state:
            self.server.busy -= 1
            self.server.last_request = time.monotonic()

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        if self.path != "/status":
            return self._reply(404, {"error": "no such route"})
        status = self.server.status()
        with self.server.state:  # any contact is use: a caller that just found the service keeps it
            self.server.last_request = time.monotonic()
        self._reply(200, status)

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self._begin()
        try:
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except ValueError:
                return self._reply(400, {"error": "body is not JSON"})
            if self.path == "/stop":
                self._reply(200, {"stopping": True})
                log.info("stop requested")
                self.server.stopping.set()
                return None
            if self.path != "/embed":
                return self._reply(404, {"error": "no such route"})
            texts, batch_size = body.get("texts"), body.get("batch_size")
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                return self._reply(400, {"error": "texts must be a list of strings"})
            if not isinstance(batch_size, int) or batch_size < 1:
                return self._reply(400, {"error": "batch_size must be a positive integer"})
            with self.server.encode_lock:
                vectors = encode(self.server.model, texts)  # `batch_size` inputs came; ENCODE_BATCH at a time
            with self.server.state:
                self.server.texts += len(texts)
            return self._reply(200, {"vectors": vectors})
        finally:
            self._end()


def serve(model_path: str, data_dir: Path, idle_s: float) -> int:
    """Load the model, listen on the socket, answer until idle/stopped; returns the exit code.
    Run by `ensure_service` in a detached child; logs to ``service.log``."""
    paths = ServicePaths.of(data_dir)
    handler = logging.FileHandler(paths.log)
    handler.setFormatter(logging.Formatter("%(asctime)s embed-service[%(process)d] %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False  # the libraries' own INFO chatter (progress bars) stays out
    os.umask(0o077)
    t0 = time.monotonic()
    try:
        model = load_local_model(model_path)
    except EmbeddingError as exc:
        log.error("cannot load the model: %s", exc)
        return 1
    log.info("model %s loaded in %.1f s; idle timeout %g s", model_path, time.monotonic() - t0, idle_s)
    try:
        server = _Server(paths, model, model_path, idle_s)
    except OSError as exc:
        log.error("cannot listen on %s: %s", paths.socket, exc.strerror)
        return 1
    server.timeout = CHECK_EVERY_S

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %s", signal.Signals(signum).name)
        server.stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    info = {"pid": os.getpid(), "model_path": model_path, "socket": str(paths.socket),
            "idle_timeout_s": idle_s, "started": server.started}  # fmt: skip
    tmp = paths.pid.with_suffix(".tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, paths.pid)
    try:
        while not server.stopping.is_set():
            server.handle_request()  # returns after `timeout` when nothing comes
            if server.idle_expired():
                log.info("idle for %g s: exiting", idle_s)
                break
    finally:
        server.server_close()
        if (read_pid_file(paths) or {}).get("pid") == os.getpid():
            remove_stale(paths)
        log.info("stopped after %d requests", server.requests)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m agent_history.embed.service serve --model PATH --data-dir DIR --idle-timeout S``."""
    parser = argparse.ArgumentParser(prog="agent_history.embed.service")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--model", required=True)
    s.add_argument("--data-dir", required=True, type=Path)
    s.add_argument("--idle-timeout", required=True, type=float)
    args = parser.parse_args(argv)
    return serve(args.model, args.data_dir, args.idle_timeout)


if __name__ == "__main__":
    sys.exit(main())
