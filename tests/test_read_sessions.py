"""`sessions` (recent sessions with usage) and `session UID` (the ordered, sliceable timeline)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from agent_history.model.rows import CompactionRow, GitEventRow, ModelCallRow, SubagentSpawnRow
from agent_history.read.common import AmbiguousSession, SessionNotFound
from agent_history.read.requests import SessionsRequest
from agent_history.read.sessions import list_sessions
from agent_history.read.timeline import session_timeline
from tests.catalogue_rows import T0, message, session, tool_call, write


def call(uid: str, session_uid: str, *, agent_id: str = "", inp: int, out: int | None = None) -> ModelCallRow:
    return ModelCallRow(
        agent="claude",
        call_uid=uid,
        session_uid=session_uid,
        agent_id=agent_id,
        model="claude-sonnet-4",
        input_uncached=inp,
        output=out,
        is_complete=True,
        ts=T0,
    )


def _usage(db) -> None:
    write(
        db.dsn,
        [
            session("main-1", title="Refactor the pool", cwd="/home/u/alpha", ended_at=T0 + timedelta(minutes=90)),
            message("p", "main-1", "refactor the pool", cls="human_prompt"),
            call("c1", "main-1", inp=1_000_000, out=100_000),
            SubagentSpawnRow(
                agent="claude",
                spawn_uid="t1",
                session_uid="main-1",
                agent_id="",
                child_session_uid="main-1",
                child_agent_id="sub",
                brief="look around",
            ),
        ],
        path="/t/main-1.jsonl",
    )
    write(
        db.dsn,
        [session("main-1", agent_id="sub", is_subagent=True), call("c2", "main-1", agent_id="sub", inp=1_000_000)],
        path="/t/agent-sub.jsonl",
    )
    write(
        db.dsn,
        [
            session("main-2", agent="codex", cwd="/home/u/beta", started_at=T0 + timedelta(days=2)),
            message("q", "main-2", "hello", agent="codex", cls="human_prompt"),
        ],
        path="/t/main-2.jsonl",
        namespace="codex-local",
        agent="codex",
    )


def test_sessions_lists_main_threads_newest_first_with_subagent_totals(db):
    _usage(db)
    with db.connect() as conn:
        rows = list_sessions(conn)
    assert [(r.session_uid, r.agent, r.title, r.subagent_count) for r in rows] == [
        ("main-2", "codex", "hello", 0),
        ("main-1", "claude", "Refactor the pool", 1),
    ]
    main = rows[1]
    assert (main.tokens, main.cost_usd, main.tokens_with_subagents, main.cost_usd_with_subagents) == (
        1_100_000,
        Decimal("4.500000"),
        2_100_000,
        Decimal("7.500000"),
    )
    assert main.duration_ms == 90 * 60 * 1000
    assert (rows[0].tokens, rows[0].cost_usd) == (None, None)  # no model call: unknown, not zero


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"agents": ("claude",)}, ["main-1"]),
        ({"namespaces": ("codex-local",)}, ["main-2"]),
        ({"project": "/home/u/alpha"}, ["main-1"]),
        ({"since": datetime(2025, 6, 2, tzinfo=UTC)}, ["main-2"]),
        ({"limit": 1}, ["main-2"]),
        ({"include_subagents": True}, ["main-2", "main-1/sub", "main-1"]),  # same start: newer row first
    ],
)
def test_sessions_filters(db, kw, expected):
    _usage(db)
    with db.connect() as conn:
        rows = list_sessions(conn, SessionsRequest(**kw))
    assert [r.session_uid + (f"/{r.agent_id}" if r.agent_id else "") for r in rows] == expected


def _timeline(db) -> None:
    write(
        db.dsn,
        [
            session("sess-abcdef-1"),
            message("m1", "sess-abcdef-1", "start here", cls="human_prompt", offset=0),
            message("m2", "sess-abcdef-1", "I will run the tests", offset=100),
            tool_call("t1", "sess-abcdef-1", "Bash", '{"command": "pytest"}', "1 failed", offset=100, outcome="error"),
            tool_call("t2", "sess-abcdef-1", "Task", '{"prompt": "look"}', "report", offset=200),
            SubagentSpawnRow(
                agent="claude",
                spawn_uid="t2",
                session_uid="sess-abcdef-1",
                agent_id="",
                tool_call_uid="t2",
                child_session_uid="sess-abcdef-1",
                child_agent_id="kid",
                subagent_type="Explore",
                brief="look",
                byte_offset=200,
            ),
            CompactionRow(
                agent="claude",
                compaction_uid="k1",
                session_uid="sess-abcdef-1",
                agent_id="",
                trigger="auto",
                tokens_before=150_000,
                byte_offset=300,
            ),
            message("m3", "sess-abcdef-1", "summary of earlier work", cls="compaction_summary", offset=300),
            GitEventRow(
                agent="claude",
                git_event_uid="g1",
                session_uid="sess-abcdef-1",
                agent_id="",
                op="commit",
                sha="abc1234",
                branch="main",
                subject="fix",
                byte_offset=400,
            ),
        ],
        path="/t/tl.jsonl",
    )
    write(
        db.dsn,
        [
            session("sess-abcdef-1", agent_id="kid", is_subagent=True),
            message("k1", "sess-abcdef-1", "look", cls="subagent_brief", agent_id="kid"),
        ],
        path="/t/agent-kid.jsonl",
    )
    write(db.dsn, [session("sess-abcxyz-2")], path="/t/other.jsonl")


def test_timeline_is_in_byte_order_with_a_fixed_order_within_one_line(db):
    _timeline(db)
    with db.connect() as conn:
        tl = session_timeline(conn, "sess-abcdef-1")
    assert tl.total == 8
    assert [(e.seq, e.kind, e.byte_offset, e.label) for e in tl.events] == [
        (1, "message", 0, "human_prompt"),
        (2, "message", 100, "assistant_text"),
        (3, "tool_call", 100, "Bash"),
        (4, "tool_call", 200, "Task"),
        (5, "spawn", 200, "Explore"),
        (6, "compaction", 300, "auto"),
        (7, "message", 300, "compaction_summary"),
        (8, "git", 400, "commit"),
    ]
    bash, spawn, compaction, git = tl.events[2], tl.events[4], tl.events[5], tl.events[7]
    assert (bash.detail["outcome"], bash.detail["output"]) == ("error", "1 failed")
    assert (spawn.detail["child_session_uid"], spawn.detail["child_agent_id"]) == ("sess-abcdef-1", "kid")
    assert compaction.detail == {"tokens_before": 150_000, "tokens_after": None}
    assert (git.detail["sha"], git.detail["branch"], git.text) == ("abc1234", "main", "fix")
    assert tl.summary.message_count == 3


def test_timeline_slices_by_event_number_and_resolves_prefixes_and_threads(db):
    _timeline(db)
    with db.connect() as conn:
        part = session_timeline(conn, "sess-abcdef", start=3, end=5, max_chars=4)
        assert ([e.seq for e in part.events], part.total) == ([3, 4, 5], 8)
        assert (part.events[0].text, part.events[0].truncated) == ('{"co…', True)
        assert [e.seq for e in session_timeline(conn, "sess-abcdef-1", start=7).events] == [7, 8]
        kid = session_timeline(conn, "sess-abcdef-1", agent_id="kid")
        assert (kid.session.agent_id, kid.session.is_subagent, [e.text for e in kid.events]) == ("kid", True, ["look"])
        with pytest.raises(AmbiguousSession, match="matches 2 sessions"):
            session_timeline(conn, "sess-abc")
        with pytest.raises(SessionNotFound):
            session_timeline(conn, "nope-nope")
        with pytest.raises(SessionNotFound, match="no thread with agent id 'zz'"):
            session_timeline(conn, "sess-abcdef-1", agent_id="zz")


def test_cli_session_and_sessions_json(db, cli_env):
    _timeline(db)
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "session", "sess-abcdef-1", "--from", "2", "--to", "3", "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [(e["seq"], e["kind"]) for e in data["events"]] == [(2, "message"), (3, "tool_call")]
    listing = subprocess.run(
        [sys.executable, "-m", "agent_history", "sessions", "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert sorted(r["session_uid"] for r in json.loads(listing.stdout)) == ["sess-abcdef-1", "sess-abcxyz-2"]
    missing = subprocess.run(
        [sys.executable, "-m", "agent_history", "session", "nope-nope"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 1 and "no session 'nope-nope'" in missing.stderr
