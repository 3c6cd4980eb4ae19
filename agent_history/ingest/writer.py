"""Write one batch of parsed rows: fold, COPY into staging, merge per table, mark sessions dirty.

Runs inside the caller's transaction (the loader's one-transaction-per-batch rule); raises
psycopg errors unchanged so the caller can roll back and record a `load_error`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from functools import cache

import psycopg
from psycopg.types.json import Jsonb

from agent_history.model.merge import fold
from agent_history.model.rows import ROW_TYPES, Row, SessionRow
from agent_history.ingest.sql_merge import (
    dirty_sql,
    merge_sql,
    pg_type,
    staging_columns,
    staging_ddl,
    staging_name,
    stub_sessions_sql,
)


@cache
def _json_positions(row_type: type[Row]) -> tuple[int, ...]:
    return tuple(i for i, f in enumerate(dataclasses.fields(row_type)) if pg_type(str(f.type)) == "jsonb")  # type: ignore[arg-type]


def _prepare(conn: psycopg.Connection) -> None:
    info = conn.info
    marker = getattr(conn, "_ah_staging_ready", None)
    if marker == info.backend_pid:
        return
    for row_type in ROW_TYPES:
        conn.execute(staging_ddl(row_type))
    conn._ah_staging_ready = info.backend_pid  # type: ignore[attr-defined]


def write_rows(conn: psycopg.Connection, source_id: int, namespace: str, rows: Iterable[Row]) -> Counter[str]:
    """Merge `rows` (from one source file) into the catalogue; returns rows staged per table.

    Must be called inside a transaction. Sessions are merged first; events referencing a
    session that does not exist yet get a stub session row.
    """
    _prepare(conn)
    folded = fold(rows)
    staged: Counter[str] = Counter()
    with conn.cursor() as cur:
        for row_type in ROW_TYPES:
            recs = folded.get(row_type)
            if not recs:
                continue
            jpos = _json_positions(row_type)
            cols = ", ".join(staging_columns(row_type))
            with cur.copy(f"COPY {staging_name(row_type)} ({cols}) FROM STDIN") as copy:
                for row in recs.values():
                    values = list(row.values())
                    for i in jpos:
                        if values[i] is not None:
                            values[i] = Jsonb(values[i])
                    values += [source_id, namespace]
                    copy.write_row(values)
            merge = merge_sql(row_type)
            if row_type is not SessionRow and not row_type.PER_SOURCE:
                cur.execute(stub_sessions_sql(row_type))
            cur.execute(dirty_sql(merge) if not row_type.PER_SOURCE else merge)
            staged[row_type.TABLE] += len(recs)
    return staged


EVENT_TABLES: tuple[str, ...] = tuple(
    t.TABLE for t in ROW_TYPES if t is not SessionRow and not t.PER_SOURCE
)
PER_SOURCE_TABLES: tuple[str, ...] = tuple(t.TABLE for t in ROW_TYPES if t.PER_SOURCE)


def purge_source(conn: psycopg.Connection, source_id: int) -> int:
    """Delete every row a source file contributed; mark the affected sessions dirty.

    Sessions first seen in this file are deleted when no other file still has rows for them.
    Returns the number of event rows deleted. Runs in the caller's transaction.
    """
    deleted = 0
    with conn.cursor() as cur:
        for table in EVENT_TABLES:
            cur.execute(
                f"WITH d AS (DELETE FROM ah.{table} WHERE source_id = %s RETURNING session_id) "
                "INSERT INTO ah.dirty_session (session_id) SELECT DISTINCT session_id FROM d "
                "ON CONFLICT (session_id) DO NOTHING",
                (source_id,),
            )
            deleted += cur.rowcount
        for table in PER_SOURCE_TABLES:
            cur.execute(f"DELETE FROM ah.{table} WHERE source_id = %s", (source_id,))
        refs = " AND ".join(f"NOT EXISTS (SELECT 1 FROM ah.{t} x WHERE x.session_id = s.id)" for t in EVENT_TABLES)
        cur.execute(f"DELETE FROM ah.session s WHERE s.source_id = %s AND {refs}", (source_id,))
    return deleted
