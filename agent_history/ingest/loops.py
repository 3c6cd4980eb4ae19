"""The loop post-pass (issue 12): launches, windows, lanes, closeouts, status and progress.

Called by `ingest.postpass.run_postpasses` after the session post-pass (lineage must be fresh),
in the same transaction, with the ids of the sessions that were dirty. The rules are the pure
`agent_history.loops` package; this module only reads rows and writes ``ah.loops``, ``ah.lane``
and ``ah.loop_closeout``.

1. Launches. Prompts of the dirty sessions are scanned (`loops.launch.detect_launch`); one
   ``ah.loops`` row per launch message (natural key agent + message uid). A dirty session's
   loops whose launch message is gone are deleted (with their lanes and closeouts).
2. Which loops to recompute: those whose root, a lane, or a session under the root is dirty,
   those a parentless dirty Codex session could join, every loop sharing a closeout path with
   one of them (a relaunch), and every non-finished loop — time alone moves those.
3. Per loop, at `now`:
   - window: from the launch message's time to the next launch of the same root (exclusive;
     open when there is none). Events are placed in it by timestamp.
   - lanes: sessions whose parent is the root and that were spawned inside the window (the
     spawn's time, else the session's start), with all their descendants (`lineage`); and Codex
     sessions without lineage started in the working tree of a `codex` command the root ran in
     the window, while that command ran (`heuristic`), with their descendants.
   - closeouts: writes of the exact closeout path (made absolute against the writer's cwd) by
     the root or a lane of this loop or of a loop with the same closeout path. Each is recorded
     with SHA-256 and first line only; it qualifies when whole, successful, inside the window
     and its line 1 is `# Closeout: <repo> loop<N> · Charter: <digest>` for this launch. A
     write's time is its result's (else the call's); the first qualified write ends the run,
     the last one's `## Landed` / `## Parked` lists are counted. A relaunch (a launch of the same
     absolute closeout path in another root) shares the closeout; nothing else joins two roots.
   - status: `loops.status.loop_status`.
   - progress over the root's calls inside the window plus the lanes' whole sessions; NULL
     when unknown, never 0 (no calls → model_calls and tokens NULL; no tool calls → errors,
     commits, pushes NULL; cost only when every call is priced; landed/parked only from a
     qualified closeout that has the heading).
Every write is guarded (`IS DISTINCT FROM` / compared first), so a second pass changes nothing.
Cost: about 15 ms per recomputed loop (a dozen indexed queries) on the test machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg
from psycopg.types.json import Jsonb

from agent_history.loops import closeout, rules
from agent_history.loops.lanes import codex_dirs
from agent_history.loops.launch import absolute_path, detect_launch, repo_label
from agent_history.loops.returns import parse_returns
from agent_history.loops.status import loop_status

_WRITE_TOOLS: list[str] = sorted(
    {name for tools in rules.WHOLE_WRITE_TOOLS.values() for name in tools}
    | {name for tools in rules.PATCH_TOOLS.values() for name in tools}
    | {name for tools in rules.PARTIAL_EDIT_TOOLS.values() for name in tools}
)
_SHELL_TOOLS: list[str] = sorted({name for tools in rules.SHELL_TOOLS.values() for name in tools})

PROGRESS_COLUMNS = (
    "lanes", "model_calls", "input_uncached", "cache_read", "cache_write_5m", "cache_write_1h",
    "output", "reasoning", "cost_usd", "errors", "commits", "pushes", "landed", "parked",
)  # fmt: skip
STATE_COLUMNS = (
    "window_end_at", "status", "waiting_until", "ended_at", "end_evidence", "root_last_active_at",
    *PROGRESS_COLUMNS,
)  # fmt: skip


def refresh_loops(conn: psycopg.Connection, dirty: list[int], *, now: datetime | None = None) -> int:
    """Detect launches in sessions `dirty` and recompute the affected loops at `now` (default:
    the current time, timezone-aware). Returns how many loops were recomputed. Runs inside the
    caller's transaction; does nothing before migration 0007."""
    if conn.execute("SELECT to_regclass('ah.loops')").fetchone()[0] is None:
        return 0
    now = now or datetime.now(UTC)
    if dirty:
        _detect_launches(conn, dirty)
    ids = _affected(conn, dirty)
    for loop_id in ids:
        _refresh_one(conn, loop_id, now)
    return len(ids)


# -- 1. launches --------------------------------------------------------------------------------
def _detect_launches(conn: psycopg.Connection, dirty: list[int]) -> None:
    rows = conn.execute(
        """
        SELECT m.id, m.agent, m.message_uid, m.session_id, m.text, m.ts, s.cwd, r.name, r.remote_url
        FROM ah.message AS m
        JOIN ah.session AS s ON s.id = m.session_id
        LEFT JOIN ah.repo AS r ON r.id = s.repo_id
        WHERE m.session_id = ANY (%s) AND m.message_class = ANY (%s) AND strpos(m.text, %s) > 0
        ORDER BY m.session_id, m.source_id, m.byte_offset, m.id
        """,
        (dirty, list(rules.LAUNCH_CLASSES), rules.LAUNCH_MARKER),
    ).fetchall()
    keep: list[str] = []
    for mid, agent, uid, sid, text, ts, cwd, repo_name, remote in rows:
        launch = detect_launch(text)
        if launch is None:
            continue
        keep.append(uid)
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
            (
                agent, uid, sid, mid, launch.closeout_path, absolute_path(launch.closeout_path, cwd),
                launch.charter_path, launch.charter_sha256, launch.loop_number, launch.loop_date,
                repo_label(repo_name, remote), ts,
            ),
        )  # fmt: skip
    # Launches of these sessions that no longer exist (the file was rewritten or purged).
    conn.execute(
        "DELETE FROM ah.loops WHERE root_session_id = ANY (%s) AND NOT (launch_message_uid = ANY (%s))",
        (dirty, keep),
    )


# -- 2. which loops ---------------------------------------------------------------------------
def _affected(conn: psycopg.Connection, dirty: list[int]) -> list[int]:
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


# -- 3. one loop ------------------------------------------------------------------------------
@dataclass
class _Loop:
    id: int
    agent: str
    root: int
    root_cwd: str | None
    started_at: datetime | None
    closeout_abspath: str
    loop_number: int
    charter_sha256: str | None
    repo: str | None


def _refresh_one(conn: psycopg.Connection, loop_id: int, now: datetime) -> None:
    row = conn.execute(
        """
        SELECT l.id, l.agent, l.root_session_id, s.cwd, l.started_at, l.closeout_abspath, l.loop_number,
               l.charter_sha256, l.repo
        FROM ah.loops AS l JOIN ah.session AS s ON s.id = l.root_session_id
        WHERE l.id = %s
        """,
        (loop_id,),
    ).fetchone()
    if row is None:
        return
    loop = _Loop(*row)
    nxt = conn.execute(
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
    window_end = nxt[1] if nxt else None
    lanes = _lanes(conn, loop, window_end)
    _write_lanes(conn, loop.id, lanes)
    closed_at, closed_by, landed, parked = _closeouts(conn, loop, window_end)
    word, active = _root_last_word(conn, loop.root)
    st = loop_status(
        now=now,
        closed_at=closed_at,
        closed_evidence=closed_by,
        replaced_at=window_end,
        replaced_evidence=f"replaced by the next launch of the same root (loop id {nxt[0]})" if nxt else None,
        last_word=word,
        root_last_active_at=active,
    )
    progress = _progress(conn, loop, window_end, [sid for sid, _ in lanes])
    values = {
        "window_end_at": window_end,
        "status": st.status,
        "waiting_until": st.waiting_until,
        "ended_at": st.ended_at,
        "end_evidence": st.end_evidence,
        "root_last_active_at": active,
        "lanes": len(lanes),
        **progress,
        "landed": landed,
        "parked": parked,
    }
    cols = ", ".join(f"{c} = %({c})s" for c in STATE_COLUMNS)
    old = ", ".join(f"l.{c}" for c in STATE_COLUMNS)
    new = ", ".join(f"%({c})s::{_TYPES[c]}" for c in STATE_COLUMNS)
    conn.execute(
        f"UPDATE ah.loops AS l SET {cols}, refreshed_at = %(now)s "
        f"WHERE l.id = %(id)s AND (l.refreshed_at IS NULL OR ({old}) IS DISTINCT FROM ({new}))",
        {**values, "id": loop.id, "now": now},
    )


_TYPES = {
    "window_end_at": "timestamptz", "status": "text", "waiting_until": "timestamptz", "ended_at": "timestamptz",
    "end_evidence": "text", "root_last_active_at": "timestamptz", "cost_usd": "numeric",
    **{c: "bigint" for c in PROGRESS_COLUMNS if c != "cost_usd"},
}  # fmt: skip


def _window(alias: str, column: str) -> str:
    return f"({alias}.{column} >= %(start)s AND (%(end)s::timestamptz IS NULL OR {alias}.{column} < %(end)s))"


def _lanes(conn: psycopg.Connection, loop: _Loop, end: datetime | None) -> list[tuple[int, str]]:
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
            WHERE c.parent_session_id = %(root)s AND c.id <> %(root)s AND {_window("w", "at")}
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
          AND {_window("tc", "started_at")}
        ORDER BY tc.started_at
        """,
        {**params, "shell": _SHELL_TOOLS},
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


def _write_lanes(conn: psycopg.Connection, loop_id: int, lanes: list[tuple[int, str]]) -> None:
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


def _closeouts(
    conn: psycopg.Connection, loop: _Loop, end: datetime | None
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
        ([r[0] for r in writers], _WRITE_TOOLS, loop.closeout_abspath.rsplit("/", 1)[-1]),
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


def _root_last_word(conn: psycopg.Connection, root: int) -> tuple[str | None, datetime | None]:
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


def _progress(conn: psycopg.Connection, loop: _Loop, end: datetime | None, lanes: list[int]) -> dict:
    """Progress columns over the root's events inside the window plus the lanes' whole sessions."""
    params = {"root": loop.root, "lanes": lanes, "start": loop.started_at, "end": end}
    in_scope = "(x.session_id = ANY (%(lanes)s) OR (x.session_id = %(root)s AND {w}))"
    if loop.started_at is None:
        in_scope = "x.session_id = ANY (%(lanes)s)"
    calls = conn.execute(
        f"""
        SELECT count(*), sum(x.input_uncached), sum(x.cache_read), sum(x.cache_write_5m), sum(x.cache_write_1h),
               sum(x.output), sum(x.reasoning),
               CASE WHEN count(*) > 0 AND count(k.cost) = count(*) THEN round(sum(k.cost), 6) END
        FROM ah.model_call AS x
        JOIN ah.session AS s ON s.id = x.session_id
        CROSS JOIN LATERAL (
            SELECT ah.call_cost_usd(coalesce(x.model, s.model), coalesce(x.ts, s.started_at), x.input_uncached,
                                    x.cache_read, x.cache_write_5m, x.cache_write_1h, x.output) AS cost
        ) AS k
        WHERE NOT coalesce(x.is_api_error, false) AND {in_scope.format(w=_window("x", "ts"))}
        """,
        params,
    ).fetchone()
    tools = conn.execute(
        f"""
        SELECT count(*), count(*) FILTER (WHERE x.is_error OR x.error_class IS NOT NULL)
        FROM ah.tool_call AS x WHERE {in_scope.format(w=_window("x", "started_at"))}
        """,
        params,
    ).fetchone()
    git = conn.execute(
        f"""
        SELECT count(DISTINCT coalesce(x.sha, x.git_event_uid)) FILTER (WHERE x.op = 'commit'),
               count(DISTINCT x.git_event_uid) FILTER (WHERE x.op = 'push')
        FROM ah.git_event AS x WHERE {in_scope.format(w=_window("x", "ts"))}
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
