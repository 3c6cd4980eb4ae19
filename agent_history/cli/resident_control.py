"""Controlling the resident query process from outside it (``agent-history service``, and tests):
its files (`paths_of`), whether it runs (`service_status`), stopping it (`stop_service`: SIGTERM,
then the commands running in it finish — `stopping_status` / `stopping_line` read the
`STOPPING_FILE` it writes meanwhile) and starting it (`start_service`, detached through
`resident.spawn_server`). The process itself is `cli.resident_server`.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_history.cli import resident
from agent_history.cli.process_identity import is_same_process
from agent_history.embed.service import ServicePaths, alive, read_pid_file, remove_stale


def paths_of(data_dir: Path) -> ServicePaths:
    """The resident process's files under `data_dir`."""
    return ServicePaths.of(data_dir, resident.SERVICE_DIR)


STOPPING_FILE = "service.stopping"
"""In the service directory while a stopped server finishes the commands still running in it
(`_Server.drain`): JSON ``{"pid", "started" (`process_identity.start_ticks`), "commands",
"reason"}``; removed when the last one ends. Its pid and socket files are gone by then (a new
server may start), so `service_status` reads this to say "stopping: finishing a pass (pid N)"."""


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`; None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stopping_status(data_dir: Path) -> dict[str, Any] | None:
    """``{"pid", "commands", "reason"}`` of a stopped server still finishing its running commands
    (`STOPPING_FILE`, its writer still running: `is_same_process`), else None."""
    info = read_json(paths_of(data_dir).dir / STOPPING_FILE) or {}
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
