"""The collectors' statements (docs/design.md §16, `telemetry.collectors`): what the catalogue,
the archive manifest, the run records, the classifier's and loops' tables and the collected
repositories hold, as rows for the gauges. Read-only (the ``ah_reader`` role suffices): the
collectors label and count; the rows and their order are what the statements return.

Tables that came with a later migration are asked for with `table_exists` first (a missing one
means "no series", not an error); the classifier's and loops' tables are part of the schema."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import psycopg

_REGCLASS = {
    "archive_copy": "SELECT to_regclass('ah.archive_copy')",
    "secret_finding": "SELECT to_regclass('ah.secret_finding')",
    "journal_sync_run": "SELECT to_regclass('ah.journal_sync_run')",
    "collect_run": "SELECT to_regclass('ah.collect_run')",
    "repository": "SELECT to_regclass('ah.repository')",
}
"""Table of ``ah`` → the statement asking whether it exists."""


def table_exists(conn: psycopg.Connection, table: str) -> bool:
    """Whether ``ah.<table>`` exists; `table` is one of `_REGCLASS` (KeyError otherwise)."""
    return conn.execute(_REGCLASS[table]).fetchone()[0] is not None


def existing_tables(conn: psycopg.Connection, tables: Sequence[str]) -> list[str]:
    """The names of `tables` that exist in schema ``ah``, in the given order."""
    rows = conn.execute(
        "SELECT t FROM unnest(%s::text[]) AS t WHERE to_regclass('ah.' || quote_ident(t)) IS NOT NULL", (list(tables),)
    ).fetchall()
    return [r[0] for r in rows]


# --- archive -------------------------------------------------------------------------------------
def catalogued_paths(conn: psycopg.Connection) -> list[tuple[str, str, str]]:
    """(namespace, tier, path) of every catalogued source file."""
    return conn.execute("SELECT namespace, tier, path FROM ah.source_file").fetchall()


def manifest_rows(conn: psycopg.Connection, host: str) -> list[tuple]:
    """(namespace, rel_path, archive_file, compressed_size in bytes, source_mtime_ns,
    verify_error) of machine `host`'s archive copies (``origin_host``)."""
    return conn.execute(
        "SELECT namespace, rel_path, archive_file, compressed_size, source_mtime_ns, verify_error "
        "FROM ah.archive_copy WHERE origin_host = %s",
        (host,),
    ).fetchall()


def catalogued_rel_paths(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(namespace, home-relative path) of every catalogued source file that has one."""
    return conn.execute("SELECT namespace, rel_path FROM ah.source_file WHERE rel_path IS NOT NULL").fetchall()


# --- catalogue -----------------------------------------------------------------------------------
def table_rows(conn: psycopg.Connection, tables: Sequence[str]) -> list[tuple[str, int]]:
    """(table, rows) of each of `tables` (names of existing ``ah`` tables, `existing_tables`),
    counted in one statement."""
    union = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM ah.{t}" for t in tables)
    return conn.execute(union).fetchall()


def sessions_per_agent(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(agent, threads), by agent."""
    return conn.execute("SELECT agent, count(*) FROM ah.session GROUP BY 1 ORDER BY 1").fetchall()


def dirty_sessions(conn: psycopg.Connection) -> int:
    """Threads waiting for the post-pass (``ah.dirty_session``)."""
    return conn.execute("SELECT count(*) FROM ah.dirty_session").fetchone()[0]


def parse_issues_per_kind(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(parse issue kind, issues)."""
    return conn.execute("SELECT kind, count(*) FROM ah.parse_issue GROUP BY 1").fetchall()


def indexed_offsets(conn: psycopg.Connection) -> list[tuple[str, str, int]]:
    """(namespace, path, bytes indexed) of every catalogued source file."""
    return conn.execute("SELECT namespace, path, indexed_offset FROM ah.source_file").fetchall()


def secrets_per_detector(conn: psycopg.Connection) -> dict[str, int]:
    """Secret findings per detector, as of the last scan."""
    return dict(conn.execute("SELECT detector, count(*) FROM ah.secret_finding GROUP BY 1").fetchall())


# --- runs ----------------------------------------------------------------------------------------
def lock_held(conn: psycopg.Connection, key: int) -> bool:
    """Whether any session of this database holds the bigint advisory lock `key`."""
    return bool(
        conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND ((classid::bigint << 32) | objid::bigint) = %s",
            (key,),
        ).fetchone()[0]
    )


def index_runs_per_status(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(status, index passes)."""
    return conn.execute("SELECT status, count(*) FROM ah.index_run GROUP BY 1").fetchall()


def last_index_run(conn: psycopg.Connection, statuses: Sequence[str]) -> tuple | None:
    """(status, seconds as Decimal, files changed, bytes read, rows written) of the newest index
    pass that ended with one of `statuses`; None when none did."""
    return conn.execute(
        "SELECT status, extract(epoch FROM finished_at - started_at), files_changed, bytes_read, "
        "(SELECT sum(value::bigint) FROM jsonb_each_text(summary -> 'rows')) "
        "FROM ah.index_run WHERE finished_at IS NOT NULL AND status = ANY(%s) ORDER BY id DESC LIMIT 1",
        (list(statuses),),
    ).fetchone()


def last_index_success(conn: psycopg.Connection) -> Decimal | None:
    """The end (Unix seconds) of the newest successful index pass; None before one."""
    return conn.execute("SELECT extract(epoch FROM max(finished_at)) FROM ah.index_run WHERE status = 'ok'").fetchone()[
        0
    ]


def meta_value(conn: psycopg.Connection, key: str) -> str | None:
    """The value of ``ah.meta`` `key` (None: no such key)."""
    row = conn.execute("SELECT value FROM ah.meta WHERE key = %s", (key,)).fetchone()
    return None if row is None else row[0]


_JOURNAL_COUNTED = "finished_at IS NOT NULL AND skip_reason IS DISTINCT FROM 'another_pass'"
"""The journal-sync passes counted: ended, and not skipped because another pass held the lock."""


def journal_runs_per_status(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(status, counted journal-sync passes)."""
    counted = _JOURNAL_COUNTED
    return conn.execute(f"SELECT status, count(*) FROM ah.journal_sync_run WHERE {counted} GROUP BY 1").fetchall()


def last_journal_run(conn: psycopg.Connection, statuses: Sequence[str]) -> tuple | None:
    """(status, seconds as Decimal, rows written) of the newest counted journal-sync pass with one
    of `statuses`; None when none."""
    counted = _JOURNAL_COUNTED
    return conn.execute(
        "SELECT status, extract(epoch FROM finished_at - started_at), rows_written FROM ah.journal_sync_run "
        f"WHERE {counted} AND status = ANY(%s) ORDER BY id DESC LIMIT 1",
        (list(statuses),),
    ).fetchone()


def last_journal_success(conn: psycopg.Connection) -> Decimal | None:
    """The end (Unix seconds) of the newest successful journal-sync pass; None before one."""
    return conn.execute(
        "SELECT extract(epoch FROM max(finished_at)) FROM ah.journal_sync_run WHERE status = 'ok'"
    ).fetchone()[0]


def collect_runs_per_outcome(conn: psycopg.Connection) -> dict[str, int]:
    """``{"success" | "failure": collect runs}`` (an outcome with no run is absent)."""
    return dict(
        conn.execute("SELECT CASE WHEN ok THEN 'success' ELSE 'failure' END, count(*) FROM ah.collect_run GROUP BY 1")
    )


def last_collect_run(conn: psycopg.Connection) -> tuple | None:
    """(ok, seconds as Decimal, rows written) of the newest collect run; None before one."""
    return conn.execute(
        "SELECT ok, extract(epoch FROM finished_at - started_at), rows_written FROM ah.collect_run ORDER BY id DESC LIMIT 1"
    ).fetchone()


def last_collect_success(conn: psycopg.Connection) -> Decimal | None:
    """The end (Unix seconds) of the newest successful collect run; None before one."""
    return conn.execute("SELECT extract(epoch FROM max(finished_at)) FROM ah.collect_run WHERE ok").fetchone()[0]


# --- repositories --------------------------------------------------------------------------------
def repositories(conn: psycopg.Connection) -> tuple[int, int]:
    """(repositories collected, repositories gone)."""
    return conn.execute(
        "SELECT count(*) FILTER (WHERE NOT gone), count(*) FILTER (WHERE gone) FROM ah.repository"
    ).fetchone()


def commits_by_author(conn: psycopg.Connection) -> tuple[int, int, int]:
    """(commits authored by me, by others, by an unknown author)."""
    return conn.execute(
        "SELECT count(*) FILTER (WHERE authored_by_me), count(*) FILTER (WHERE NOT authored_by_me), "
        "count(*) FILTER (WHERE authored_by_me IS NULL) FROM ah.repo_commit"
    ).fetchone()


def backlog_tasks(conn: psycopg.Connection) -> int:
    """Backlog tasks collected."""
    return conn.execute("SELECT count(*) FROM ah.backlog_task").fetchone()[0]


def ci_runs_per_conclusion(conn: psycopg.Connection) -> list[tuple[str | None, int]]:
    """(conclusion — None while running —, CI runs)."""
    return conn.execute("SELECT conclusion, count(*) FROM ah.ci_run GROUP BY 1").fetchall()


def collect_issues_per_kind(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(kind, collect issues)."""
    return conn.execute("SELECT kind, count(*) FROM ah.collect_issue GROUP BY 1").fetchall()


# --- efficiency ----------------------------------------------------------------------------------
#: Per (agent, model): list-price cost and token sums. The same per-call cost as
#: ``ah.call_cost_usd`` (price of the call's UTC day; NULL rules of ``ah.priced_cost_usd``), with
#: the price looked up once per (model, day) as the rollup does (sql/20_pricing.sql), not per call.
COST_SQL = """
WITH c AS (
    SELECT *, coalesce((ts AT TIME ZONE 'UTC')::date, current_date) AS day FROM ah.model_call
), p AS (
    SELECT model, day, ah.price_for(model, day) AS price FROM (SELECT DISTINCT model, day FROM c) AS d
)
SELECT c.agent, lower(c.model),
       sum(ah.priced_cost_usd(p.price, c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output)),
       {sums}
FROM c LEFT JOIN p ON p.model = c.model AND p.day = c.day
GROUP BY 1, 2
"""


def cost_and_tokens(conn: psycopg.Connection, buckets: Sequence[str]) -> list[tuple]:
    """Per (agent, lower-cased model): (agent, model, list-price cost in USD or None, then the
    sum of each of `buckets` — columns of ``ah.model_call`` — or None)."""
    sums = ", ".join(f"sum(c.{b})" for b in buckets)
    return conn.execute(COST_SQL.format(sums=sums)).fetchall()


def calls_by_trigger_and_role(conn: psycopg.Connection) -> list[tuple[str, str, int]]:
    """(trigger — ``unclassified`` for NULL —, thread role, model calls) of the calls
    ``ah.efficiency`` counts (no API-error notices; threads with a role), sorted."""
    # the calls ah.efficiency counts: API-error notices are not calls (sql/35_efficiency.sql)
    return conn.execute(
        "SELECT coalesce(c.trigger, 'unclassified'), s.thread_role, count(*) FROM ah.model_call c "
        "JOIN ah.session s ON s.id = c.session_id WHERE s.thread_role IS NOT NULL "
        "AND NOT coalesce(c.is_api_error, false) GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()


def poll_share_per_role(conn: psycopg.Connection, classified_counts: Sequence[str]) -> list[tuple[str, float | None]]:
    """(role, (waits + status checks) / the sum of `classified_counts` — columns of
    ``ah.efficiency`` — or None when that sum is 0), by role."""
    classified = " + ".join(f"sum({c})" for c in classified_counts)  # the view's counts are never NULL
    return conn.execute(
        f"SELECT role, (sum(n_wait) + sum(n_status))::float8 / nullif({classified}, 0) "
        "FROM ah.efficiency WHERE role IS NOT NULL GROUP BY 1 ORDER BY 1"
    ).fetchall()


def loops_per_status(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(status, loops) of ``ah.loops``."""
    return conn.execute("SELECT status, count(*) FROM ah.loops GROUP BY 1").fetchall()


def longest_loop_idle(conn: psycopg.Connection) -> Decimal | None:
    """The longest time (s, database clock) since a running loop's root was last active; None
    with no running loop."""
    return conn.execute(
        "SELECT extract(epoch FROM max(now() - root_last_active_at)) FROM ah.loops WHERE status = 'running'"
    ).fetchone()[0]
