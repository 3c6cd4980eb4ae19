"""The resident query process: a preloading fork server for the read commands (issue 27 item 5;
the client is `agent_history.cli.resident`, which documents the wire protocol).

One process per user and data dir, built like the warm embedding service (`embed.service`, whose
`ServicePaths`, pid file, lock and log helpers it reuses) in ``<data dir>/query-service/`` (0700):

- ``service.sock`` — the unix socket (mode 0600; the peer's uid is checked with ``SO_PEERCRED``);
- ``service.pid``  — JSON ``{"pid", "idle_timeout_s", "started", "package", "version"}``;
- ``service.lock`` — ``flock``-ed by the server while it listens: a second server started at
  the same time finds it held and exits at once; whoever holds it removes a stale socket;
- ``service.log``  — start, preload time, why it stopped, and any crash;
- ``service.stopping`` — while a stopped server finishes the commands still running in it.

Started detached by the first eligible command that found none (`resident.spawn_server`, after
that command ran in process) or by ``agent-history service start``. It imports the CLI, typer,
rich, psycopg and the read/search/usage/ingest packages once (`PRELOAD`), then holds no
connection and no thread, so a `fork` per command is safe and cheap. The forked child takes the
client's fds as 0/1/2, its cwd, environment, umask and stdio encodings, re-creates the objects
that were sized to the server's terminal and environment at import (`_adopt`), and runs
`agent_history.cli.app.run` — the in-process path, reading the config and resolving the
database as usual, the reader-role guard included. The child reports its exit code itself; the
server reports a death by signal, forwards the client's signals to the child (Ctrl-Z's SIGTSTP as
SIGSTOP, then SIGCONT: `SUSPEND_SIGNALS`), and sends SIGTERM to a child whose client went away.

It stops listening after ``[service] query_idle_s`` seconds (`DEFAULT_IDLE_S`) with no command
running or started, on ``agent-history service stop`` (SIGTERM), when its socket file is removed
or replaced, and as soon as a request finds its code changed on disk (`code_stamp`: the mtime and
size of every loaded ``agent_history`` module and of the installed distribution's metadata) —
that request is refused (the client runs it in process and starts a new server), so an upgrade is
never served by old code. It then removes its socket and pid file, releases the start lock (a new
server may start) and exits once the commands still running have ended, forwarding their
clients' signals until then (`_Server.drain`: an `index` pass of minutes is never cut short or
orphaned).
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import io
import json
import logging
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_history import __version__
from agent_history.cli import resident
from agent_history.cli.process_identity import is_same_process, start_ticks
from agent_history.embed.service import SOCKET_PATH_MAX, ServicePaths, alive, read_pid_file, remove_stale

DEFAULT_IDLE_S = 900.0
"""``[service] query_idle_s`` when unset: seconds without a command before the process exits."""
CHECK_EVERY_S = 0.5
"""How often the serving loop wakes to check the idle timeout and its socket."""
LOCK_WAIT_S = 3.0
"""How long a new server waits for the start lock: an outdated server that refused a request is
exiting and releases it within this (a running one keeps it, and the new one then exits)."""
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""A request (argv + environment as JSON) larger than this is refused."""
PRELOAD: tuple[str, ...] = (
    "psycopg",
    "typer",
    "click",
    "rich.console",
    "rich.table",
    "rich.text",
    "orjson",
    "tzlocal",
    "zoneinfo",
    "agent_history.cli.statusline",
    "agent_history.usage.statusline",
    "agent_history.read.statusline",
    "agent_history.db.connection",
    "agent_history.db.embedded",
    "agent_history.db.idle_stop",
    "agent_history.db.migrate",
    "agent_history.db.health",
    "agent_history.classify.health",
    "agent_history.db.status",
    "agent_history.embed.status",
    "agent_history.ingest.status",
    "agent_history.ingest.archive.retention",
    "agent_history.ingest.archive.status",
    "agent_history.ingest.collect",
    "agent_history.ingest.rebuild",
    "agent_history.ingest.sources",
    "agent_history.journal.status",
    "psycopg_pool",
    "agent_history.ingest.bulk",
    "agent_history.ingest.chunks",
    "agent_history.parsers.driver",
    "agent_history.harnesses.detect",
    "agent_history.parsers.claude_code.parser",
    "agent_history.parsers.codex.parser",
    "agent_history.parsers.pi.parser",
)
"""Modules imported before serving, besides the command modules of `resident.ELIGIBLE` and every
module of `PRELOAD_PACKAGES` (what the eligible commands import on their way: the first-use
check's `db.migrate` and `db.health`, and the status sources `status` imports inside its
function — left to the child, they were ≈ 90 ms of its 109 ms of CPU, measured 2026-12-02; an
`index` pass's connection pool and bulk-path check, and for a file that changed the chunk reader
and the common harnesses' parsers, as `ingest.parse_pool` preloads them)."""
PRELOAD_PACKAGES: tuple[str, ...] = ("agent_history.read", "agent_history.search", "agent_history.usage")
log = logging.getLogger("agent_history.cli.resident_server")


def paths_of(data_dir: Path) -> ServicePaths:
    """The resident process's files under `data_dir`."""
    return ServicePaths.of(data_dir, resident.SERVICE_DIR)


FORWARDED_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
"""Signals a client forwards to its command's child as they are (`resident._await`)."""
SUSPEND_SIGNALS = {signal.SIGTSTP: signal.SIGSTOP, signal.SIGCONT: signal.SIGCONT}
"""Ctrl-Z and the shell's continue, forwarded by a client: what the child is sent. SIGSTOP for
SIGTSTP: the child is in the server's process group, orphaned (the server leads its own session,
its parent is init), where the kernel discards a SIGTSTP's stop."""
STOPPING_FILE = "service.stopping"
"""In the service directory while a stopped server finishes the commands still running in it
(`_Server.drain`): JSON ``{"pid", "started" (`process_identity.start_ticks`), "commands",
"reason"}``; removed when the last one ends. Its pid and socket files are gone by then (a new
server may start), so `service_status` reads this to say "stopping: finishing a pass (pid N)"."""


# --- preload and code stamp ----------------------------------------------------------------------


def preload() -> int:
    """Import the CLI with every eligible command registered, and `PRELOAD`; returns the number
    of modules loaded. A module that fails to import is logged and skipped (the child imports it
    again and fails as the in-process path would)."""
    import importlib
    import pkgutil

    from agent_history.cli import app as cli_app

    for command in resident.ELIGIBLE:
        cli_app._register(command)
    cli_app.prepare_command()
    names = list(PRELOAD)
    for package in PRELOAD_PACKAGES:
        try:
            module = importlib.import_module(package)
        except Exception as exc:  # noqa: BLE001 - logged; the child reports it properly
            log.warning("preload %s: %s", package, exc)
            continue
        names += [m.name for m in pkgutil.iter_modules(module.__path__, f"{package}.")]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001
            log.warning("preload %s: %s", name, exc)
    try:  # the revision chain and the health data key, computed once for every child (the migration files are in `code_files`)
        from agent_history.db.health import data_key
        from agent_history.db.migrate import revision_graph

        revision_graph()
        data_key()
    except Exception as exc:  # noqa: BLE001 - the child reads it again and reports it
        log.warning("preload revision_graph: %s", exc)
    return len(sys.modules)


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(sys.modules["agent_history"].__file__ or ""))


def code_files() -> list[str]:
    """The files whose change means new code: every loaded ``agent_history`` module's source,
    the migration files and ``sql/*.sql`` with their directories (the revision chain is read once
    by `preload`; a file added or removed changes its directory), and the installed
    distribution's METADATA (its version; rewritten by any reinstall)."""
    package = _package_dir() + os.sep
    loaded = (getattr(m, "__file__", None) for m in list(sys.modules.values()))  # this module is __main__
    files = sorted({os.path.abspath(f) for f in loaded if f and os.path.abspath(f).startswith(package)})
    try:
        from agent_history.db.resources import migrations_dir, sql_dir

        for directory, pattern in ((migrations_dir() / "versions", "*.py"), (sql_dir(), "*.sql")):
            files += [str(directory), *sorted(str(p) for p in directory.glob(pattern))]
    except FileNotFoundError:
        pass  # an installation without them fails its first command in the child, as in process
    for entry in sys.path:
        files += sorted(glob.glob(os.path.join(entry or ".", "agent_history-*.dist-info", "METADATA")))
    return files


def code_stamp(files: list[str]) -> tuple[tuple[int, int], ...]:
    """(mtime_ns, size) of each of `files` ((0, 0) for one that is gone)."""
    out = []
    for path in files:
        try:
            st = os.stat(path)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((0, 0))
    return tuple(out)


# --- the child ----------------------------------------------------------------------------------


def _adopt(request: dict[str, Any]) -> None:
    """Make this forked child look like the client's own interpreter: the fds are already on
    0/1/2; here the environment, cwd, umask, time zone, locale, stdio objects, ``__main__`` and
    the consoles and flags that were fixed at import from the server's environment."""
    import locale
    import types

    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    time.tzset()
    try:
        locale.setlocale(locale.LC_CTYPE, "")
    except locale.Error:
        pass
    streams = []
    for fd, (encoding, errors, line_buffering) in enumerate(request["stdio"]):
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        streams.append(io.TextIOWrapper(buffered, encoding, errors, line_buffering=bool(line_buffering)))
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    sys.argv = list(request["argv"])
    main = types.ModuleType("__main__")
    main.__package__ = request.get("main_package")
    sys.modules["__main__"] = main
    for name in ("typer.rich_utils",):  # module constants read from the environment at import
        sys.modules.pop(name, None)
    import typer.core

    typer.core.HAS_RICH = typer.core.parse_boolean_env_var(os.getenv("TYPER_USE_RICH"), default=True)
    import rich

    rich._console = None
    try:
        import tzlocal.unix

        tzlocal.unix._cache_tz = None
        tzlocal.unix._cache_tz_name = None
    except (ImportError, AttributeError):
        pass
    from agent_history.cli import app as cli_app
    from agent_history.cli import output

    output.reset_consoles()
    cli_app.reset_for_process()


def _exit_code(exc: SystemExit) -> int:
    """What the interpreter does with an uncaught SystemExit: None → 0, an int → it, anything
    else printed to stderr → 1."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except (OSError, ValueError):
        pass
    return 1


def _child(conn: socket.socket, request: dict[str, Any]) -> None:
    """Run the command in this forked child and `os._exit` with its code (never returns): what
    the interpreter does with the command's SystemExit, KeyboardInterrupt (traceback, then death
    by SIGINT) or any other exception (traceback, exit 1) — during the set-up as in the command."""
    import atexit
    import traceback

    code = 1
    try:
        try:
            _adopt(request)
            from agent_history.cli.app import run

            run(sys.argv[1:])
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except KeyboardInterrupt:
            traceback.print_exc()
            _flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:  # noqa: BLE001 - printed as the interpreter would, exit 1
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
        if not _flush() and code == 0:
            code = 120  # what the interpreter exits with when stdout cannot be flushed
    finally:
        try:
            conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
        except BaseException:  # noqa: BLE001, S110 - the client is gone; exit all the same
            pass
        os._exit(code)


def _flush() -> bool:
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok


# --- the server ---------------------------------------------------------------------------------


class _Server:
    def __init__(self, paths: ServicePaths, listener: socket.socket, lock_fd: int, idle_s: float):
        self.paths, self.listener, self.lock_fd, self.idle_s = paths, listener, lock_fd, idle_s
        self.files = code_files()
        self.stamp = code_stamp(self.files)
        self.package = _package_dir()
        self.inode = os.stat(paths.socket).st_ino
        self.children: dict[int, socket.socket] = {}  # child pid → its client's connection
        self.commands: dict[int, str] = {}  # child pid → its command (`index`, `search`, …)
        self._stopping_written: dict[str, Any] | None = None
        self.by_conn: dict[socket.socket, int] = {}
        self.last_request = time.monotonic()
        self.requests = 0
        self.stopping = ""
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")

    def parent_fds(self) -> list[int]:
        return [self.listener.fileno(), self.lock_fd, self.wake_r, self.wake_w, self.selector.fileno()] + [
            c.fileno() for c in self.by_conn
        ]

    def loop(self) -> None:
        while not self.stopping:
            for key, _ in self.selector.select(CHECK_EVERY_S):
                if key.data == "accept":
                    self.accept()
                elif key.data == "wake":
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                else:
                    self.from_client(key.fileobj)
            self.reap()
            if self.stopping:
                break
            if not self.children and time.monotonic() - self.last_request > self.idle_s:
                self.stopping = f"idle for {self.idle_s:g} s"
            elif not self._socket_is_ours():
                self.stopping = "socket removed or replaced"

    def _socket_is_ours(self) -> bool:
        try:
            return os.stat(self.paths.socket).st_ino == self.inode
        except OSError:
            return False

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            if resident.peer_uid(conn) != os.getuid():
                conn.close()
                return
            conn.settimeout(5.0)
            request, fds = _receive(conn)
        except (OSError, ValueError) as exc:
            log.warning("bad request: %s", exc)
            conn.close()
            return
        try:
            self.handle(conn, request, fds)
        finally:
            for fd in fds:
                os.close(fd)

    def handle(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
        def refuse(reason: str, restart: bool = False) -> None:
            try:
                conn.sendall(json.dumps({"refused": reason, "restart": restart}).encode() + b"\n")
            except OSError:
                pass
            conn.close()

        if request.get("op") == "status":
            try:
                conn.sendall(json.dumps(self.status()).encode() + b"\n")
            except OSError:
                pass
            conn.close()
            return None
        self.last_request = time.monotonic()  # a status question is not use: it never keeps the server up
        if len(fds) != 3 or not isinstance(request.get("argv"), list) or not resident.eligible(request["argv"][1:]):
            return refuse("not a command for the resident process")
        if request.get("package") != self.package:
            return refuse(f"another installation ({request.get('package')}, this one {self.package})")
        if request.get("utf8_mode") != sys.flags.utf8_mode:
            # Python turns UTF-8 mode on at start-up in the C/POSIX locale (LC_ALL=C: cron, ssh,
            # containers), so open() reads UTF-8 there; a child of a server started elsewhere
            # cannot, and read our own SQL files as ASCII (a traceback from every command)
            return refuse(f"another text mode (UTF-8 mode {request.get('utf8_mode')}, this one {sys.flags.utf8_mode})")
        if code_stamp(self.files) != self.stamp or request.get("version") != __version__:
            self.stopping = "the installed code changed"
            return refuse("the installed code changed", restart=True)
        self.requests += 1
        # The client may forward a signal as soon as it hears the child's pid: until the child
        # has its own handlers, a signal would run the server's (which only sets `stopping`) and
        # the command would go on. Blocked across the fork, it waits for the child's handlers.
        signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED_SIGNALS)
        try:
            pid = os.fork()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED_SIGNALS)
            raise
        if pid != 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED_SIGNALS)
        if pid == 0:  # the child: take the client's fds, drop the server's
            try:
                signal.set_wakeup_fd(-1)
                for signum in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
                    signal.signal(signum, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED_SIGNALS)
                for fd in self.parent_fds():
                    if fd != conn.fileno():
                        os.close(fd)
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                for fd in fds:
                    if fd > 2:
                        os.close(fd)
                logging.getLogger().handlers.clear()
                log.handlers.clear()
                conn.settimeout(None)
            except BaseException:  # noqa: BLE001
                os._exit(1)
            _child(conn, request)
        try:
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        except OSError:
            pass
        conn.setblocking(False)
        self.children[pid] = conn
        self.commands[pid] = str(request["argv"][1])
        self.by_conn[conn] = pid
        self.selector.register(conn, selectors.EVENT_READ, "client")

    def from_client(self, conn: socket.socket) -> None:
        """A signal to forward, or EOF: the client is gone, so its child is stopped."""
        pid = self.by_conn.get(conn)
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if pid is None:
            return
        if not data:
            self.selector.unregister(conn)
            del self.by_conn[conn]
            self._kill(pid, signal.SIGTERM)
            self._kill(pid, signal.SIGCONT)  # a child suspended (Ctrl-Z) would hold SIGTERM pending
            return
        for line in data.splitlines():
            try:
                signum = int(json.loads(line)["signal"])
            except (ValueError, KeyError, TypeError):
                continue
            if signum in FORWARDED_SIGNALS:
                self._kill(pid, signum)
            elif signum in SUSPEND_SIGNALS:
                self._kill(pid, SUSPEND_SIGNALS[signum])

    def _kill(self, pid: int, signum: int) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            self.commands.pop(pid, None)
            if conn is None:
                continue
            self.last_request = time.monotonic()
            if os.WIFSIGNALED(status):
                try:
                    conn.setblocking(True)
                    conn.sendall(json.dumps({"signal": os.WTERMSIG(status)}).encode() + b"\n")
                except OSError:
                    pass
            if conn in self.by_conn:
                self.selector.unregister(conn)
                del self.by_conn[conn]
            conn.close()

    def drain(self) -> None:
        """Once the server no longer listens: keep forwarding the clients' signals to the commands
        still running and reporting how they ended, until the last one has (a pass of minutes —
        `index` on a large home — is neither killed nor orphaned by ``service stop``, an upgrade
        or a removed socket; the idle timeout never stops a server with a running command)."""
        while self.children:
            self.write_stopping()
            for key, _ in self.selector.select(CHECK_EVERY_S):
                if key.data == "wake":
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                elif key.data == "client":
                    self.from_client(key.fileobj)
            self.reap()

    def write_stopping(self) -> None:
        """Write (or refresh) `STOPPING_FILE` with the commands still running; never raises."""
        pid, commands = os.getpid(), sorted(self.commands.values())
        info = {"pid": pid, "started": start_ticks(pid), "commands": commands, "reason": self.stopping}
        path = self.paths.dir / STOPPING_FILE
        if self._stopping_written == info:
            return
        try:
            tmp = path.with_suffix(".stopping-tmp")
            tmp.write_text(json.dumps(info))
            os.replace(tmp, path)
            self._stopping_written = info
        except OSError as exc:
            log.warning("cannot write %s: %s", path, exc)

    def remove_stopping(self) -> None:
        """Remove `STOPPING_FILE` when it is this process's (another stopped server may have
        written its own since)."""
        path = self.paths.dir / STOPPING_FILE
        if (_read_json(path) or {}).get("pid") == os.getpid():
            try:
                path.unlink()
            except OSError:
                pass

    def status(self) -> dict[str, Any]:
        """What ``service status`` shows beyond the pid file: commands served, running, idle s."""
        idle = 0.0 if self.children else round(time.monotonic() - self.last_request, 3)
        return {"pid": os.getpid(), "requests": self.requests, "running_commands": len(self.children), "idle_s": idle}


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The request object and the fds sent with it. Raises ValueError for a malformed request."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    try:
        if len(data) < 4:
            raise ValueError("short request")
        (size,) = struct.unpack(">I", data[:4])
        if size > MAX_REQUEST_BYTES:
            raise ValueError(f"request of {size} bytes")
        body = data[4:]
        while len(body) < size:
            chunk = conn.recv(min(1 << 20, size - len(body)))
            if not chunk:
                raise ValueError("truncated request")
            body += chunk
        request = json.loads(body)
        if not isinstance(request, dict):
            raise ValueError("request is not an object")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def serve(data_dir: Path, idle_s: float) -> int:
    """Take the start lock (exit 0 at once when another server holds it), preload, listen on the
    socket and serve until idle, stopped or outdated; returns the exit code. Run detached by
    `resident.spawn_server` or ``service start``; logs to ``service.log``."""
    paths = paths_of(data_dir)
    if len(os.fsencode(paths.socket)) > SOCKET_PATH_MAX:  # checked before the costly preload
        print(f"socket path {paths.socket} is longer than {SOCKET_PATH_MAX} bytes", file=sys.stderr)
        return 1
    os.umask(0o077)
    paths.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = paths.dir.stat()
    if st.st_uid != os.getuid():
        print(f"{paths.dir} belongs to another user", file=sys.stderr)
        return 1
    if st.st_mode & 0o077:
        os.chmod(paths.dir, 0o700)
    lock_fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                return 0  # another server runs or starts: it serves
            time.sleep(0.05)
    handler = logging.FileHandler(paths.log)
    handler.setFormatter(logging.Formatter("%(asctime)s query-service[%(process)d] %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    remove_stale(paths)
    t0 = time.monotonic()
    modules = preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(paths.socket))
        os.chmod(paths.socket, 0o600)
        listener.listen(64)
    except OSError as exc:
        log.error("cannot listen on %s: %s", paths.socket, exc.strerror)
        return 1
    server = _Server(paths, listener, lock_fd, idle_s)
    log.info("preloaded %d modules in %.2f s; idle timeout %g s", modules, time.monotonic() - t0, idle_s)

    def on_signal(signum: int, _frame: object) -> None:
        server.stopping = f"signal {signal.Signals(signum).name}"

    signal.set_wakeup_fd(server.wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    info = {"pid": os.getpid(), "idle_timeout_s": idle_s, "started": time.time(), "socket": str(paths.socket),
            "package": server.package, "version": __version__}  # fmt: skip
    tmp = paths.pid.with_suffix(".tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, paths.pid)
    try:
        server.loop()
    finally:
        if server.children:  # said before the pid file goes: `service status` never shows "not running" meanwhile
            server.write_stopping()
        server.selector.unregister(listener)
        listener.close()
        if server._socket_is_ours() or not paths.socket.exists():
            remove_stale(paths)
        log.info("stopped (%s) after %d commands", server.stopping or "error", server.requests)
        os.close(lock_fd)  # a new server may start now; this one only sees its running commands out
    if server.children:
        log.info("waiting for %d running commands", len(server.children))
        try:
            server.drain()
        finally:
            server.remove_stopping()
        log.info("the last running command ended")
    return 0


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stopping_status(data_dir: Path) -> dict[str, Any] | None:
    """``{"pid", "commands", "reason"}`` of a stopped server still finishing its running commands
    (`STOPPING_FILE`, its writer still running: `is_same_process`), else None."""
    info = _read_json(paths_of(data_dir).dir / STOPPING_FILE) or {}
    if not isinstance(info.get("pid"), int) or not is_same_process(info["pid"], info.get("started")):
        return None
    return {"pid": info["pid"], "commands": list(info.get("commands") or []), "reason": info.get("reason") or ""}


def stopping_line(stopping: dict[str, Any]) -> str:
    """``stopping: finishing a pass (pid N)`` (an `index` runs), else ``stopping: finishing 2
    commands (search, usage) (pid N)``."""
    commands = stopping["commands"]
    if "index" in commands or not commands:
        what = "a pass" if commands.count("index") <= 1 else f"{commands.count('index')} passes"
    else:
        what = f"{len(commands)} command{'s' if len(commands) != 1 else ''} ({', '.join(commands)})"
    return f"stopping: finishing {what} (pid {stopping['pid']})"


def service_status(data_dir: Path) -> dict[str, Any]:
    """``{"running": bool, "socket", "log"}`` plus the pid file's fields (pid, idle_timeout_s,
    started, package, version) when a live process wrote it, or ``"stale": true`` when files
    remain of a process that is gone."""
    paths = paths_of(data_dir)
    out: dict[str, Any] = {"running": False, "socket": str(paths.socket), "log": str(paths.log)}
    info = read_pid_file(paths)
    if info is not None and alive(info["pid"]) and paths.socket.exists():
        out.update(info, running=True)
        out["uptime_s"] = round(time.time() - float(info.get("started", time.time())), 3)
        out.update(resident.ask_status(str(paths.socket)) or {})
    elif info is not None or paths.socket.exists():
        out["stale"] = True
    stopping = stopping_status(data_dir)
    if stopping is not None and stopping["pid"] != out.get("pid"):
        out["stopping"] = stopping  # a stopped server still finishing commands (maybe beside a new one)
    return out


def stop_service(
    data_dir: Path,
    wait_s: float = 30.0,
    *,
    until_done: bool = False,
    on_wait: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Stop the resident process (SIGTERM: it stops listening at once and lets the commands
    running in it finish) and wait until it is gone; stale files are removed.

    Returns ``{"stopped": bool}`` (False: none was listening) plus ``"stopping": {"pid",
    "commands", "reason"}`` (`stopping_status`) when a stopped process is still finishing
    commands — a pass of minutes: it is not waited for beyond `wait_s` unless `until_done`,
    which waits until it has exited (calling `on_wait` with that ``stopping`` first) and then
    says ``"waited": {…}`` instead."""
    paths = paths_of(data_dir)
    info = read_pid_file(paths)
    stopped = info is not None and alive(info["pid"])
    if stopped:
        os.kill(info["pid"], signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        # gone, or draining: its stopping file says so (and a drain may last the pass)
        while alive(info["pid"]) and time.monotonic() < deadline and stopping_status(data_dir) is None:
            time.sleep(0.05)
    elif paths.dir.exists():
        _remove_if_unlocked(paths)
    stopping = stopping_status(data_dir)
    if not until_done or stopping is None:
        return {"stopped": stopped} | ({"stopping": stopping} if stopping else {})
    if on_wait is not None:
        on_wait(stopping)
    while stopping_status(data_dir) is not None:
        time.sleep(0.2)
    return {"stopped": stopped, "waited": stopping}


def _remove_if_unlocked(paths: ServicePaths) -> None:
    try:
        fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        remove_stale(paths)
    except BlockingIOError:
        pass  # a server is starting: its files are not stale
    finally:
        os.close(fd)


class ServiceCannotStart(RuntimeError):
    """The resident process cannot start in this data dir (a configuration problem; one line)."""


def start_service(data_dir: Path, idle_s: float, wait_s: float = 60.0) -> dict[str, Any]:
    """Start the resident process (if none runs) and wait until it answers; returns
    `service_status`. Raises RuntimeError (one line) when it does not come up within `wait_s`,
    and ServiceCannotStart at once when it cannot: its directory cannot be created (a data dir
    that is a file, a symlink loop, read-only) or its socket's path is past
    `resident.SOCKET_PATH_MAX` bytes (`resident.spawn_server` starts nothing then, and says
    nothing)."""
    status = service_status(data_dir)
    if status["running"]:
        return status
    where = os.path.realpath(Path(data_dir).expanduser())
    size = len(os.fsencode(resident.socket_path(where)))
    if size > resident.SOCKET_PATH_MAX:
        raise ServiceCannotStart(
            f"the resident query process cannot listen in {where}: its socket path would be {size} bytes, "
            f"past the limit of {resident.SOCKET_PATH_MAX} (commands run in process; a shorter "
            "AGENT_HISTORY_DATA_DIR lets it start)"
        )
    try:
        os.makedirs(paths_of(data_dir).dir, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ServiceCannotStart(
            f"the resident query process cannot start: {paths_of(data_dir).dir}: {exc.strerror}"
        ) from None
    resident.spawn_server(where, idle_s)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        status = service_status(data_dir)
        if status["running"]:
            return status
        time.sleep(0.05)
    raise RuntimeError(f"the resident query process did not start within {wait_s:.0f} s; see {status['log']}")


def main(argv: list[str] | None = None) -> int:
    """``python -m agent_history.cli.resident_server serve --data-dir DIR --idle-timeout S``."""
    parser = argparse.ArgumentParser(prog="agent_history.cli.resident_server")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--data-dir", required=True, type=Path)
    s.add_argument("--idle-timeout", required=True, type=float)
    args = parser.parse_args(argv)
    return serve(args.data_dir, args.idle_timeout)


if __name__ == "__main__":
    sys.exit(main())
