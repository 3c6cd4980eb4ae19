"""Evidence for one loop (issue 12), read for `ingest.loops`: its lanes and their lane-return
blocks, the writes of its closeout path, the root's last word and activity, and its progress.

Every function takes the open connection (inside the post-pass transaction) and a `LoopFacts`;
the window is [launch time, next launch of the same root) by timestamp. The rules applied are
the pure `agent_history.loops` package; the statements are `db.tables.loop_evidence` (reads) and
`db.tables.loops` (lanes and closeouts written).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg

from agent_history.db.tables import loop_evidence as reads
from agent_history.db.tables import loops as loop_rows
from agent_history.db.tables.repos import collector_tables_exist
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


def lanes(conn: psycopg.Connection, loop: LoopFacts, end: datetime | None) -> list[tuple[int, str]]:
    """(session id, link method) of the loop's lanes, lineage first."""
    if loop.started_at is None:
        return []
    lineage = reads.lineage_lanes(conn, loop.root, loop.started_at, end)
    out = [(sid, "lineage") for sid in lineage]
    seen = {loop.root, *(sid for sid, _ in out)}
    calls = reads.codex_commands(conn, loop.root, loop.started_at, end, SHELL_TOOLS)
    for tool_input, started, ended in calls:
        for directory in codex_dirs(tool_input, loop.root_cwd):
            found = reads.codex_sessions_in(conn, directory, started, ended, end)
            for sid, method in found:
                if sid not in seen:
                    seen.add(sid)
                    out.append((sid, method))
    return out


def write_lanes(conn: psycopg.Connection, loop_id: int, lanes: list[tuple[int, str]]) -> None:
    """Store `lanes` (session id, link method) of the loop with their lane-return blocks; drop
    lanes that no longer attach."""
    ids = [sid for sid, _ in lanes]
    loop_rows.delete_detached_lanes(conn, loop_id, ids)
    if not ids:
        return
    texts: dict[int, list[str]] = {sid: [] for sid in ids}
    for sid, text in reads.lane_return_texts(conn, ids):
        texts[sid].append(text)
    parsed = [(sid, method, parse_returns(texts[sid])) for sid, method in lanes]
    loop_rows.upsert_lanes(conn, loop_id, [(sid, method, p.status, p.returns) for sid, method, p in parsed])


def closeouts(
    conn: psycopg.Connection, loop: LoopFacts, end: datetime | None
) -> tuple[datetime | None, str | None, int | None, int | None]:
    """Record the writes of the closeout path; returns (ended_at, evidence, landed, parked) of
    the qualified closeout (the first qualified write ends the run; the last one's lists count)."""
    writers = loop_rows.closeout_writers(conn, loop.closeout_abspath)
    calls = reads.closeout_calls(conn, writers, WRITE_TOOLS, loop.closeout_abspath.rsplit("/", 1)[-1])
    found: list[tuple] = []
    for uid, sid, suid, cwd, agent, name, tool_input, outcome, is_error, at in calls:
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
    recorded = [(sid, uid, sha, first, at, ok, reason) for uid, sid, _, sha, first, at, ok, reason, _ in found]
    loop_rows.replace_closeouts(conn, loop.id, recorded)
    good = [f for f in found if f[6]]
    if not good:
        return None, None, None, None
    landed, parked = closeout.count_tasks(good[-1][8])
    return good[0][5], f"qualified closeout written by session {good[0][2]}", landed, parked


def root_last_word(conn: psycopg.Connection, root: int) -> tuple[str | None, datetime | None]:
    """(the root's last assistant text when nothing conversational followed it, the root's
    latest event time)."""
    last = reads.last_message(conn, root, ["human_prompt", "queued_prompt", "assistant_text", "agent_message"])
    active = reads.last_active(conn, root)
    word = last[1] if last and last[0] == "assistant_text" else None
    return word, active


def progress(conn: psycopg.Connection, loop: LoopFacts, end: datetime | None, lanes: list[int]) -> dict:
    """Progress columns over the root's events inside the window plus the lanes' whole sessions."""
    calls, tools, git = reads.progress_sums(conn, loop.root, loop.started_at, end, lanes)
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
    if loop.started_at is None or not collector_tables_exist(conn):
        return {}
    repo = reads.repository_holding(conn, loop.closeout_abspath)
    if repo is None:
        return {}
    repo_id, root = repo
    start, stop = loop.started_at, end or now
    out: dict[str, dict[str, int | None]] = {}
    state_path = statelog.state_log_path(loop.closeout_abspath)
    if state_path is not None:
        rel = state_path[len(root) + 1 :]
        lines = reads.state_log_lines(conn, repo_id, rel, start, stop)
        landed, parked = statelog.count_tasks([statelog.StateLine(ts, ev, task=t) for ts, ev, t in lines])
        out["state_log"] = {"landed": landed, "parked": parked}
    trailers = reads.landed_task_trailers(conn, repo_id, start, stop)
    out["task_trailers"] = {"landed": trailers or None}
    flips = reads.done_flips(conn, repo_id, start, stop, sorted(DONE_STATUSES))
    out["done_flips"] = {"landed": flips or None}
    commits, pushes = reads.commits_and_pushes(conn, repo_id, start, stop)
    out["repository"] = {"commits": commits, "pushes": pushes}
    return out
