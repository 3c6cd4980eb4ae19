"""The `sql` tool: exactly one read-only statement against the catalogue (docs/design.md §10).

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
- Cut in the server: a query is run wrapped (`_bounded`) so that a cell of a variable-length
  type (``typlen < 0``: text, bytea, json, arrays, numeric, …) longer than `MAX_CELL_CHARS` in
  its text form arrives as the first ``MAX_CELL_CHARS + 1`` characters of that text instead of
  the value — ``SELECT repeat('x', 300000000)`` sends 2,001 characters, not 300 MB — while
  every other cell keeps its type. Statements the server will not take as a subquery (``SHOW``,
  ``EXPLAIN``, a statement followed by a comment) run as written and are cut here.
- An empty statement (blank, ``;``, only comments — the server says so) is an error that says
  it is empty.

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


def number_text(value: Decimal | float) -> str:
    """A ``numeric`` (Decimal) or ``float8`` cell as PostgreSQL writes it in text: its digits and
    scale (``4326``, ``12.50``, ``0.0000001`` — never ``4326.0`` nor ``1E-7``), ``NaN``,
    ``Infinity``, ``-Infinity``; an integral float below 10^15 without ``.0`` (``4326``)."""
    if isinstance(value, Decimal):
        if value.is_nan():
            return "NaN"
        return format(value, "f") if value.is_finite() else ("Infinity" if value > 0 else "-Infinity")
    if value != value:  # NaN
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _cell(value: Any, exact_numeric: bool = False) -> tuple[Any, bool]:
    """JSON-ready cell and whether it was cut. A numeric below 10^15 is an int when whole (4326,
    not 4326.0), else a float; larger or not finite, its text; with `exact_numeric` it stays a
    Decimal (`number_text` renders it)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value, False
    if isinstance(value, Decimal):
        if exact_numeric:
            return value, False
        if not value.is_finite() or abs(value) >= Decimal(10) ** 15:
            return str(value), False
        return (int(value) if value == value.to_integral_value() else float(value)), False  # 4326, not 4326.0
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


# PostgreSQL's own name of each type (pg_type.typname: int4, numeric, void, vector …), an array
# as its element's name and [] (int4[]); LEFT JOINs keep an oid pg_type does not hold.
TYPE_NAMES = """
SELECT o.oid::int, CASE WHEN e.oid IS NOT NULL THEN e.typname || '[]' ELSE t.typname::text END
FROM unnest(%s::oid[]) AS o (oid)
LEFT JOIN pg_type AS t ON t.oid = o.oid
LEFT JOIN pg_type AS e ON e.typarray = o.oid
"""


def type_names(conn: psycopg.Connection, oids: list[int]) -> list[str]:
    """The name PostgreSQL gives each type oid in `oids` (`TYPE_NAMES`: ``"void"`` for 2278,
    ``"numeric"``, ``"text"``, ``"int4[]"``, an extension's or a user's type by its name), in
    order; ``"unknown (oid N)"`` for an oid no type has. One query; none for no oids."""
    if not oids:
        return []
    names = dict(conn.execute(TYPE_NAMES, (oids,)).fetchall())
    return [names.get(oid) or f"unknown (oid {oid})" for oid in oids]


def _first_line(message: str) -> str:
    line = (message.strip().splitlines() or ["unknown error"])[0]
    return re.sub(r"^(?:ERROR|FATAL):\s+", "", line)


def _fail(message: str) -> SqlError:
    hint = " (the sql tool runs exactly one statement per call)" if "multiple commands" in message else ""
    return SqlError(f"statement failed: {_first_line(message)}{hint}")


EMPTY = "empty statement: pass exactly one SQL statement"
"""What `run_sql` says of an empty statement (a NUL in one is refused as well, in one line)."""


def _describe(conn: psycopg.Connection, statement: str) -> tuple[list[dict[str, str]], list[int]]:
    """Parse `statement` as the unnamed prepared statement (extended protocol) and describe it.

    The server rejects more than one command here. Returns the result columns ([] for a command
    that returns no rows; each type named as PostgreSQL names it, `type_names`) and their type
    OIDs. Raises SqlError.
    """
    pgconn = conn.pgconn
    res = pgconn.prepare(b"", statement.encode())
    if res.status == pq.ExecStatus.EMPTY_QUERY:
        raise SqlError(EMPTY)
    if res.status != pq.ExecStatus.COMMAND_OK:
        raise _fail((res.error_message or b"").decode(errors="replace"))
    desc = pgconn.describe_prepared(b"")
    if desc.status != pq.ExecStatus.COMMAND_OK:
        raise _fail((desc.error_message or b"").decode(errors="replace"))
    oids = [desc.ftype(i) for i in range(desc.nfields)]
    # after Describe: the query below replaces the unnamed statement, which only a statement
    # without columns is executed as (`_command`)
    names = type_names(conn, oids)
    columns = [{"name": (desc.fname(i) or b"").decode(errors="replace"), "type": names[i]} for i in range(desc.nfields)]
    return columns, oids


_TRAILING = re.compile(r"[\s;]+\Z")
_SAVEPOINT = b"ah_sql_bounded"


def _bounded(conn: psycopg.Connection, statement: str, oids: list[int]) -> tuple[str, list[bool]] | None:
    """`statement` wrapped so that long variable-length cells are cut in the server.

    Each variable-length column ``cN`` becomes two: the value when its text form has at most
    `MAX_CELL_CHARS` characters (else NULL), and the first ``MAX_CELL_CHARS + 1`` characters of
    that text when it is longer (else NULL). Returns the wrapped text and, per original column,
    whether it was split so; None when no column is variable-length or the server does not
    accept the statement as a subquery (checked under a savepoint, so the transaction lives on).
    """
    lengths = dict(conn.execute("SELECT oid::int, typlen FROM pg_type WHERE oid = ANY(%s)", (oids,)).fetchall())
    varlen = [lengths.get(oid, -1) < 0 for oid in oids]
    if not any(varlen):
        return None
    exprs = []
    for n, split in enumerate(varlen, 1):
        col = f"_ah_q.c{n}"
        if split:
            head = f"left({col}::text, {MAX_CELL_CHARS + 1})"  # reads no further than it keeps
            exprs.append(f"CASE WHEN length({head}) <= {MAX_CELL_CHARS} THEN {col} END")
            exprs.append(f"CASE WHEN length({head}) > {MAX_CELL_CHARS} THEN {head} END")
        else:
            exprs.append(col)
    aliases = ", ".join(f"c{n}" for n in range(1, len(oids) + 1))
    body = _TRAILING.sub("", statement)
    # OFFSET 0 keeps the statement a subquery of its own (not flattened into the outer one), so
    # each cell is computed once and referenced, not recomputed in every expression above.
    wrapped = f"SELECT {', '.join(exprs)}\nFROM (SELECT * FROM (\n{body}\n) AS _ah_s OFFSET 0) AS _ah_q ({aliases})"
    pgconn = conn.pgconn
    pgconn.exec_(b"SAVEPOINT " + _SAVEPOINT)
    ok = pgconn.prepare(b"", wrapped.encode()).status == pq.ExecStatus.COMMAND_OK
    pgconn.exec_((b"RELEASE SAVEPOINT " if ok else b"ROLLBACK TO SAVEPOINT ") + _SAVEPOINT)
    return (wrapped, varlen) if ok else None


def _unwrap(row: tuple, varlen: list[bool]) -> list[Any]:
    """The original cells of a row of the wrapped statement (a cut text where it was cut)."""
    out, i = [], 0
    for split in varlen:
        if split:
            value, cut_text = row[i], row[i + 1]
            out.append(cut_text if cut_text is not None else value)
            i += 2
        else:
            out.append(row[i])
            i += 1
    return out


def _command(conn: psycopg.Connection) -> str:
    """Execute the described statement that returns no rows; its command tag (e.g. "SET")."""
    res = conn.pgconn.exec_prepared(b"", [])
    if res.status == pq.ExecStatus.EMPTY_QUERY:
        raise SqlError(EMPTY)
    if res.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
        raise _fail((res.error_message or b"").decode(errors="replace"))
    return (res.command_status or b"").decode()


def run_sql(conn: psycopg.Connection, statement: str, *, exact_numeric: bool = False) -> dict[str, Any]:
    """Run one statement on `conn` (already guarded, read-only, with a timeout); see module
    docstring. `exact_numeric`: ``numeric`` cells stay Decimals (`agent-history sql` prints them
    as PostgreSQL does, `number_text`) instead of the MCP tool's floats."""
    if not statement or not statement.strip():
        raise SqlError(EMPTY)
    if "\x00" in statement:  # the server reads a statement up to its first NUL: refuse, never run the rest
        raise SqlError("statement holds a NUL character (no SQL text or catalogue text does)")
    columns, oids = _describe(conn, statement)
    rows: list[list[Any]] = []
    cut = 0
    more = False
    status = None
    if not columns:
        status = _command(conn)
    else:
        try:
            bounded = _bounded(conn, statement, oids)
            query, varlen = bounded if bounded else (statement, None)
            for row in conn.cursor().stream(query):
                if len(rows) == MAX_ROWS:
                    more = True
                    break  # stream() cancels the rest of the query
                cells = []
                for value in _unwrap(row, varlen) if varlen else row:
                    cell, was_cut = _cell(value, exact_numeric)
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
