"""Connections: DSN resolution (docs/design.md §4) and first-use setup.

Resolution order: ``--dsn`` flag → ``AGENT_HISTORY_DSN`` → config ``database.dsn`` → the
embedded server (started on demand). `Database` wraps the result: `connect()` for one-shot
commands, `pool()` (psycopg-pool) for long-running processes. Connection failures become
`ServerUnreachable` / `AuthFailed` with one-line messages.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

from agent_history.config import Settings
from agent_history.db import embedded
from agent_history.db.errors import AuthFailed, ServerUnreachable
from agent_history.db.migrate import ensure_schema, schema_current
from agent_history.db.roles import READER, ensure_roles, roles_current

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

# The pool logs every failed reconnect attempt; commands report failures as one line instead.
logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)


def mask_dsn(dsn: str) -> str:
    """The DSN with any password replaced by ``***``."""
    dsn = re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", dsn)
    return re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", dsn)


def translate(exc: psycopg.OperationalError, where: str) -> Exception:
    """Map a connection failure to ServerUnreachable or AuthFailed (one line)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = str(exc).lower()
    if (
        "password authentication failed" in low
        or "no password supplied" in low
        or ("role" in low and "does not exist" in low)
    ):
        return AuthFailed(f"authentication failed for {where}: {text}")
    return ServerUnreachable(f"cannot reach the database at {where}: {text}")


@dataclass
class Database:
    """A resolved database: where it is, and how to connect as owner or reader."""

    settings: Settings
    on_start: Callable[[Path], None] | None = None
    """Called with PGDATA just before the embedded server is started (e.g. to tell a person)."""

    @property
    def is_embedded(self) -> bool:
        """True when no DSN is configured and the embedded server is used."""
        return not self.settings.dsn

    @cached_property
    def dsn(self) -> str:
        """The owner/writer DSN; starts the embedded server and migrates on first use."""
        if self.settings.dsn:
            dsn = self.settings.dsn
        else:
            dsn = self._start_embedded()
        try:
            ensure_schema(dsn)
        except psycopg.OperationalError as exc:
            if not self._embedded_down():
                raise translate(exc, self.where(dsn)) from None
            dsn = self._start_embedded()  # it stopped (idle stop, crash) between start and connect
            try:
                ensure_schema(dsn)
            except psycopg.OperationalError as exc2:
                raise translate(exc2, self.where(dsn)) from None
        if self.is_embedded:
            ensure_roles(dsn, statement_timeout_ms=self.settings.statement_timeout_ms)
        return dsn

    def _start_embedded(self) -> str:
        from agent_history.db.idle_stop import hold_for_process, spawn_watcher

        # This process counts as a client for the idle stop until it exits, also between its
        # connections (one flock, taken once per process and data dir).
        hold_for_process(self.settings.data_dir)
        started: list[Path] = []

        def on_start(pgdata: Path) -> None:
            started.append(pgdata)
            if self.on_start is not None:
                self.on_start(pgdata)

        dsn = embedded.ensure_running(self.settings.embedded_pgdata, on_start)
        if started and self.settings.idle_stop_s > 0:  # this process started it: watch it
            spawn_watcher(embedded.real_pgdata(self.settings.embedded_pgdata), self.settings.idle_stop_s)
        return dsn

    def _embedded_down(self) -> bool:
        """True when this is the embedded server and it is not running (any more)."""
        return self.is_embedded and embedded.socket_dir(self.settings.embedded_pgdata) is None

    def keep_alive(self):
        """A context manager keeping the embedded server from idle-stopping while a long-running
        process (web, mcp, ``--every``) runs; a no-op for a server named by a DSN."""
        from contextlib import nullcontext

        if not self.is_embedded:
            return nullcontext()
        from agent_history.db.idle_stop import keep_alive

        return keep_alive(self.settings.data_dir)

    def live_reader_dsn(self) -> Callable[[], str]:
        """A thread-safe callable returning the reader DSN, resolved on first call and again
        whenever the embedded server is found stopped (idle stop, `db stop`, a crash), which
        starts it — what the MCP server and the web UI call before each connection. Checking
        costs a read of ``postmaster.pid``."""
        import threading

        lock = threading.Lock()
        cache: dict[str, str] = {}
        embedded_only = self.is_embedded and not self.settings.reader_dsn

        def reader_dsn() -> str:
            with lock:
                if "dsn" not in cache or (embedded_only and self._embedded_down()):
                    self.__dict__.pop("dsn", None)  # the cached owner DSN names the old socket
                    cache["dsn"] = self.reader_dsn
                return cache["dsn"]

        return reader_dsn

    def where(self, dsn: str | None = None) -> str:
        """Human description of the server: embedded path or the masked DSN."""
        if self.is_embedded:
            return f"embedded server {self.settings.embedded_pgdata}"
        return mask_dsn(dsn or self.settings.dsn or "")

    @property
    def reader_dsn(self) -> str:
        """DSN for the read-only role (config/env, or `ah_reader` on the embedded server)."""
        if self.settings.reader_dsn:
            return self.settings.reader_dsn
        if self.is_embedded:
            self.dsn  # noqa: B018 - make sure the server, schema and roles exist
            return embedded.server_dsn(self.settings.embedded_pgdata, user=READER)
        conninfo = psycopg.conninfo.conninfo_to_dict(self.settings.dsn or "")
        conninfo["user"] = READER
        if self.settings.reader_password:
            conninfo["password"] = self.settings.reader_password
        return psycopg.conninfo.make_conninfo(**conninfo)

    def connect(self, *, autocommit: bool = False) -> psycopg.Connection:
        """A new owner connection. Raises ServerUnreachable / AuthFailed.

        The first one of a process is also the first-use check (`_connect_ready`): when the
        server runs and its schema and roles need nothing, that check runs on this connection
        (one connection per command instead of four: ≈ 6 ms and a fresh backend's catalogue
        caches each, measured in docs/performance.md); otherwise `dsn` starts, migrates and
        sets up as before."""
        if "dsn" not in self.__dict__:
            ready = self._connect_ready(autocommit)
            if ready is not None:
                return ready
        dsn = self.dsn
        try:
            return psycopg.connect(dsn, autocommit=autocommit)
        except psycopg.OperationalError as exc:
            if not self._embedded_down():
                raise translate(exc, self.where(dsn)) from None
        self.__dict__.pop("dsn", None)  # stopped since `dsn` was resolved: start it again, once
        dsn = self.dsn
        try:
            return psycopg.connect(dsn, autocommit=autocommit)
        except psycopg.OperationalError as exc:
            raise translate(exc, self.where(dsn)) from None

    def _connect_ready(self, autocommit: bool) -> psycopg.Connection | None:
        """A connection to an already running server whose schema is at head with current
        `sql/*.sql`, prices and health data (`migrate.schema_current`) and, embedded, current
        roles (`roles.roles_current`) — what `dsn` would find, checked on the connection the
        command then uses — with `dsn` set; None when anything is missing, stopped or not
        current (the caller takes the full path, which reports or repairs it). A configured
        server that cannot be reached raises as `dsn` would (no second attempt)."""
        if self.is_embedded:
            pgdata = embedded.real_pgdata(self.settings.embedded_pgdata)
            if embedded.socket_dir(pgdata) is None:
                return None
            from agent_history.db.idle_stop import hold_for_process

            hold_for_process(self.settings.data_dir)  # as `_start_embedded`: a client until exit
            dsn = embedded.server_dsn(pgdata)
        else:
            dsn = self.settings.dsn or ""
        try:
            conn = psycopg.connect(dsn, autocommit=autocommit)
        except psycopg.OperationalError as exc:
            if self.is_embedded:
                return None  # stopped since, or no database yet: the full path starts or creates it
            raise translate(exc, self.where(dsn)) from None
        try:
            ready = schema_current(conn) and (
                not self.is_embedded or roles_current(conn, statement_timeout_ms=self.settings.statement_timeout_ms)
            )
            if not autocommit:
                conn.rollback()
        except psycopg.Error:
            ready = False
        if not ready:
            conn.close()
            return None
        self.__dict__["dsn"] = dsn
        return conn

    def pool(self, *, min_size: int = 1, max_size: int = 4, timeout_s: float = 30.0) -> ConnectionPool:
        """An open psycopg-pool of autocommit owner connections for long-running processes
        (`index --every`): each connection is checked before it is handed out, so a server that
        restarted between passes costs a reconnect, not the process. Close it when done.
        `pool.connection()` raises `psycopg_pool.PoolTimeout` (an OperationalError) after
        `timeout_s` seconds without a usable connection."""
        from psycopg_pool import ConnectionPool

        return ConnectionPool(
            self.dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout_s,
            kwargs={"autocommit": True},
            check=ConnectionPool.check_connection,
            open=True,
        )


def set_statement_timeout(conn: psycopg.Connection, seconds: float) -> None:
    """Make PostgreSQL cancel every later statement of `conn`'s session that runs longer than
    `seconds` (0: no limit; rounded up to whole ms); a cancelled one raises
    ``psycopg.errors.QueryCanceled``."""
    ms = 0 if seconds <= 0 else max(1, math.ceil(seconds * 1000))
    conn.execute("SELECT pg_catalog.set_config('statement_timeout', %s, false)", (str(ms),))
