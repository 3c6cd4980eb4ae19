"""Field cases for the Claude Code parser (../shared/field/EXPECTED.md): E01 E02 E04 E05 E06 E07
E09 E10 E11 E13 E14 E15 E17 E18, each asserting the stated numbers."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

import pytest

from agent_history.model import classes
from agent_history.model.rows import (
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    ToolCallRow,
)
from agent_history.parsers import detect_agent
from agent_history.parsers.base import ParseContext
from agent_history.parsers.claude_code.parser import PARSER
from agent_history.parsers.common.lines import complete_prefix, iter_lines
from tests.parsers.util import parse_file, parse_in_batches, parse_resumed, rows_of

CLAUDE_CASES = ("E01", "E02", "E04", "E05", "E06", "E07", "E09", "E10", "E11", "E13", "E14", "E15", "E17", "E18")
E04_PATH = (
    "/home/user/.claude/projects/-home-user-proj/33333333-3333-4333-8333-333333333333/subagents/agent-a1b2c3d4.jsonl"
)
E15_PATH = "/home/user/.claude/projects/-home-user-my-proj-v2-sub-dir/00000015-0000-4000-8000-000000000000.jsonl"
INSTALL_PATHS = {"E04": E04_PATH, "E15": E15_PATH}


def parse_case(field_dir: Path, case: str) -> dict:
    return parse_file(PARSER, field_dir / f"{case}.jsonl", ctx_path=INSTALL_PATHS.get(case))


def messages(folded: dict, cls: str | None = None) -> list[MessageRow]:
    return [m for m in rows_of(folded, MessageRow) if cls is None or m.message_class == cls]


def prompts(folded: dict) -> list[str]:
    return [m.text for m in messages(folded) if m.message_class in classes.PROMPTS]


def record_count(folded: dict) -> int:
    return sum(r.count for r in rows_of(folded, RecordTypeRow))


def tokens(folded: dict) -> dict[str, int]:
    calls = [c for c in rows_of(folded, ModelCallRow) if not c.is_api_error]
    sums = {b: sum(getattr(c, b) or 0 for c in calls) for b in ("input_uncached", "cache_read", "output")}
    sums["cache_write"] = sum((c.cache_write_5m or 0) + (c.cache_write_1h or 0) for c in calls)
    return sums


def tool(folded: dict, uid: str) -> ToolCallRow:
    return next(t for t in rows_of(folded, ToolCallRow) if t.tool_call_uid == uid)


def issue_kinds(folded: dict) -> Counter:
    return Counter(i.kind for i in rows_of(folded, ParseIssueRow))


@pytest.mark.parametrize("case", CLAUDE_CASES)
def test_field_case_parses_the_same_whole_batched_and_resumed(field_dir: Path, case: str) -> None:
    path = field_dir / f"{case}.jsonl"
    data = path.read_bytes()
    ctx = ParseContext(path=INSTALL_PATHS.get(case, str(path)), namespace="test")
    whole = parse_file(PARSER, path, ctx_path=ctx.path)
    for batch in (1, 2, 3, 7):
        assert parse_in_batches(PARSER, data, batch, ctx) == whole, f"batch {batch}"
    n = len(list(iter_lines(data)))
    assert parse_resumed(PARSER, data, [1, n // 2, n - 1], ctx) == whole


# E01 — content blocks split across lines


def test_e01_split_response_lines_count_usage_once(field_dir: Path) -> None:
    f = parse_case(field_dir, "E01")
    assert record_count(f) == 5
    assert prompts(f) == ["List the README files in this repo"]
    assert [c.call_uid for c in rows_of(f, ModelCallRow)] == ["msg_E01A", "msg_E01B"]
    assert tokens(f) == {"input_uncached": 10, "cache_write": 15000, "cache_read": 15010, "output": 130}


def test_e01_glob_call_is_paired_and_not_an_error(field_dir: Path) -> None:
    f = parse_case(field_dir, "E01")
    calls = rows_of(f, ToolCallRow)
    assert [(t.tool_call_uid, t.name, t.outcome, t.is_error) for t in calls] == [("toolu_E01A", "Glob", "ok", False)]
    assert calls[0].output == "/home/user/proj/README.md"
    assert calls[0].duration_ms == 12


# E02 — streaming partials


def test_e02_streaming_partials_take_the_final_usage(field_dir: Path) -> None:
    f = parse_case(field_dir, "E02")
    assert record_count(f) == 5
    assert prompts(f) == ["Run the unit tests"]
    (call,) = rows_of(f, ModelCallRow)
    assert (call.call_uid, call.stop_reason, call.is_complete) == ("msg_E02A", "tool_use", True)
    assert tokens(f) == {"input_uncached": 2, "cache_write": 8655, "cache_read": 15030, "output": 159}


def test_e02_one_response_holds_thinking_text_and_tool_use(field_dir: Path) -> None:
    f = parse_case(field_dir, "E02")
    assistant = [(m.message_class, m.text) for m in messages(f) if m.role == "assistant"]
    assert assistant == [
        (classes.REASONING, "Run the test script."),
        (classes.ASSISTANT_TEXT, "Running the tests now."),
    ]
    bash = tool(f, "toolu_E02A")
    assert (bash.name, bash.call_uid, bash.outcome, bash.output) == ("Bash", "msg_E02A", "ok", "3 passing (41ms)")


# E04 — sub-agent transcript


def test_e04_subagent_file_adds_no_top_level_session(field_dir: Path) -> None:
    f = parse_case(field_dir, "E04")
    sessions = rows_of(f, SessionRow)
    assert [(s.session_uid, s.agent_id) for s in sessions] == [("33333333-3333-4333-8333-333333333333", "a1b2c3d4")]
    (child,) = sessions
    assert child.is_subagent is True
    assert (child.parent_session_uid, child.parent_agent_id) == ("33333333-3333-4333-8333-333333333333", "")


def test_e04_subagent_type_lives_in_the_meta_file_out_of_the_parsers_reach(field_dir: Path) -> None:
    (child,) = rows_of(parse_case(field_dir, "E04"), SessionRow)
    assert child.subagent_type is None  # "general-purpose" is in agent-a1b2c3d4.meta.json only


def test_e04_agent_written_first_line_is_a_brief_not_a_prompt(field_dir: Path) -> None:
    f = parse_case(field_dir, "E04")
    assert prompts(f) == []
    assert [m.text for m in messages(f, classes.SUBAGENT_BRIEF)] == [
        "Search the codebase for uses of parseConfig and report file:line."
    ]
    assert (rows_of(f, SessionRow)[0]).first_prompt is None


def test_e04_grep_is_paired_searchable_and_tokens_count_once(field_dir: Path) -> None:
    f = parse_case(field_dir, "E04")
    grep = tool(f, "toolu_E04A")
    assert (grep.name, grep.outcome, grep.agent_id) == ("Grep", "ok", "a1b2c3d4")
    assert "src/config.ts:12" in grep.output
    assert any("src/config.ts:12" in (m.text or "") for m in messages(f))
    assert tokens(f) == {"input_uncached": 8, "cache_write": 5000, "cache_read": 5040, "output": 60}


def test_e04_is_still_a_subagent_under_any_file_name(field_dir: Path) -> None:
    f = parse_file(PARSER, field_dir / "E04.jsonl")
    assert [(s.session_uid, s.agent_id, s.is_subagent) for s in rows_of(f, SessionRow)] == [
        ("33333333-3333-4333-8333-333333333333", "a1b2c3d4", True)
    ]


# E05 — string vs array content


def test_e05_string_and_array_prompts_count_and_tool_result_does_not(field_dir: Path) -> None:
    f = parse_case(field_dir, "E05")
    assert record_count(f) == 5
    assert issue_kinds(f) == Counter()
    assert prompts(f) == ["Fix the login bug in src/login.ts", "yes continue"]
    read = tool(f, "toolu_E05A")
    assert (read.name, read.outcome, read.output) == ("Read", "ok", "export function login(u) { return u.pw == null }")
    assert len(rows_of(f, ModelCallRow)) == 2


# E06 — polymorphic toolUseResult


def test_e06_polymorphic_results_pair_all_three_calls(field_dir: Path) -> None:
    f = parse_case(field_dir, "E06")
    assert record_count(f) == 7
    assert issue_kinds(f) == Counter()
    assert len(prompts(f)) == 1
    got = [(t.tool_call_uid, t.name, t.outcome, t.is_error) for t in rows_of(f, ToolCallRow)]
    assert got == [
        ("toolu_E06A", "Bash", "error", True),
        ("toolu_E06B", "TaskUpdate", "ok", False),
        ("toolu_E06C", "Task", "ok", False),
    ]
    assert tool(f, "toolu_E06C").output == "Summary: a small CLI app with a Makefile-less build."


def test_e06_session_usage_excludes_the_task_results_total_tokens(field_dir: Path) -> None:
    assert tokens(parse_case(field_dir, "E06")) == {
        "input_uncached": 15,
        "cache_write": 2000,
        "cache_read": 4085,
        "output": 95,
    }


# E07 — meta records and command wrappers


def test_e07_only_the_typed_prompt_is_a_prompt_and_the_first_prompt(field_dir: Path) -> None:
    f = parse_case(field_dir, "E07")
    assert prompts(f) == ["Refactor utils.py into two modules"]
    assert rows_of(f, SessionRow)[0].first_prompt == "Refactor utils.py into two modules"
    assert len(rows_of(f, ModelCallRow)) == 1


def test_e07_meta_command_and_command_output_are_classified(field_dir: Path) -> None:
    by_line = {m.line_number: m.message_class for m in messages(parse_case(field_dir, "E07"))}
    assert (by_line[1], by_line[2], by_line[3]) == (
        classes.CONTEXT_INJECTION,
        classes.COMMAND_EXPANSION,
        classes.LOCAL_COMMAND_OUTPUT,
    )


# E09 — bookkeeping first, transcript-only types


def test_e09_bookkeeping_first_file_is_detected_as_claude(field_dir: Path) -> None:
    path = field_dir / "E09.jsonl"
    assert detect_agent(str(path), path.read_bytes()[:4096]) == "claude"


def test_e09_queue_copy_does_not_double_count_the_prompt(field_dir: Path) -> None:
    f = parse_case(field_dir, "E09")
    assert record_count(f) == 8
    assert len(messages(f)) == 2
    assert prompts(f) == ["Explain the deploy script"]


def test_e09_titles_and_transcript_only_types_raise_no_issue(field_dir: Path) -> None:
    f = parse_case(field_dir, "E09")
    (session,) = rows_of(f, SessionRow)
    assert (session.custom_title, session.ai_title, session.first_prompt) == (
        "deploy-notes",
        "Deploy script explanation",
        "Explain the deploy script",
    )
    assert issue_kinds(f) == Counter()
    seen = {r.record_type for r in rows_of(f, RecordTypeRow) if r.known}
    assert {"ai-title", "custom-title", "last-prompt", "queue-operation", "file-history-snapshot"} <= seen


# E10 — <synthetic> notices


def test_e10_synthetic_error_notice_is_not_priced(field_dir: Path) -> None:
    f = parse_case(field_dir, "E10")
    assert len(prompts(f)) == 2
    calls = rows_of(f, ModelCallRow)
    assert [c.call_uid for c in calls if not c.is_api_error] == ["msg_E10B"]
    (notice,) = [c for c in calls if c.is_api_error]
    assert notice.line_number == 2
    assert (notice.model, notice.input_uncached, notice.output, notice.cache_write_5m) == (None, None, None, None)


def test_e10_models_used_and_tokens_exclude_the_notice(field_dir: Path) -> None:
    f = parse_case(field_dir, "E10")
    assert {c.model for c in rows_of(f, ModelCallRow) if c.model} == {"claude-sonnet-4-5-20250929"}
    assert rows_of(f, SessionRow)[0].model == "claude-sonnet-4-5-20250929"
    assert tokens(f) == {"input_uncached": 10, "cache_write": 2000, "cache_read": 0, "output": 50}


# E11 — nested cache-creation breakdown


def test_e11_cache_write_splits_into_5m_and_1h_without_double_counting(field_dir: Path) -> None:
    (call,) = rows_of(parse_case(field_dir, "E11"), ModelCallRow)
    assert (call.cache_write_5m, call.cache_write_1h) == (1000, 2000)
    assert (call.input_uncached, call.cache_read, call.output, call.reasoning) == (5, 20000, 400, None)
    total = call.input_uncached + call.cache_read + call.cache_write_5m + call.cache_write_1h + call.output
    assert total == 23405


def test_e11_example_pricing_is_exact(field_dir: Path) -> None:
    (c,) = rows_of(parse_case(field_dir, "E11"), ModelCallRow)
    micro_usd = (
        c.input_uncached * 3 + c.output * 15 + c.cache_write_5m * 3.75 + c.cache_write_1h * 6 + c.cache_read * 0.3
    )
    assert round(micro_usd / 1_000_000, 6) == 0.027765


# E13 — whitespace, fused and torn lines


def test_e13_recovers_four_messages_and_reports_line_four(field_dir: Path) -> None:
    f = parse_case(field_dir, "E13")
    assert [m.line_number for m in messages(f)] == [1, 3, 4, 5]
    assert messages(f)[2].text == "Check the status"
    invalid = [i.line_number for i in rows_of(f, ParseIssueRow) if i.kind == "invalid_json"]
    assert invalid == [4]
    assert {i.kind for i in rows_of(f, ParseIssueRow) if i.line_number == 2} <= {"blank_line"}  # never "malformed"


def test_e13_torn_last_line_is_neither_indexed_nor_reported(field_dir: Path) -> None:
    data = (field_dir / "E13.jsonl").read_bytes()
    f = parse_case(field_dir, "E13")
    assert "msg_E13C" not in {c.call_uid for c in rows_of(f, ModelCallRow)}
    assert all(i.line_number != 6 for i in rows_of(f, ParseIssueRow))
    assert complete_prefix(data) == data.rindex(b"\n") + 1


def test_e13_line_five_resolves_its_parent_to_the_recovered_record(field_dir: Path) -> None:
    f = parse_case(field_dir, "E13")
    recovered, line5 = messages(f)[2], messages(f)[3]
    assert line5.parent_uid == recovered.message_uid == "00130003-0000-4000-8000-000000000000"


# E14 — 1.2 MB line


def test_e14_image_is_attachment_metadata_not_text(field_dir: Path) -> None:
    f = parse_case(field_dir, "E14")
    assert issue_kinds(f) == Counter()
    msgs = messages(f)
    assert len(msgs) == 2
    assert msgs[0].text == "Compare this screenshot with the mockup"
    assert msgs[0].attachments == [{"type": "image", "media_type": "image/png", "bytes": 900_000}]
    assert all("iVBOR" not in (m.text or "") for m in msgs)
    assert [s.session_uid for s in rows_of(f, SessionRow)] == ["00000014-0000-4000-8000-000000000000"]


# E15 — lossy project directory


def test_e15_project_path_comes_from_cwd_not_the_directory_name(field_dir: Path) -> None:
    (session,) = rows_of(parse_case(field_dir, "E15"), SessionRow)
    assert session.cwd == "/home/user/my_proj.v2/sub-dir"
    assert PurePosixPath(session.cwd).name == "sub-dir"


# E17 — day buckets


def test_e17_per_call_timestamps_bucket_into_los_angeles_days(field_dir: Path) -> None:
    days: dict[str, Counter] = defaultdict(Counter)
    for c in rows_of(parse_case(field_dir, "E17"), ModelCallRow):
        day = c.ts.astimezone(ZoneInfo("America/Los_Angeles")).date().isoformat()
        days[day].update({"in": c.input_uncached, "out": c.output})
    assert dict(days) == {"2025-01-24": Counter({"in": 100, "out": 50}), "2025-01-25": Counter({"in": 120, "out": 10})}


def test_e17_utc_bucketing_would_merge_the_days(field_dir: Path) -> None:
    assert {c.ts.date().isoformat() for c in rows_of(parse_case(field_dir, "E17"), ModelCallRow)} == {"2025-01-25"}


# E18 — rejected / unanswered / interrupted tools


def test_e18_prompts_exclude_the_interruption(field_dir: Path) -> None:
    f = parse_case(field_dir, "E18")
    assert prompts(f) == ["Clean up the temp files", "Only delete the *.log files"]
    assert [m.line_number for m in messages(f, classes.INTERRUPT_MARKER)] == [4]
    assert rows_of(f, SessionRow)[0].first_prompt == "Clean up the temp files"


def test_e18_rejected_call_is_an_error_and_unanswered_call_is_interrupted(field_dir: Path) -> None:
    f = parse_case(field_dir, "E18")
    rejected, unanswered = tool(f, "toolu_E18A"), tool(f, "toolu_E18B")
    assert (rejected.outcome, rejected.is_error, rejected.error_class) == ("rejected", True, "denied")
    assert (unanswered.outcome, unanswered.output, unanswered.error_class) == ("interrupted", None, "interrupted")
    assert unanswered.input == '{"command":"ls /home/user/proj/tmp","description":"List temp dir"}'
