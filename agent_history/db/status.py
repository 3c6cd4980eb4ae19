"""`db status`: what server, which versions, which keyword backend, which revision, how many rows;
and the statements of `status`'s catalogue part (`ingest.status`: files, sessions, messages, calls
and parse issues per namespace, the last and the killed index passes, the bulk-pass mark)."""

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


# --- `status`: the catalogue per namespace and the parse issues (`ingest.status`) ---------------
def files_by_status(conn: psycopg.Connection) -> list[tuple[str, str, str]]:
    """(namespace, status, path) of every catalogued source file, by namespace and status."""
    return conn.execute("SELECT namespace, status, path FROM ah.source_file ORDER BY 1, 2").fetchall()


def sessions_per_namespace(conn: psycopg.Connection) -> list[tuple[str | None, int]]:
    """(namespace, threads) per namespace of ``ah.session`` (None: a thread with no namespace)."""
    return conn.execute("SELECT namespace, count(*) FROM ah.session GROUP BY 1").fetchall()


def messages_per_namespace(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(namespace, messages) per namespace."""
    return conn.execute("SELECT namespace, count(*) FROM ah.message GROUP BY 1").fetchall()


def calls_per_namespace(conn: psycopg.Connection) -> list[tuple[str, int, int | None]]:
    """(namespace of the call's file, model calls that are not API-error notices, tokens of the
    five billed buckets — None when no call recorded usage) per namespace."""
    return conn.execute(
        "SELECT f.namespace, count(*) FILTER (WHERE NOT coalesce(c.is_api_error, false)), "
        "sum(CASE WHEN num_nonnulls(c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output) > 0 "
        "THEN coalesce(c.input_uncached,0) + coalesce(c.cache_read,0) + coalesce(c.cache_write_5m,0) "
        "+ coalesce(c.cache_write_1h,0) + coalesce(c.output,0) END) "  # NULL when no call recorded usage
        "FROM ah.model_call c JOIN ah.source_file f ON f.id = c.source_id GROUP BY 1"
    ).fetchall()


def issues_per_namespace(conn: psycopg.Connection) -> list[tuple[str, str, int]]:
    """(namespace, parse issue kind, issues), sorted."""
    return conn.execute(
        "SELECT f.namespace, i.kind, count(*) FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
        "GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()


def last_finished_pass(conn: psycopg.Connection) -> tuple | None:
    """(started_at, finished_at, status, duration in seconds as Decimal) of the newest index pass
    that recorded its end; None before the first."""
    return conn.execute(
        "SELECT started_at, finished_at, status, extract(epoch FROM finished_at - started_at) "
        "FROM ah.index_run WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()


def killed_passes(conn: psycopg.Connection) -> tuple:
    """(count, newest started_at, newest noticed_at) of the passes killed before recording their
    end (status ``interrupted``, no ``finished_at``); (0, None, None) when none."""
    return conn.execute(
        "SELECT count(*), max(started_at), max((summary ->> 'noticed_at')::timestamptz) FROM ah.index_run "
        "WHERE status = 'interrupted' AND finished_at IS NULL"
    ).fetchone()


def bulk_pass_marker(conn: psycopg.Connection) -> tuple | None:
    """(updated_at,) of the ``bulk_pass`` mark in ``ah.meta`` (a bulk pass not yet ended); None."""
    return conn.execute("SELECT updated_at FROM ah.meta WHERE key = 'bulk_pass'").fetchone()


def parse_issue_kinds(conn: psycopg.Connection) -> list[str]:
    """The distinct parse issue kinds in the catalogue, sorted."""
    return [r[0] for r in conn.execute("SELECT DISTINCT kind FROM ah.parse_issue ORDER BY 1")]


def parse_issues(conn: psycopg.Connection, kind: str | None, namespace: str | None, limit: int) -> list[tuple]:
    """Up to `limit` parse issues (of `kind` / `namespace` when given) as (namespace, path, kind,
    byte_offset, line_number, detail, created_at), by path, offset and kind."""
    return conn.execute(
        "SELECT f.namespace, f.path, i.kind, i.byte_offset, i.line_number, i.detail, i.created_at "
        "FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
        "WHERE (%(kind)s::text IS NULL OR i.kind = %(kind)s) AND (%(ns)s::text IS NULL OR f.namespace = %(ns)s) "
        "ORDER BY f.path, i.byte_offset, i.kind LIMIT %(limit)s",
        {"kind": kind, "ns": namespace, "limit": limit},
    ).fetchall()


__all__ = [
    "CORE_TABLES",
    "bulk_pass_marker",
    "calls_per_namespace",
    "db_status",
    "files_by_status",
    "issues_per_namespace",
    "killed_passes",
    "last_finished_pass",
    "messages_per_namespace",
    "parse_issue_kinds",
    "parse_issues",
    "psycopg",
    "server_summary",
    "sessions_per_namespace",
]
