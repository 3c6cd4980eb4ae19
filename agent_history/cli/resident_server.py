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
rich, psycopg and the read/search/usage/ingest packages once (`resident_preload`), then holds no
connection and no thread, so a `fork` per command is safe and cheap. The forked child takes the
client's fds as 0/1/2, its cwd, environment, umask and stdio encodings, re-creates the objects
that were sized to the server's terminal and environment at import, and runs
`agent_history.cli.app.run` (`resident_child`) — the in-process path, reading the config and resolving the
database as usual, the reader-role guard included. The child reports its exit code itself; the
server reports a death by signal, forwards the client's signals to the child (Ctrl-Z's SIGTSTP as
SIGSTOP, then SIGCONT: `SUSPEND_SIGNALS`), and sends SIGTERM to a child whose client went away.

It stops listening after ``[service] query_idle_s`` seconds (`DEFAULT_IDLE_S`) with no command
running or started, on ``agent-history service stop`` (SIGTERM), when its socket file is removed
or replaced, and as soon as a request finds its code changed on disk (`resident_preload.code_stamp`: the mtime and
size of every loaded ``agent_history`` module and of the installed distribution's metadata) —
that request is refused (the client runs it in process and starts a new server), so an upgrade is
never served by old code. It then removes its socket and pid file, releases the start lock (a new
server may start) and exits once the commands still running have ended, forwarding their
clients' signals until then (`_Server.drain`: an `index` pass of minutes is never cut short or
orphaned). Starting, stopping and asking after it from outside: `resident_control`.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
import selectors
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from agent_history import __version__
from agent_history.cli import resident
from agent_history.cli.process_identity import start_ticks
from agent_history.cli.resident_child import run_child
from agent_history.cli.resident_control import STOPPING_FILE, paths_of, read_json
from agent_history.cli.resident_preload import code_files, code_stamp, package_dir, preload
from agent_history.embed.service import SOCKET_PATH_MAX, ServicePaths, remove_stale

DEFAULT_IDLE_S = 900.0
"""``[service] query_idle_s`` when unset: seconds without a command before the process exits."""
CHECK_EVERY_S = 0.5
"""How often the serving loop wakes to check the idle timeout and its socket."""
LOCK_WAIT_S = 3.0
"""How long a new server waits for the start lock: an outdated server that refused a request is
exiting and releases it within this (a running one keeps it, and the new one then exits)."""
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""A request (argv + environment as JSON) larger than this is refused."""
log = logging.getLogger("agent_history.cli.resident_server")

FORWARDED_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
"""Signals a client forwards to its command's child as they are (`resident._await`)."""
SUSPEND_SIGNALS = {signal.SIGTSTP: signal.SIGSTOP, signal.SIGCONT: signal.SIGCONT}
"""Ctrl-Z and the shell's continue, forwarded by a client: what the child is sent. SIGSTOP for
SIGTSTP: the child is in the server's process group, orphaned (the server leads its own session,
its parent is init), where the kernel discards a SIGTSTP's stop."""


class _Server:
    def __init__(self, paths: ServicePaths, listener: socket.socket, lock_fd: int, idle_s: float):
        self.paths, self.listener, self.lock_fd, self.idle_s = paths, listener, lock_fd, idle_s
        self.files = code_files()
        self.stamp = code_stamp(self.files)
        self.package = package_dir()
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
            run_child(conn, request)
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
        if (read_json(path) or {}).get("pid") == os.getpid():
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
