"""pi parser: synthetic specs (tree, turns, tools, keys) and the real corpus (counts, tokens, batches)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_history.model import classes
from agent_history.model.merge import fold
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
from agent_history.parsers.driver import feed_bytes, parse_bytes
from agent_history.parsers.pi import PARSER, PiParser
from tests.parsers.util import parse_file, parse_in_batches, parse_resumed, rows_of

SESSION_FILE = "/home/u/.pi/agent/sessions/--home-u-proj--/2025-12-01T10-00-00-000Z_sess-synthetic.jsonl"
HEADER = {"type": "session", "version": 3, "id": "sess-synthetic", "timestamp": "2025-12-01T10:00:00.000Z", "cwd": "/p"}


# ---------------------------------------------------------------------- helpers


def _ts(second: int) -> str:
    return f"2025-12-01T10:{second // 60:02d}:{second % 60:02d}.000Z"


def user(eid: str | None, parent: str | None, text: str, second: int = 1) -> dict:
    entry = {"type": "message", "timestamp": _ts(second), "message": {"role": "user", "content": text}}
    return _with_id(entry, eid, parent)


def assistant(
    eid: str | None,
    parent: str | None,
    text: str = "",
    second: int = 2,
    *,
    stop: str = "stop",
    tools: list[dict] | None = None,
    usage: dict | None = None,
) -> dict:
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", **t} for t in tools or []]
    msg = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": usage if usage is not None else {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 20},
        "stopReason": stop,
    }
    return _with_id({"type": "message", "timestamp": _ts(second), "message": msg}, eid, parent)


def tool_result(
    eid: str | None, parent: str | None, call_id: str, name: str, text: str, *, error: bool = False, second: int = 3
) -> dict:
    msg = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }
    return _with_id({"type": "message", "timestamp": _ts(second), "message": msg}, eid, parent)


def _with_id(entry: dict, eid: str | None, parent: str | None) -> dict:
    if eid is not None:
        entry = {
            "type": entry["type"],
            "id": eid,
            "parentId": parent,
            **{k: v for k, v in entry.items() if k != "type"},
        }
    return entry


def jsonl(*records: dict | str) -> bytes:
    return b"".join((r if isinstance(r, str) else json.dumps(r)).encode() + b"\n" for r in records)


def parse(*records: dict | str, path: str = SESSION_FILE) -> dict:
    return fold(parse_bytes(PARSER, ParseContext(path=path), jsonl(*records)))


def active(folded: dict) -> dict[str, bool | None]:
    """Entry id → on_active_branch of its (primary) message."""
    return {m.message_uid.split("@")[0]: m.on_active_branch for m in rows_of(folded, MessageRow)}


def all_batchings_equal(data: bytes, path: str = SESSION_FILE) -> None:
    ctx = ParseContext(path=path, namespace="test")
    whole = fold(parse_bytes(PARSER, ctx, data))
    n = len(data.splitlines())
    for batch in (1, 2, 3, 7):
        assert parse_in_batches(PARSER, data, batch, ctx) == whole, f"batches of {batch} lines differ"
    for cuts in ([max(1, n // 3)], [n // 2, n - 1], [1, n // 4, 3 * n // 4]):
        assert parse_resumed(PARSER, data, cuts, ctx) == whole, f"resumed at {cuts} differs"


BRANCHED = (
    HEADER,
    user("u1", None, "first question", 1),
    assistant("a1", "u1", "first answer", 2),
    user("u2", "a1", "follow-up on branch one", 3),
    assistant("a2", "u2", "branch one answer", 4),
    user("u3", "a1", "follow-up on branch two", 5),
    assistant("a3", "u3", "branch two answer", 6),
)


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
    import agent_history.parsers.pi as pi

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
