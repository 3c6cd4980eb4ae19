"""Field cases for the Codex parser (field/EXPECTED.md: E19, E20, E22, E23, E25, E26).

Each test asserts the numbers EXPECTED.md states for its case; token buckets are the disjoint
ones (`in` = uncached input, `cr` = cache read, `out` = output incl. reasoning).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_history.model import classes
from agent_history.model.rows import MessageRow, ModelCallRow, ParseIssueRow, SessionRow, ToolCallRow
from agent_history.parsers.base import ParseContext
from agent_history.parsers.codex.parser import PARSER
from agent_history.parsers.common.lines import iter_lines
from tests.parsers.util import parse_file, parse_in_batches, parse_resumed, rows_of

CASES = ("E19", "E20", "E22", "E23", "E25", "E26")


def _parse(field_dir: Path, case: str) -> dict:
    return parse_file(PARSER, field_dir / f"{case}.jsonl")


def _buckets(folded: dict) -> dict[str, int]:
    calls = rows_of(folded, ModelCallRow)
    return {
        "in": sum(c.input_uncached or 0 for c in calls),
        "cr": sum(c.cache_read or 0 for c in calls),
        "cw": sum((c.cache_write_5m or 0) + (c.cache_write_1h or 0) for c in calls),
        "out": sum(c.output or 0 for c in calls),
        "reasoning": sum(c.reasoning or 0 for c in calls),
    }


def _prompts(folded: dict) -> list[MessageRow]:
    return [m for m in rows_of(folded, MessageRow) if m.message_class in classes.PROMPTS]


# ---------------------------------------------------------------- E19 duplicate token_count


def test_e19_repeated_cumulative_snapshot_counts_two_requests(field_dir):
    folded = _parse(field_dir, "E19")
    assert len(rows_of(folded, ModelCallRow)) == 2


def test_e19_buckets_come_from_last_usage_of_changed_totals(field_dir):
    b = _buckets(_parse(field_dir, "E19"))
    assert b == {"in": 1300, "cr": 1200, "cw": 0, "out": 420, "reasoning": 60}
    assert b["in"] + b["cr"] + b["out"] == 2920  # not 4220


# ---------------------------------------------------------------- E20 subset semantics


def test_e20_cached_is_subset_of_input_and_reasoning_of_output(field_dir):
    b = _buckets(_parse(field_dir, "E20"))
    assert b == {"in": 2500, "cr": 8000, "cw": 0, "out": 700, "reasoning": 440}
    assert b["in"] + b["cr"] + b["out"] == 11200  # not 11640


def test_e20_total_without_total_tokens_field_is_still_a_new_call(field_dir):
    calls = rows_of(_parse(field_dir, "E20"), ModelCallRow)
    assert [(c.input_uncached, c.cache_read, c.output, c.reasoning) for c in calls] == [
        (2000, 8000, 600, 400),
        (500, 0, 100, 40),
    ]
    assert {c.model for c in calls} == {"gpt-5-codex"}


# ---------------------------------------------------------------- E22 prompts only as items


def test_e22_prompt_found_without_user_message_event(field_dir):
    folded = _parse(field_dir, "E22")
    assert [m.text for m in _prompts(folded)] == ["fix the failing test in tests/test_api.py"]


def test_e22_prompt_is_first_prompt_and_title(field_dir):
    (session,) = rows_of(_parse(field_dir, "E22"), SessionRow)
    assert session.first_prompt == "fix the failing test in tests/test_api.py"
    assert session.custom_title is None


def test_e22_developer_agents_md_and_environment_are_context_not_prompts(field_dir):
    folded = _parse(field_dir, "E22")
    by_line = {m.line_number: m.message_class for m in rows_of(folded, MessageRow)}
    assert by_line == {
        2: classes.SYSTEM_PROMPT,
        3: classes.CONTEXT_INJECTION,
        4: classes.CONTEXT_INJECTION,
        6: classes.HUMAN_PROMPT,
        7: classes.ASSISTANT_TEXT,
    }


def test_e22_one_assistant_message(field_dir):
    folded = _parse(field_dir, "E22")
    assistant = [m for m in rows_of(folded, MessageRow) if m.message_class == classes.ASSISTANT_TEXT]
    assert [m.text for m in assistant] == ["Fixed the expected status code in tests/test_api.py (201, not 200)."]


# ---------------------------------------------------------------- E23 dual representation


def test_e23_event_and_response_item_copies_merge_into_two_messages(field_dir):
    messages = rows_of(_parse(field_dir, "E23"), MessageRow)
    assert [(m.role, m.message_class, m.text) for m in messages] == [
        ("user", classes.HUMAN_PROMPT, "list the listening ports"),
        ("assistant", classes.ASSISTANT_TEXT, "Ports 22 and 8080 are listening."),
    ]


def test_e23_merged_message_keeps_first_line_and_earliest_time(field_dir):
    user, assistant = rows_of(_parse(field_dir, "E23"), MessageRow)
    assert (user.line_number, user.ts.isoformat()) == (2, "2025-10-20T12:00:02+00:00")
    assert (assistant.line_number, assistant.ts.isoformat()) == (4, "2025-10-20T12:00:09+00:00")


# ---------------------------------------------------------------- E25 sub-agent thread


def test_e25_is_a_subagent_of_its_parent_thread(field_dir):
    (session,) = rows_of(_parse(field_dir, "E25"), SessionRow)
    assert session.session_uid == "0199a025-0000-7000-8000-00000000000c"
    assert session.is_subagent is True
    assert session.parent_session_uid == "0199a025-0000-7000-8000-00000000000b"
    assert session.forked_from_uid is None


def test_e25_brief_written_by_parent_is_not_a_prompt(field_dir):
    folded = _parse(field_dir, "E25")
    assert _prompts(folded) == []
    briefs = [m.text for m in rows_of(folded, MessageRow) if m.message_class == classes.SUBAGENT_BRIEF]
    assert briefs == ["Audit src/auth for SQL injection and report findings."]
    (session,) = rows_of(folded, SessionRow)
    assert session.first_prompt is None


def test_e25_reasoning_summary_indexed_encrypted_content_never_stored(field_dir):
    folded = _parse(field_dir, "E25")
    reasoning = [m.text for m in rows_of(folded, MessageRow) if m.message_class == classes.REASONING]
    assert reasoning == ["**Scanning query builders**"]
    assert not any("gAAAAB" in (m.text or "") for m in rows_of(folded, MessageRow))


def test_e25_usage_buckets(field_dir):
    assert _buckets(_parse(field_dir, "E25")) == {"in": 2000, "cr": 4000, "cw": 0, "out": 350, "reasoning": 200}


# ---------------------------------------------------------------- E26 raw exec output


def test_e26_one_exec_command_call_with_its_command(field_dir):
    (call,) = rows_of(_parse(field_dir, "E26"), ToolCallRow)
    assert call.tool_call_uid == "0199a026-0000-7000-8000-000000000000:call_E26A"
    assert call.name == "exec_command"
    assert call.input == '{"cmd":"pytest -q tests/test_retry.py"}'


def test_e26_structured_exit_code_wins_over_output_text(field_dir):
    (call,) = rows_of(_parse(field_dir, "E26"), ToolCallRow)
    assert (call.exit_code, call.is_error, call.outcome, call.error_class) == (0, False, "ok", None)
    assert "Process exited with code 1" in call.output


def test_e26_duration_from_secs_and_nanos(field_dir):
    (call,) = rows_of(_parse(field_dir, "E26"), ToolCallRow)
    assert call.duration_ms == 1200


# ---------------------------------------------------------------- all cases


@pytest.mark.parametrize("case", CASES)
def test_field_case_parses_without_issues(field_dir, case):
    assert rows_of(_parse(field_dir, case), ParseIssueRow) == []


@pytest.mark.parametrize("case", CASES)
def test_field_case_is_batch_independent(field_dir, case):
    path = field_dir / f"{case}.jsonl"
    data = path.read_bytes()
    ctx = ParseContext(path=str(path), namespace="test")
    whole = parse_file(PARSER, path)
    n = len(list(iter_lines(data)))
    for batch in (1, 2, 3):
        assert parse_in_batches(PARSER, data, batch, ctx) == whole, f"batch {batch}"
    for cut in range(1, n):
        assert parse_resumed(PARSER, data, [cut], ctx) == whole, f"resumed at line {cut}"
