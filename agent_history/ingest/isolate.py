"""One bad file never costs another file or the pass: the loader's single place for failures.

A write that fails in the database is either the *file's* fault (a value PostgreSQL refuses, a
constraint, a parser bug that got past `model.limits`) or the *connection's* (the server went
away). The two are told apart by the connection's state, never by the exception class:
``psycopg.errors.ProgramLimitExceeded`` ("index row size … exceeds btree version 4 maximum
2704", SQLSTATE 54000) and ``QueryCanceled`` are subclasses of ``psycopg.OperationalError``
although the connection is fine (issue 25: one over-long key was reported as "database
connection lost" and stopped every pass).

- `connection_lost`: the connection is closed or broken → the pass stops (`raise_if_lost`
  re-raises the error as a ``psycopg.OperationalError``, which the CLI prints as one line).
- `write_isolated`: a batch of several files is written in one transaction; when it fails on a
  live connection, it is rolled back, the session's staging state is forgotten
  (`ingest.writer.forget_staging`: the temp tables the failed transaction created are gone) and
  every file is written again on its own, so only the file that still fails is recorded and the
  others load. The error recorded is the one that file raised alone (its own SQLSTATE), or the
  batch's error when the batch held only that file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import psycopg

# `ingest.writer` (and with it the row model) is imported where first needed: the loader imports
# this module on every pass, and a pass with nothing to read never loads the model (issue 18).

T = TypeVar("T")


def connection_lost(conn: psycopg.Connection | None) -> bool:
    """True when `conn` can no longer be used: closed, or broken by a lost server connection."""
    return conn is not None and (conn.closed or conn.broken)


def raise_if_lost(exc: BaseException, *conns: psycopg.Connection | None) -> None:
    """Re-raise `exc` when one of `conns` is lost (as a ``psycopg.OperationalError``, chained,
    when it is another error such as "the connection is closed"); return otherwise."""
    if any(connection_lost(c) for c in conns):
        if isinstance(exc, psycopg.OperationalError):
            raise exc
        raise psycopg.OperationalError(f"the database connection was lost ({type(exc).__name__}: {exc})") from exc


def recover(conn: psycopg.Connection) -> None:
    """Make a live connection usable after a failed write: roll back an open transaction and
    forget the staging tables (the failed transaction may have been the one that created them)."""
    from agent_history.ingest.writer import forget_staging

    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()
    forget_staging(conn)


def write_isolated(
    conn: psycopg.Connection,
    items: Sequence[T],
    write: Callable[[Sequence[T]], None],
    record_failure: Callable[[T, BaseException], None],
) -> None:
    """``write(items)`` (one transaction); if it fails on a live connection, ``write([item])``
    for each item, calling ``record_failure(item, error)`` for each one that fails alone.

    `write` must open and close its own transaction and skip items it should not write (e.g. a
    later chunk of a file already recorded as failed). Raises ``psycopg.OperationalError`` when
    the connection is lost; everything else is recorded.
    """
    try:
        write(items)
        return
    except Exception as exc:  # noqa: BLE001 - sorted out below
        raise_if_lost(exc, conn)
        first = exc
    recover(conn)
    if len(items) == 1:
        record_failure(items[0], first)
        return
    for item in items:
        try:
            write([item])
        except Exception as exc:  # noqa: BLE001 - this item's own failure
            raise_if_lost(exc, conn)
            recover(conn)
            record_failure(item, exc)
