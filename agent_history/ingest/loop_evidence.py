"""Evidence for one loop (issue 12), read for `ingest.loops`: its lanes and their lane-return
blocks, the writes of its closeout path, the root's last word and activity, and its progress.

Every function takes the open connection (inside the post-pass transaction) and a `LoopFacts`;
the window is [launch time, next launch of the same root) by timestamp. The rules applied are
the pure `agent_history.loops` package.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

from agent_history.loops import closeout, rules, statelog
from agent_history.loops.lanes import codex_dirs
from agent_history.loops.launch import absolute_path
from agent_history.loops.returns import parse_returns
from agent_history.repos.backlog import DONE_STATUSES

# Tool names whose calls may write (whole or partly) a closeout, and shell tools, over all agents.
WRITE_TOOLS: list[str] = sorted(
    {name for tools in rules.WHOLE_WRITE_TOOLS.values() for name in tools}
    | {name for tools in rules.PATCH_TOOLS.values() for name in tools}
    | {name for tools in rules.PARTIAL_EDIT_TOOLS.values() for name in tools}
)
SHELL_TOOLS: list[str] = sorted({name for tools in rules.SHELL_TOOLS.values() for name in tools})


@dataclass
class LoopFacts:
    """What the evidence queries need to know about one loop."""

    id: int
    agent: str
    root: int
    root_cwd: str | None
    started_at: datetime | None
    closeout_abspath: str
    loop_number: int
    charter_sha256: str | None
    repo: str | None


def window(alias: str, column: str) -> str:
    """SQL: `alias.column` lies in [%(start)s, %(end)s) (an open end when %(end)s is NULL)."""
    return f"({alias}.{column} >= %(start)s AND (%(end)s::timestamptz IS NULL OR {alias}.{column} < %(end)s))"


def lanes(conn: psycopg.Connection, loop: LoopFacts, end: datetime | None) -> list[tuple[int, str]]:
    """(session id, link method) of the loop's lanes, lineage first."""
    if loop.started_at is None:
        return []
    params = {"root": loop.root, "start": loop.started_at, "end": end}
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
    out = [(r[0], "lineage") for r in lineage]
    seen = {loop.root, *(sid for sid, _ in out)}
    calls = conn.execute(
        f"""
        SELECT tc.input, tc.started_at, tc.ended_at FROM ah.tool_call AS tc
        WHERE tc.session_id = %(root)s AND tc.name = ANY (%(shell)s) AND strpos(tc.input, 'codex') > 0
          AND {window("tc", "started_at")}
        ORDER BY tc.started_at
        """,
        {**params, "shell": SHELL_TOOLS},
    ).fetchall()
    for tool_input, started, ended in calls:
        for directory in codex_dirs(tool_input, loop.root_cwd):
            found = conn.execute(
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
                {"dir": directory, "from": started, "to": ended, "end": end},
            ).fetchall()
            for sid, method in found:
                if sid not in seen:
                    seen.add(sid)
                    out.append((sid, method))
    return out


def write_lanes(conn: psycopg.Connection, loop_id: int, lanes: list[tuple[int, str]]) -> None:
    """Store `lanes` (session id, link method) of the loop with their lane-return blocks; drop
    lanes that no longer attach."""
    ids = [sid for sid, _ in lanes]
    conn.execute("DELETE FROM ah.lane WHERE loop_id = %s AND NOT (session_id = ANY (%s))", (loop_id, ids))
    if not ids:
        return
    texts: dict[int, list[str]] = {sid: [] for sid in ids}
    for sid, text in conn.execute(
        "SELECT session_id, text FROM ah.message WHERE session_id = ANY (%s) AND role = 'assistant' "
        "AND strpos(text, '```lane-return') > 0 ORDER BY session_id, source_id, byte_offset, id",
        (ids,),
    ):
        texts[sid].append(text)
    for sid, method in lanes:
        parsed = parse_returns(texts[sid])
        conn.execute(
            """
            INSERT INTO ah.lane AS a (loop_id, session_id, link_method, return_status, returns)
            VALUES (%s, %s, %s, %s, %s)
            ON CONFLICT (loop_id, session_id) DO UPDATE SET
                link_method = EXCLUDED.link_method, return_status = EXCLUDED.return_status, returns = EXCLUDED.returns
            WHERE (a.link_method, a.return_status, a.returns)
                  IS DISTINCT FROM (EXCLUDED.link_method, EXCLUDED.return_status, EXCLUDED.returns)
            """,
            (loop_id, sid, method, parsed.status, Jsonb(parsed.returns)),
        )


def closeouts(
    conn: psycopg.Connection, loop: LoopFacts, end: datetime | None
) -> tuple[datetime | None, str | None, int | None, int | None]:
    """Record the writes of the closeout path; returns (ended_at, evidence, landed, parked) of
    the qualified closeout (the first qualified write ends the run; the last one's lists count)."""
    writers = conn.execute(
        """
        SELECT l.root_session_id FROM ah.loops AS l WHERE l.closeout_abspath = %(path)s
        UNION
        SELECT a.session_id FROM ah.lane AS a JOIN ah.loops AS l ON l.id = a.loop_id
        WHERE l.closeout_abspath = %(path)s
        """,
        {"path": loop.closeout_abspath},
    ).fetchall()
    rows = conn.execute(
        """
        SELECT tc.tool_call_uid, tc.session_id, s.session_uid, s.cwd, tc.agent, tc.name, tc.input,
               tc.outcome, tc.is_error, coalesce(tc.ended_at, tc.started_at)
        FROM ah.tool_call AS tc JOIN ah.session AS s ON s.id = tc.session_id
        WHERE tc.session_id = ANY (%s) AND tc.name = ANY (%s) AND strpos(tc.input, %s) > 0
        ORDER BY coalesce(tc.ended_at, tc.started_at), tc.source_id, tc.byte_offset
        """,
        ([r[0] for r in writers], WRITE_TOOLS, loop.closeout_abspath.rsplit("/", 1)[-1]),
    ).fetchall()
    found: list[tuple] = []
    for uid, sid, suid, cwd, agent, name, tool_input, outcome, is_error, at in rows:
        for w in closeout.file_writes(agent, name, tool_input):
            if absolute_path(w.path, cwd) != loop.closeout_abspath:
                continue
            sha = first = None
            if not w.whole:
                reason = f"a partial edit ({name}) proves nothing"
            elif not closeout.write_succeeded(outcome, is_error):
                reason = "the write failed" if outcome and outcome != "no_result" else "no successful result captured"
            else:
                sha, first = closeout.digest(w.content), closeout.first_line(w.content)
                if loop.started_at is None or at is None or at < loop.started_at:
                    reason = "written before the launch"
                elif end is not None and at >= end:
                    reason = "written after the next launch of the same root"
                else:
                    reason = closeout.first_line_problem(first, loop.repo, loop.loop_number, loop.charter_sha256)
            found.append((uid, sid, suid, sha, first, at, reason is None, reason, w.content))
    conn.execute(
        "DELETE FROM ah.loop_closeout WHERE loop_id = %s AND NOT (tool_call_uid = ANY (%s))",
        (loop.id, [f[0] for f in found]),
    )
    for uid, sid, _suid, sha, first, at, qualified, reason, _content in found:
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
            (loop.id, sid, uid, sha, first, at, qualified, reason),
        )
    good = [f for f in found if f[6]]
    if not good:
        return None, None, None, None
    landed, parked = closeout.count_tasks(good[-1][8])
    return good[0][5], f"qualified closeout written by session {good[0][2]}", landed, parked


def root_last_word(conn: psycopg.Connection, root: int) -> tuple[str | None, datetime | None]:
    """(the root's last assistant text when nothing conversational followed it, the root's
    latest event time)."""
    last = conn.execute(
        "SELECT message_class, text FROM ah.message WHERE session_id = %s AND message_class = ANY (%s) "
        "ORDER BY source_id DESC, byte_offset DESC, id DESC LIMIT 1",
        (root, ["human_prompt", "queued_prompt", "assistant_text", "agent_message"]),
    ).fetchone()
    active = conn.execute(
        """
        SELECT greatest(
            (SELECT max(ts) FROM ah.message WHERE session_id = %(s)s),
            (SELECT max(coalesce(ended_at, started_at)) FROM ah.tool_call WHERE session_id = %(s)s),
            (SELECT max(ts) FROM ah.model_call WHERE session_id = %(s)s))
        """,
        {"s": root},
    ).fetchone()[0]
    word = last[1] if last and last[0] == "assistant_text" else None
    return word, active


def progress(conn: psycopg.Connection, loop: LoopFacts, end: datetime | None, lanes: list[int]) -> dict:
    """Progress columns over the root's events inside the window plus the lanes' whole sessions."""
    params = {"root": loop.root, "lanes": lanes, "start": loop.started_at, "end": end}
    in_scope = "(x.session_id = ANY (%(lanes)s) OR (x.session_id = %(root)s AND {w}))"
    if loop.started_at is None:
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
    n_calls, n_tools = calls[0], tools[0]
    return {
        "model_calls": n_calls or None,
        "input_uncached": calls[1],
        "cache_read": calls[2],
        "cache_write_5m": calls[3],
        "cache_write_1h": calls[4],
        "output": calls[5],
        "reasoning": calls[6],
        "cost_usd": calls[7],
        "errors": tools[1] if n_tools else None,
        "commits": git[0] if n_tools else None,
        "pushes": git[1] if n_tools else None,
    }


def repository_candidates(conn: psycopg.Connection, loop: LoopFacts, end: datetime | None, now: datetime) -> dict:
    """Progress from the collected repository holding the loop's closeout (`loops.progress`
    sources ``state_log``, ``task_trailers``, ``done_flips``, ``repository``), over the window
    [start, end or `now`). {} when no collected repository holds it (or before migration 0019)."""
    if loop.started_at is None or conn.execute("SELECT to_regclass('ah.repository')").fetchone()[0] is None:
        return {}
    repo = conn.execute(
        "SELECT id, path FROM ah.repository WHERE starts_with(%s, path || '/') ORDER BY length(path) DESC LIMIT 1",
        (loop.closeout_abspath,),
    ).fetchone()
    if repo is None:
        return {}
    repo_id, root = repo
    params = {"repo": repo_id, "start": loop.started_at, "end": end or now}
    out: dict[str, dict[str, int | None]] = {}
    state_path = statelog.state_log_path(loop.closeout_abspath)
    if state_path is not None:
        rel = state_path[len(root) + 1 :]
        lines = conn.execute(
            f"""
            SELECT x.ts, x.event, x.task FROM ah.loop_state_line AS x
            WHERE x.repository_id = %(repo)s AND x.path = %(rel)s AND {window("x", "ts")}
            ORDER BY x.line_number
            """,
            {**params, "rel": rel},
        ).fetchall()
        landed, parked = statelog.count_tasks([statelog.StateLine(ts, ev, task=t) for ts, ev, t in lines])
        out["state_log"] = {"landed": landed, "parked": parked}
    trailers = conn.execute(
        f"""
        SELECT count(DISTINCT lower(t)) FROM ah.repo_commit AS x CROSS JOIN LATERAL unnest(x.task_ids) AS t
        WHERE x.repository_id = %(repo)s AND x.reached_default_at IS NOT NULL AND {window("x", "reached_default_at")}
        """,
        params,
    ).fetchone()[0]
    out["task_trailers"] = {"landed": trailers or None}
    flips = conn.execute(
        f"""
        SELECT count(DISTINCT x.task_id) FROM ah.backlog_status_change AS x
        WHERE x.repository_id = %(repo)s AND lower(trim(x.new_status)) = ANY (%(done)s)
          AND x.old_status IS NOT NULL AND {window("x", "changed_at")}
        """,
        {**params, "done": sorted(DONE_STATUSES)},
    ).fetchone()[0]
    out["done_flips"] = {"landed": flips or None}
    commits, pushes = conn.execute(
        f"""
        SELECT (SELECT count(*) FROM ah.repo_commit AS x WHERE x.repository_id = %(repo)s AND {window("x", "committed_at")}),
               (SELECT count(*) FROM ah.repo_push AS x WHERE x.repository_id = %(repo)s AND {window("x", "pushed_at")})
        """,
        params,
    ).fetchone()
    out["repository"] = {"commits": commits, "pushes": pushes}
    return out
