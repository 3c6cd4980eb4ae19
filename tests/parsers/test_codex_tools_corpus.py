"""Codex parser: tools, compactions and the real corpus (counts, tokens against the raw totals,
batch independence)."""

from __future__ import annotations

import json
import re
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
from agent_history.parsers.base import ParseContext, Pos
from agent_history.parsers.codex.parser import PARSER, CodexParser
from agent_history.parsers.driver import feed_bytes
from tests.parsers.codex_records import (
    PATH,
    SAMPLES,
    SID,
    assert_batch_independent,
    call,
    event,
    item,
    messages,
    meta,
    output,
    parse,
    rec,
    tokens,
    usage,
)
from tests.parsers.util import parse_file, rows_of

# ---------------------------------------------------------------------- tools


def test_function_call_pairs_with_output_and_reads_json_metadata():
    out = json.dumps({"output": "README.md\n", "metadata": {"exit_code": 0, "duration_seconds": 0.3}})
    folded = parse(
        [meta(), call("shell", {"command": ["bash", "-lc", "cat README.md"]}, "c1", 1), output("c1", out, 2)]
    )
    (t,) = rows_of(folded, ToolCallRow)
    assert (t.tool_call_uid, t.name, t.output, t.exit_code, t.duration_ms, t.is_error, t.outcome) == (
        f"{SID}:c1",
        "shell",
        "README.md\n",
        0,
        300,
        False,
        "ok",
    )
    assert t.input == '{"command":["bash","-lc","cat README.md"]}'
    assert (t.started_at.second, t.ended_at.second) == (1, 2)


def test_nonzero_exit_in_metadata_is_an_error_with_class_and_excerpt():
    out = json.dumps(
        {
            "output": "ls: cannot access 'x': No such file or directory\n",
            "metadata": {"exit_code": 2, "duration_seconds": 0.0},
        }
    )
    (t,) = rows_of(parse([meta(), call("shell", {"command": ["ls", "x"]}, "c1", 1), output("c1", out, 2)]), ToolCallRow)
    assert (t.exit_code, t.is_error, t.outcome, t.error_class) == (2, True, "error", "not_found")
    assert t.error_excerpt == "ls: cannot access 'x': No such file or directory"


def test_unified_exec_header_supplies_exit_code_and_wall_time():
    text = "Chunk ID: 9\nWall time: 0.5 seconds\nProcess exited with code 1\nOriginal token count: 3\nOutput:\nboom\n"
    (t,) = rows_of(parse([meta(), call("exec_command", {"cmd": "make"}, "c1", 1), output("c1", text, 2)]), ToolCallRow)
    assert (t.exit_code, t.duration_ms, t.error_class) == (1, 500, "nonzero_exit")


def test_exit_code_phrase_below_the_header_is_only_text():
    text = "Exit code: 0\nOutput:\nlog: Process exited with code 1\n"
    (t,) = rows_of(
        parse([meta(), call("shell_command", {"command": "pytest"}, "c1", 1), output("c1", text, 2)]), ToolCallRow
    )
    assert (t.exit_code, t.is_error) == (0, False)


def test_sandbox_failure_message_carries_the_exit_code():
    text = "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 2, stdout: , stderr: boom"
    (t,) = rows_of(
        parse([meta(), call("shell", {"command": ["bash", "-lc", "npm test"]}, "c1", 1), output("c1", text, 2)]),
        ToolCallRow,
    )
    assert (t.exit_code, t.is_error, t.error_class) == (2, True, "nonzero_exit")


@pytest.mark.parametrize(
    ("text", "outcome", "error_class"),
    [("exec command rejected by user", "rejected", "denied"), ("aborted", "interrupted", "interrupted")],
)
def test_harness_messages_mark_rejection_and_interruption(text, outcome, error_class):
    (t,) = rows_of(
        parse([meta(), call("shell", {"command": ["rm", "x"]}, "c1", 1), output("c1", text, 2)]), ToolCallRow
    )
    assert (t.is_error, t.outcome, t.error_class) == (True, outcome, error_class)


def test_exec_end_exit_code_applies_to_a_later_raw_output():
    end = event(
        {
            "type": "exec_command_end",
            "call_id": "c1",
            "exit_code": 3,
            "duration": {"secs": 2, "nanos": 0},
            "aggregated_output": "bad\n",
        },
        2,
    )
    folded = parse([meta(), call("exec_command", {"cmd": "make"}, "c1", 1), end, output("c1", "bad\n", 2.1)])
    (t,) = rows_of(folded, ToolCallRow)
    assert (t.exit_code, t.duration_ms, t.is_error, t.outcome, t.error_class) == (
        3,
        2000,
        True,
        "error",
        "nonzero_exit",
    )


def test_custom_apply_patch_touches_files_from_the_envelope():
    patch = "*** Begin Patch\n*** Add File: gamma.txt\n+x\n*** Update File: src/a.py\n@@\n-a\n+b\n*** End Patch"
    custom = item({"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "p1"}, 1)
    done = item(
        {"type": "custom_tool_call_output", "call_id": "p1", "output": [{"type": "output_text", "text": "Done!"}]}, 2
    )
    folded = parse([meta(), custom, done])
    assert sorted((f.op, f.path) for f in rows_of(folded, FileTouchRow)) == [
        ("create", "/p/gamma.txt"),
        ("edit", "/p/src/a.py"),
    ]
    (t,) = rows_of(folded, ToolCallRow)
    assert (t.name, t.input, t.output, t.outcome) == ("apply_patch", patch, "Done!", "ok")


def test_apply_patch_heredoc_in_shell_uses_the_patch_not_the_shell_words():
    script = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\nPATCH\n"
    folded = parse([meta(), call("shell", {"command": ["bash", "-lc", script]}, "c1", 1)])
    assert [(f.op, f.path) for f in rows_of(folded, FileTouchRow)] == [("delete", "/p/old.txt")]


def test_patch_apply_events_touch_changed_paths_and_merge_with_the_call():
    begin = event({"type": "patch_apply_begin", "call_id": "p1", "auto_approved": True,
                   "changes": {"a.py": {"update": {"unified_diff": "", "move_path": "b.py"}}, "c.py": {"add": {"content": "x"}}}}, 1)  # fmt: skip
    end = event({"type": "patch_apply_end", "call_id": "p1", "stdout": "", "stderr": "conflict", "success": False}, 2)
    folded = parse([meta(), begin, end])
    assert sorted((f.op, f.path) for f in rows_of(folded, FileTouchRow)) == [
        ("create", "/p/b.py"),
        ("create", "/p/c.py"),
        ("move", "/p/a.py"),
    ]
    (t,) = rows_of(folded, ToolCallRow)
    assert (t.is_error, t.outcome, t.output) == (True, "error", "conflict")


def test_relative_paths_join_the_call_workdir_then_the_session_cwd():
    folded = parse(
        [
            meta(),
            call("shell", {"command": ["bash", "-lc", "cat a.md"], "workdir": "/w"}, "c1", 1),
            call("shell", {"command": ["bash", "-lc", "cat ../b.md /etc/hosts"], "workdir": "sub"}, "c2", 2),
            call("exec_command", {"cmd": "rm c.txt"}, "c3", 3),
        ]
    )
    assert [(f.op, f.path) for f in rows_of(folded, FileTouchRow)] == [
        ("read", "/w/a.md"),
        ("read", "/p/b.md"),
        ("read", "/etc/hosts"),
        ("delete", "/p/c.txt"),
    ]


def test_legacy_file_takes_its_cwd_from_the_environment_context():
    folded = parse(
        [
            {"id": "legacy-2", "timestamp": "2025-09-10T18:58:38.331Z"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/u/app</cwd>\n</environment_context>"}]},
            {"type": "function_call", "name": "shell", "arguments": '{"command":["bash","-lc","cat README.md"]}', "call_id": "c1"},
        ]
    )  # fmt: skip
    assert rows_of(folded, SessionRow)[0].cwd == "/home/u/app"
    assert [(f.op, f.path) for f in rows_of(folded, FileTouchRow)] == [("read", "/home/u/app/README.md")]


def test_git_commit_in_shell_output_is_a_git_event():
    out = json.dumps(
        {
            "output": "[main 3f2a9c1] Fix cache TTL\n 1 file changed\n",
            "metadata": {"exit_code": 0, "duration_seconds": 0.1},
        }
    )
    folded = parse(
        [
            meta(),
            call("shell", {"command": ["bash", "-lc", "git commit -am 'Fix cache TTL'"]}, "c1", 1),
            output("c1", out, 2),
        ]
    )
    (g,) = rows_of(folded, GitEventRow)
    assert (g.op, g.sha, g.branch, g.subject, g.tool_call_uid) == (
        "commit",
        "3f2a9c1",
        "main",
        "Fix cache TTL",
        f"{SID}:c1",
    )


def test_spawn_agent_call_and_collab_event_are_one_spawn_with_brief_and_child():
    args = {"agent_type": "explorer", "message": "Summarize the provider facade."}
    spawned = event({"type": "collab_agent_spawn_end", "call_id": "s1", "new_thread_id": "child-1", "new_agent_role": "explorer",
                     "prompt": "Summarize the provider facade."}, 2)  # fmt: skip
    folded = parse([meta(), call("spawn_agent", args, "s1", 1), output("s1", '{"agent_id":"child-1"}', 1.5), spawned])
    (sp,) = rows_of(folded, SubagentSpawnRow)
    assert (sp.spawn_uid, sp.child_session_uid, sp.subagent_type, sp.brief) == (
        f"{SID}:s1",
        "child-1",
        "explorer",
        "Summarize the provider facade.",
    )


def test_mcp_tool_call_end_result_sets_error_and_duration():
    end = event({"type": "mcp_tool_call_end", "call_id": "m1", "invocation": {"server": "db", "tool": "query"},
                 "duration": {"secs": 0, "nanos": 250000000}, "result": {"Err": "tool call failed: ECONNREFUSED"}}, 2)  # fmt: skip
    folded = parse([meta(), call("db__query", {"sql": "select 1"}, "m1", 1), end])
    (t,) = rows_of(folded, ToolCallRow)
    assert (t.name, t.output, t.is_error, t.error_class, t.duration_ms) == (
        "db__query",
        "tool call failed: ECONNREFUSED",
        True,
        "network",
        250,
    )


def test_local_shell_call_reads_its_action_command():
    lsc = item({"type": "local_shell_call", "call_id": "l1", "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-lc", "cat notes.md"], "working_directory": "/p"}}, 1)  # fmt: skip
    (t,) = rows_of(parse([meta(), lsc]), ToolCallRow)
    assert (t.name, t.tool_call_uid) == ("local_shell", f"{SID}:l1")


def test_pending_call_state_forgets_answered_calls():
    parser = CodexParser(ParseContext(path=PATH), None)
    for n, r in enumerate(
        [
            meta(),
            call("shell", {"command": ["ls"]}, "c1", 1),
            call("shell", {"command": ["ls"]}, "c2", 2),
            output("c1", "x", 3),
        ]
    ):
        list(parser.feed(r, Pos(n, 1, n + 1)))
    assert list(parser.state()["calls"]) == ["c2"]


# ---------------------------------------------------------------------- compactions


def test_compacted_record_and_event_are_one_compaction_with_its_summary():
    t = usage(9000, 0, 100, 0)
    folded = parse([meta(), tokens(t, t, 1), rec("compacted", {"message": "We fixed the pool.", "replacement_history": []}, 2),
                    event({"type": "context_compacted"}, 2.001)])  # fmt: skip
    (c,) = rows_of(folded, CompactionRow)
    assert (c.compaction_uid, c.tokens_before, c.summary_message_uid) == (
        f"{SID}:compaction:0",
        9100,
        f"{SID}:compaction:0:summary",
    )
    assert messages(folded) == [(classes.COMPACTION_SUMMARY, "We fixed the pool.")]


# ---------------------------------------------------------------------- corpus/home


def _corpus_files() -> list[Path]:
    root = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "home" / ".codex"
    return sorted(root.rglob("rollout-*.jsonl")) if root.exists() else []


CORPUS = _corpus_files()

EXPECTED = {
    "rollout-2025-09-10T18-58-38-cf4def41-21e0-4b91-adb4-5397c1492084.jsonl": dict(
        sessions=1, turns=45, prompts=45, classes={"context_injection": 2, "human_prompt": 45, "reasoning": 244, "assistant_text": 59},
        model_calls=0, tool_calls=246, tool_errors={"nonzero_exit": 5, "not_found": 1},
        touches={"read": 73, "edit": 78, "create": 11, "delete": 2}, git_events=0,
    ),
    "rollout-2025-11-17T21-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl": dict(
        sessions=1, turns=1, prompts=1, classes={"context_injection": 1, "human_prompt": 1, "reasoning": 39},
        model_calls=39, tool_calls=39, tool_errors={"not_found": 2, "nonzero_exit": 1},
        touches={"read": 18, "edit": 2}, git_events=0,
    ),
    "rollout-2025-12-28T12-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl": dict(
        sessions=1, turns=1, prompts=1, classes={"context_injection": 2, "human_prompt": 1},
        model_calls=0, tool_calls=0, tool_errors={}, touches={}, git_events=0,
    ),
    "rollout-2026-05-02T12-33-22-quote-123.jsonl": dict(
        sessions=1, turns=1, prompts=1, classes={"human_prompt": 1, "assistant_text": 1},
        model_calls=0, tool_calls=0, tool_errors={}, touches={}, git_events=0,
    ),
}  # fmt: skip


def _independent_usage(path: Path) -> tuple[dict[str, int], int]:
    """Raw JSON, no parser: the last cumulative total → buckets, and the number of distinct totals."""
    final, distinct = None, []
    for line in path.read_text().splitlines():
        rec_ = json.loads(line)
        info = (rec_.get("payload") or {}).get("info") if rec_.get("type") == "event_msg" else None
        if isinstance(info, dict) and info.get("total_token_usage"):
            final = info["total_token_usage"]
            if not distinct or distinct[-1] != final:
                distinct.append(final)
    if final is None:
        return {"in": 0, "cr": 0, "out": 0, "reasoning": 0}, 0
    cached = final.get("cached_input_tokens", 0)
    out = {
        "in": final["input_tokens"] - cached,
        "cr": cached,
        "out": final["output_tokens"],
        "reasoning": final.get("reasoning_output_tokens", 0),
    }
    return out, len(distinct)


def test_corpus_has_the_expected_codex_files():
    if not CORPUS:
        pytest.skip("../shared/corpus/home/.codex is absent")
    assert sorted(p.name for p in CORPUS) == sorted(EXPECTED)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name[:40])
def test_corpus_file_has_no_issues_and_no_unknown_types(path):
    folded = parse_file(PARSER, path)
    assert rows_of(folded, ParseIssueRow) == []
    assert [r for r in rows_of(folded, RecordTypeRow) if not r.known] == []
    assert sum(r.count for r in rows_of(folded, RecordTypeRow)) == len(path.read_bytes().splitlines())


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name[:40])
def test_corpus_file_counts(path):
    folded = parse_file(PARSER, path)
    msgs = rows_of(folded, MessageRow)
    tools = rows_of(folded, ToolCallRow)
    got = dict(
        sessions=len(rows_of(folded, SessionRow)),
        turns=len(rows_of(folded, TurnRow)),
        prompts=sum(1 for m in msgs if m.message_class in classes.PROMPTS),
        classes=dict(Counter(m.message_class for m in msgs)),
        model_calls=len(rows_of(folded, ModelCallRow)),
        tool_calls=len(tools),
        tool_errors=dict(Counter(t.error_class for t in tools if t.error_class)),
        touches=dict(Counter(f.op for f in rows_of(folded, FileTouchRow))),
        git_events=len(rows_of(folded, GitEventRow)),
    )
    assert got == EXPECTED[path.name]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name[:40])
def test_corpus_tokens_match_the_final_cumulative_total(path):
    expected, distinct = _independent_usage(path)
    calls = rows_of(parse_file(PARSER, path), ModelCallRow)
    got = {
        "in": sum(c.input_uncached or 0 for c in calls),
        "cr": sum(c.cache_read or 0 for c in calls),
        "out": sum(c.output or 0 for c in calls),
        "reasoning": sum(c.reasoning or 0 for c in calls),
    }
    assert (got, len(calls)) == (expected, distinct)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name[:40])
def test_corpus_file_is_batch_independent(path):
    assert_batch_independent(path.read_bytes(), str(path))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name[:40])
def test_corpus_resume_state_stays_small(path):
    parser = CodexParser(ParseContext(path=str(path)), None)
    for _ in feed_bytes(parser, path.read_bytes()):
        pass
    assert len(json.dumps(parser.state())) < 20_000


def test_corpus_never_stores_encrypted_reasoning():
    for path in CORPUS:
        folded = parse_file(PARSER, path)
        assert not any((m.text or "").startswith("gAAAA") for m in rows_of(folded, MessageRow)), path.name


# ---------------------------------------------------------------------- corpus/samples


SAMPLE_FILES = sorted(SAMPLES.glob("*.jsonl")) if SAMPLES.exists() else []


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name[:50])
def test_sample_parses_without_exceptions_and_counts_unknown_types(path):
    folded = parse_file(PARSER, path)
    crashes = [i for i in rows_of(folded, ParseIssueRow) if re.match(r"\w+(Error|Exception):", i.detail or "")]
    assert crashes == []
    unknown = sum(r.count for r in rows_of(folded, RecordTypeRow) if not r.known)
    reported = sum(1 for i in rows_of(folded, ParseIssueRow) if i.kind == "unknown_record_type")
    assert unknown == reported


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name[:50])
def test_sample_is_batch_independent(path):
    assert_batch_independent(path.read_bytes(), str(path))
