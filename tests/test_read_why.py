"""`why SHA`: the session, tool call, last human prompt and sub-agent brief behind a commit."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_history.model.rows import GitEventRow, SubagentSpawnRow
from agent_history.read.why import BadSha, why
from tests.catalogue_rows import message, session, tool_call, write
from tests.corpus_db import corpus_db  # noqa: F401 - fixture


def test_corpus_commit_names_session_tool_call_and_the_last_prompt_before_it(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        origins = why(conn, "6d0e203")
    assert [(o.op, o.sha, o.session.session_uid, o.byte_offset) for o in origins] == [
        ("commit", "6d0e203", "0fae0449-64d3-4788-8622-d3a47d82c14b", 1419805),
        ("push", "6d0e203", "0fae0449-64d3-4788-8622-d3a47d82c14b", 1427347),
    ]
    commit = origins[0]
    assert commit.tool_name == "Bash" and "git commit" in commit.command
    assert commit.subject == "fix: address critical security and reliability issues from code review"
    assert commit.prompt.text.startswith("Code Review for PR #17: Fix Streaming Platform Issues")
    assert (commit.prompt.byte_offset, commit.prompt.session_uid) == (1338105, "0fae0449-64d3-4788-8622-d3a47d82c14b")
    assert commit.brief is None and not commit.session.is_subagent


def test_prompts_looked_up_in_one_statement_are_those_looked_up_one_by_one(corpus_db):  # noqa: F811
    """`why` looks up the prompts before many events in one statement (a sha printed in hundreds
    of sessions): for every git event of the corpus it gives what the one-event lookup gives."""
    from agent_history.read.why import _prompt_before, _prompts_before

    with corpus_db.connect() as conn:
        events = conn.execute("SELECT session_id, byte_offset, source_id FROM ah.git_event ORDER BY id").fetchall()
        batch = _prompts_before(conn, [tuple(e) for e in events])
        single = [_prompt_before(conn, sid, off, src) for sid, off, src in events]
    assert [tuple(p) if p else None for p in batch] == [tuple(p) if p else None for p in single]
    assert (len(events), sum(p is not None for p in single)) == (91, 89)


def test_a_full_sha_finds_the_abbreviated_one_and_garbage_is_refused(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        assert [o.op for o in why(conn, "6D0E203" + "0" * 33)] == ["commit", "push"]
        assert why(conn, "deadbee") == []
        with pytest.raises(BadSha, match="7–40 hex"):
            why(conn, "6d0e20")
        with pytest.raises(BadSha):
            why(conn, "not-a-sha")


def _subagent_commit(db, *, by_child_key: bool) -> None:
    write(
        db.dsn,
        [
            session("m1"),
            message("p1", "m1", "please refactor the pool", cls="human_prompt", offset=100),
            message("p2", "m1", "and commit when done", cls="human_prompt", offset=300),
            tool_call("task1", "m1", "Task", '{"prompt": "Refactor pool.py and commit"}', "done", offset=400),
            SubagentSpawnRow(
                agent="claude",
                spawn_uid="task1",
                session_uid="m1",
                agent_id="",
                tool_call_uid="task1",
                child_session_uid="m1" if by_child_key else None,
                child_agent_id="a1" if by_child_key else None,
                subagent_type="general-purpose",
                brief="Refactor pool.py and commit",
                byte_offset=400,
            ),
            message("p3", "m1", "thanks", cls="human_prompt", offset=900),
        ],
        path="/t/m1.jsonl",
    )
    write(
        db.dsn,
        [
            session("m1", agent_id="a1", is_subagent=True, spawn_uid=None if by_child_key else "task1"),
            message("b1", "m1", "Refactor pool.py and commit", cls="subagent_brief", agent_id="a1", offset=0),
            tool_call(
                "git1",
                "m1",
                "Bash",
                '{"command": "git commit -m refactor"}',
                "[main abc1234] refactor pool",
                agent_id="a1",
                offset=500,
            ),
            GitEventRow(
                agent="claude",
                git_event_uid="g1",
                session_uid="m1",
                agent_id="a1",
                tool_call_uid="git1",
                op="commit",
                sha="abc1234",
                branch="main",
                subject="refactor pool",
                byte_offset=520,
            ),
        ],
        path="/t/agent-a1.jsonl",
    )


@pytest.mark.parametrize("by_child_key", [True, False], ids=["child-key", "spawn-uid"])
def test_a_subagent_commit_gives_the_brief_and_the_parents_prompt_before_the_spawn(db, by_child_key):
    _subagent_commit(db, by_child_key=by_child_key)
    with db.connect() as conn:
        (o,) = why(conn, "abc1234")
    assert (o.session.session_uid, o.session.agent_id, o.session.is_subagent) == ("m1", "a1", True)
    assert (o.tool_name, o.command) == ("Bash", '{"command": "git commit -m refactor"}')
    assert (o.brief.text, o.brief.session_uid, o.brief.agent_id, o.brief.byte_offset) == (
        "Refactor pool.py and commit",
        "m1",
        "",
        400,
    )
    assert o.subagent_type == "general-purpose"
    assert (o.prompt.text, o.prompt.session_uid, o.prompt.agent_id, o.prompt.byte_offset) == (
        "and commit when done",
        "m1",
        "",
        300,
    )


def test_cli_why_prints_json(db, cli_env):
    _subagent_commit(db, by_child_key=True)
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "why", "abc1234", "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (m,) = data["matches"]
    assert (m["op"], m["session"]["agent_id"], m["brief"]["text"], m["prompt"]["text"]) == (
        "commit",
        "a1",
        "Refactor pool.py and commit",
        "and commit when done",
    )
    missing = subprocess.run(
        [sys.executable, "-m", "agent_history", "why", "1234567"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 1 and "no commit or push 1234567" in missing.stdout


@pytest.mark.parametrize(
    ("sessions", "made"),
    [
        ([], "no session made it"),
        (["s-1", "s-1"], "made in session s-1"),  # a commit and its push: one session, named once
        (["s-1", "s-2", "s-1"], "made in 2 sessions: s-1, s-2"),
    ],
)
def test_collected_commit_sentence_names_the_sessions_that_made_it(sessions, made):
    from datetime import UTC, datetime

    from agent_history.read.why import CollectedCommit

    c = CollectedCommit("/r", "ab" * 20, "subj", datetime(2026, 11, 2, 10, 0, tzinfo=UTC), True, True, None, [])
    assert c.sentence(sessions=sessions) == f"in /r, authored by you at 2026-11-02 10:00 UTC; {made}"


def test_cli_why_text_prints_the_first_origins_and_says_how_many_more(db, cli_env):
    """A sha in 23 sessions (copied sessions repeat a commit's events): the text shows
    `WHY_SHOWN` (20) origins and one line naming the 3 more; `--json` lists all 23."""
    from agent_history.cli.why import WHY_SHOWN

    for i in range(23):
        uid = f"copy-{i:02d}"
        write(
            db.dsn,
            [
                session(uid),
                tool_call(
                    f"git-{i:02d}", uid, "Bash", '{"command": "git commit -m copy"}', "[main def5678] copy", offset=10
                ),
                GitEventRow(
                    agent="claude",
                    git_event_uid=f"g-{i:02d}",
                    session_uid=uid,
                    agent_id="",
                    tool_call_uid=f"git-{i:02d}",
                    op="commit",
                    sha="def5678",
                    branch="main",
                    subject="copy",
                    byte_offset=20,
                ),
            ],
            path=f"/t/{uid}.jsonl",
        )
    run = [sys.executable, "-m", "agent_history", "why", "def5678"]
    text = subprocess.run(run, env=cli_env, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert WHY_SHOWN == 20
    assert text.stdout.count("commit def5678") == 20
    assert (
        text.stdout.rstrip().splitlines()[-1] == "… and 3 more origins of def5678 (`why def5678 --json` lists all 23)"
    )
    data = json.loads(subprocess.run([*run, "--json"], env=cli_env, capture_output=True, text=True, timeout=120).stdout)
    assert len(data["matches"]) == 23
