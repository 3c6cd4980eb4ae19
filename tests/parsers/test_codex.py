"""Codex parser: synthetic specs (records, keys, sessions, messages, calls, turns, replay)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_history.model import classes
from agent_history.model.rows import (
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    Row,
    SessionRow,
    TurnRow,
)
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext, Pos
from agent_history.parsers.codex.parser import MAX_OCCURRENCES, PARSER, CodexParser, session_uid_from_path
from tests.parsers.codex_records import (
    PATH,
    SID,
    _ts,
    agent_event,
    assert_batch_independent,
    assistant_item,
    encode,
    event,
    issues,
    item,
    messages,
    meta,
    parse,
    rec,
    tokens,
    turn_context,
    usage,
    user_event,
    user_item,
)
from tests.parsers.util import rows_of

# ---------------------------------------------------------------------- contract


def test_module_exposes_parser_registered_as_codex():
    assert parser_class("codex") is CodexParser
    assert (PARSER.AGENT, PARSER.VERSION) == ("codex", 2)


def test_session_uid_from_rollout_file_name():
    assert session_uid_from_path(PATH) == SID
    assert session_uid_from_path("/x/rollout-2026-05-02T12-33-22-quote-123.jsonl") == "quote-123"
    assert session_uid_from_path("/x/other.jsonl") == "other"


def test_every_record_gets_one_record_type_row_keyed_by_payload_keys():
    folded = parse([meta(), user_item("hi", 1), {"record_type": "state"}])
    seen = {(r.record_type, r.subtype, r.key_set): r.count for r in rows_of(folded, RecordTypeRow)}
    assert seen == {
        ("session_meta", "", "cli_version,cwd,id,source,timestamp"): 1,
        ("response_item", "message", "content,role,type"): 1,
        ("legacy_state", "state", "record_type"): 1,
    }


def test_unknown_types_are_counted_and_reported_not_dropped_silently():
    folded = parse(
        [meta(), event({"type": "brand_new_event"}, 1), {"timestamp": _ts(2), "type": "world_state", "payload": {}}]
    )
    unknown = [(r.record_type, r.subtype, r.known) for r in rows_of(folded, RecordTypeRow) if not r.known]
    assert unknown == [("event_msg", "brand_new_event", False), ("world_state", "", False)]
    assert issues(folded) == [("unknown_record_type", 2), ("unknown_record_type", 3)]


def test_known_record_with_wrong_shape_is_a_bad_record_issue():
    folded = parse(
        [
            meta(),
            {"timestamp": _ts(1), "type": "response_item", "payload": "oops"},
            item({"type": "function_call", "name": "shell"}, 2),
        ]
    )
    assert issues(folded) == [("bad_record", 2), ("bad_record", 3)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
TYPE_NAMES = st.sampled_from(
    ["session_meta", "turn_context", "response_item", "event_msg", "compacted", "message", "function_call", "x"]
)
SUBTYPES = st.sampled_from(
    ["message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "local_shell_call",
     "token_count", "user_message", "exec_command_end", "patch_apply_begin", "task_started", "mcp_tool_call_end",
     "collab_agent_spawn_end", "web_search_call", "compacted", "context_compacted"]
)  # fmt: skip


@st.composite
def odd_records(draw) -> dict:
    payload = draw(st.dictionaries(st.sampled_from(
        ["type", "role", "content", "call_id", "name", "arguments", "output", "info", "summary", "changes",
         "exit_code", "duration", "message", "source", "id", "command", "turn_id", "result", "action", "input"]
    ), json_values, max_size=6))  # fmt: skip
    if draw(st.booleans()):
        payload["type"] = draw(SUBTYPES)
    record = {"type": draw(TYPE_NAMES), "payload": payload if draw(st.booleans()) else draw(json_values)}
    if draw(st.booleans()):
        record["timestamp"] = draw(json_values)
    return record


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(odd_records(), max_size=6))
def test_feed_never_raises_on_wrong_types(records):
    parser = CodexParser(ParseContext(path=PATH), None)
    for n, r in enumerate(records):
        out = list(parser.feed(r, Pos(n * 10, 10, n + 1)))
        assert all(isinstance(row, Row) for row in out)
        assert not any(
            isinstance(row, ParseIssueRow) and re.match(r"\w+(Error|Exception):", row.detail or "") for row in out
        )
    list(parser.flush())
    json.dumps(parser.state())


def test_garbage_state_is_ignored_not_fatal():
    odd = {"occ": 5, "calls": [1], "turn": "x", "tot": "y", "cmp": [None, None], "t0": 3.5, "ord": "a"}
    parser = CodexParser(ParseContext(path=PATH), odd)
    rows = list(parser.feed(event({"type": "context_compacted"}, 1), Pos(0, 10, 1)))
    assert [type(r).__name__ for r in rows] == ["RecordTypeRow", "SessionRow", "ParseIssueRow", "CompactionRow"]
    json.dumps(parser.state())


# ---------------------------------------------------------------------- sessions


def test_session_from_meta_with_branch_version_and_model_from_turn_context():
    folded = parse(
        [meta(git={"branch": "feat/x", "commit_hash": "abc"}), turn_context(1, "gpt-5.1-codex"), user_item("go", 2)]
    )
    (s,) = rows_of(folded, SessionRow)
    assert (s.session_uid, s.agent_id, s.cwd, s.git_branch, s.cli_version, s.model) == (
        SID,
        "",
        "/p",
        "feat/x",
        "0.60.0",
        "gpt-5.1-codex",
    )
    assert (s.is_subagent, s.parent_session_uid, s.first_prompt) == (False, None, "go")
    assert (s.started_at.isoformat(), s.ended_at.isoformat()) == (
        "2025-10-20T12:00:00+00:00",
        "2025-10-20T12:00:02+00:00",
    )


def test_source_object_with_thread_spawn_names_parent_and_role():
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-1", "depth": 1, "agent_role": "explorer"}}}
    (s,) = rows_of(parse([meta(source=spawn)]), SessionRow)
    assert (s.is_subagent, s.parent_session_uid, s.subagent_type) == (True, "parent-1", "explorer")


def test_source_subagent_string_kind_is_a_subagent_without_parent():
    (s,) = rows_of(parse([meta(source={"subagent": "review"})]), SessionRow)
    assert (s.is_subagent, s.parent_session_uid, s.subagent_type) == (True, None, "review")


def test_exec_source_is_a_main_session():
    (s,) = rows_of(parse([meta(source="exec")]), SessionRow)
    assert s.is_subagent is False


def test_fork_names_its_origin_as_parent():
    (s,) = rows_of(parse([meta(forked_from_id="origin-1")]), SessionRow)
    assert (s.forked_from_uid, s.parent_session_uid, s.is_subagent) == ("origin-1", "origin-1", False)


def test_legacy_header_and_unwrapped_items():
    folded = parse(
        [
            {"id": "legacy-1", "timestamp": "2025-09-10T18:58:38.331Z", "instructions": "x", "git": {"branch": "main"}},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
        ]
    )
    (s,) = rows_of(folded, SessionRow)
    assert (s.session_uid, s.git_branch, s.first_prompt) == ("legacy-1", "main", "fix it")
    assert messages(folded) == [(classes.HUMAN_PROMPT, "fix it"), (classes.ASSISTANT_TEXT, "done")]
    assert issues(folded) == []


def test_records_before_any_header_use_the_file_name_id_and_one_issue():
    folded = parse([turn_context(0), tokens(usage(10, 0, 5, 0), usage(10, 0, 5, 0), 1)])
    assert [s.session_uid for s in rows_of(folded, SessionRow)] == [SID]
    assert issues(folded) == [("record_before_header", 1)]


def test_thread_name_update_is_the_custom_title():
    folded = parse([meta(), event({"type": "thread_name_updated", "thread_id": SID, "thread_name": "Cache TTL"}, 1)])
    (s,) = rows_of(folded, SessionRow)
    assert s.custom_title == "Cache TTL"


# ---------------------------------------------------------------------- messages


def test_event_before_item_merges_like_item_before_event():
    a = parse(
        [
            meta(),
            user_event("ls ports", 1),
            user_item("ls ports", 1.001),
            agent_event("22", 2),
            assistant_item(2.001, "22"),
        ]
    )
    b = parse(
        [
            meta(),
            user_item("ls ports", 1),
            user_event("ls ports", 1.001),
            assistant_item(2, "22"),
            agent_event("22", 2.001),
        ]
    )
    assert messages(a) == messages(b) == [(classes.HUMAN_PROMPT, "ls ports"), (classes.ASSISTANT_TEXT, "22")]


def test_same_prompt_typed_twice_stays_two_messages_and_two_turns():
    folded = parse([meta(), user_item("again", 1), user_event("again", 1.001), assistant_item(2, "ok"),
                    user_item("again", 3), user_event("again", 3.001), assistant_item(4, "ok")])  # fmt: skip
    assert messages(folded) == [(classes.HUMAN_PROMPT, "again"), (classes.ASSISTANT_TEXT, "ok")] * 2
    assert len(rows_of(folded, TurnRow)) == 2


def test_whitespace_differences_between_representations_still_merge():
    folded = parse([meta(), user_item("multi\nline  prompt", 1), user_event("multi line prompt ", 1.001)])
    assert messages(folded) == [(classes.HUMAN_PROMPT, "multi line prompt ")]


def test_assistant_blocks_are_one_message_each_matching_one_event_each():
    folded = parse(
        [meta(), assistant_item(1, "first", "second"), agent_event("first", 1.001), agent_event("second", 1.002)]
    )
    assert messages(folded) == [(classes.ASSISTANT_TEXT, "first"), (classes.ASSISTANT_TEXT, "second")]


def test_reasoning_summary_items_merge_with_agent_reasoning_events():
    reasoning = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "**Plan**"}, {"type": "summary_text", "text": "**Check**"}],
        "content": None,
        "encrypted_content": "gAAAA-secret",
    }
    folded = parse([meta(), event({"type": "agent_reasoning", "text": "**Plan**"}, 1),
                    event({"type": "agent_reasoning", "text": "**Check**"}, 1.1), item(reasoning, 1.2)])  # fmt: skip
    assert messages(folded) == [(classes.REASONING, "**Plan**"), (classes.REASONING, "**Check**")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<environment_context>\n  <cwd>/p</cwd>\n</environment_context>", classes.CONTEXT_INJECTION),
        ("# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>", classes.CONTEXT_INJECTION),
        ("<user_instructions>\nrules\n</user_instructions>", classes.CONTEXT_INJECTION),
        ("<user_shell_command>\nls\n</user_shell_command>", classes.LOCAL_COMMAND_OUTPUT),
        ("<turn_aborted>\nThe user interrupted.\n</turn_aborted>", classes.INTERRUPT_MARKER),
        ("Another language model started to solve this problem and produced a summary: …", classes.COMPACTION_SUMMARY),
        ("please add tests", classes.HUMAN_PROMPT),
    ],
)
def test_user_text_class_by_wrapper(text, expected):
    (m,) = rows_of(parse([meta(), user_item(text, 1)]), MessageRow)
    assert m.message_class == expected


def test_developer_message_is_a_system_prompt_never_the_first_prompt():
    dev = item(
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "<permissions instructions>x"}],
        },
        1,
    )
    folded = parse([meta(), dev])
    assert messages(folded) == [(classes.SYSTEM_PROMPT, "<permissions instructions>x")]
    assert rows_of(folded, SessionRow)[0].first_prompt is None


def test_user_text_in_a_subagent_thread_is_the_parents_brief():
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "p"}}}
    folded = parse([meta(source=spawn), user_item("Explore the parser.", 1), user_event("Explore the parser.", 1.001)])
    assert messages(folded) == [(classes.SUBAGENT_BRIEF, "Explore the parser.")]


def test_images_become_attachment_metadata_not_text():
    content = [
        {"type": "input_image", "image_url": "data:image/png;base64,QUJDRA=="},
        {"type": "input_text", "text": "see this"},
    ]
    (m,) = rows_of(parse([meta(), item({"type": "message", "role": "user", "content": content}, 1)]), MessageRow)
    assert (m.text, m.attachments) == ("see this", [{"type": "image", "media_type": "image/png", "bytes": 4}])


def test_occurrence_counters_in_state_are_capped():
    parser = CodexParser(ParseContext(path=PATH), None)
    parser.feed(meta(), Pos(0, 1, 1))
    for n in range(MAX_OCCURRENCES + 50):
        list(parser.feed(user_item(f"p{n}", 1), Pos(n + 1, 1, n + 2)))
    assert len(parser.state()["occ"]) == MAX_OCCURRENCES


# ---------------------------------------------------------------------- model calls


def test_repeated_totals_count_once_and_changed_totals_use_last_usage():
    t1, t2 = usage(1000, 200, 300, 50), usage(2500, 1200, 420, 60)
    folded = parse(
        [meta(), turn_context(1), tokens(t1, t1, 2), tokens(t1, t1, 3), tokens(t2, usage(1500, 1000, 120, 10), 4)]
    )
    calls = rows_of(folded, ModelCallRow)
    assert [(c.input_uncached, c.cache_read, c.output, c.reasoning) for c in calls] == [
        (800, 200, 300, 50),
        (500, 1000, 120, 10),
    ]
    assert [c.call_uid for c in calls] == [f"{SID}:usage:1000/200/300/50/1300", f"{SID}:usage:2500/1200/420/60/2920"]
    assert all(c.model == "gpt-5-codex" and c.is_complete and c.cache_write_5m is None for c in calls)


def test_missing_last_usage_is_the_difference_of_totals():
    folded = parse([meta(), tokens(usage(100, 0, 10, 0), None, 1), tokens(usage(300, 50, 25, 5), None, 2)])
    calls = rows_of(folded, ModelCallRow)
    assert [(c.input_uncached, c.cache_read, c.output, c.reasoning) for c in calls] == [
        (100, 0, 10, 0),
        (150, 50, 15, 5),
    ]


def test_model_named_in_token_count_info_wins_over_turn_context():
    t = usage(10, 0, 5, 0)
    (c,) = rows_of(parse([meta(), turn_context(1, "gpt-5"), tokens(t, t, 2, model="gpt-5.3-codex")]), ModelCallRow)
    assert c.model == "gpt-5.3-codex"


def test_rate_limit_only_token_count_is_no_call():
    folded = parse([meta(), event({"type": "token_count", "info": None, "rate_limits": {"primary": {}}}, 1)])
    assert rows_of(folded, ModelCallRow) == []
    assert issues(folded) == []


# ---------------------------------------------------------------------- turns


def test_explicit_turn_ids_open_and_close_turns():
    folded = parse([meta(), event({"type": "task_started", "turn_id": "t1"}, 1), user_event("go", 1.1), user_item("go", 1.2),
                    assistant_item(5, "done"), event({"type": "task_complete", "turn_id": "t1"}, 6)])  # fmt: skip
    (turn,) = rows_of(folded, TurnRow)
    assert (turn.turn_uid, turn.started_at.second, turn.ended_at.second) == (f"{SID}:turn:t1", 1, 6)
    assert {m.turn_uid for m in rows_of(folded, MessageRow)} == {f"{SID}:turn:t1"}


def test_without_turn_ids_each_new_prompt_opens_a_turn():
    folded = parse([meta(), user_item("one", 1), user_event("one", 1.1), turn_context(1.2), turn_context(3),
                    assistant_item(4, "a"), user_item("two", 5), user_event("two", 5.1)])  # fmt: skip
    turns = rows_of(folded, TurnRow)
    assert len(turns) == 2
    assert (turns[0].started_at.second, turns[0].ended_at.second) == (1, 4)
    assert [m.turn_uid for m in rows_of(folded, MessageRow)] == [
        turns[0].turn_uid,
        turns[0].turn_uid,
        turns[1].turn_uid,
    ]


# ---------------------------------------------------------------------- replay


def _child(first_own_second: float, **meta_extra) -> list[dict]:
    parent_meta = rec("session_meta", {"id": "parent-1", "timestamp": _ts(0), "cwd": "/p"}, 0.002)
    return [
        meta(0, **meta_extra),
        parent_meta,
        user_item("parent prompt", 0.004),
        assistant_item(0.006, "parent answer"),
        tokens(usage(500, 0, 50, 0), usage(500, 0, 50, 0), 0.008),
        user_item("child prompt", first_own_second),
        assistant_item(first_own_second + 1, "child answer"),
        tokens(usage(900, 400, 80, 0), usage(400, 400, 30, 0), first_own_second + 2),
    ]


def test_fork_burst_of_copied_history_is_skipped():
    folded = parse(_child(5, forked_from_id="parent-1"))
    assert messages(folded) == [(classes.HUMAN_PROMPT, "child prompt"), (classes.ASSISTANT_TEXT, "child answer")]
    (c,) = rows_of(folded, ModelCallRow)
    assert (c.input_uncached, c.cache_read, c.output) == (0, 400, 30)


def test_copied_parent_session_meta_marks_a_replay_burst_even_without_fork_id():
    folded = parse(_child(5))
    assert messages(folded) == [(classes.HUMAN_PROMPT, "child prompt"), (classes.ASSISTANT_TEXT, "child answer")]


def test_history_start_ordinal_wins_over_timestamps():
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-1", "subagent_history_start_ordinal": 4}}}
    folded = parse(_child(0.010, source=spawn))
    assert messages(folded) == [(classes.SUBAGENT_BRIEF, "child prompt"), (classes.ASSISTANT_TEXT, "child answer")]
    assert len(rows_of(folded, ModelCallRow)) == 1


def test_subagent_without_fork_marker_keeps_its_fast_first_records():
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-1"}}}
    folded = parse(
        [meta(0, source=spawn), event({"type": "task_started", "turn_id": "t"}, 0.005), user_item("brief", 0.010)]
    )
    assert messages(folded) == [(classes.SUBAGENT_BRIEF, "brief")]


def test_replay_boundary_survives_resume():
    assert_batch_independent(encode(_child(5, forked_from_id="parent-1")), PATH)
