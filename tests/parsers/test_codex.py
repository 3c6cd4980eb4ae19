"""Codex parser: synthetic specs (records, keys, dedup, replay, tools) and the real corpus
(counts, tokens against the raw totals, batch independence)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import orjson
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
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext, Pos
from agent_history.parsers.codex import MAX_OCCURRENCES, PARSER, CodexParser, session_uid_from_path
from agent_history.parsers.driver import feed_bytes, parse_bytes
from agent_history.parsers.lines import iter_lines
from tests.parsers.util import parse_file, parse_in_batches, parse_resumed, rows_of

SID = "0199ffff-0000-7000-8000-000000000001"
PATH = f"/home/u/.codex/sessions/2025/10/20/rollout-2025-10-20T12-00-00-{SID}.jsonl"
SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "samples" / "codex"


# ---------------------------------------------------------------------- helpers


def _ts(second: float) -> str:
    whole, ms = int(second), round((second - int(second)) * 1000)
    return f"2025-10-20T12:{whole // 60:02d}:{whole % 60:02d}.{ms:03d}Z"


def rec(kind: str, payload: dict, second: float) -> dict:
    return {"timestamp": _ts(second), "type": kind, "payload": payload}


def meta(second: float = 0, **extra) -> dict:
    payload = {"id": SID, "timestamp": _ts(second), "cwd": "/p", "cli_version": "0.60.0", "source": "cli"}
    return rec("session_meta", {**payload, **extra}, second)


def item(payload: dict, second: float) -> dict:
    return rec("response_item", payload, second)


def event(payload: dict, second: float) -> dict:
    return rec("event_msg", payload, second)


def user_item(text: str, second: float) -> dict:
    return item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}, second)


def assistant_item(second: float, *texts: str) -> dict:
    blocks = [{"type": "output_text", "text": t} for t in texts]
    return item({"type": "message", "role": "assistant", "content": blocks}, second)


def user_event(text: str, second: float) -> dict:
    return event({"type": "user_message", "message": text, "images": []}, second)


def agent_event(text: str, second: float) -> dict:
    return event({"type": "agent_message", "message": text}, second)


def turn_context(second: float, model: str = "gpt-5-codex", **extra) -> dict:
    return rec("turn_context", {"cwd": "/p", "model": model, **extra}, second)


def usage(i: int, c: int, o: int, r: int) -> dict:
    return {
        "input_tokens": i,
        "cached_input_tokens": c,
        "output_tokens": o,
        "reasoning_output_tokens": r,
        "total_tokens": i + o,
    }


def tokens(total: dict | None, last: dict | None, second: float, **info) -> dict:
    body = {k: v for k, v in (("total_token_usage", total), ("last_token_usage", last)) if v is not None}
    return event({"type": "token_count", "info": {**body, **info}, "rate_limits": None}, second)


def call(name: str, arguments: dict | str, call_id: str, second: float) -> dict:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return item({"type": "function_call", "name": name, "arguments": args, "call_id": call_id}, second)


def output(call_id: str, out, second: float) -> dict:
    return item({"type": "function_call_output", "call_id": call_id, "output": out}, second)


def encode(records: list[dict]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def parse(records: list[dict], path: str = PATH) -> dict:
    return fold(parse_bytes(PARSER, ParseContext(path=path), encode(records)))


def assert_batch_independent(data: bytes, path: str) -> None:
    ctx = ParseContext(path=path, namespace="test")
    whole = fold(parse_bytes(PARSER, ctx, data))
    n = len(list(iter_lines(data)))
    for batch in (1, 2, 3, 7):
        assert parse_in_batches(PARSER, data, batch, ctx) == whole, f"batches of {batch}"
    for cuts in ([n // 3], [n // 2], [2 * n // 3], [1, n // 2, n - 1]):
        assert parse_resumed(PARSER, data, cuts, ctx) == whole, f"resumed at {cuts}"


def messages(folded: dict) -> list[tuple[str | None, str | None]]:
    return [(m.message_class, m.text) for m in rows_of(folded, MessageRow)]


def issues(folded: dict) -> list[tuple[str, int | None]]:
    return [(i.kind, i.line_number) for i in rows_of(folded, ParseIssueRow)]


# ---------------------------------------------------------------------- contract


def test_module_exposes_parser_registered_as_codex():
    assert parser_class("codex") is CodexParser
    assert (PARSER.AGENT, PARSER.VERSION) == ("codex", 1)


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
