"""Catalogue status per namespace and the parse-issue listing (read-only; the statements are
`db.status`'s)."""

from __future__ import annotations

import os
from typing import Any

import psycopg

from agent_history.db import status as catalogue
from agent_history.db.tables.shared_sessions import sessions_stored_elsewhere


def catalogue_status(conn: psycopg.Connection) -> dict[str, Any]:
    """Per namespace: files by status, sessions, messages, model calls, tokens, open issues by kind;
    plus the last pass (time, duration in seconds, status) and ``killed_passes``: None, or
    ``{count, last_started_at, noticed_at}`` of the passes killed before recording their end (a
    later pass marked them ``interrupted`` with no ``finished_at``; `Loader.run`); ``bulk_pass``:
    None, or ``{started_at}`` of a bulk pass not yet ended (`ingest.bulk`: search indexes and
    term statistics are completed by the next pass). Each namespace also gets
    ``sessions_elsewhere``: {other namespace: sessions} of the same transcripts another namespace
    stored first (a synced home indexed on two machines; `db.tables.shared_sessions`), {} when none."""
    namespaces: dict[str, dict[str, Any]] = {}

    def ns(name: str) -> dict[str, Any]:
        return namespaces.setdefault(
            name,
            {"files": {}, "sessions": 0, "messages": 0, "model_calls": 0, "tokens": None, "issues": {}},
        )

    # Files by status; a catalogued file no longer on disk counts as `missing` (stat only).
    for name, status, path in catalogue.files_by_status(conn):
        key = status if os.path.isfile(path) else "missing"
        files = ns(name)["files"]
        files[key] = files.get(key, 0) + 1
    for name, n in catalogue.sessions_per_namespace(conn):
        ns(name or "?")["sessions"] = n
    for name, n in catalogue.messages_per_namespace(conn):
        ns(name)["messages"] = n
    for name, n, tokens in catalogue.calls_per_namespace(conn):
        ns(name)["model_calls"] = n
        ns(name)["tokens"] = int(tokens) if tokens is not None else None
    for name, kind, n in catalogue.issues_per_namespace(conn):
        ns(name)["issues"][kind] = n
    elsewhere = sessions_stored_elsewhere(conn)
    for name, d in namespaces.items():
        d["sessions_elsewhere"] = elsewhere.get(name, {})
    last = catalogue.last_finished_pass(conn)
    killed = catalogue.killed_passes(conn)
    bulk = catalogue.bulk_pass_marker(conn)
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
    return catalogue.parse_issue_kinds(conn)


def list_issues(
    conn: psycopg.Connection, *, kind: str | None = None, namespace: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Parse issues with file path and byte offset, newest files first."""
    rows = catalogue.parse_issues(conn, kind, namespace, limit)
    keys = ("namespace", "path", "kind", "byte_offset", "line_number", "detail", "created_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]
