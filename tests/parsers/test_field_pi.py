"""Field cases for the pi parser (field/EXPECTED.md: E28 legacy v1, E29 stale metadata leaf)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_history.model import classes
from agent_history.model.rows import MessageRow, ModelCallRow, ParseIssueRow, RecordTypeRow, SessionRow
from agent_history.parsers.pi.parser import PARSER
from tests.parsers.util import parse_file, rows_of


@pytest.fixture(scope="module")
def e28(field_dir: Path) -> dict:
    return parse_file(PARSER, field_dir / "E28.jsonl")


@pytest.fixture(scope="module")
def e29(field_dir: Path) -> dict:
    return parse_file(PARSER, field_dir / "E29.jsonl")


def _texts(folded: dict, cls: str) -> list[str | None]:
    return [m.text for m in rows_of(folded, MessageRow) if m.message_class == cls]


# ---------------------------------------------------------------------- E28 — legacy v1


def test_e28_header_without_version_is_v1(e28):
    assert [(r.record_type, r.subtype) for r in rows_of(e28, RecordTypeRow) if r.record_type == "session"] == [
        ("session", "v1")
    ]


def test_e28_v1_session_uid_is_the_header_id(e28):
    assert [s.session_uid for s in rows_of(e28, SessionRow)] == ["pi-sess-0028"]


def test_e28_linear_chain_of_three_messages_all_on_the_active_branch(e28):
    messages = rows_of(e28, MessageRow)
    assert len(messages) == 3
    assert [m.on_active_branch for m in messages] == [True, True, True]


def test_e28_one_prompt_hello(e28):
    assert _texts(e28, classes.HUMAN_PROMPT) == ["hello"]
    assert rows_of(e28, SessionRow)[0].first_prompt == "hello"


def test_e28_one_assistant_reply_with_in_900_out_12(e28):
    assert _texts(e28, classes.ASSISTANT_TEXT) == ["hi, what are we working on?"]
    [call] = rows_of(e28, ModelCallRow)
    assert (call.input_uncached, call.cache_read, call.cache_write_5m, call.output) == (900, 0, 0, 12)
    assert call.is_api_error is False


def test_e28_hook_message_is_a_custom_extension_message_not_a_prompt(e28):
    [custom] = [m for m in rows_of(e28, MessageRow) if m.message_class == classes.HOOK_OUTPUT]
    assert custom.text == "Remember to run the tests"
    assert [(r.record_type, r.subtype, r.known) for r in rows_of(e28, RecordTypeRow) if r.subtype == "hookMessage"] == [
        ("message", "hookMessage", True)
    ]


def test_e28_parses_without_issues(e28):
    assert rows_of(e28, ParseIssueRow) == []


# ---------------------------------------------------------------------- E29 — stale metadata leaf


def test_e29_session_name_is_the_custom_title(e29):
    [session] = rows_of(e29, SessionRow)
    assert session.custom_title == "Refactor auth"
    assert session.first_prompt == "Refactor the auth module"


def test_e29_stale_session_info_does_not_truncate_the_active_transcript(e29):
    messages = rows_of(e29, MessageRow)
    assert [m.message_uid.split("@")[0] for m in messages] == ["b0000001", "b0000002", "b0000003", "b0000004"]
    assert [m.on_active_branch for m in messages] == [True, True, True, True]


def test_e29_usage_in_4600_out_650(e29):
    calls = rows_of(e29, ModelCallRow)
    assert len(calls) == 2
    assert sum(c.input_uncached for c in calls) == 4600
    assert sum(c.output for c in calls) == 650
    assert sum(c.cache_read + c.cache_write_5m for c in calls) == 0


def test_e29_is_a_pi_v3_file(e29):
    assert sorted((r.record_type, r.subtype) for r in rows_of(e29, RecordTypeRow)) == [
        ("message", "assistant"),
        ("message", "user"),
        ("session", "v3"),
        ("session_info", ""),
    ]
