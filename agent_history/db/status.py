"""`db status`: what server, which versions, which keyword backend, which revision, how many rows."""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.db.connection import Database
from agent_history.db.migrate import current_revision, head_revision
from agent_history.model.tables import BOOKKEEPING_TABLES, PARSED_TABLES

#: The tables `db status` counts rows of.
CORE_TABLES: tuple[str, ...] = PARSED_TABLES + BOOKKEEPING_TABLES


def db_status(db: Database) -> dict[str, Any]:
    """Server, versions, backend, revision and row counts, as a JSON-ready dict.

    Keys: server (embedded pgdata path or masked DSN), embedded (bool), postgres_version,
    pgvector_version, keyword_backend (bm25 | fts), schema_revision, schema_head, schema_at_head,
    row_counts {table: rows}. Raises DatabaseError subclasses on connection problems.
    """
    with db.connect() as conn:
        out = server_summary(db, conn)
        counts = {}
        for table in CORE_TABLES:
            counts[table] = conn.execute(f"SELECT count(*) FROM ah.{table}").fetchone()[0]
    return {**out, "row_counts": counts}


def server_summary(db: Database, conn: psycopg.Connection) -> dict[str, Any]:
    """`db_status` without the row counts (one query on `conn`, no table scan): what the
    first line of `agent-history status` shows."""
    pg_version, vec, backend = conn.execute(
        "SELECT current_setting('server_version'), "
        "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
        "(SELECT value FROM ah.meta WHERE key = 'keyword_backend')"
    ).fetchone()
    rev = current_revision(conn)
    head = head_revision()
    return {
        "server": db.where(),
        "embedded": db.is_embedded,
        "postgres_version": pg_version.split()[0],
        "pgvector_version": vec,
        "keyword_backend": backend,
        "schema_revision": rev,
        "schema_head": head,
        "schema_at_head": rev == head,
    }


__all__ = ["CORE_TABLES", "db_status", "psycopg", "server_summary"]
