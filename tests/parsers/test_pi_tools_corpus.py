"""pi parser: tool calls, and the real corpus and samples."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    FileTouchRow,
    GitEventRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.pi.parser import PARSER
from tests.parsers.pi_records import (
    HEADER,
    _ts,
    all_batchings_equal,
    assistant,
    parse,
    tool_result,
    user,
)
from tests.parsers.util import parse_file, rows_of

# ---------------------------------------------------------------------- tool calls


def _bash(call_id: str, command: str) -> dict:
    return {"id": call_id, "name": "bash", "arguments": {"command": command}}


def test_tool_call_pairs_with_its_result():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant(
            "a1",
            "u1",
            "reading",
            2,
            stop="toolUse",
            tools=[{"id": "t1", "name": "read", "arguments": {"path": "src/a.py"}}],
        ),
        tool_result("r1", "a1", "t1", "read", "print(1)", second=3),
    )
    [tc] = rows_of(folded, ToolCallRow)
    assert (tc.tool_call_uid, tc.name, tc.input, tc.output, tc.is_error, tc.outcome, tc.error_class) == (
        "t1",
        "read",
        '{"path":"src/a.py"}',
        "print(1)",
        False,
        "ok",
        None,
    )
    assert (tc.message_uid, tc.call_uid, tc.exit_code, tc.line_number) == ("a1@" + _ts(2), "a1@" + _ts(2), None, 3)
    assert (tc.started_at.second, tc.ended_at.second) == (2, 3)


def test_bash_failure_footer_gives_exit_code_and_class():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="toolUse", tools=[_bash("t1", "npm test"), _bash("t2", "sleep 99")]),
        tool_result("r1", "a1", "t1", "bash", "FAIL x\n\n\nCommand exited with code 2", error=True),
        tool_result("r2", "r1", "t2", "bash", "Command aborted", error=True),
    )
    assert [(t.exit_code, t.outcome, t.error_class) for t in rows_of(folded, ToolCallRow)] == [
        (2, "error", "nonzero_exit"),
        (None, "interrupted", "interrupted"),
    ]


def test_calls_of_an_aborted_or_failed_message_never_ran():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="aborted", tools=[{"id": "t1", "name": "edit", "arguments": {"path": "x"}}]),
        user("u2", "a1", "q", 3),
        assistant("a2", "u2", "", 4, stop="error", tools=[{"id": "t2", "name": "write", "arguments": {"path": "y"}}]),
    )
    assert [(t.tool_call_uid, t.outcome, t.error_class) for t in rows_of(folded, ToolCallRow)] == [
        ("t1", "interrupted", "interrupted"),
        ("t2", "no_result", None),
    ]
    assert rows_of(folded, FileTouchRow) == []


def test_unanswered_call_gets_no_result_when_the_next_prompt_arrives():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="toolUse", tools=[_bash("t1", "make")]),
        user("u2", "a1", "never mind", 3),
    )
    assert [t.outcome for t in rows_of(folded, ToolCallRow)] == ["no_result"]


def test_file_tools_touch_their_paths():
    tools = [
        {"id": "t1", "name": "read", "arguments": {"path": "a.py"}},
        {"id": "t2", "name": "write", "arguments": {"path": "/abs/b.py", "content": "x"}},
        {"id": "t3", "name": "edit", "arguments": {"file_path": "c.py", "oldText": "a", "newText": "b"}},
        {"id": "t4", "name": "grep", "arguments": {"pattern": "x", "path": "src"}},
    ]
    folded = parse(HEADER, user("u1", None, "q", 1), assistant("a1", "u1", "", 2, stop="toolUse", tools=tools))
    assert [(t.tool_call_uid, t.op, t.path) for t in rows_of(folded, FileTouchRow)] == [
        ("t1", "read", "/p/a.py"),
        ("t2", "create", "/abs/b.py"),
        ("t3", "edit", "/p/c.py"),
    ]


def test_bash_touches_are_resolved_against_the_session_cwd():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="toolUse", tools=[_bash("t1", "cd pkg && sed -i s/a/b/ x.ts; rm ~/tmp.txt")]),
    )
    assert [(t.op, t.path) for t in rows_of(folded, FileTouchRow)] == [("edit", "/p/pkg/x.ts"), ("delete", "~/tmp.txt")]


def test_git_commit_in_bash_output_is_a_git_event():
    output = "[main 3f2a9c1] Fix the pool size\n 1 file changed, 2 insertions(+)"
    folded = parse(
        HEADER,
        user("u1", None, "commit", 1),
        assistant("a1", "u1", "", 2, stop="toolUse", tools=[_bash("t1", 'git commit -am "Fix the pool size"')]),
        tool_result("r1", "a1", "t1", "bash", output),
    )
    assert [(g.tool_call_uid, g.op, g.sha, g.branch, g.subject) for g in rows_of(folded, GitEventRow)] == [
        ("t1", "commit", "3f2a9c1", "main", "Fix the pool size")
    ]


def test_user_bang_command_is_local_output_and_a_user_bash_call():
    entry = {
        "type": "message",
        "id": "x1",
        "parentId": None,
        "timestamp": _ts(1),
        "message": {
            "role": "bashExecution",
            "command": "ls nope",
            "output": "ls: nope: No such file",
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
        },
    }
    folded = parse(HEADER, entry)
    [m] = rows_of(folded, MessageRow)
    assert (m.message_class, m.text) == (
        classes.LOCAL_COMMAND_OUTPUT,
        "Ran `ls nope`\n```\nls: nope: No such file\n```\n\nCommand exited with code 1",
    )
    [tc] = rows_of(folded, ToolCallRow)
    assert (tc.tool_call_uid, tc.name, tc.exit_code, tc.outcome, tc.error_class) == (
        "x1@" + _ts(1) + "#bash",
        "user_bash",
        1,
        "error",
        "not_found",
    )


def test_subagent_tool_spawns_with_briefs_and_report():
    args = {"tasks": [{"agent": "scout", "task": "find the pool"}, {"agent": "planner", "task": "plan the fix"}]}
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="toolUse", tools=[{"id": "t1", "name": "subagent", "arguments": args}]),
        tool_result("r1", "a1", "t1", "subagent", "pool is in db.py", second=3),
    )
    assert [(s.spawn_uid, s.tool_call_uid, s.subagent_type, s.brief) for s in rows_of(folded, SubagentSpawnRow)] == [
        ("t1#0", "t1", "scout", "find the pool"),
        ("t1#1", "t1", "planner", "plan the fix"),
    ]
    assert [(m.message_class, m.text) for m in rows_of(folded, MessageRow)][1:] == [
        (classes.SUBAGENT_BRIEF, "find the pool"),
        (classes.SUBAGENT_BRIEF, "plan the fix"),
        (classes.SUBAGENT_REPORT, "pool is in db.py"),
    ]


# ---------------------------------------------------------------------- corpus and samples


def _pi_files(root: Path) -> list[Path]:
    return sorted(root.glob("**/*.jsonl"))


@pytest.fixture(scope="module")
def corpus_files(corpus_home: Path) -> list[Path]:
    files = _pi_files(corpus_home / ".pi" / "agent" / "sessions")
    assert len(files) == 3
    return files


@pytest.fixture(scope="module")
def sample_files(shared_dir: Path) -> list[Path]:
    files = sorted((shared_dir / "corpus" / "samples" / "pi").iterdir())
    assert len(files) == 3
    return files


def _raw_usage(path: Path) -> dict[str, int]:
    """Independent token totals: sum usage over distinct assistant entries of the raw JSON."""
    decoder = json.JSONDecoder()
    seen: set[str] = set()
    totals: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        i = 0
        while i < len(line):
            try:
                obj, i = decoder.raw_decode(line, i)
            except ValueError:
                break
            msg = obj.get("message") if isinstance(obj, dict) else None
            if not (isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("usage"), dict)):
                continue
            identity = json.dumps(obj, sort_keys=True)
            if identity in seen:
                continue
            seen.add(identity)
            totals["calls"] += 1
            for field in ("input", "output", "cacheRead", "cacheWrite"):
                totals[field] += msg["usage"].get(field, 0)
    return dict(totals)


# session id → (messages, prompts, model calls, API errors, tool calls, turns, compactions, file touches,
#                git events, input uncached, cache read, cache write, output)
CORPUS_COUNTS = {
    "d703a1a9-1b7b-4fb1-b512-c9738b1fe617": (333, 83, 453, 14, 391, 89, 0, 208, 2, 1049, 43229469, 4296232, 83156),
    "2638daee-0588-4baa-bd33-68b4c002818e": (283, 77, 504, 6, 433, 77, 2, 244, 53, 14151, 42913033, 934691, 94696),
    "019e19b4-eb48-746a-aa6b-8dfcfa37954b": (6, 2, 2, 0, 0, 2, 2, 0, 0, 24, 0, 0, 14),
}


def test_corpus_files_parse_without_bad_records_or_unknown_types(corpus_files):
    for path in corpus_files:
        folded = parse_file(PARSER, path)
        assert [r.record_type for r in rows_of(folded, RecordTypeRow) if not r.known] == [], path.name
        kinds = [i.kind for i in rows_of(folded, ParseIssueRow)]
        assert set(kinds) <= {"fused_line"}, (path.name, kinds)


def test_corpus_file_counts(corpus_files):
    got = {}
    for path in corpus_files:
        folded = parse_file(PARSER, path)
        [session] = rows_of(folded, SessionRow)
        messages = rows_of(folded, MessageRow)
        calls = rows_of(folded, ModelCallRow)
        got[session.session_uid] = (
            len(messages),
            sum(m.message_class == classes.HUMAN_PROMPT for m in messages),
            len(calls),
            sum(c.is_api_error for c in calls),
            len(rows_of(folded, ToolCallRow)),
            len(rows_of(folded, TurnRow)),
            len(rows_of(folded, CompactionRow)),
            len(rows_of(folded, FileTouchRow)),
            len(rows_of(folded, GitEventRow)),
            sum(c.input_uncached for c in calls),
            sum(c.cache_read for c in calls),
            sum(c.cache_write_5m for c in calls),
            sum(c.output for c in calls),
        )
    assert got == CORPUS_COUNTS


def test_corpus_token_totals_match_an_independent_sum_over_raw_usage(corpus_files):
    for path in corpus_files:
        raw = _raw_usage(path)
        calls = rows_of(parse_file(PARSER, path), ModelCallRow)
        got = {
            "calls": len(calls),
            "input": sum(c.input_uncached for c in calls),
            "output": sum(c.output for c in calls),
            "cacheRead": sum(c.cache_read for c in calls),
            "cacheWrite": sum(c.cache_write_5m for c in calls),
        }
        assert got == raw, path.name


def test_corpus_fused_line_recovers_both_the_reply_and_the_compaction(corpus_files):
    [path] = [p for p in corpus_files if "2638daee" in p.name]
    folded = parse_file(PARSER, path)
    assert [(i.kind, i.line_number) for i in rows_of(folded, ParseIssueRow)] == [("fused_line", 1013)]
    assert [(c.line_number, c.tokens_before) for c in rows_of(folded, CompactionRow)] == [(670, 184525), (1013, 131140)]
    assert [c.line_number for c in rows_of(folded, ModelCallRow)][-1] == 1013


def test_corpus_files_are_batch_independent(corpus_files):
    for path in corpus_files:
        all_batchings_equal(path.read_bytes(), str(path))


def test_samples_parse_and_count_unknown_types(sample_files):
    unknown = {}
    for path in sample_files:
        folded = parse_file(PARSER, path)
        assert not [i for i in rows_of(folded, ParseIssueRow) if i.kind == "bad_record"], path.name
        unknown[path.name[:12]] = [r.record_type for r in rows_of(folded, RecordTypeRow) if not r.known]
    assert unknown == {"cass__tests_": [], "kenn-agentsv": ["unknown_future_entry_type"], "pi-agent-his": []}


def test_samples_are_batch_independent(sample_files):
    for path in sample_files:
        all_batchings_equal(path.read_bytes(), str(path))


def test_field_files_are_batch_independent(field_dir):
    for name in ("E28.jsonl", "E29.jsonl"):
        path = field_dir / name
        all_batchings_equal(path.read_bytes(), str(path))
