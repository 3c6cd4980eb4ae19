"""Per-session analytics (the web UI's session page: tokens and list-price cost by model, tool
calls by name, prompts, active duration) and the server facts the status page shows (PostgreSQL,
pgvector, keyword backend, schema revision, row counts). Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import psycopg
from psycopg import sql

from agent_history.db.migrate import VERSION_TABLE, head_revision
from agent_history.read.usage_cells import PRICED_CALLS_SQL

IDLE_GAP = timedelta(minutes=5)
"""Active duration: gaps between consecutive events longer than this count as this long (the
person or agent was away). A convention of this UI, shown next to the figure."""


@dataclass(slots=True)
class SessionAnalytics:
    """Per-session figures: `by_model` rows (model, calls, tokens, output, cost USD, unpriced
    calls, recorded cost USD), `tools` rows (name, calls, errors, error classes, total ms),
    counts of prompts and tool calls, and the active duration (None when fewer than two
    timestamped events)."""

    by_model: list[tuple]
    tools: list[tuple]
    prompts: int
    tool_calls: int
    tool_errors: int
    active: timedelta | None


def session_analytics(conn: psycopg.Connection, session_id: int) -> SessionAnalytics:
    """Analytics of one thread (its own rows; sub-agents have their own pages)."""
    by_model = conn.execute(
        sql.SQL(
            PRICED_CALLS_SQL
            + """
            SELECT model, count(*), sum(tokens)::bigint, sum(output)::bigint, sum(cost),
                   count(*) FILTER (WHERE cost IS NULL), sum(recorded_cost_usd)
            FROM priced GROUP BY 1 ORDER BY 3 DESC NULLS LAST, 1
            """
        ).format(where=sql.SQL("mc.session_id = %(sid)s")),
        {"sid": session_id},
    ).fetchall()
    tools = conn.execute(
        """
        SELECT name, count(*), count(*) FILTER (WHERE coalesce(is_error, false)),
               string_agg(DISTINCT error_class, ', ' ORDER BY error_class), sum(duration_ms)::bigint
        FROM ah.tool_call WHERE session_id = %s GROUP BY 1 ORDER BY 2 DESC, 1
        """,
        (session_id,),
    ).fetchall()
    prompts = conn.execute(
        "SELECT count(*) FROM ah.message WHERE session_id = %s AND message_class = 'human_prompt'", (session_id,)
    ).fetchone()[0]
    active = conn.execute(
        """
        SELECT CASE WHEN count(gap) > 0 THEN sum(least(gap, %(cap)s)) END
        FROM (SELECT ts - lag(ts) OVER (ORDER BY ts) AS gap
              FROM (SELECT ts FROM ah.message WHERE session_id = %(sid)s AND ts IS NOT NULL
                    UNION ALL
                    SELECT started_at FROM ah.tool_call WHERE session_id = %(sid)s AND started_at IS NOT NULL) AS t
             ) AS g
        """,
        {"sid": session_id, "cap": IDLE_GAP},
    ).fetchone()[0]
    return SessionAnalytics(
        by_model=by_model,
        tools=tools,
        prompts=prompts,
        tool_calls=sum(t[1] for t in tools),
        tool_errors=sum(t[2] for t in tools),
        active=active,
    )


def server_facts(conn: psycopg.Connection) -> dict:
    """PostgreSQL version, pgvector version, keyword backend and schema revision (None when the
    role cannot read the version table), for the status page."""
    pg = conn.execute("SHOW server_version").fetchone()[0].split()[0]
    vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    backend = conn.execute("SELECT value FROM ah.meta WHERE key = 'keyword_backend'").fetchone()
    revision = None
    readable = conn.execute(
        "SELECT CASE WHEN to_regclass(%(t)s) IS NOT NULL THEN has_table_privilege(%(t)s, 'SELECT') ELSE false END",
        {"t": f"public.{VERSION_TABLE}"},
    ).fetchone()[0]
    if readable:
        row = conn.execute(f"SELECT version_num FROM public.{VERSION_TABLE}").fetchone()
        revision = row[0] if row else None
    return {
        "postgres_version": pg,
        "pgvector_version": vec[0] if vec else None,
        "keyword_backend": backend[0] if backend else None,
        "schema_revision": revision,
        "schema_head": head_revision(),
    }


def row_counts(conn: psycopg.Connection, tables: tuple[str, ...]) -> dict[str, int]:
    """Table name (of schema ``ah``) → its row count, for `tables` (names from the package's own
    lists, e.g. `db.status.CORE_TABLES`, never user input)."""
    return {
        t: conn.execute(sql.SQL("SELECT count(*) FROM ah.{}").format(sql.Identifier(t))).fetchone()[0] for t in tables
    }
