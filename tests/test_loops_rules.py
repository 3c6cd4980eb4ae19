"""The pure loop rules (issue 12): launch detection, whole-file writes, closeout line 1, task
counts, lane-return blocks, the five statuses at a given clock, the Codex-lane command parse."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson

from agent_history.loops.closeout import count_tasks, digest, file_writes, first_line, first_line_problem
from agent_history.loops.lanes import codex_dirs
from agent_history.loops.launch import absolute_path, detect_launch, repo_label
from agent_history.loops.returns import parse_returns
from agent_history.loops.status import loop_status, parse_utc

D = "02bb81d5411e22aca5867e654c1e4ecbf1b409a4b567bb08ed12b240122845ae"
LAUNCH = (
    f"You are the root of widgets loop 1. Read the charter codex/charter-widgets.md (sha256 {D}) and work the "
    "queue. When the loop is done, write the closeout to codex/closeout-2026-05-03-loop1.md and stop."
)


def test_a_launch_names_closeout_charter_digest_and_loop_number():
    launch = detect_launch(LAUNCH)
    assert launch is not None
    assert (launch.closeout_path, launch.loop_number, launch.loop_date) == (
        "codex/closeout-2026-05-03-loop1.md", 1, "2026-05-03"
    )  # fmt: skip
    assert (launch.charter_path, launch.charter_sha256) == ("codex/charter-widgets.md", D)


def test_not_a_launch_without_the_marker_or_with_zero_or_two_closeout_paths():
    assert detect_launch(LAUNCH.replace("You are the root", "You are a helper")) is None
    assert detect_launch("You are the root. Write codex/closeout-notes.md when done.") is None
    two = LAUNCH + " Or use /srv/x/codex/closeout-2026-05-04-loop2.md."
    assert detect_launch(two) is None
    # the same path twice is one distinct path
    again = detect_launch(LAUNCH + " Again: codex/closeout-2026-05-03-loop1.md.")
    assert again is not None and again.loop_number == 1
    # a prefixed look-alike is not a closeout path
    assert detect_launch("You are the root; see xcodex/closeout-2026-05-03-loop1.md") is None


def test_a_launch_with_two_digests_or_charters_keeps_the_launch_but_not_the_ambiguous_value():
    launch = detect_launch(LAUNCH + f" (old digest {'a' * 64}; see also codex/charter-old.md)")
    assert launch is not None
    assert (launch.charter_path, launch.charter_sha256) == (None, None)


def test_paths_are_made_absolute_against_the_session_cwd_and_repo_prefers_owner_name():
    assert absolute_path("codex/closeout-2026-05-03-loop1.md", "/home/dev/widgets/") == (
        "/home/dev/widgets/codex/closeout-2026-05-03-loop1.md"
    )
    assert absolute_path("/a/./b/../codex/x.md", None) == "/a/codex/x.md"
    assert repo_label("widgets", "git@github.com:dev/widgets.git") == "dev/widgets"
    assert repo_label("widgets", "https://github.com/dev/widgets") == "dev/widgets"
    assert repo_label("widgets", None) == "widgets"
    assert repo_label(None, None) is None


def test_whole_file_writes_per_harness_and_partial_edits():
    claude = file_writes("claude", "Write", orjson.dumps({"file_path": "/r/c.md", "content": "# A\nb\n"}).decode())
    assert [(w.path, w.content) for w in claude] == [("/r/c.md", "# A\nb\n")]
    pi = file_writes("pi", "write", orjson.dumps({"path": "c.md", "content": "x"}).decode())
    assert [(w.path, w.content) for w in pi] == [("c.md", "x")]
    edit = file_writes("claude", "Edit", orjson.dumps({"file_path": "/r/c.md", "old_string": "a"}).decode())
    assert [(w.path, w.whole) for w in edit] == [("/r/c.md", False)]
    patch = "*** Begin Patch\n*** Add File: codex/c.md\n+# Closeout\n+\n+- task-1\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch"
    writes = file_writes("codex", "apply_patch", patch)
    assert [(w.path, w.content) for w in writes] == [("codex/c.md", "# Closeout\n\n- task-1\n"), ("a.py", None)]
    # the function_call form wraps the envelope in {"input": …}
    wrapped = file_writes("codex", "apply_patch", orjson.dumps({"input": patch}).decode())
    assert [w.path for w in wrapped] == ["codex/c.md", "a.py"]
    assert file_writes("claude", "Bash", '{"command": "cat > codex/c.md"}') == []
    assert file_writes("claude", "Write", "not json") == []


def test_first_line_problems_name_the_field_that_disagrees():
    good = f"# Closeout: widgets loop1 · Charter: {D}"
    assert first_line_problem(good, "widgets", 1, D) is None
    assert first_line_problem(good.replace(D, "b" * 64), "widgets", 1, D) == "wrong charter digest"
    assert first_line_problem(good, "widgets", 2, D) == "wrong loop number (loop1, launch says loop2)"
    assert first_line_problem(good, "dev/widgets", 1, D) == "wrong repository (widgets, root is dev/widgets)"
    assert first_line_problem("# Closeout", "widgets", 1, D) == (
        "line 1 is not '# Closeout: <repo> loop<N> · Charter: <digest>'"
    )
    assert first_line_problem(good, "widgets", 1, None) == "the launch names no charter digest"
    assert first_line("# a\r\nb") == "# a"
    assert digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_landed_and_parked_count_distinct_task_ids_opening_list_entries():
    body = (
        "# Closeout: widgets loop1 · Charter: x\n\n## Landed\n- task-101: docs\n- TASK-102 api\n"
        "- task-101 follow-up\n* see task-104 (not opening the entry)\n\n## Parked\n1. **task-103** flaky\n\n"
        "## Notes\n- task-999 under no task heading\n"
    )
    assert count_tasks(body) == (2, 1)
    assert count_tasks(body.replace("\n", "\r\n")) == (2, 1)
    assert count_tasks("# Closeout\n\n## Landed\n\n## Parked\n") == (0, 0)
    assert count_tasks("# Closeout\n\n## Landed\n- [x] task-7\n") == (1, None)


def test_lane_return_blocks_v2_crlf_and_a_non_object():
    texts = [
        'First.\n\n```lane-return\n{"v": 2, "lane": "docs", "status": "partial"}\n```\n',
        'Done.\r\n```lane-return\r\n{"v": 2, "status": "complete", "landed": ["task-101"]}\r\n```\r\n'
        '```lane-return\n["not", "an", "object"]\n```\n```lane-return\n{broken\n```',
    ]
    parsed = parse_returns(texts)
    assert parsed.returns == [
        {"v": 2, "lane": "docs", "status": "partial"},
        {"v": 2, "status": "complete", "landed": ["task-101"]},
    ]
    assert (parsed.status, parsed.invalid) == ("complete", 2)
    assert parse_returns(['```lane-return\n{"status": "done"}\n```']).status is None
    assert parse_returns(["no blocks"]).status is None


T = datetime(2026, 5, 3, 12, 0, tzinfo=UTC)


def _status(now, word, active=T, **kw):
    args = dict(closed_at=None, closed_evidence=None, replaced_at=None, replaced_evidence=None)
    args.update(kw)
    return loop_status(now=now, last_word=word, root_last_active_at=active, **args)


def test_the_five_statuses_at_a_controlled_clock():
    waiting = "CI started.\nWAITING: CI on PR 12 until 2026-05-03T18:00Z"
    assert _status(T, waiting).status == "waiting"
    assert _status(T, waiting).waiting_until == datetime(2026, 5, 3, 18, 0, tzinfo=UTC)
    # the time passes: running within 24 h of the root's last activity, stale after
    assert _status(datetime(2026, 5, 3, 18, 0, 1, tzinfo=UTC), waiting).status == "running"
    assert _status(T + timedelta(hours=24), waiting).status == "stale"
    assert _status(T, "x\nPAUSED: need a decision").status == "paused"
    assert _status(T + timedelta(days=3), "x\nPAUSED: need a decision").status == "paused"
    assert _status(T + timedelta(hours=23, minutes=59), "working").status == "running"
    assert _status(T, None, active=None).status == "stale"
    done = _status(T, waiting, closed_at=T, closed_evidence="closeout")
    assert (done.status, done.ended_at, done.waiting_until) == ("finished", T, None)
    assert _status(T, waiting, replaced_at=T, replaced_evidence="next launch").status == "finished"
    # a WAITING time that is not UTC does not parse: not waiting
    assert _status(T, "WAITING: x until tomorrow 6pm").status == "running"
    assert parse_utc("2026-05-03 18:00 UTC") == datetime(2026, 5, 3, 18, 0, tzinfo=UTC)
    assert parse_utc("2026-05-03T18:00+02:00") is None


def test_codex_commands_and_their_working_trees():
    cmd = orjson.dumps({"command": ["bash", "-lc", "codex exec -C /home/dev/gadgets 'fix'"], "workdir": "/w"}).decode()
    assert codex_dirs(cmd, "/root") == ["/home/dev/gadgets"]
    assert codex_dirs('{"command": "cd sub && codex exec \\"go\\""}', "/repo") == ["/repo/sub"]
    assert codex_dirs('{"command": "codex exec go", "workdir": "/w"}', "/repo") == ["/w"]
    assert codex_dirs('{"command": "/usr/local/bin/codex --cd=/x exec go"}', "/repo") == ["/x"]
    assert codex_dirs('{"command": "cat codex/closeout-2026-05-03-loop1.md"}', "/repo") == []
    assert codex_dirs('{"command": "ls"}', "/repo") == []


def test_usage_block_says_unknown_for_unpriced_calls_and_missing_calls():
    from decimal import Decimal

    from agent_history.loops.usage import UsageLaunch, UsageRow, format_duration, render_usage

    launch = UsageLaunch(9, "pi", "0196b000", "stale", datetime(2026, 5, 3, 9, 0, tzinfo=UTC), None, 0, 2, None)
    text = render_usage(
        repo="sprockets",
        loop_number=9,
        closeout_path="codex/closeout-2026-05-03-loop9.md",
        as_of=None,
        launches=[launch],
        rows=[UsageRow(9, "root", "pi-fixture-model", 2, None), UsageRow(9, "lane", None, 1, Decimal("0.5"))],
    )
    assert text.splitlines()[2:5] == [
        "- As of unknown, from the agent-history catalogue (it lags the transcripts by one index pass).",
        "- Closeout: `codex/closeout-2026-05-03-loop9.md`",
        "- Launch 9: root pi `0196b000`, stale, started 2026-05-03 09:00 UTC, wall time unknown, 0 lanes; "
        "commits unknown, pushes unknown, landed unknown, parked unknown.",
    ]
    # one unpriced model does not blank the total: the priced sum, and the unpriced calls named
    assert text.splitlines()[5] == (
        "- Total: 2 model calls, list-price cost $0.5000 for the priced calls; "
        "2 calls unpriced (pi-fixture-model), their cost unknown."
    )
    assert text.splitlines()[-2:] == [
        "| 9 | root | pi-fixture-model | 2 | unknown |",
        "| 9 | lane | unknown | 1 | 0.5000 |",
    ]
    assert [format_duration(s) for s in (None, 42, 601, 7260, 3 * 86400 + 4 * 3600)] == [
        "unknown", "42s", "10m 01s", "2h 01m", "3d 04h"
    ]  # fmt: skip
