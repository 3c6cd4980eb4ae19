"""Loop progress from the repositories (issue 30): a root that launched four loops in a real git
repository (`tests/git_repos.py`), with a state log for one; `collect` then fills landed/parked,
commits and pushes by the precedence of `agent_history.loops.progress`, NULL where nothing
attributes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import psycopg

from agent_history.ingest.collect import collect
from agent_history.loops.progress import choose
from agent_history.loops.statelog import StateLine, count_tasks, parse_line, state_log_path
from agent_history.model.rows import MessageRow
from tests.catalogue_rows import session, write
from tests.git_repos import ME, at, build_project

CHARTER = "c" * 64


def _launch(n: int, root_uid: str, hours: float, offset: int) -> MessageRow:
    text = (
        f"You are the root of project loop {n}. Read the charter codex/charter-project.md (sha256 {CHARTER}) "
        f"and work the queue. When the loop is done, write the closeout to codex/closeout-2026-11-02-loop{n}.md."
    )
    return MessageRow(
        agent="claude", message_uid=f"launch-{n}", session_uid=root_uid, agent_id="", role="user",
        message_class="human_prompt", text=text, ts=at(0) + timedelta(hours=hours), byte_offset=offset,
        line_number=offset // 100 + 1,
    )  # fmt: skip


def _state(hours: float, event: str, task: str) -> str:
    ts = (at(0) + timedelta(hours=hours)).isoformat().replace("+00:00", "Z")
    return json.dumps({"ts": ts, "event": event, "task": task})


def test_each_loop_takes_the_first_source_that_attributes(db, own_tmp):
    project = build_project(own_tmp)
    (project / "codex").mkdir()
    (project / "codex" / "state-2026-11-02-loop3.jsonl").write_text(
        "\n".join([_state(5.1, "landed", "task-2"), _state(5.2, "parked", "task-5"), _state(5.3, "landed", "task-4"),
                   "not json", _state(7.0, "landed", "task-7")]) + "\n"
    )  # fmt: skip
    root = "root-1"
    # launches at 09:30, 10:30, 13:30 and 15:30: windows end at the next launch (the last is open)
    rows = [session(root, cwd=str(project), started_at=at(0)), *(
        _launch(n, root, h, 100 * n) for n, h in ((1, 0.5), (2, 1.5), (3, 4.5), (4, 6.5))
    )]  # fmt: skip
    write(db.dsn, rows)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = collect(conn, [project], [ME[1]])
        assert summary.loops_refreshed == 4
        assert summary.lines[-1] == (
            f"bad state log line {project}/codex/state-2026-11-02-loop3.jsonl: line 4: not JSON: "
            "Expecting value: line 1 column 1 (char 0) (the other lines are collected)"
        )
        got = {
            n: (landed, parked, commits, pushes, sources)
            for n, landed, parked, commits, pushes, sources in conn.execute(
                "SELECT loop_number, landed, parked, commits, pushes, progress_sources FROM ah.loops"
            )
        }
        pushed = conn.execute("SELECT count(*) FROM ah.repo_push WHERE pushed_at >= %s", (at(6.5),)).fetchone()[0]
    repo = {"commits": "repository", "pushes": "repository"}
    assert pushed == 2  # pushed at 16:00 (the reflog time), inside only the open window
    assert got == {
        # 09:30–10:30: c2 (Task: task-1) reached main at 10:00
        1: (1, None, 1, 0, {"landed": "task_trailers", **repo}),
        # 10:30–13:30: no trailer reached main; task-1 flipped to Done at 13:00; c3, c4, c5 committed
        2: (1, None, 3, 0, {"landed": "done_flips", **repo}),
        # 13:30–15:30: the state log (two landed, one parked) wins over the merge's trailer (task-2)
        3: (2, 1, 2, 0, {"landed": "state_log", "parked": "state_log", **repo}),
        # 15:30–now: nothing lands; no commit; the two pushes
        4: (None, None, 0, 2, repo),
    }
    # a second collect changes nothing, the loops included
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        before = conn.execute("SELECT l::text FROM ah.loops AS l ORDER BY id").fetchall()
        assert collect(conn, [project], [ME[1]]).repositories[0].changed == 0
        assert conn.execute("SELECT l::text FROM ah.loops AS l ORDER BY id").fetchall() == before


def test_precedence_is_per_column_and_unknown_stays_none():
    values, sources = choose(
        {
            "closeout": {"landed": None, "parked": None},
            "state_log": {"landed": None, "parked": 2},
            "task_trailers": {"landed": 3},
            "done_flips": {"landed": 5},
            "transcripts": {"commits": 4, "pushes": None},
        }
    )
    assert values == {"landed": 3, "parked": 2, "commits": 4, "pushes": None}
    assert sources == {"landed": "task_trailers", "parked": "state_log", "commits": "transcripts"}


def test_state_log_name_lines_and_counts():
    assert state_log_path("/r/codex/closeout-2026-11-02-loop3.md") == "/r/codex/state-2026-11-02-loop3.jsonl"
    assert state_log_path("/r/notes.md") is None
    t = datetime(2026, 11, 2, 14, 0, tzinfo=UTC)
    assert parse_line('{"ts": "2026-11-02T14:00:00Z", "event": "landed", "task": "task-2"}') == StateLine(
        t, "landed", task="task-2"
    )
    for bad, error in (('{"ts": "2026-11-02T14:00:00", "event": "landed", "task": "x"}', "no time zone"),
                       ('{"ts": "2026-11-02T14:00:00Z", "event": "merged", "task": "x"}', "is not one of"),
                       ('{"ts": "2026-11-02T14:00:00Z", "event": "accepted"}', "names no lane")):  # fmt: skip
        try:
            parse_line(bad)
        except ValueError as exc:
            assert error in str(exc)
        else:
            raise AssertionError(bad)
    lines = [StateLine(t, "landed", task="a"), StateLine(t, "parked", task="a"), StateLine(t, "landed", task="b"),
             StateLine(t, "accepted", lane="docs")]  # fmt: skip
    assert count_tasks(lines) == (1, 1)
    assert count_tasks([StateLine(t, "accepted", lane="docs")]) == (None, None)
