"""The forked child of the resident query process (`cli.resident_server`): it becomes the
client's own interpreter (`adopt`: the client's fds as 0/1/2, its environment, cwd, umask, time
zone, locale and stdio encodings, and the consoles and flags fixed at import from the server's
environment), runs `agent_history.cli.app.run` — the in-process path — and reports its exit code
to the client itself (`run_child`), as the interpreter would end: a SystemExit's code, death by
SIGINT after a KeyboardInterrupt's traceback, 1 after any other traceback, 120 when stdout
cannot be flushed.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import sys
import time
from typing import Any


def adopt(request: dict[str, Any]) -> None:
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


def exit_code(exc: SystemExit) -> int:
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


def run_child(conn: socket.socket, request: dict[str, Any]) -> None:
    """Run the command in this forked child and `os._exit` with its code (never returns): what
    the interpreter does with the command's SystemExit, KeyboardInterrupt (traceback, then death
    by SIGINT) or any other exception (traceback, exit 1) — during the set-up as in the command."""
    import atexit
    import traceback

    code = 1
    try:
        try:
            adopt(request)
            from agent_history.cli.app import run

            run(sys.argv[1:])
            code = 0
        except SystemExit as exc:
            code = exit_code(exc)
        except KeyboardInterrupt:
            traceback.print_exc()
            flush_stdio()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:  # noqa: BLE001 - printed as the interpreter would, exit 1
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
        if not flush_stdio() and code == 0:
            code = 120  # what the interpreter exits with when stdout cannot be flushed
    finally:
        try:
            conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
        except BaseException:  # noqa: BLE001, S110 - the client is gone; exit all the same
            pass
        os._exit(code)


def flush_stdio() -> bool:
    """Flush stdout and stderr; False when one of them cannot be flushed (closed, a broken pipe)."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok
