"""The thin client of the resident query process (issue 27 item 5; the server is
`agent_history.cli.resident_server`).

Every command that reaches the database pays for importing psycopg, typer and rich (≈ 0.2 s of CPU
on the development machine); the resident process pays it once. `agent_history.cli.app.main`
calls `serve` first: for a command in `ELIGIBLE` it connects to
``<data dir>/query-service/service.sock`` and hands over the whole invocation — argv, the working
directory, the environment, the umask, how Python opened stdin/stdout/stderr (encoding, errors,
line buffering) and the three file descriptors themselves (``SCM_RIGHTS`` through
`socket.send_fds`). The server forks a child that takes them over and runs the normal CLI entry,
so terminal detection, colours, ``COLUMNS`` and exit codes are those of the in-process path.

This module imports only the standard library's `os`, `sys`, `json`, `socket`, `struct`, `stat`
and `signal`, nothing of typer or psycopg (measured 2026-12-02 at a load average of 10 on 2
cores: 16 ms at best by ``python -X importtime``, `json`'s `re` and `socket`'s `selectors` most
of it; a whole client process 43–58 ms of CPU against 33–37 ms for ``--version``).

Wire protocol (one connection per command, both sides checking the peer's uid with
``SO_PEERCRED``): the request is a 4-byte big-endian length and a JSON object
``{"argv", "cwd", "env", "umask", "stdio": [[encoding, errors, line_buffering] ×3], "package",
"version", "main_package"}`` sent with the fds 0, 1, 2; the server answers with lines of JSON:
``{"pid": N}`` once the child runs, or ``{"refused": reason}`` (nothing ran); then ``{"exit": code}``
or ``{"signal": n}`` (the child died of signal n). The client forwards SIGINT, SIGTERM and SIGHUP
as ``{"signal": n}`` lines while it waits.

Whenever the resident process is absent, stale, of another owner or mode, of another
installation, or refuses, `serve` returns None and the command runs in process (never an error);
`start_wanted` then says whether the caller should start one (`spawn_server`) after its command.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import struct
import sys

from agent_history import __version__

SERVICE_DIR = "query-service"
"""The resident process's directory under the data dir (``ServicePaths.of(data_dir, SERVICE_DIR)``)."""
IDLE_ENV = "AGENT_HISTORY_QUERY_IDLE_S"
"""Environment override of ``[service] query_idle_s`` (seconds; 0 = no resident process)."""

ELIGIBLE: dict[str, dict[str, object]] = {
    "search": {},
    "session": {},
    "why": {},
    "touched": {},
    "status": {},
    "usage": {},
    "statusline": {},
    "sessions": {"unless_any": ("exclude", "restore", "delete", "exclusions")},
    "index": {"requires": "--file", "unless_any": ("--every", "--archive")},
}
"""Commands the resident process runs (the read-only ones, `statusline`, and `index --file` from
the after-turn hooks): command → conditions on the rest of argv (``requires``: an argument that
must be present; ``unless_any``: arguments that send it in process — the writing subcommands of
`sessions`). ``--help`` anywhere always runs in process."""

SOCKET_PATH_MAX = 107
"""AF_UNIX path limit on Linux (as `agent_history.embed.service.SOCKET_PATH_MAX`)."""
_HEADER = struct.Struct(">I")
_state = {"start_wanted": False}


def eligible(argv: list[str]) -> bool:
    """Whether `argv` (arguments after the program name) is a command for the resident process:
    its first word is a key of `ELIGIBLE` (no root option before it) and the rest meets the
    conditions there."""
    if not argv or argv[0] not in ELIGIBLE or "--help" in argv:
        return False
    rest = argv[1:]
    rule = ELIGIBLE[argv[0]]
    required = rule.get("requires")
    if required is not None and not any(a == required or a.startswith(f"{required}=") for a in rest):
        return False
    return not any(a in rule.get("unless_any", ()) for a in rest)


def data_dir() -> str:
    """`agent_history.config.data_dir` without importing the config module (same rule:
    ``$AGENT_HISTORY_DATA_DIR``, else ``$XDG_DATA_HOME/agent-history``, else
    ``~/.local/share/agent-history``), resolved to an absolute path."""
    explicit = os.environ.get("AGENT_HISTORY_DATA_DIR")
    if explicit:
        path = os.path.expanduser(explicit)
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
        path = os.path.join(base, "agent-history")
    return os.path.realpath(path)


def socket_path(directory: str) -> str:
    """The socket in data dir `directory`."""
    return os.path.join(directory, SERVICE_DIR, "service.sock")


def start_wanted() -> bool:
    """True after `serve` found no resident process answering (absent, stale or outdated) and
    the environment does not turn it off: the caller may start one after its command."""
    return _state["start_wanted"]


def forgo_start() -> None:
    """Start no resident process after this command although `serve` found none (`statusline`
    on a data dir never used: there is nothing to serve)."""
    _state["start_wanted"] = False


def _private(path: str, kind: int) -> bool:
    """`path` is of `kind` (S_IFDIR/S_IFSOCK), owned by this user, with no group/other bits."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.getuid() and not st.st_mode & 0o077


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of unix socket `sock` (``SO_PEERCRED``)."""
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return uid


def _stdio() -> list[list[object]] | None:
    out = []
    for stream, fd in ((sys.stdin, 0), (sys.stdout, 1), (sys.stderr, 2)):
        if stream is None or getattr(stream, "fileno", None) is None:
            return None
        try:
            if stream.fileno() != fd:
                return None
            os.fstat(fd)
        except (OSError, ValueError):
            return None
        out.append([stream.encoding, stream.errors, bool(stream.line_buffering)])
    return out


def _request(argv: list[str], stdio: list[list[object]]) -> bytes:
    umask = os.umask(0o077)
    os.umask(umask)
    main = sys.modules.get("__main__")
    body = json.dumps({
        "argv": [sys.argv[0], *argv],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": umask,
        "stdio": stdio,
        "package": os.path.dirname(os.path.abspath(sys.modules["agent_history"].__file__ or "")),
        "version": __version__,
        "main_package": getattr(main, "__package__", None),
    }).encode()  # fmt: skip
    return _HEADER.pack(len(body)) + body


def serve(argv: list[str]) -> int | None:
    """Run `argv` in the resident process and return its exit code (for ``sys.exit``; a child
    killed by a signal is re-raised on this process), or None when it did not run there (the
    caller runs it in process). Never raises for an absent, stale or refusing process; a process
    that vanishes after the command started gives exit 1 with a one-line error (the command may
    have printed part of its output, so it is not run twice)."""
    if not eligible(argv):
        return None
    try:
        if float(os.environ.get(IDLE_ENV) or "1") == 0:
            return None
    except ValueError:
        pass  # a malformed value is the config's error to report, wherever the command runs
    directory = data_dir()
    path = socket_path(directory)
    if not os.path.lexists(path):
        _state["start_wanted"] = True
        return None
    if not (_private(os.path.dirname(path), stat.S_IFDIR) and _private(path, stat.S_IFSOCK)):
        return None  # another owner's or a readable socket: never trusted, never removed
    stdio = _stdio()
    if stdio is None:
        return None
    try:
        cwd_ok = os.getcwd()
    except OSError:
        cwd_ok = None
    if cwd_ok is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
        except OSError:
            _state["start_wanted"] = True  # nothing listens: stale (the new process removes it)
            return None
        if peer_uid(sock) != os.getuid():
            return None
        try:
            socket.send_fds(sock, [_request(argv, stdio)], [0, 1, 2])
        except OSError:
            return None
        return _await(sock)
    finally:
        sock.close()


def ask_status(path: str, timeout_s: float = 5.0) -> dict | None:
    """The server's ``{"pid", "requests", "running_commands", "idle_s"}`` (a request without fds,
    ``{"op": "status"}``), or None when nothing answers. Not use: the idle clock runs on."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(path)
        body = json.dumps({"op": "status"}).encode()
        sock.sendall(_HEADER.pack(len(body)) + body)
        return _line(sock.makefile("rb"))
    except OSError:
        return None
    finally:
        sock.close()


def _await(sock: socket.socket) -> int | None:
    """Read the server's lines; forward signals while the child runs."""
    reader = sock.makefile("rb")
    first = _line(reader)
    if first is None or "refused" in first:
        _state["start_wanted"] = first is None or first.get("restart") is True
        return None
    forwarded = {}

    def forward(signum: int, _frame: object) -> None:
        try:
            sock.sendall(json.dumps({"signal": signum}).encode() + b"\n")
        except OSError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        forwarded[signum] = signal.signal(signum, forward)
    message: dict | None = first  # {"pid"} — or already the child's {"exit"}, which may come first
    try:
        while True:
            if message is not None and "exit" in message:
                return int(message["exit"])
            if message is not None and "signal" in message:
                return _die_of(int(message["signal"]))
            message = _line(reader)
            if message is None:
                sys.stderr.write("error: the resident query process stopped while running the command\n")
                return 1
    finally:
        for signum, handler in forwarded.items():
            signal.signal(signum, handler)


def _line(reader) -> dict | None:
    while True:
        try:
            raw = reader.readline()
        except InterruptedError:
            continue
        except OSError:
            return None
        if not raw:
            return None
        try:
            message = json.loads(raw)
        except ValueError:
            return None
        return message if isinstance(message, dict) else None


def _die_of(signum: int) -> int:
    """End this process by `signum` as the child ended (SIGINT → the shell sees an interrupted
    command); 128 + n when the signal does not end it."""
    sys.stdout.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum


def spawn_server(data_dir_path: str, idle_s: float) -> None:
    """Start ``python -m agent_history.cli.resident_server serve`` detached (own session, no
    stdin, output into its log); it exits at once when another one holds the start lock.
    Returns without waiting. Never raises (a resident process is an optimisation)."""
    import subprocess

    directory = os.path.join(data_dir_path, SERVICE_DIR)
    if len(os.fsencode(socket_path(data_dir_path))) > SOCKET_PATH_MAX:
        return  # no unix socket can be bound there: nothing to start, every command in process
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        log = os.open(os.path.join(directory, "service.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "agent_history.cli.resident_server", "serve",
             "--data-dir", data_dir_path, "--idle-timeout", repr(float(idle_s))],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )  # fmt: skip
    except OSError:
        pass
    finally:
        os.close(log)
