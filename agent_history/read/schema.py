"""The catalogue's own description from PostgreSQL's system catalogs: the tables and views of
schema ``ah`` with their columns, estimated rows and comments, its functions, and one relation's
column comments and indexes (the MCP `schema` tool). Read-only.
"""

from __future__ import annotations

import psycopg

RELATIONS_SQL = """
SELECT c.relname, CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' ELSE 'table' END,
       greatest(c.reltuples, 0)::bigint, obj_description(c.oid, 'pg_class'),
       array_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN '!' ELSE '' END
                 ORDER BY a.attnum)
FROM pg_class AS c
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relnamespace = 'ah'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')
  AND (%(table)s::text IS NULL OR c.relname = %(table)s)
GROUP BY c.oid
ORDER BY c.relkind <> 'r', c.relname
"""

FUNCTIONS_SQL = """
SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_function_result(p.oid), obj_description(p.oid, 'pg_proc')
FROM pg_proc AS p
WHERE p.pronamespace = 'ah'::regnamespace AND p.prokind IN ('f', 'a', 'w')
  AND pg_get_function_result(p.oid) <> 'trigger'
ORDER BY p.proname, 2
"""

DETAIL_SQL = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, col_description(a.attrelid, a.attnum)
FROM pg_attribute AS a
WHERE a.attrelid = ('ah.' || quote_ident(%(table)s))::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""

INDEXES_SQL = """
SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid)
FROM pg_index WHERE indrelid = ('ah.' || quote_ident(%(table)s))::regclass ORDER BY 1
"""


def relations(conn: psycopg.Connection, table: str | None = None) -> list[tuple]:
    """Tables and views of ``ah`` (only `table` when given; tables first, then by name):
    ``(name, kind, rows estimate, comment, ["column type[!]" …])``; ``!`` marks NOT NULL."""
    return conn.execute(RELATIONS_SQL, {"table": table}).fetchall()


def functions(conn: psycopg.Connection) -> list[tuple]:
    """Functions of ``ah`` but trigger functions: ``(name, arguments, result, comment)``."""
    return conn.execute(FUNCTIONS_SQL).fetchall()


def columns(conn: psycopg.Connection, table: str) -> list[tuple]:
    """Columns of relation ``ah.<table>``: ``(name, type, not null, comment)``. Raises
    psycopg.errors.UndefinedTable when there is no such relation."""
    return conn.execute(DETAIL_SQL, {"table": table}).fetchall()


def indexes(conn: psycopg.Connection, table: str) -> list[tuple]:
    """Indexes of relation ``ah.<table>``: ``(index name, definition)``."""
    return conn.execute(INDEXES_SQL, {"table": table}).fetchall()
