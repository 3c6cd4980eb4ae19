"""One guarded, read-only connection per tool call (docs/design.md §10).

`guarded_connection(dsn)` opens a fresh connection as the reader role, starts a ``READ ONLY``
transaction, runs the role guard inside it (which also takes the transaction's snapshot, so a
later ``SET TRANSACTION READ WRITE`` fails), sets the statement timeout for the rest of the
transaction, yields the connection, then rolls back and closes — whatever happened.

Errors: `GuardRefused` (role check failed), `ServerUnreachable` / `AuthFailed` (cannot connect,
one line), psycopg errors from the tool's own queries (e.g. ``QueryCanceled`` at the timeout).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from agent_history.db.connection import mask_dsn, translate
from agent_history.mcp.guard import check_role

STATEMENT_TIMEOUT_MS = 30_000
"""Statement timeout for every tool's queries (ms); the `sql` tool's 30 s of docs/design.md §10."""
GUARD_TIMEOUT_MS = 5_000
"""Timeout for the guard's catalogue queries (ms)."""
CONNECT_TIMEOUT_S = 10
APPLICATION_NAME = "agent-history-mcp"


@contextmanager
def guarded_connection(dsn: str, *, statement_timeout_ms: int = STATEMENT_TIMEOUT_MS) -> Iterator[psycopg.Connection]:
    """Yield a connection inside a guarded read-only transaction; roll back and close afterwards."""
    try:
        conn = psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S, application_name=APPLICATION_NAME)
    except psycopg.OperationalError as exc:
        raise translate(exc, mask_dsn(dsn)) from None
    try:
        conn.read_only = True  # psycopg opens the transaction with BEGIN READ ONLY
        conn.execute("SELECT pg_catalog.set_config('statement_timeout', %s, true)", (str(GUARD_TIMEOUT_MS),))
        check_role(conn)
        conn.execute("SELECT pg_catalog.set_config('statement_timeout', %s, true)", (str(int(statement_timeout_ms)),))
        yield conn
    finally:
        try:
            conn.rollback()
        except psycopg.Error:
            pass
        conn.close()
