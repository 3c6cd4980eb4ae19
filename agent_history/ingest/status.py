"""Catalogue status per namespace and the parse-issue listing (read-only queries)."""

from __future__ import annotations

import os
from typing import Any

import psycopg


def catalogue_status(conn: psycopg.Connection) -> dict[str, Any]:
    """Per namespace: files by status, sessions, messages, model calls, tokens, open issues by kind;
    plus the last pass (time, duration in seconds, status) and ``killed_passes``: None, or
    ``{count, last_started_at, noticed_at}`` of the passes killed before recording their end (a
    later pass marked them ``interrupted`` with no ``finished_at``; `Loader.run`); ``bulk_pass``:
    None, or ``{started_at}`` of a bulk pass not yet ended (`ingest.bulk`: search indexes and
    term statistics are completed by the next pass)."""
    namespaces: dict[str, dict[str, Any]] = {}

    def ns(name: str) -> dict[str, Any]:
        return namespaces.setdefault(
            name,
            {"files": {}, "sessions": 0, "messages": 0, "model_calls": 0, "tokens": None, "issues": {}},
        )

    # Files by status; a catalogued file no longer on disk counts as `missing` (stat only).
    for name, status, path in conn.execute("SELECT namespace, status, path FROM ah.source_file ORDER BY 1, 2"):
        key = status if os.path.isfile(path) else "missing"
        files = ns(name)["files"]
        files[key] = files.get(key, 0) + 1
    for name, n in conn.execute("SELECT namespace, count(*) FROM ah.session GROUP BY 1"):
        ns(name or "?")["sessions"] = n
    for name, n in conn.execute("SELECT namespace, count(*) FROM ah.message GROUP BY 1"):
        ns(name)["messages"] = n
    for name, n, tokens in conn.execute(
        "SELECT f.namespace, count(*) FILTER (WHERE NOT coalesce(c.is_api_error, false)), "
        "sum(CASE WHEN num_nonnulls(c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output) > 0 "
        "THEN coalesce(c.input_uncached,0) + coalesce(c.cache_read,0) + coalesce(c.cache_write_5m,0) "
        "+ coalesce(c.cache_write_1h,0) + coalesce(c.output,0) END) "  # NULL when no call recorded usage
        "FROM ah.model_call c JOIN ah.source_file f ON f.id = c.source_id GROUP BY 1"
    ):
        ns(name)["model_calls"] = n
        ns(name)["tokens"] = int(tokens) if tokens is not None else None
    for name, kind, n in conn.execute(
        "SELECT f.namespace, i.kind, count(*) FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
        "GROUP BY 1, 2 ORDER BY 1, 2"
    ):
        ns(name)["issues"][kind] = n
    last = conn.execute(
        "SELECT started_at, finished_at, status, extract(epoch FROM finished_at - started_at) "
        "FROM ah.index_run WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()
    killed = conn.execute(
        "SELECT count(*), max(started_at), max((summary ->> 'noticed_at')::timestamptz) FROM ah.index_run "
        "WHERE status = 'interrupted' AND finished_at IS NULL"
    ).fetchone()
    bulk = conn.execute("SELECT updated_at FROM ah.meta WHERE key = 'bulk_pass'").fetchone()
    return {
        "namespaces": namespaces,
        "bulk_pass": None if bulk is None else {"started_at": bulk[0]},
        "last_pass": None
        if last is None
        else {"started_at": last[0], "finished_at": last[1], "status": last[2], "seconds": float(last[3])},
        "killed_passes": None
        if not killed[0]
        else {"count": killed[0], "last_started_at": killed[1], "noticed_at": killed[2]},
    }


def issue_kinds(conn: psycopg.Connection) -> list[str]:
    """The distinct parse issue kinds in the catalogue, sorted."""
    return [r[0] for r in conn.execute("SELECT DISTINCT kind FROM ah.parse_issue ORDER BY 1")]


def list_issues(
    conn: psycopg.Connection, *, kind: str | None = None, namespace: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Parse issues with file path and byte offset, newest files first."""
    rows = conn.execute(
        "SELECT f.namespace, f.path, i.kind, i.byte_offset, i.line_number, i.detail, i.created_at "
        "FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
        "WHERE (%(kind)s::text IS NULL OR i.kind = %(kind)s) AND (%(ns)s::text IS NULL OR f.namespace = %(ns)s) "
        "ORDER BY f.path, i.byte_offset, i.kind LIMIT %(limit)s",
        {"kind": kind, "ns": namespace, "limit": limit},
    ).fetchall()
    keys = ("namespace", "path", "kind", "byte_offset", "line_number", "detail", "created_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]
