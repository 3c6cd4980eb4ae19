"""The ``ah.index_run`` rows of index passes and the advisory lock that says a row's pass is alive
(docs/design.md §7 "Many machines"). A pass inserts its row and takes `RUN_LOCK` on it in one
transaction (`start_run`), writes its end and releases the lock (`finish_run`); a row still
``running`` whose lock nobody holds was killed (`mark_killed_runs`). The pass's other advisory
locks (`ingest.pass_locks`) name no table.
"""

from __future__ import annotations

import psycopg
from psycopg.types.json import Jsonb

RUN_LOCK = 0x61687275  # 'ahru': (RUN_LOCK, index_run.id), held by the pass that runs that row


def mark_killed_runs(conn: psycopg.Connection) -> None:
    """Mark ``interrupted`` every ``ah.index_run`` row still ``running`` whose pass no longer
    holds its `RUN_LOCK` (killed: SIGKILL, a lost server) — another host's live pass holds its
    own and is left alone. When it ended is unknown (finished_at stays NULL); when this pass
    noticed is recorded."""
    conn.execute(
        "UPDATE ah.index_run r SET status = 'interrupted', summary = coalesce(r.summary, '{}'::jsonb) "
        "|| jsonb_build_object('killed', true, 'noticed_at', now()) WHERE r.status = 'running' AND NOT EXISTS ("
        "SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        "AND l.classid = %s::oid AND l.objid::bigint = r.id)",
        (RUN_LOCK,),
    )


def start_run(conn: psycopg.Connection, host: str | None, namespaces: list[str] | None) -> int:
    """Insert this pass's ``ah.index_run`` row (status ``running``) and take its `RUN_LOCK` (a
    session lock), in one transaction: other passes see the row and its lock together. Returns
    the row's id. `conn` is autocommit."""
    with conn.transaction():
        run_id = conn.execute(
            "INSERT INTO ah.index_run (origin_host, namespaces) VALUES (%s, %s) RETURNING id",
            (host, namespaces),
        ).fetchone()[0]
        conn.execute("SELECT pg_advisory_lock(%s::int, %s::int)", (RUN_LOCK, run_id))
    return run_id


def finish_run(
    conn: psycopg.Connection,
    run_id: int,
    status: str,
    files_scanned: int,
    files_changed: int,
    bytes_read: int,
    summary: dict,
) -> None:
    """Record the end of run `run_id` (``finished_at`` now, `status`, the counts, `summary` as
    JSON) and release its `RUN_LOCK`. Raises psycopg errors (a lost connection: the lock died
    with the session)."""
    conn.execute(
        "UPDATE ah.index_run SET finished_at = now(), status = %s, files_scanned = %s, "
        "files_changed = %s, bytes_read = %s, summary = %s WHERE id = %s",
        (status, files_scanned, files_changed, bytes_read, Jsonb(summary), run_id),
    )
    conn.execute("SELECT pg_advisory_unlock(%s::int, %s::int)", (RUN_LOCK, run_id))
