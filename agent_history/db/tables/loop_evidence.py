"""The loop post-pass's evidence reads (issue 12) over the transcript tables (``ah.message``,
``ah.session``, ``ah.subagent_spawn``, ``ah.tool_call``, ``ah.model_call``, ``ah.git_event``) and the
collector's (``ah.repository``, ``ah.loop_state_line``, ``ah.repo_commit``,
``ah.backlog_status_change``, ``ah.repo_push``). `ingest.loops` and `ingest.loop_evidence` call
them inside the post-pass transaction and apply the pure `loops` rules to what they return.

A loop's window is [start, end) by timestamp, open when `end` is None (`window`). Reads only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg


def window(alias: str, column: str) -> str:
    """SQL: `alias.column` lies in [%(start)s, %(end)s) (an open end when %(end)s is NULL)."""
    return f"({alias}.{column} >= %(start)s AND (%(end)s::timestamptz IS NULL OR {alias}.{column} < %(end)s))"


# -- launches and lanes ------------------------------------------------------------------------
def launch_messages(conn: psycopg.Connection, dirty: list[int], classes: list[str], marker: str) -> list[tuple]:
    """(message id, agent, message uid, session id, text, ts, session cwd, repo name, repo remote
    url) of the messages of sessions `dirty` whose class is in `classes` and whose text holds
    `marker`, in file order."""
    return conn.execute(
        """
        SELECT m.id, m.agent, m.message_uid, m.session_id, m.text, m.ts, s.cwd, r.name, r.remote_url
        FROM ah.message AS m
        JOIN ah.session AS s ON s.id = m.session_id
        LEFT JOIN ah.repo AS r ON r.id = s.repo_id
        WHERE m.session_id = ANY (%s) AND m.message_class = ANY (%s) AND strpos(m.text, %s) > 0
        ORDER BY m.session_id, m.source_id, m.byte_offset, m.id
        """,
        (dirty, classes, marker),
    ).fetchall()


def lineage_lanes(conn: psycopg.Connection, root: int, start: datetime, end: datetime | None) -> list[int]:
    """Session ids of the root's children spawned inside [start, end) (the spawn's time, else the
    child's start) and all their descendants (depth ≤ 50), ascending."""
    params = {"root": root, "start": start, "end": end}
    lineage = conn.execute(
        f"""
        WITH RECURSIVE direct AS (
            SELECT c.id
            FROM ah.session AS c
            CROSS JOIN LATERAL (
                SELECT coalesce(
                    (SELECT min(sp.ts) FROM ah.subagent_spawn AS sp
                     WHERE sp.child_session_id = c.id AND sp.session_id = %(root)s),
                    c.started_at) AS at
            ) AS w
            WHERE c.parent_session_id = %(root)s AND c.id <> %(root)s AND {window("w", "at")}
        ), tree (id, depth) AS (
            SELECT id, 0 FROM direct
            UNION
            SELECT s.id, t.depth + 1 FROM tree AS t JOIN ah.session AS s ON s.parent_session_id = t.id
            WHERE t.depth < 50
        )
        SELECT DISTINCT id FROM tree WHERE id <> %(root)s ORDER BY id
        """,
        params,
    ).fetchall()
    return [r[0] for r in lineage]


def codex_commands(
    conn: psycopg.Connection, root: int, start: datetime, end: datetime | None, shell_tools: list[str]
) -> list[tuple[str, datetime | None, datetime | None]]:
    """(input, started_at, ended_at) of the root's calls of `shell_tools` inside [start, end)
    whose input mentions ``codex``, by start."""
    params = {"root": root, "start": start, "end": end}
    return conn.execute(
        f"""
        SELECT tc.input, tc.started_at, tc.ended_at FROM ah.tool_call AS tc
        WHERE tc.session_id = %(root)s AND tc.name = ANY (%(shell)s) AND strpos(tc.input, 'codex') > 0
          AND {window("tc", "started_at")}
        ORDER BY tc.started_at
        """,
        {**params, "shell": shell_tools},
    ).fetchall()


def codex_sessions_in(
    conn: psycopg.Connection, directory: str, since: datetime | None, until: datetime | None, end: datetime | None
) -> list[tuple[int, str]]:
    """(session id, link method) of the parentless Codex sessions no loop is rooted in, started in
    the work tree `directory` between `since` and `until` (else `end`, else open) —
    ``heuristic`` — and their descendants (``lineage``), ascending."""
    return conn.execute(
        """
        WITH RECURSIVE hit AS (
            SELECT s.id FROM ah.session AS s
            WHERE s.agent = 'codex' AND s.parent_session_id IS NULL AND s.agent_id = ''
              AND NOT coalesce(s.is_subagent, false)
              AND ah.repo_root_path(s.cwd) = %(dir)s
              AND s.started_at >= %(from)s
              AND s.started_at <= coalesce(%(to)s::timestamptz, %(end)s::timestamptz, 'infinity')
              AND NOT EXISTS (SELECT 1 FROM ah.loops AS o WHERE o.root_session_id = s.id)
        ), tree (id, depth, method) AS (
            SELECT id, 0, 'heuristic' FROM hit
            UNION
            SELECT s.id, t.depth + 1, 'lineage' FROM tree AS t
            JOIN ah.session AS s ON s.parent_session_id = t.id WHERE t.depth < 50
        )
        SELECT id, min(method) FROM tree GROUP BY id ORDER BY id
        """,
        {"dir": directory, "from": since, "to": until, "end": end},
    ).fetchall()


def lane_return_texts(conn: psycopg.Connection, session_ids: list[int]) -> list[tuple[int, str]]:
    """(session id, text) of the assistant messages of `session_ids` holding a ``lane-return``
    block, in file order."""
    return conn.execute(
        "SELECT session_id, text FROM ah.message WHERE session_id = ANY (%s) AND role = 'assistant' "
        "AND strpos(text, '```lane-return') > 0 ORDER BY session_id, source_id, byte_offset, id",
        (session_ids,),
    ).fetchall()


# -- closeouts and the root --------------------------------------------------------------------
def closeout_calls(conn: psycopg.Connection, writers: list[int], tools: list[str], file_name: str) -> list[tuple]:
    """(tool_call_uid, session id, session_uid, session cwd, agent, tool name, input, outcome,
    is_error, time: ended_at else started_at) of the calls of `tools` by sessions `writers` whose
    input mentions `file_name`, by time then file order."""
    return conn.execute(
        """
        SELECT tc.tool_call_uid, tc.session_id, s.session_uid, s.cwd, tc.agent, tc.name, tc.input,
               tc.outcome, tc.is_error, coalesce(tc.ended_at, tc.started_at)
        FROM ah.tool_call AS tc JOIN ah.session AS s ON s.id = tc.session_id
        WHERE tc.session_id = ANY (%s) AND tc.name = ANY (%s) AND strpos(tc.input, %s) > 0
        ORDER BY coalesce(tc.ended_at, tc.started_at), tc.source_id, tc.byte_offset
        """,
        (writers, tools, file_name),
    ).fetchall()


def last_message(conn: psycopg.Connection, session_id: int, classes: list[str]) -> tuple[str, str] | None:
    """(message_class, text) of the session's last message (file order) whose class is in
    `classes`; None when there is none."""
    return conn.execute(
        "SELECT message_class, text FROM ah.message WHERE session_id = %s AND message_class = ANY (%s) "
        "ORDER BY source_id DESC, byte_offset DESC, id DESC LIMIT 1",
        (session_id, classes),
    ).fetchone()


def last_active(conn: psycopg.Connection, session_id: int) -> datetime | None:
    """The session's latest event time over its messages, tool calls (end, else start) and
    model calls; None when it has no timed event."""
    return conn.execute(
        """
        SELECT greatest(
            (SELECT max(ts) FROM ah.message WHERE session_id = %(s)s),
            (SELECT max(coalesce(ended_at, started_at)) FROM ah.tool_call WHERE session_id = %(s)s),
            (SELECT max(ts) FROM ah.model_call WHERE session_id = %(s)s))
        """,
        {"s": session_id},
    ).fetchone()[0]


# -- progress ----------------------------------------------------------------------------------
def progress_sums(
    conn: psycopg.Connection, root: int, start: datetime | None, end: datetime | None, lanes: Sequence[int]
) -> tuple[tuple, tuple, tuple]:
    """Over the root's events inside [start, end) (none when `start` is None) plus the lanes'
    whole sessions: (model calls: (count, input_uncached, cache_read, cache_write_5m,
    cache_write_1h, output, reasoning, cost USD — None unless every call is priced) — API errors
    left out —, tool calls: (count, errors), git: (distinct commits, distinct pushes)); sums are
    None over no rows."""
    params = {"root": root, "lanes": list(lanes), "start": start, "end": end}
    in_scope = "(x.session_id = ANY (%(lanes)s) OR (x.session_id = %(root)s AND {w}))"
    if start is None:
        in_scope = "x.session_id = ANY (%(lanes)s)"
    calls = conn.execute(
        f"""
        SELECT count(*), sum(x.input_uncached), sum(x.cache_read), sum(x.cache_write_5m), sum(x.cache_write_1h),
               sum(x.output), sum(x.reasoning),
               CASE WHEN count(*) > 0 AND count(k.cost) = count(*) THEN ah.stored_usd(sum(k.cost)) END
        FROM ah.model_call AS x
        JOIN ah.session AS s ON s.id = x.session_id
        CROSS JOIN LATERAL (
            SELECT ah.call_cost_usd(coalesce(x.model, s.model), coalesce(x.ts, s.started_at), x.input_uncached,
                                    x.cache_read, x.cache_write_5m, x.cache_write_1h, x.output) AS cost
        ) AS k
        WHERE NOT coalesce(x.is_api_error, false) AND {in_scope.format(w=window("x", "ts"))}
        """,
        params,
    ).fetchone()
    tools = conn.execute(
        f"""
        SELECT count(*), count(*) FILTER (WHERE x.is_error OR x.error_class IS NOT NULL)
        FROM ah.tool_call AS x WHERE {in_scope.format(w=window("x", "started_at"))}
        """,
        params,
    ).fetchone()
    git = conn.execute(
        f"""
        SELECT count(DISTINCT coalesce(x.sha, x.git_event_uid)) FILTER (WHERE x.op = 'commit'),
               count(DISTINCT x.git_event_uid) FILTER (WHERE x.op = 'push')
        FROM ah.git_event AS x WHERE {in_scope.format(w=window("x", "ts"))}
        """,
        params,
    ).fetchone()
    return calls, tools, git


# -- the collected repository ------------------------------------------------------------------
def repository_holding(conn: psycopg.Connection, path: str) -> tuple[int, str] | None:
    """(id, path) of the deepest collected repository whose work tree holds the absolute `path`;
    None when none does. Needs the collector's tables (migration 0019)."""
    return conn.execute(
        "SELECT id, path FROM ah.repository WHERE starts_with(%s, path || '/') ORDER BY length(path) DESC LIMIT 1",
        (path,),
    ).fetchone()


def state_log_lines(
    conn: psycopg.Connection, repo_id: int, rel: str, start: datetime, end: datetime
) -> list[tuple[datetime, str, str | None]]:
    """(ts, event, task) of the lines of the repository's state log `rel` inside [start, end), in
    line order."""
    params = {"repo": repo_id, "start": start, "end": end}
    return conn.execute(
        f"""
        SELECT x.ts, x.event, x.task FROM ah.loop_state_line AS x
        WHERE x.repository_id = %(repo)s AND x.path = %(rel)s AND {window("x", "ts")}
        ORDER BY x.line_number
        """,
        {**params, "rel": rel},
    ).fetchall()


def landed_task_trailers(conn: psycopg.Connection, repo_id: int, start: datetime, end: datetime) -> int:
    """Distinct task ids (case-insensitive) named by ``Task:`` trailers of the repository's
    commits that reached the default branch inside [start, end)."""
    params = {"repo": repo_id, "start": start, "end": end}
    return conn.execute(
        f"""
        SELECT count(DISTINCT lower(t)) FROM ah.repo_commit AS x CROSS JOIN LATERAL unnest(x.task_ids) AS t
        WHERE x.repository_id = %(repo)s AND x.reached_default_at IS NOT NULL AND {window("x", "reached_default_at")}
        """,
        params,
    ).fetchone()[0]


def done_flips(conn: psycopg.Connection, repo_id: int, start: datetime, end: datetime, done: list[str]) -> int:
    """Distinct tasks of the repository whose status changed (from a known one) to one of `done`
    (lower case, trimmed) inside [start, end)."""
    params = {"repo": repo_id, "start": start, "end": end}
    return conn.execute(
        f"""
        SELECT count(DISTINCT x.task_id) FROM ah.backlog_status_change AS x
        WHERE x.repository_id = %(repo)s AND lower(trim(x.new_status)) = ANY (%(done)s)
          AND x.old_status IS NOT NULL AND {window("x", "changed_at")}
        """,
        {**params, "done": done},
    ).fetchone()[0]


def commits_and_pushes(conn: psycopg.Connection, repo_id: int, start: datetime, end: datetime) -> tuple[int, int]:
    """(commits made, pushes) in the repository inside [start, end) (commit time; reflog time)."""
    params = {"repo": repo_id, "start": start, "end": end}
    return conn.execute(
        f"""
        SELECT (SELECT count(*) FROM ah.repo_commit AS x WHERE x.repository_id = %(repo)s AND {window("x", "committed_at")}),
               (SELECT count(*) FROM ah.repo_push AS x WHERE x.repository_id = %(repo)s AND {window("x", "pushed_at")})
        """,
        params,
    ).fetchone()
