"""Idle stop of the embedded server: it stops after ``[database] idle_stop_s`` seconds (default
`DEFAULT_IDLE_STOP_S`; 0 = never) without a client connection, and the next command starts it
again.

Nothing runs on a command's path for it. The process that *starts* the server (and only then)
spawns one detached watcher, ``python -m agent_history.db.idle_stop PGDATA SECONDS``, which polls
every `poll_interval` seconds: a client backend in ``pg_stat_activity`` other than its own, or a
*keep-alive* holder, resets the idle clock; once the clock reaches the limit it checks once more
and stops the server (fast shutdown), writes one line to ``<data dir>/idle-stop.log`` and exits.
It also exits when the server is gone (stopped by `db stop`, crashed) — the next start spawns a
new one — and when another watcher already watches that data dir (``pg-idle-watch.lock``).

Every process that resolves the embedded server holds `keep_alive` until it exits
(`hold_for_process`: one shared ``flock`` on ``<data dir>/pg-keepalive.lock``, which the kernel
drops when the process ends, however it ends), so a command counts as a client between its
connections too, and a long-running one (`web`, `mcp`, ``index|embed|journal-sync --every``,
which also take it explicitly before their first connection) keeps its server up for its whole
life; a dead process never holds it up. Servers named by a DSN are never stopped.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_IDLE_STOP_S = 1800.0
"""``[database] idle_stop_s`` when the config does not set it: 30 minutes without a client."""
KEEPALIVE_FILE = "pg-keepalive.lock"
WATCH_LOCK_FILE = "pg-idle-watch.lock"
LOG_FILE = "idle-stop.log"


def poll_interval(idle_s: float) -> float:
    """Seconds between the watcher's looks: a quarter of the limit, within 0.5–30 s."""
    return min(30.0, max(0.5, idle_s / 4))


def spawn_watcher(pgdata: Path, idle_s: float) -> None:
    """Start the detached watcher for the server in `pgdata` (returns at once; the watcher
    outlives this process). Errors starting it are ignored: the server then simply stays up."""
    try:
        subprocess.Popen(
            [sys.executable, "-m", "agent_history.db.idle_stop", str(pgdata), repr(float(idle_s))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


@contextmanager
def keep_alive(data_dir: Path) -> Iterator[None]:
    """Keep the embedded server of `data_dir` from idle-stopping while the block runs (a shared
    flock on `KEEPALIVE_FILE`; several holders at once are fine). A data dir that cannot be
    written yet (no server started there) is created; if even that fails the block runs
    without the hold."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        f = open(data_dir / KEEPALIVE_FILE, "a")  # noqa: SIM115 - held for the block
    except OSError:
        yield
        return
    try:
        fcntl.flock(f, fcntl.LOCK_SH)
        yield
    finally:
        f.close()


_HELD: dict[Path, object] = {}


def hold_for_process(data_dir: Path) -> None:
    """Hold `keep_alive` on `data_dir` until this process exits (idempotent): every command on the
    embedded server counts as its client for its whole run, not only while a connection is
    open — so the watcher never stops a server between a command's connections."""
    if data_dir in _HELD:
        return
    hold = keep_alive(data_dir)
    hold.__enter__()
    _HELD[data_dir] = hold  # never exited: the kernel drops the lock with the process


def kept_alive(data_dir: Path) -> bool:
    """True while some process holds `keep_alive` on `data_dir`."""
    try:
        with open(data_dir / KEEPALIVE_FILE, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            return False
    except OSError:
        return False


def _clients(pgdata: Path) -> int | None:
    """Client connections to the server besides the watcher's own; None when it cannot tell
    (starting up, shutting down)."""
    import psycopg

    from agent_history.db.embedded import server_dsn
    from agent_history.db.errors import DatabaseError

    try:
        with psycopg.connect(server_dsn(pgdata, database="postgres"), autocommit=True, connect_timeout=5) as conn:
            return conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchone()[0]
    except (psycopg.Error, DatabaseError):
        return None


def _idle(pgdata: Path) -> bool:
    return not kept_alive(pgdata.parent) and _clients(pgdata) == 0


def watch(pgdata: Path, idle_s: float) -> str:
    """Watch the server in `pgdata` until it is gone or idle for `idle_s` seconds (then stop it).
    Returns what happened: ``"stopped"``, ``"gone"`` or ``"watched"`` (another watcher has it)."""
    from agent_history.db import embedded

    lock = open(pgdata.parent / WATCH_LOCK_FILE, "a")  # noqa: SIM115 - held while watching
    deadline = time.monotonic() + 3.0  # a previous watcher may be just leaving (its server stopped)
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                return "watched"
            time.sleep(0.2)
    step = poll_interval(idle_s)
    idle_since = time.monotonic()
    while True:
        time.sleep(step)
        if embedded.socket_dir(pgdata) is None:
            return "gone"
        if not _idle(pgdata):
            idle_since = time.monotonic()
            continue
        if time.monotonic() - idle_since >= idle_s and _idle(pgdata):
            try:
                embedded.stop(pgdata)
            except Exception as exc:  # noqa: BLE001 - a detached process: log it, keep nothing running
                _log(pgdata, f"could not stop the embedded server after {idle_s:g} s idle: {exc}")
                return "gone"
            _log(pgdata, f"stopped the embedded server after {idle_s:g} s without a client connection")
            return "stopped"


def _log(pgdata: Path, text: str) -> None:
    try:
        with open(pgdata.parent / LOG_FILE, "a") as f:
            f.write(f"{datetime.now(UTC).isoformat(timespec='seconds')} pid {os.getpid()}: {text}\n")
    except OSError:
        pass


if __name__ == "__main__":
    watch(Path(sys.argv[1]), float(sys.argv[2]))
