"""The loop post-pass (issue 12): launches, windows, lanes, closeouts, status and progress.

Called by `ingest.postpass.run_postpasses` after the session post-pass (lineage must be fresh),
in the same transaction, with the ids of the sessions that were dirty. The rules are the pure
`agent_history.loops` package; this module and `ingest.loop_evidence` (the per-loop queries)
only read rows and write ``ah.loops``, ``ah.lane`` and ``ah.loop_closeout``.

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

from datetime import UTC, datetime

import psycopg
from psycopg.types.json import Jsonb

from agent_history.ingest import loop_evidence as ev
from agent_history.ingest.loop_evidence import LoopFacts
from agent_history.loops import rules
from agent_history.loops.launch import absolute_path, detect_launch, repo_label
from agent_history.loops.progress import choose
from agent_history.loops.status import loop_status

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
    from agent_history.model.limits import PATH_BYTES  # here: a pass with nothing dirty never loads the model

    keep: list[str] = []
    for mid, agent, uid, sid, text, ts, cwd, repo_name, remote in rows:
        launch = detect_launch(text)
        if launch is None:
            continue
        abspath = absolute_path(launch.closeout_path, cwd)
        if len(abspath.encode("utf-8")) > PATH_BYTES:
            continue  # a path no file system names and no index can hold (issue 25): not a closeout
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
                agent, uid, sid, mid, launch.closeout_path, abspath,
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
    ids = [r[0] for r in rows]
    if _has_sources(conn):
        # loops whose closeout lies in a repository the collector changed after their last refresh
        more = conn.execute(
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
        ids += [r[0] for r in more]
    return ids


def _has_sources(conn: psycopg.Connection) -> bool:
    """Whether the collector's tables (migration 0019) exist."""
    return conn.execute("SELECT to_regclass('ah.repository')").fetchone()[0] is not None


# -- 3. one loop ------------------------------------------------------------------------------
def _refresh_one(conn: psycopg.Connection, loop_id: int, now: datetime) -> None:
    has_sources = _has_sources(conn)
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
    loop = LoopFacts(*row)
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
    lanes = ev.lanes(conn, loop, window_end)
    ev.write_lanes(conn, loop.id, lanes)
    closed_at, closed_by, landed, parked = ev.closeouts(conn, loop, window_end)
    word, active = ev.root_last_word(conn, loop.root)
    st = loop_status(
        now=now,
        closed_at=closed_at,
        closed_evidence=closed_by,
        replaced_at=window_end,
        replaced_evidence=f"replaced by the next launch of the same root (loop id {nxt[0]})" if nxt else None,
        last_word=word,
        root_last_active_at=active,
    )
    progress = ev.progress(conn, loop, window_end, [sid for sid, _ in lanes])
    candidates = {
        "closeout": {"landed": landed, "parked": parked},
        "transcripts": {"commits": progress.pop("commits"), "pushes": progress.pop("pushes")},
        **ev.repository_candidates(conn, loop, window_end, now),
    }
    chosen, sources = choose(candidates)
    values = {
        "window_end_at": window_end,
        "status": st.status,
        "waiting_until": st.waiting_until,
        "ended_at": st.ended_at,
        "end_evidence": st.end_evidence,
        "root_last_active_at": active,
        "lanes": len(lanes),
        **progress,
        **chosen,
        "progress_sources": Jsonb(sources) if has_sources and sources else None,
    }
    columns = STATE_COLUMNS + (("progress_sources",) if has_sources else ())
    cols = ", ".join(f"{c} = %({c})s" for c in columns)
    old = ", ".join(f"l.{c}" for c in columns)
    new = ", ".join(f"%({c})s::{_TYPES[c]}" for c in columns)
    # A loop in a repository the collector changed since its refresh is stamped even when its values
    # stay, so `_affected` stops picking it (changed_at only moves when a collect changes a row).
    stale = (
        " OR EXISTS (SELECT 1 FROM ah.repository AS r WHERE starts_with(l.closeout_abspath, r.path || '/') "
        "AND r.changed_at > l.refreshed_at)"
        if has_sources
        else ""
    )
    conn.execute(
        f"UPDATE ah.loops AS l SET {cols}, refreshed_at = %(now)s "
        f"WHERE l.id = %(id)s AND (l.refreshed_at IS NULL OR ({old}) IS DISTINCT FROM ({new}){stale})",
        {**values, "id": loop.id, "now": now},
    )


_TYPES = {
    "window_end_at": "timestamptz", "status": "text", "waiting_until": "timestamptz", "ended_at": "timestamptz",
    "end_evidence": "text", "root_last_active_at": "timestamptz", "cost_usd": "numeric", "progress_sources": "jsonb",
    **{c: "bigint" for c in PROGRESS_COLUMNS if c != "cost_usd"},
}  # fmt: skip
