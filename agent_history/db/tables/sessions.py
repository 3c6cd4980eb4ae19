"""The post-pass's statements over ``ah.session`` and ``ah.dirty_session`` (docs/design.md §7;
the rollups themselves are SQL functions in `sql/30_postpass.sql` and `sql/35_efficiency.sql`):
which dirty sessions a pass rolls up, taking their marks, setting and clearing marks outside a
pass (`mark_dirty`, `clear_dirty`: a usage fill, a failed rollup, a session delete; the loader's
merges and the price refresh mark in the statement that changes the rows), the calls of the
rollup functions
(each only when its function exists: a catalogue migrated but not yet given its `sql/` runs
none), and the working directories the loader's discovery matches project folders against.
Every function runs in the caller's transaction.
"""

from __future__ import annotations

import psycopg

DIRTY_IN_SCOPE = (
    "SELECT d.session_id FROM ah.dirty_session d LEFT JOIN ah.session s ON s.id = d.session_id "
    "WHERE %(ns)s::text[] IS NULL OR s.id IS NULL OR s.namespace = ANY(%(ns)s::text[])"
)
"""The dirty sessions a pass over namespaces ``ns`` rolls up (every one when NULL): those of its
namespaces, and marks whose session is gone (a purge). Another host's pass, running at the same
time over its own namespaces, rolls up its own."""


def known_cwds(conn: psycopg.Connection, host: str | None) -> tuple[str, ...]:
    """The distinct absolute working directories of the sessions of `host` (and of unknown
    host), sorted."""
    rows = conn.execute(
        "SELECT DISTINCT cwd FROM ah.session WHERE cwd LIKE '/%%' AND source_type = 'session' "
        "AND (origin_host IS NULL OR origin_host = %s) ORDER BY 1",
        (host,),
    ).fetchall()
    return tuple(r[0] for r in rows)


def can_roll_up(conn: psycopg.Connection) -> bool:
    """True when ``ah.refresh_sessions(bigint[])`` exists (`sql/30_postpass.sql` applied)."""
    return conn.execute("SELECT to_regprocedure('ah.refresh_sessions(bigint[])')").fetchone()[0] is not None


def has_claims(conn: psycopg.Connection) -> bool:
    """True when ``ah.row_claim`` exists (migration 0026_owner)."""
    return bool(conn.execute("SELECT to_regclass('ah.row_claim')").fetchone()[0])


def dirty_sharing_rows(conn: psycopg.Connection, namespaces: list[str] | None) -> list[int]:
    """The dirty sessions (of any namespace) that share a claimed row with a dirty session
    `DIRTY_IN_SCOPE` of `namespaces`."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT c2.session_id FROM ah.row_claim c1 JOIN ah.row_claim c2 "
            "ON c2.row_table = c1.row_table AND c2.row_id = c1.row_id "
            "JOIN ah.dirty_session d ON d.session_id = c2.session_id "
            f"WHERE c1.session_id IN ({DIRTY_IN_SCOPE})",
            {"ns": namespaces},
        )
    ]


def take_dirty(conn: psycopg.Connection, only: int | None, namespaces: list[str] | None, moved: list[int]) -> list[int]:
    """Delete the dirty marks to roll up — session `only`, else those `DIRTY_IN_SCOPE` of
    `namespaces` and `moved` — and return their session ids."""
    return conn.execute(
        "WITH d AS (DELETE FROM ah.dirty_session WHERE CASE WHEN %(only)s::bigint IS NULL "
        f"THEN session_id IN ({DIRTY_IN_SCOPE}) OR session_id = ANY(%(moved)s::bigint[]) "
        "ELSE session_id = %(only)s END RETURNING session_id) "
        "SELECT coalesce(array_agg(session_id), '{}') FROM d",
        {"only": only, "ns": namespaces, "moved": moved},
    ).fetchone()[0]


def inherit_hosts(conn: psycopg.Connection, ids: list[int]) -> None:
    """Give each session of `ids` its source file's ``origin_host`` (migration 0024; an unknown
    host stays unknown)."""
    conn.execute(
        "UPDATE ah.session s SET origin_host = sf.origin_host FROM ah.source_file sf WHERE s.id = ANY(%s) "
        "AND sf.id = s.source_id AND sf.origin_host IS NOT NULL AND s.origin_host IS DISTINCT FROM sf.origin_host",
        (ids,),
    )


def refresh_sessions(conn: psycopg.Connection, ids: list[int]) -> int:
    """Roll up sessions `ids` (``ah.refresh_sessions``: lineage, spawns, repository, rollups);
    returns the sessions rolled up."""
    return int(conn.execute("SELECT ah.refresh_sessions(%s::bigint[])", (ids,)).fetchone()[0] or 0)


def refresh_efficiency(conn: psycopg.Connection, ids: list[int]) -> None:
    """Thread roles and per-call triggers of sessions `ids` (``ah.refresh_efficiency``, issue 11),
    when the function exists."""
    if conn.execute("SELECT to_regprocedure('ah.refresh_efficiency(bigint[])')").fetchone()[0] is not None:
        conn.execute("SELECT ah.refresh_efficiency(%s::bigint[])", (ids,))


def link_session_summaries(conn: psycopg.Connection) -> None:
    """Link journal summaries synced before their session was indexed (``sql/50_journal.sql``),
    when the function exists."""
    if conn.execute("SELECT to_regprocedure('ah.link_session_summaries()')").fetchone()[0]:
        conn.execute("SELECT ah.link_session_summaries()")


def dirty_in_scope(conn: psycopg.Connection, namespaces: list[str] | None) -> list[int]:
    """The session ids `DIRTY_IN_SCOPE` of `namespaces`, ascending."""
    return [r[0] for r in conn.execute(DIRTY_IN_SCOPE + " ORDER BY 1", {"ns": namespaces}).fetchall()]


def mark_dirty(conn: psycopg.Connection, ids: list[int]) -> None:
    """Mark threads `ids` (``ah.session.id``) dirty: the next post-pass refreshes their rollups
    (a thread marked already stays marked once)."""
    conn.execute("INSERT INTO ah.dirty_session (session_id) SELECT unnest(%s::bigint[]) ON CONFLICT DO NOTHING", (ids,))


def clear_dirty(conn: psycopg.Connection, ids: list[int]) -> None:
    """Delete the dirty marks of threads `ids` (``ah.session.id``; one without a mark is skipped)."""
    conn.execute("DELETE FROM ah.dirty_session WHERE session_id = ANY(%s::bigint[])", (ids,))
