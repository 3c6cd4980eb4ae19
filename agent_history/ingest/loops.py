"""The loop post-pass (issue 12): launches, windows, lanes, closeouts, status and progress.

Called by `ingest.postpass.run_postpasses` after the session post-pass (lineage must be fresh),
in the same transaction, with the ids of the sessions that were dirty. The rules are the pure
`agent_history.loops` package; this module and `ingest.loop_evidence` (the per-loop evidence)
only read rows (`db.tables.loop_evidence`) and write ``ah.loops``, ``ah.lane`` and ``ah.loop_closeout``
(`db.tables.loops`).

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

from agent_history.db.tables import loop_evidence as reads
from agent_history.db.tables import loops as loop_rows
from agent_history.db.tables.repos import collector_tables_exist
from agent_history.ingest import loop_evidence as ev
from agent_history.ingest.loop_evidence import LoopFacts
from agent_history.loops import rules
from agent_history.loops.launch import absolute_path, detect_launch, repo_label
from agent_history.loops.progress import choose
from agent_history.loops.status import loop_status


def refresh_loops(conn: psycopg.Connection, dirty: list[int], *, now: datetime | None = None) -> int:
    """Detect launches in sessions `dirty` and recompute the affected loops at `now` (default:
    the current time, timezone-aware). Returns how many loops were recomputed. Runs inside the
    caller's transaction; does nothing before migration 0007."""
    if not loop_rows.loops_table_exists(conn):
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
    messages = reads.launch_messages(conn, dirty, list(rules.LAUNCH_CLASSES), rules.LAUNCH_MARKER)
    from agent_history.model.limits import PATH_BYTES  # here: a pass with nothing dirty never loads the model

    keep: list[str] = []
    launches: list[tuple] = []
    for mid, agent, uid, sid, text, ts, cwd, repo_name, remote in messages:
        launch = detect_launch(text)
        if launch is None:
            continue
        abspath = absolute_path(launch.closeout_path, cwd)
        if len(abspath.encode("utf-8")) > PATH_BYTES:
            continue  # a path no file system names and no index can hold (issue 25): not a closeout
        keep.append(uid)
        launches.append((
            agent, uid, sid, mid, launch.closeout_path, abspath,
            launch.charter_path, launch.charter_sha256, launch.loop_number, launch.loop_date,
            repo_label(repo_name, remote), ts,
        ))  # fmt: skip
    loop_rows.upsert_launches(conn, launches)
    # Launches of these sessions that no longer exist (the file was rewritten or purged).
    loop_rows.delete_lost_launches(conn, dirty, keep)


# -- 2. which loops ---------------------------------------------------------------------------
def _affected(conn: psycopg.Connection, dirty: list[int]) -> list[int]:
    ids = loop_rows.affected_loops(conn, dirty)
    if collector_tables_exist(conn):
        # loops whose closeout lies in a repository the collector changed after their last refresh
        ids += loop_rows.loops_in_changed_repositories(conn, ids)
    return ids


# -- 3. one loop ------------------------------------------------------------------------------
def _refresh_one(conn: psycopg.Connection, loop_id: int, now: datetime) -> None:
    has_sources = collector_tables_exist(conn)
    row = loop_rows.loop_facts(conn, loop_id)
    if row is None:
        return
    loop = LoopFacts(*row)
    nxt = loop_rows.next_launch(conn, loop_id)
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
        "progress_sources": sources if has_sources and sources else None,
    }
    loop_rows.store_state(conn, loop.id, values, now, has_sources=has_sources)
