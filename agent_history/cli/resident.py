"""The thin client of the resident query process (issue 27 item 5; the server is
`agent_history.cli.resident_server`).

Every command that reaches the database pays for importing psycopg, typer and rich (≈ 0.2 s of CPU
on the development machine); the resident process pays it once. `agent_history.cli.app.main`
calls `serve` first: for a command in `ELIGIBLE` it connects to
``<data dir>/query-service/service.sock`` and hands over the whole invocation — argv, the working
directory, the environment, the umask, how Python opened stdin/stdout/stderr (encoding, errors,
line buffering) and the three file descriptors themselves (``SCM_RIGHTS`` with
``sendmsg``). The server forks a child that takes them over and runs the normal CLI entry,
so terminal detection, colours, ``COLUMNS`` and exit codes are those of the in-process path.

This module imports nothing beyond what ``python`` itself has loaded but the C modules `_socket`,
`_signal` and `_json` (for its string encoder): `socket` builds its enums and imports `selectors`,
`json` imports `re`, `signal` imports `enum` — ≈ 10 ms of CPU per client process together
(measured 2026-12-02 at a load average of 5 on 2 cores: ``python -c "import socket, json"`` 22.7
ms against 12.0 for ``pass``). `json` is imported only by `ask_status` (``service status``).

Wire protocol (one connection per command, both sides checking the peer's uid with
``SO_PEERCRED``): the request is a 4-byte big-endian length and a JSON object
``{"argv", "cwd", "env", "umask", "stdio": [[encoding, errors, line_buffering] ×3], "package",
"version", "main_package"}`` sent with the fds 0, 1, 2 (written by `_json`, byte for byte what
``json.dumps`` writes); the server answers with lines of JSON as ``json.dumps`` writes them, which
the client reads by their fixed shape (`_reply`): ``{"pid": N}`` once the child runs, or
``{"refused": reason, "restart": bool}`` (nothing ran); then ``{"exit": code}`` or ``{"signal":
n}`` (the child died of signal n). The client forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT as
``{"signal": n}`` lines while it waits; Ctrl-Z (SIGTSTP) is forwarded too — the server stops the
child — and the client then stops itself as a command in process would; when the shell continues
it (``fg``, ``bg``: SIGCONT) it forwards SIGCONT, and the child goes on.

Whenever the resident process is absent, stale, of another owner or mode, of another
installation, or refuses, `serve` returns None and the command runs in process (never an error);
`start_wanted` then says whether the caller should start one (`spawn_server`) after its command.
"""

from __future__ import annotations

import _signal
import _socket
import os
import stat
import sys
from _json import encode_basestring_ascii as _json_string

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
    "index": {"unless_any": ("--every", "--archive")},
    "sql": {},
    "recall": {},
    "efficiency": {},
    "loops": {},
    "loop": {},
    "pricing": {},
    "issues": {},
    "tasks": {},
    "task": {},
    "blame": {},
    "skills": {},
    "permissions": {},
    "closeouts": {},
    "rebuild-check": {},
}
"""Commands the resident process runs (the read-only ones — `sql` as in process through the
reader role's guarded connection, `mcp.reader.guarded_connection`, a new one per command —,
`statusline`, and `index` — a pass, or
one file with ``--file`` from the after-turn hooks): command → the arguments that send it in
process (``unless_any``, as a word or an ``--option=value``: the writing subcommands of
`sessions`; `index --every`, a loop that runs for good, and `index --archive`, which writes the
archive's files). ``--help`` anywhere always runs in process."""

SOCKET_PATH_MAX = 107
"""AF_UNIX path limit on Linux (as `agent_history.embed.service.SOCKET_PATH_MAX`)."""
_state = {"start_wanted": False}
_FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT)


def eligible(argv: list[str]) -> bool:
    """Whether `argv` (arguments after the program name) is a command for the resident process:
    its first word is a key of `ELIGIBLE` (no root option before it) and no argument of its
    ``unless_any`` is among the rest."""
    if not argv or argv[0] not in ELIGIBLE or "--help" in argv:
        return False
    unless = ELIGIBLE[argv[0]].get("unless_any", ())
    return not any(a in unless or a.partition("=")[0] in unless for a in argv[1:])


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


def peer_uid(sock) -> int:
    """The uid of the process at the other end of unix socket `sock` (``SO_PEERCRED``: a
    ``struct ucred`` of three native ints, pid, uid, gid)."""
    cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return int.from_bytes(cred[4:8], sys.byteorder, signed=True)


def _json(value: object) -> str:
    """JSON text of `value` — a dict with string keys, a list, a string, an int, a bool or None —
    exactly as ``json.dumps(value)`` writes it (ASCII, ``", "`` and ``": "``), without importing
    `json` (its `re`). Raises TypeError for another type."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json_string(k)}: {_json(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a request value: {type(value).__name__}")


def _reply(raw: bytes) -> dict | None:
    """One server line as the client reads it: ``{"pid" | "exit" | "signal": int}`` or
    ``{"refused": True, "restart": bool}``; None for anything else (the lines the server writes
    with ``json.dumps``, module docstring)."""
    text = raw.strip().decode("utf-8", "replace")
    if text.startswith('{"refused": '):
        return {"refused": True, "restart": text.endswith('"restart": true}')}
    for key in ("exit", "signal", "pid"):
        prefix = f'{{"{key}": '
        if text.startswith(prefix) and text.endswith("}"):
            try:
                return {key: int(text[len(prefix) : -1])}
            except ValueError:
                return None
    return None


class _Lines:
    """Lines from a socket (what ``socket.makefile().readline`` gives, on a bare `_socket`)."""

    def __init__(self, sock) -> None:
        self.sock, self.buffer = sock, b""

    def next(self) -> bytes:
        """The next line with its newline; what is left (maybe b"") at end of stream or error."""
        while b"\n" not in self.buffer:
            try:
                chunk = self.sock.recv(4096)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                rest, self.buffer = self.buffer, b""
                return rest
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line + b"\n"


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
    body = _json({
        "argv": [sys.argv[0], *argv],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": umask,
        "stdio": stdio,
        "package": os.path.dirname(os.path.abspath(sys.modules["agent_history"].__file__ or "")),
        "version": __version__,
        "main_package": getattr(main, "__package__", None),
        "utf8_mode": sys.flags.utf8_mode,
    }).encode()  # fmt: skip
    return len(body).to_bytes(4, "big") + body


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
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            sock.connect(path)
        except OSError:
            _state["start_wanted"] = True  # nothing listens: stale (the new process removes it)
            return None
        if peer_uid(sock) != os.getuid():
            return None
        try:
            request = _request(argv, stdio)
            fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))  # an int[3]
            sent = sock.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
            if sent < len(request):
                sock.sendall(request[sent:])
        except OSError:
            return None
        return _await(sock)
    finally:
        sock.close()


def ask_status(path: str, timeout_s: float = 5.0) -> dict | None:
    """The server's ``{"pid", "requests", "running_commands", "idle_s"}`` (a request without fds,
    ``{"op": "status"}``), or None when nothing answers. Not use: the idle clock runs on."""
    import json

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(path)
        body = _json({"op": "status"}).encode()
        sock.sendall(len(body).to_bytes(4, "big") + body)
        raw = _Lines(sock).next()
    except OSError:
        return None
    finally:
        sock.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _await(sock) -> int | None:
    """Read the server's lines; forward signals while the child runs."""
    lines = _Lines(sock)
    first = _reply(lines.next())
    if first is None or "refused" in first:
        _state["start_wanted"] = first is None or first.get("restart") is True
        return None
    forwarded = {}

    def forward(signum: int, _frame: object) -> None:
        try:
            sock.sendall(b'{"signal": %d}\n' % signum)
        except OSError:
            pass

    def suspend(signum: int, _frame: object) -> None:
        # Ctrl-Z: the child stops (the server sends it SIGSTOP), then this process stops as a
        # command in process would; continued (fg/bg), the child is continued too
        forward(signum, _frame)
        _signal.signal(_signal.SIGTSTP, _signal.SIG_DFL)
        try:
            os.kill(os.getpid(), _signal.SIGTSTP)  # stops here until SIGCONT
        finally:
            _signal.signal(_signal.SIGTSTP, suspend)
            forward(_signal.SIGCONT, _frame)

    for signum in _FORWARDED:
        forwarded[signum] = _signal.signal(signum, forward)
    forwarded[_signal.SIGTSTP] = _signal.signal(_signal.SIGTSTP, suspend)
    message: dict | None = first  # {"pid"} — or already the child's {"exit"}, which may come first
    try:
        while True:
            if message is not None and "exit" in message:
                return int(message["exit"])
            if message is not None and "signal" in message:
                return _die_of(int(message["signal"]))
            raw = lines.next()
            if not raw:
                sys.stderr.write("error: the resident query process stopped while running the command\n")
                return 1
            message = _reply(raw)
    finally:
        for signum, handler in forwarded.items():
            _signal.signal(signum, handler)


def _die_of(signum: int) -> int:
    """End this process by `signum` as the child ended (SIGINT → the shell sees an interrupted
    command); 128 + n when the signal does not end it."""
    sys.stdout.flush()
    _signal.signal(signum, _signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum


_BOOT = (
    "import runpy, sys\n"
    "root = sys.argv.pop(1)\n"
    "if root not in sys.path: sys.path.insert(0, root)\n"
    "runpy.run_module('agent_history.cli.resident_server', run_name='__main__', alter_sys=True)\n"
)
"""The server's start: ``python -P`` (the working directory is not put on ``sys.path``: a command
run inside a source checkout must not make the server import that checkout's package instead of
the client's — the server would refuse every request as "another installation"), then the
directory holding the client's own ``agent_history`` goes first when ``sys.path`` lacks it (the
client ran from a checkout that is not installed), and the server module runs as ``__main__``."""


def _package_root() -> str:
    """The directory holding the ``agent_history`` package this client imported."""
    return os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["agent_history"].__file__ or "")))


def spawn_server(data_dir_path: str, idle_s: float) -> None:
    """Start ``agent_history.cli.resident_server serve`` (through `_BOOT`) detached (own session, no
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
            [sys.executable, "-P", "-c", _BOOT, _package_root(), "serve",
             "--data-dir", data_dir_path, "--idle-timeout", repr(float(idle_s))],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )  # fmt: skip
    except OSError:
        pass
    finally:
        os.close(log)
