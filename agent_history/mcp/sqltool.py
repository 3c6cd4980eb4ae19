"""The `sql` tool: exactly one read-only statement against the catalogue (DESIGN §10).

- One statement: the text is first parsed as the unnamed prepared statement (extended query
  protocol: Parse + Describe), where the server itself rejects a second command ("cannot insert
  multiple commands into a prepared statement"); Describe also gives the columns when no row
  comes back. Rows are then read with psycopg's `stream()` (extended protocol, single-row mode);
  a statement returning no rows is executed as the prepared statement. Nothing here splits or
  inspects the SQL text.
- Read-only: the caller's transaction is ``READ ONLY`` and the role is guarded (`reader`), so a
  write fails with "cannot execute … in a read-only transaction".
- Bounded: rows are streamed (single-row mode); at most `MAX_ROWS` + 1 are read, `MAX_ROWS` are
  returned with a truncation note, and the rest of the query is cancelled. Every cell is cut to
  `MAX_CELL_CHARS` characters (JSON values are cut as their JSON text). The statement timeout
  (30 s) comes from the connection (`reader.STATEMENT_TIMEOUT_MS`).

Result shape::

    {"columns": [{"name": "n", "type": "int4"}], "rows": [[1], [2]], "row_count": 2,
     "truncated": null | "…", "cells_cut": 0, "cell_limit": 2000, "command": null | "SET"}

Errors: `SqlError` with the server's message (second statement, write attempt, syntax error,
``canceling statement due to statement timeout``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import psycopg
from psycopg import pq

from agent_history.mcp.render import dumps

MAX_ROWS = 200
MAX_CELL_CHARS = 2_000


class SqlError(Exception):
    """The statement failed; the message is the server's, prefixed with what was being done."""


def _cell(value: Any) -> tuple[Any, bool]:
    """JSON-ready cell and whether it was cut."""
    if value is None or isinstance(value, (bool, int, float)):
        return value, False
    if isinstance(value, Decimal):
        return (float(value) if value.is_finite() and abs(value) < Decimal(10) ** 15 else str(value)), False
    if isinstance(value, str):
        text = value
    elif isinstance(value, (datetime, date, time)):
        return value.isoformat(), False
    elif isinstance(value, timedelta):
        text = str(value)
    elif isinstance(value, UUID):
        return str(value), False
    elif isinstance(value, (bytes, bytearray, memoryview)):
        text = "\\x" + bytes(value).hex()
    elif isinstance(value, (dict, list)):
        text = dumps(value)
        if len(text) <= MAX_CELL_CHARS:
            return value, False
    else:
        text = str(value)
    if len(text) > MAX_CELL_CHARS:
        return text[:MAX_CELL_CHARS], True
    return text, False


def _type_name(conn: psycopg.Connection, oid: int) -> str:
    info = conn.adapters.types.get(oid)
    return info.name if info else str(oid)


def _first_line(message: str) -> str:
    line = (message.strip().splitlines() or ["unknown error"])[0]
    return re.sub(r"^(?:ERROR|FATAL):\s+", "", line)


def _fail(message: str) -> SqlError:
    hint = " (the sql tool runs exactly one statement per call)" if "multiple commands" in message else ""
    return SqlError(f"statement failed: {_first_line(message)}{hint}")


def _describe(conn: psycopg.Connection, statement: str) -> list[dict[str, str]]:
    """Parse `statement` as the unnamed prepared statement (extended protocol) and describe it.

    The server rejects more than one command here. Returns the result columns ([] for a command
    that returns no rows). Raises SqlError.
    """
    pgconn = conn.pgconn
    res = pgconn.prepare(b"", statement.encode())
    if res.status != pq.ExecStatus.COMMAND_OK:
        raise _fail((res.error_message or b"").decode(errors="replace"))
    desc = pgconn.describe_prepared(b"")
    if desc.status != pq.ExecStatus.COMMAND_OK:
        raise _fail((desc.error_message or b"").decode(errors="replace"))
    return [
        {"name": (desc.fname(i) or b"").decode(errors="replace"), "type": _type_name(conn, desc.ftype(i))}
        for i in range(desc.nfields)
    ]


def _command(conn: psycopg.Connection) -> str:
    """Execute the described statement that returns no rows; its command tag (e.g. "SET")."""
    res = conn.pgconn.exec_prepared(b"", [])
    if res.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
        raise _fail((res.error_message or b"").decode(errors="replace"))
    return (res.command_status or b"").decode()


def run_sql(conn: psycopg.Connection, statement: str) -> dict[str, Any]:
    """Run one statement on `conn` (already guarded, read-only, with a timeout); see module docstring."""
    if not statement or not statement.strip():
        raise SqlError("empty statement: pass exactly one SQL statement")
    columns = _describe(conn, statement)
    rows: list[list[Any]] = []
    cut = 0
    more = False
    status = None
    if not columns:
        status = _command(conn)
    else:
        try:
            for row in conn.cursor().stream(statement):
                if len(rows) == MAX_ROWS:
                    more = True
                    break  # stream() cancels the rest of the query
                cells = []
                for value in row:
                    cell, was_cut = _cell(value)
                    cut += was_cut
                    cells.append(cell)
                rows.append(cells)
        except psycopg.Error as exc:
            raise _fail(str(exc)) from None
    return {
        "columns": columns,
        "rows": rows,
        "row_count": len(rows),
        "truncated": (
            f"showing the first {MAX_ROWS} rows; the statement returned more "
            "(add LIMIT/OFFSET, filter or aggregate to see the rest)"
            if more
            else None
        ),
        "cells_cut": cut,
        "cell_limit": MAX_CELL_CHARS,
        "command": status,
    }
