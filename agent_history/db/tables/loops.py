"""The loop tables: ``ah.loops`` (migration 0007: one row per launch, its window, status and
progress), ``ah.lane`` and ``ah.loop_closeout``, written by the loop post-pass (`ingest.loops`,
inside the index pass's post-pass transaction), and ``ah.loop_run_metadata`` (migration 0022:
charter and closeout files of a checkout), written by the collector (`ingest.collect_installed`).

The rules (launch detection, lanes, closeouts, status, progress) are the pure `loops` package;
the post-pass applies them and hands the rows here. Every write is guarded by ``IS DISTINCT
FROM`` (or compared first), so a second pass changes nothing. Nothing here commits. The
evidence the post-pass reads from the transcript and collector tables is `db.tables.loop_evidence`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

PROGRESS_COLUMNS = (
    "lanes", "model_calls", "input_uncached", "cache_read", "cache_write_5m", "cache_write_1h",
    "output", "reasoning", "cost_usd", "errors", "commits", "pushes", "landed", "parked",
)  # fmt: skip
STATE_COLUMNS = (
    "window_end_at", "status", "waiting_until", "ended_at", "end_evidence", "root_last_active_at",
    *PROGRESS_COLUMNS,
)  # fmt: skip
"""The ``ah.loops`` columns `store_state` rewrites (plus ``progress_sources`` after migration 0019)."""


def loops_table_exists(conn: psycopg.Connection) -> bool:
    """Whether ``ah.loops`` exists (migration 0007 applied)."""
    return conn.execute("SELECT to_regclass('ah.loops')").fetchone()[0] is not None


def may_update_loops(conn: psycopg.Connection) -> bool:
    """Whether this connection's role may update ``ah.loops`` (the owner may; ``ah_collector``
    may not: its loops are refreshed by the next index pass)."""
    return conn.execute("SELECT has_table_privilege('ah.loops', 'UPDATE')").fetchone()[0]


# -- launches ----------------------------------------------------------------------------------
def upsert_launches(conn: psycopg.Connection, launches: Sequence[tuple]) -> None:
    """Upsert one ``ah.loops`` row per launch — (agent, launch message uid, root session id,
    launch message id, closeout_path, closeout_abspath, charter_path, charter_sha256,
    loop_number, loop_date, repo, started_at) rows; a new loop starts ``running``."""
    for launch in launches:
        conn.execute(
            """
            INSERT INTO ah.loops AS l (agent, launch_message_uid, root_session_id, launch_message_id,
                closeout_path, closeout_abspath, charter_path, charter_sha256, loop_number, loop_date,
                repo, started_at, status)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'running')
            ON CONFLICT (agent, launch_message_uid) DO UPDATE SET
                root_session_id = EXCLUDED.root_session_id, launch_message_id = EXCLUDED.launch_message_id,
                closeout_path = EXCLUDED.closeout_path, closeout_abspath = EXCLUDED.closeout_abspath,
                charter_path = EXCLUDED.charter_path, charter_sha256 = EXCLUDED.charter_sha256,
                loop_number = EXCLUDED.loop_number, loop_date = EXCLUDED.loop_date, repo = EXCLUDED.repo,
                started_at = EXCLUDED.started_at
            WHERE (l.root_session_id, l.launch_message_id, l.closeout_path, l.closeout_abspath, l.charter_path,
                   l.charter_sha256, l.loop_number, l.loop_date, l.repo, l.started_at)
                  IS DISTINCT FROM
                  (EXCLUDED.root_session_id, EXCLUDED.launch_message_id, EXCLUDED.closeout_path,
                   EXCLUDED.closeout_abspath, EXCLUDED.charter_path, EXCLUDED.charter_sha256,
                   EXCLUDED.loop_number, EXCLUDED.loop_date, EXCLUDED.repo, EXCLUDED.started_at)
            """,
            launch,
        )


def delete_lost_launches(conn: psycopg.Connection, roots: list[int], keep: list[str]) -> None:
    """Delete the loops rooted in `roots` whose launch message uid is not in `keep` (the file was
    rewritten or purged); their lanes and closeouts go with them."""
    conn.execute(
        "DELETE FROM ah.loops WHERE root_session_id = ANY (%s) AND NOT (launch_message_uid = ANY (%s))",
        (roots, keep),
    )


# -- which loops -------------------------------------------------------------------------------
def affected_loops(conn: psycopg.Connection, dirty: list[int]) -> list[int]:
    """Ids of the loops to recompute for the dirty sessions `dirty`: every non-finished loop,
    those whose root, a lane or a session under the root is dirty, those a parentless dirty Codex
    session could join, and every loop sharing a closeout path with one of them; by launch time."""
    rows = conn.execute(
        """
        WITH d AS (SELECT s.* FROM ah.session AS s WHERE s.id = ANY (%(dirty)s)),
        direct AS (
            SELECT l.id, l.closeout_abspath FROM ah.loops AS l
            WHERE l.status <> 'finished'
               OR l.root_session_id IN (SELECT id FROM d UNION SELECT root_session_id FROM d
                                        UNION SELECT parent_session_id FROM d)
               OR l.id IN (SELECT loop_id FROM ah.lane WHERE session_id = ANY (%(dirty)s))
               OR EXISTS (SELECT 1 FROM d
                          WHERE d.agent = 'codex' AND d.parent_session_id IS NULL
                            AND d.started_at >= l.started_at
                            AND (l.window_end_at IS NULL OR d.started_at < l.window_end_at))
        )
        SELECT l.id FROM ah.loops AS l
        WHERE l.id IN (SELECT id FROM direct)
           OR l.closeout_abspath IN (SELECT closeout_abspath FROM direct)
        ORDER BY l.started_at NULLS FIRST, l.id
        """,
        {"dirty": dirty},
    ).fetchall()
    return [r[0] for r in rows]


def loops_in_changed_repositories(conn: psycopg.Connection, ids: list[int]) -> list[int]:
    """Ids of the loops (not in `ids`) whose closeout lies in a repository the collector changed
    after their last refresh, by launch time. Needs the collector's tables (migration 0019)."""
    rows = conn.execute(
        """
        SELECT l.id FROM ah.loops AS l
        WHERE EXISTS (SELECT 1 FROM ah.repository AS r
                      WHERE starts_with(l.closeout_abspath, r.path || '/')
                        AND (l.refreshed_at IS NULL OR r.changed_at > l.refreshed_at))
          AND NOT (l.id = ANY (%s))
        ORDER BY l.started_at NULLS FIRST, l.id
        """,
        (ids,),
    ).fetchall()
    return [r[0] for r in rows]


# -- one loop ----------------------------------------------------------------------------------
def loop_facts(conn: psycopg.Connection, loop_id: int) -> tuple | None:
    """(id, agent, root session id, root's cwd, started_at, closeout_abspath, loop_number,
    charter_sha256, repo) of the loop — `ingest.loop_evidence.LoopFacts`' fields in order; None
    when it is gone."""
    return conn.execute(
        """
        SELECT l.id, l.agent, l.root_session_id, s.cwd, l.started_at, l.closeout_abspath, l.loop_number,
               l.charter_sha256, l.repo
        FROM ah.loops AS l JOIN ah.session AS s ON s.id = l.root_session_id
        WHERE l.id = %s
        """,
        (loop_id,),
    ).fetchone()


def next_launch(conn: psycopg.Connection, loop_id: int) -> tuple[int, datetime | None] | None:
    """(id, started_at) of the next launch of the same root after this loop's launch message (by
    the message's time, source and byte offset); None when there is none."""
    return conn.execute(
        """
        SELECT n.id, n.started_at FROM ah.loops AS n
        JOIN ah.message AS nm ON nm.id = n.launch_message_id
        JOIN ah.loops AS l ON l.id = %(id)s
        JOIN ah.message AS lm ON lm.id = l.launch_message_id
        WHERE n.root_session_id = l.root_session_id AND n.id <> l.id
          AND (nm.ts, nm.source_id, nm.byte_offset) > (lm.ts, lm.source_id, lm.byte_offset)
        ORDER BY nm.ts, nm.source_id, nm.byte_offset
        LIMIT 1
        """,
        {"id": loop_id},
    ).fetchone()


def delete_detached_lanes(conn: psycopg.Connection, loop_id: int, session_ids: list[int]) -> None:
    """Drop the loop's lanes whose session is not in `session_ids` (no longer attached)."""
    conn.execute("DELETE FROM ah.lane WHERE loop_id = %s AND NOT (session_id = ANY (%s))", (loop_id, session_ids))


def upsert_lanes(conn: psycopg.Connection, loop_id: int, lanes: Sequence[tuple[int, str, str | None, list]]) -> None:
    """Upsert the loop's lanes — (session id, link method, return status, lane-return blocks as
    JSON-able values) rows."""
    for sid, method, status, returns in lanes:
        conn.execute(
            """
            INSERT INTO ah.lane AS a (loop_id, session_id, link_method, return_status, returns)
            VALUES (%s, %s, %s, %s, %s)
            ON CONFLICT (loop_id, session_id) DO UPDATE SET
                link_method = EXCLUDED.link_method, return_status = EXCLUDED.return_status, returns = EXCLUDED.returns
            WHERE (a.link_method, a.return_status, a.returns)
                  IS DISTINCT FROM (EXCLUDED.link_method, EXCLUDED.return_status, EXCLUDED.returns)
            """,
            (loop_id, sid, method, status, Jsonb(returns)),
        )


def closeout_writers(conn: psycopg.Connection, closeout_abspath: str) -> list[int]:
    """Session ids that may write the closeout `closeout_abspath`: the roots and lanes of every
    loop with that closeout path (a relaunch shares it)."""
    rows = conn.execute(
        """
        SELECT l.root_session_id FROM ah.loops AS l WHERE l.closeout_abspath = %(path)s
        UNION
        SELECT a.session_id FROM ah.lane AS a JOIN ah.loops AS l ON l.id = a.loop_id
        WHERE l.closeout_abspath = %(path)s
        """,
        {"path": closeout_abspath},
    ).fetchall()
    return [r[0] for r in rows]


def replace_closeouts(conn: psycopg.Connection, loop_id: int, closeouts: Sequence[tuple]) -> None:
    """The loop's recorded closeout writes become `closeouts` — (session id, tool_call_uid,
    sha256, first_line, written_at, qualified, reason) rows: others are deleted, these upserted."""
    conn.execute(
        "DELETE FROM ah.loop_closeout WHERE loop_id = %s AND NOT (tool_call_uid = ANY (%s))",
        (loop_id, [c[1] for c in closeouts]),
    )
    for sid, uid, sha, first, at, qualified, reason in closeouts:
        conn.execute(
            """
            INSERT INTO ah.loop_closeout AS c (loop_id, session_id, tool_call_uid, sha256, first_line, written_at,
                                               qualified, reason)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (loop_id, tool_call_uid) DO UPDATE SET
                session_id = EXCLUDED.session_id, sha256 = EXCLUDED.sha256, first_line = EXCLUDED.first_line,
                written_at = EXCLUDED.written_at, qualified = EXCLUDED.qualified, reason = EXCLUDED.reason
            WHERE (c.session_id, c.sha256, c.first_line, c.written_at, c.qualified, c.reason)
                  IS DISTINCT FROM (EXCLUDED.session_id, EXCLUDED.sha256, EXCLUDED.first_line, EXCLUDED.written_at,
                                    EXCLUDED.qualified, EXCLUDED.reason)
            """,
            (loop_id, sid, uid, sha, first, at, qualified, reason),
        )


def store_state(
    conn: psycopg.Connection, loop_id: int, values: Mapping[str, object], now: datetime, *, has_sources: bool
) -> None:
    """Write the loop's `STATE_COLUMNS` (and ``progress_sources`` when `has_sources`: the
    collector's tables exist) from `values` (column → value; ``progress_sources`` JSON-able or
    None) and stamp ``refreshed_at`` = `now` — only when a value changed, the loop was never
    refreshed, or (`has_sources`) a repository holding its closeout changed since its refresh."""
    values = dict(values)
    if values.get("progress_sources") is not None:
        values["progress_sources"] = Jsonb(values["progress_sources"])
    columns = STATE_COLUMNS + (("progress_sources",) if has_sources else ())
    cols = ", ".join(f"{c} = %({c})s" for c in columns)
    old = ", ".join(f"l.{c}" for c in columns)
    new = ", ".join(f"%({c})s::{_TYPES[c]}" for c in columns)
    # A loop in a repository the collector changed since its refresh is stamped even when its values
    # stay, so `loops_in_changed_repositories` stops picking it (changed_at only moves when a collect
    # changes a row).
    stale = (
        " OR EXISTS (SELECT 1 FROM ah.repository AS r WHERE starts_with(l.closeout_abspath, r.path || '/') "
        "AND r.changed_at > l.refreshed_at)"
        if has_sources
        else ""
    )
    conn.execute(
        f"UPDATE ah.loops AS l SET {cols}, refreshed_at = %(now)s "
        f"WHERE l.id = %(id)s AND (l.refreshed_at IS NULL OR ({old}) IS DISTINCT FROM ({new}){stale})",
        {**values, "id": loop_id, "now": now},
    )


_TYPES = {
    "window_end_at": "timestamptz", "status": "text", "waiting_until": "timestamptz", "ended_at": "timestamptz",
    "end_evidence": "text", "root_last_active_at": "timestamptz", "cost_usd": "numeric", "progress_sources": "jsonb",
    **{c: "bigint" for c in PROGRESS_COLUMNS if c != "cost_usd"},
}  # fmt: skip


# -- charter and closeout files (the collector) ------------------------------------------------
def upsert_loop_files(conn: psycopg.Connection, repo_id: int, files: Sequence[tuple]) -> int:
    """Upsert the repository's loop charters and closeouts — (kind, path relative to the
    repository, sha256, first_line, mtime, size_bytes) rows: metadata only, never the body; not
    gone any more. Returns rows written."""
    written = 0
    for f in files:
        written += conn.execute(
            """
            INSERT INTO ah.loop_run_metadata AS m (repository_id, kind, path, sha256, first_line, mtime, size_bytes,
                gone)
            VALUES (%s, %s, %s, %s, %s, %s, %s, false)
            ON CONFLICT (repository_id, path) DO UPDATE SET kind = EXCLUDED.kind, sha256 = EXCLUDED.sha256,
                first_line = EXCLUDED.first_line, mtime = EXCLUDED.mtime, size_bytes = EXCLUDED.size_bytes, gone = false
            WHERE (m.kind, m.sha256, m.first_line, m.mtime, m.size_bytes, m.gone)
                  IS DISTINCT FROM (EXCLUDED.kind, EXCLUDED.sha256, EXCLUDED.first_line, EXCLUDED.mtime,
                  EXCLUDED.size_bytes, false)
            """,
            (repo_id, *f),
        ).rowcount
    return written


def mark_loop_files_gone(conn: psycopg.Connection, repo_id: int, present: list[str]) -> int:
    """Mark the repository's charters and closeouts whose relative path is not in `present` gone
    (rows kept); returns rows written."""
    return conn.execute(
        "UPDATE ah.loop_run_metadata SET gone = true WHERE repository_id = %s AND NOT gone AND NOT (path = ANY (%s))",
        (repo_id, present),
    ).rowcount
