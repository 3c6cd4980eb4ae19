"""What `rebuild` deletes, and the ``ah.meta`` keys that say a rebuild is under way (docs/design.md
§7; `ingest.rebuild`): the derived tables emptied at once, or one host's *scope* — its files
and their sessions, every row of theirs following by cascade — with the scope's queries over
``ah.source_file``. The caller holds the pass locks and the transactions.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

SCOPE = "(%(host)s::text IS NULL OR sf.origin_host = %(host)s OR (sf.origin_host IS NULL AND sf.namespace = ANY(%(ns)s::text[])))"
"""A rebuild's scope as a condition on ``ah.source_file sf`` (parameters ``host``: the host, NULL
for every file; ``ns``: the namespaces whose unknown-host files are in it; `ingest.rebuild.Scope`)."""

CHECK_ROWS = f"SELECT namespace, path, rel_path, tier FROM ah.source_file sf WHERE {SCOPE} ORDER BY namespace, path"
"""The scope's files as `rebuild-check` counts them, ``(namespace, path, rel_path, tier)``
(streamed by the caller through a server-side cursor: `ingest.verify.stream_rows`)."""


def truncate(conn: psycopg.Connection, tables: Iterable[str]) -> None:
    """Empty the ``ah`` tables named `tables` at once, identities restarted (no CASCADE)."""
    conn.execute("TRUNCATE " + ", ".join(f"ah.{t}" for t in tables) + " RESTART IDENTITY")


def mark_started(conn: psycopg.Connection, key: str) -> None:
    """Set ``ah.meta`` `key` to now (UTC, ISO 8601 text): a rebuild under way."""
    conn.execute(
        "INSERT INTO ah.meta (key, value) VALUES (%s, to_char(now() AT TIME ZONE 'UTC', "
        '\'YYYY-MM-DD"T"HH24:MI:SS"Z"\')) ON CONFLICT (key) DO UPDATE SET value = excluded.value, '
        "updated_at = now()",
        (key,),
    )


def unlink_summaries(conn: psycopg.Connection) -> None:
    """Unlink every journal summary from its session (ids restart; the post-pass relinks them),
    when ``ah.session_summary`` exists."""
    if conn.execute("SELECT to_regclass('ah.session_summary')").fetchone()[0] is not None:
        conn.execute("UPDATE ah.session_summary SET session_id = NULL WHERE session_id IS NOT NULL")


def scope_namespaces(conn: psycopg.Connection, params: dict) -> set[str]:
    """The namespaces of the `SCOPE`'s files."""
    rows = conn.execute(f"SELECT DISTINCT namespace FROM ah.source_file sf WHERE {SCOPE}", params)
    return {r[0] for r in rows}


def outside_scope(conn: psycopg.Connection, params: dict) -> bool:
    """Whether a catalogued file is outside the `SCOPE` (another host's)."""
    return bool(
        conn.execute(f"SELECT EXISTS (SELECT 1 FROM ah.source_file sf WHERE NOT {SCOPE})", params).fetchone()[0]
    )


def delete_scope(conn: psycopg.Connection, params: dict, namespaces: list[str]) -> None:
    """Delete the `SCOPE`'s files and their sessions (and the sessions without a file in
    `namespaces`); their rows follow by cascade."""
    ids = [r[0] for r in conn.execute(f"SELECT sf.id FROM ah.source_file sf WHERE {SCOPE}", params)]
    conn.execute(
        "DELETE FROM ah.session WHERE source_id = ANY(%s) OR (source_id IS NULL AND namespace = ANY(%s))",
        (ids, namespaces),
    )
    conn.execute("DELETE FROM ah.source_file WHERE id = ANY(%s)", (ids,))


def hot_files(conn: psycopg.Connection, params: dict) -> psycopg.Cursor:
    """``(namespace, agent, path, rel_path)`` of one hot file per home (path minus its relative
    path) and namespace, in the `SCOPE`."""
    return conn.execute(
        "SELECT DISTINCT ON (namespace, left(path, length(path) - length(rel_path) - 1)) namespace, agent, path, rel_path "
        f"FROM ah.source_file sf WHERE tier = 'hot' AND rel_path IS NOT NULL AND path LIKE '%%/' || rel_path AND {SCOPE}",
        params,
    )


def clear_started(conn: psycopg.Connection, keys: list[str]) -> None:
    """Delete the ``ah.meta`` `keys` (the rebuild is complete)."""
    conn.execute("DELETE FROM ah.meta WHERE key = ANY(%s)", (keys,))


def started_at(conn: psycopg.Connection, keys: list[str]) -> str | None:
    """The earliest value of the ``ah.meta`` `keys` (ISO 8601 text), or None."""
    row = conn.execute("SELECT min(value) FROM ah.meta WHERE key = ANY(%s)", (keys,)).fetchone()
    return row[0] if row else None


def started_at_any(conn: psycopg.Connection) -> str | None:
    """The earliest rebuild mark in ``ah.meta`` (any ``rebuild:started_at`` key: the whole
    catalogue's or a host's; ISO 8601 text), or None: when a rebuild under way began."""
    row = conn.execute("SELECT min(value) FROM ah.meta WHERE key LIKE 'rebuild:started\\_at%'").fetchone()
    return row[0] if row else None
