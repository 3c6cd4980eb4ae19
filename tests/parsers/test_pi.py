"""pi parser: synthetic specs (tree and active branch, keys and lines, messages, calls, turns)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Pos
from agent_history.parsers.driver import feed_bytes
from agent_history.parsers.pi.parser import PiParser
from tests.parsers.pi_records import (
    BRANCHED,
    HEADER,
    SESSION_FILE,
    _ts,
    active,
    all_batchings_equal,
    assistant,
    jsonl,
    parse,
    tool_result,
    user,
)
from tests.parsers.util import rows_of

# ---------------------------------------------------------------------- tree / active branch


def test_fork_marks_the_abandoned_branch_off_and_the_new_leaf_branch_on():
    assert active(parse(*BRANCHED)) == {"u1": True, "a1": True, "u2": False, "a2": False, "u3": True, "a3": True}


def test_returning_to_the_first_branch_flips_both_branches_back():
    folded = parse(*BRANCHED, user("u4", "a2", "back on branch one", 7))
    assert active(folded) == {"u1": True, "a1": True, "u2": True, "a2": True, "u3": False, "a3": False, "u4": True}


def test_branch_corrections_do_not_depend_on_batch_boundaries():
    all_batchings_equal(jsonl(*BRANCHED, user("u4", "a2", "back on branch one", 7), assistant("a4", "u4", "ok", 8)))


def test_metadata_entries_never_move_the_leaf():
    folded = parse(
        *BRANCHED[:5],
        {"type": "label", "id": "l1", "parentId": "u1", "timestamp": _ts(5), "targetId": "u1", "label": "start"},
        {"type": "custom", "id": "c1", "parentId": "u1", "timestamp": _ts(6), "customType": "ext", "data": {}},
        {"type": "session_info", "id": "s1", "parentId": "u1", "timestamp": _ts(7), "name": "Named"},
    )
    assert active(folded) == {"u1": True, "a1": True, "u2": True, "a2": True}


def test_a_message_below_a_metadata_entry_follows_the_tree_through_it():
    folded = parse(
        *BRANCHED[:5],
        {"type": "session_info", "id": "s1", "parentId": "a1", "timestamp": _ts(5), "name": "Named"},
        user("u5", "s1", "continues below the stale metadata", 6),
    )
    assert active(folded) == {"u1": True, "a1": True, "u2": False, "a2": False, "u5": True}


def test_a_new_root_abandons_the_whole_previous_tree():
    folded = parse(*BRANCHED[:3], user("r2", None, "start over", 3))
    assert active(folded) == {"u1": False, "a1": False, "r2": True}


def test_v1_entries_without_ids_are_one_chain_on_the_active_branch():
    v1 = {k: v for k, v in HEADER.items() if k != "version"}
    folded = parse(v1, user(None, None, "q", 1), assistant(None, None, "a", 2))
    assert [m.on_active_branch for m in rows_of(folded, MessageRow)] == [True, True]


def test_state_keeps_ids_and_timestamps_never_text():
    parser = PiParser(ParseContext(path=SESSION_FILE))
    data = jsonl(*BRANCHED)
    list(feed_bytes(parser, data))
    dumped = json.dumps(parser.state())
    assert "answer" not in dumped and "question" not in dumped
    assert parser.state()["leaf"] == "a3"
    assert parser.state()["nodes"] == {"u1": None, "a1": "u1", "u2": "a1", "a2": "u2", "u3": "a1", "a3": "u3"}


def test_tree_state_is_capped(monkeypatch):
    import agent_history.parsers.pi.parser as pi

    monkeypatch.setattr(pi, "MAX_NODES", 3)
    records = [HEADER] + [user(f"e{i}", f"e{i - 1}" if i else None, f"q{i}", i + 1) for i in range(6)]
    parser = PiParser(ParseContext(path=SESSION_FILE))
    list(feed_bytes(parser, jsonl(*records)))
    assert list(parser.state()["nodes"]) == ["e3", "e4", "e5"]
    assert list(parser.state()["msgs"]) == ["e3", "e4", "e5"]


# ---------------------------------------------------------------------- keys and lines


def test_entry_keys_combine_id_and_timestamp():
    folded = parse(HEADER, user("abcd1234", None, "q", 1))
    assert [m.message_uid for m in rows_of(folded, MessageRow)] == ["abcd1234@2025-12-01T10:00:01.000Z"]


def test_v1_keys_are_content_hashes_and_identical_copies_merge():
    v1 = {k: v for k, v in HEADER.items() if k != "version"}
    folded = parse(v1, user(None, None, "same", 1), user(None, None, "same", 1), user(None, None, "other", 2))
    uids = [m.message_uid for m in rows_of(folded, MessageRow)]
    assert len(uids) == 2 and all(u.startswith("v1:") and len(u) == 35 for u in uids)


def test_two_objects_on_one_line_are_both_parsed():
    fused = json.dumps(assistant("a1", "u1", "the answer", 2)) + json.dumps(
        {"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": _ts(3), "summary": "S", "tokensBefore": 900}
    )
    folded = parse(HEADER, user("u1", None, "q", 1), fused)
    assert [(m.message_class, m.text) for m in rows_of(folded, MessageRow)] == [
        (classes.HUMAN_PROMPT, "q"),
        (classes.ASSISTANT_TEXT, "the answer"),
        (classes.COMPACTION_SUMMARY, "S"),
    ]
    assert [(c.tokens_before, c.line_number) for c in rows_of(folded, CompactionRow)] == [(900, 3)]
    assert [i.kind for i in rows_of(folded, ParseIssueRow)] == ["fused_line"]


def test_record_before_header_is_reported_and_still_parsed_under_the_file_name_id():
    folded = parse(user("u0", None, "early", 0), HEADER, user("u1", "u0", "q", 1))
    assert [(i.kind, i.line_number) for i in rows_of(folded, ParseIssueRow)] == [("record_before_header", 1)]
    assert [(m.text, m.session_uid) for m in rows_of(folded, MessageRow)] == [
        ("early", "sess-synthetic"),
        ("q", "sess-synthetic"),
    ]


def test_unknown_entry_type_and_role_are_counted_and_reported():
    folded = parse(
        HEADER,
        {"type": "future_thing", "id": "f1", "parentId": None, "timestamp": _ts(1)},
        {
            "type": "message",
            "id": "f2",
            "parentId": "f1",
            "timestamp": _ts(2),
            "message": {"role": "robot", "content": "x"},
        },
    )
    unknown = [(r.record_type, r.subtype) for r in rows_of(folded, RecordTypeRow) if not r.known]
    assert unknown == [("future_thing", ""), ("message", "robot")]
    assert [i.kind for i in rows_of(folded, ParseIssueRow)] == ["unknown_record_type", "unknown_record_type"]
    assert rows_of(folded, MessageRow) == []


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_field = st.sampled_from(
    ["type", "id", "parentId", "timestamp", "message", "role", "content", "usage", "stopReason", "toolCallId", "name"]
)
_record = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["session", "message", "compaction", "model_change", "session_info", "custom_message", 3]
        ),
        "message": st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom", None])},
            optional={"content": _json, "usage": _json, "stopReason": _json, "toolCallId": _json, "command": _json},
        )
        | _json,
    },
    optional={"id": _json, "parentId": _json, "timestamp": _json, "summary": _json, "name": _json},
) | st.dictionaries(_field, _json, max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_record, max_size=6))
def test_feed_never_raises_and_state_stays_json(records):
    parser = PiParser(ParseContext(path=SESSION_FILE))
    for i, record in enumerate(records):
        list(parser.feed(record, Pos(i * 10, 10, i + 1)))
        json.dumps(parser.state())
    list(parser.flush())


# ---------------------------------------------------------------------- messages, session


def test_slash_command_alone_is_not_a_prompt_nor_the_first_prompt():
    folded = parse(HEADER, user("u1", None, "/mode", 1), user("u2", "u1", "fix the theme", 2))
    assert [(m.text, m.message_class) for m in rows_of(folded, MessageRow)] == [
        ("/mode", classes.COMMAND_EXPANSION),
        ("fix the theme", classes.HUMAN_PROMPT),
    ]
    assert rows_of(folded, SessionRow)[0].first_prompt == "fix the theme"


def test_images_become_attachment_metadata_not_text():
    entry = user("u1", None, "", 1)
    entry["message"]["content"] = [
        {"type": "text", "text": "compare with the mockup"},
        {"type": "image", "mimeType": "image/png", "data": "QUJD" * 10},
    ]
    [message] = rows_of(parse(HEADER, entry), MessageRow)
    assert message.text == "compare with the mockup"
    assert message.attachments == [{"type": "image", "media_type": "image/png", "bytes": 30}]


def test_thinking_is_a_separate_reasoning_message():
    entry = assistant("a1", None, "answer", 2)
    entry["message"]["content"].insert(0, {"type": "thinking", "thinking": "let me think"})
    folded = parse(HEADER, entry)
    key = "a1@" + _ts(2)
    assert [(m.message_uid, m.message_class, m.text) for m in rows_of(folded, MessageRow)] == [
        (key, classes.ASSISTANT_TEXT, "answer"),
        (key + "#reasoning", classes.REASONING, "let me think"),
    ]


def test_session_row_has_cwd_model_times_and_latest_name():
    folded = parse(
        HEADER,
        {
            "type": "model_change",
            "id": "m0",
            "parentId": None,
            "timestamp": _ts(1),
            "provider": "x",
            "modelId": "picked",
        },
        user("u1", "m0", "q", 2),
        assistant("a1", "u1", "a", 3),
        {
            "type": "model_change",
            "id": "m1",
            "parentId": "a1",
            "timestamp": _ts(4),
            "provider": "x",
            "modelId": "unused",
        },
        {"type": "session_info", "id": "s1", "parentId": "m1", "timestamp": _ts(5), "name": "old"},
        {"type": "session_info", "id": "s2", "parentId": "s1", "timestamp": _ts(6), "name": " new name "},
    )
    [s] = rows_of(folded, SessionRow)
    assert (s.session_uid, s.cwd, s.model, s.custom_title, s.first_prompt) == (
        "sess-synthetic",
        "/p",
        "claude-sonnet-4-5",
        "new name",
        "q",
    )
    assert (s.started_at.isoformat(), s.ended_at.isoformat()) == (
        "2025-12-01T10:00:00+00:00",
        "2025-12-01T10:00:06+00:00",
    )


def test_model_change_sets_the_model_until_an_assistant_answers():
    folded = parse(
        HEADER,
        {
            "type": "model_change",
            "id": "m0",
            "parentId": None,
            "timestamp": _ts(1),
            "provider": "x",
            "modelId": "picked",
        },
    )
    assert rows_of(folded, SessionRow)[0].model == "picked"


def test_fork_header_names_the_parent_session_by_its_file_id():
    header = {**HEADER, "parentSession": "/home/u/.pi/agent/sessions/--p--/2025-11-30T09-00-00-000Z_parent-id.jsonl"}
    [s] = rows_of(parse(header), SessionRow)
    assert (s.forked_from_uid, s.parent_session_uid, s.is_subagent) == ("parent-id", None, False)


def test_compaction_row_and_summary_message():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "u1",
            "timestamp": _ts(2),
            "summary": "sum",
            "firstKeptEntryId": "u1",
            "tokensBefore": 1234,
        },
    )
    [c] = rows_of(folded, CompactionRow)
    assert (c.compaction_uid, c.tokens_before, c.summary_message_uid) == ("c1@" + _ts(2), 1234, "c1@" + _ts(2))
    [summary] = [m for m in rows_of(folded, MessageRow) if m.message_class == classes.COMPACTION_SUMMARY]
    assert (summary.text, summary.turn_uid) == ("sum", "u1@" + _ts(1))


def test_branch_summary_and_custom_message_entries_become_messages():
    folded = parse(
        HEADER,
        {
            "type": "branch_summary",
            "id": "b1",
            "parentId": None,
            "timestamp": _ts(1),
            "fromId": "x",
            "summary": "tried X",
        },
        {
            "type": "custom_message",
            "id": "m1",
            "parentId": "b1",
            "timestamp": _ts(2),
            "customType": "t",
            "content": "injected",
            "display": True,
        },
    )
    assert [(m.text, m.message_class) for m in rows_of(folded, MessageRow)] == [
        ("tried X", classes.COMPACTION_SUMMARY),
        ("injected", classes.HOOK_OUTPUT),
    ]


# ---------------------------------------------------------------------- model calls and turns


def test_usage_maps_to_disjoint_buckets():
    usage = {"input": 7, "output": 30, "cacheRead": 5000, "cacheWrite": 200, "totalTokens": 5237}
    [call] = rows_of(parse(HEADER, assistant("a1", None, "x", usage=usage)), ModelCallRow)
    assert (
        call.input_uncached,
        call.cache_read,
        call.cache_write_5m,
        call.cache_write_1h,
        call.output,
        call.reasoning,
    ) == (
        7,
        5000,
        200,
        None,
        30,
        None,
    )
    assert (call.call_uid, call.model, call.stop_reason, call.is_complete) == (
        "a1@" + _ts(2),
        "claude-sonnet-4-5",
        "stop",
        True,
    )


def test_missing_usage_fields_are_null_not_zero():
    [call] = rows_of(parse(HEADER, assistant("a1", None, "x", usage={"input": 100, "output": 50})), ModelCallRow)
    assert (call.input_uncached, call.cache_read, call.cache_write_5m, call.output) == (100, None, None, 50)


def test_assistant_without_usage_is_not_a_model_call():
    entry = assistant("a1", None, "x")
    del entry["message"]["usage"]
    assert rows_of(parse(HEADER, entry), ModelCallRow) == []


def test_aborted_call_without_tokens_is_an_api_error_and_one_with_tokens_is_not():
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    billed = {"input": 3, "output": 1, "cacheRead": 900, "cacheWrite": 10}
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="aborted", usage=zero),
        user("u2", "a1", "q", 3),
        assistant("a2", "u2", "partial", 4, stop="aborted", usage=billed),
        user("u3", "a2", "q", 5),
        assistant("a3", "u3", "", 6, stop="error", usage=zero),
    )
    assert [(c.stop_reason, c.is_api_error) for c in rows_of(folded, ModelCallRow)] == [
        ("aborted", True),
        ("aborted", False),
        ("error", True),
    ]


def test_turn_runs_from_prompt_through_tool_use_to_idle():
    folded = parse(
        HEADER,
        user("u1", None, "q", 1),
        assistant("a1", "u1", "", 2, stop="toolUse", tools=[{"id": "t1", "name": "read", "arguments": {"path": "f"}}]),
        tool_result("r1", "a1", "t1", "read", "content", second=3),
        assistant("a2", "r1", "done", 4),
        {
            "type": "custom_message",
            "id": "m1",
            "parentId": "a2",
            "timestamp": _ts(5),
            "customType": "t",
            "content": "note",
            "display": True,
        },
    )
    turn = "u1@" + _ts(1)
    [t] = rows_of(folded, TurnRow)
    assert (t.turn_uid, t.started_at.second, t.ended_at.second, t.model) == (turn, 1, 4, "claude-sonnet-4-5")
    assert [m.turn_uid for m in rows_of(folded, MessageRow)] == [turn, turn, None]
    assert {c.turn_uid for c in rows_of(folded, ModelCallRow)} == {turn}
    assert [tc.turn_uid for tc in rows_of(folded, ToolCallRow)] == [turn]


def test_assistant_while_idle_opens_its_own_turn():
    folded = parse(HEADER, user("u1", None, "q", 1), assistant("a1", "u1", "a", 2), assistant("a2", "a1", "more", 3))
    assert [t.turn_uid for t in rows_of(folded, TurnRow)] == ["u1@" + _ts(1), "a2@" + _ts(3)]
