"""Field cases for the Gemini and OpenCode parsers (field/EXPECTED.md: E31, E33, E35; E34 is
`tests/test_field_opencode.py`). Each test asserts the values EXPECTED.md states for its case,
through the parser's rows and through `parse --json`; buckets are the disjoint ones (`in` =
uncached input, `cr` = cache read, `out` = output incl. thoughts/reasoning)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_history.model import classes
from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow, ModelCallRow, ParseIssueRow, SessionRow, ToolCallRow
from agent_history.parsers.base import ParseContext, Pos
from agent_history.parsers.gemini.parser import GeminiDocumentParser, GeminiParser
from agent_history.parsers.opencode.parser import OpencodeDbParser, OpencodeDocumentParser
from tests.parsers.util import parse_file, parse_in_batches, rows_of


def parse_json(*paths: Path) -> dict[str, dict]:
    """`parse --json` of `paths` → file name → its summary."""
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "parse", *map(str, paths), "--json"],
        capture_output=True, text=True, env={**os.environ, "AGENT_HISTORY_QUERY_IDLE_S": "0"}, timeout=120,
    )  # fmt: skip
    assert (out.returncode, out.stderr) == (0, "")
    return {Path(f["path"]).name: f for f in json.loads(out.stdout)["files"]}


def _document(parser_cls, path: Path) -> dict:
    return fold(list(parser_cls(ParseContext(str(path))).parse(path.read_bytes())))


def _buckets(folded: dict) -> dict[str, int]:
    calls = rows_of(folded, ModelCallRow)
    return {
        "in": sum(c.input_uncached or 0 for c in calls),
        "cr": sum(c.cache_read or 0 for c in calls),
        "out": sum(c.output or 0 for c in calls),
        "thoughts": sum(c.reasoning or 0 for c in calls),
    }


# ---------------------------------------------------------------- E31 JSONL upsert log


def test_e31_three_messages_in_order_the_tool_only_reply_included(field_dir):
    folded = parse_file(GeminiParser, field_dir / "E31.jsonl")
    got = [(m.message_uid, m.role, m.message_class, m.text) for m in rows_of(folded, MessageRow)]
    assert got == [
        ("gem-sess-0031/m1", "user", classes.HUMAN_PROMPT, "Explain the Makefile"),
        ("gem-sess-0031/m2", "assistant", classes.ASSISTANT_TEXT, ""),  # content "" and one tool call
        ("gem-sess-0031/m3", "assistant", classes.ASSISTANT_TEXT, "It has two targets: build and test."),
    ]
    assert rows_of(folded, ParseIssueRow) == []  # accepted despite .jsonl and the upsert lines


def test_e31_one_tool_call_from_the_final_version_of_m2(field_dir):
    folded = parse_file(GeminiParser, field_dir / "E31.jsonl")
    (t,) = rows_of(folded, ToolCallRow)  # not 3 (one per version of m2)
    assert (t.tool_call_uid, t.message_uid, t.name, t.outcome, t.output) == (
        "gem-sess-0031/read_file-1", "gem-sess-0031/m2", "read_file", "ok",
        "build:\n\tgo build ./...\ntest:\n\tgo test ./...",
    )  # fmt: skip


def test_e31_usage_once_per_id_from_the_final_version(field_dir):
    folded = parse_file(GeminiParser, field_dir / "E31.jsonl")
    calls = [(c.call_uid, c.input_uncached, c.cache_read, c.output, c.reasoning) for c in rows_of(folded, ModelCallRow)]
    assert calls == [("gem-sess-0031/m2", 1200, 0, 60, 40), ("gem-sess-0031/m3", 476, 1024, 60, 0)]
    b = _buckets(folded)
    assert b == {"in": 1676, "cr": 1024, "out": 120, "thoughts": 40}
    # raw: input 2700 (cached 1024), output 80, thoughts 40: total 2820 — not 5340
    assert b["in"] + b["cr"] + b["out"] == 2820


def test_e31_read_one_line_a_pass_gives_the_same_rows(field_dir):
    data = (field_dir / "E31.jsonl").read_bytes()
    whole = parse_file(GeminiParser, field_dir / "E31.jsonl")
    batched = parse_in_batches(GeminiParser, data, 1, ParseContext(str(field_dir / "E31.jsonl"), namespace="test"))
    for row_type in (MessageRow, ToolCallRow, ModelCallRow):
        assert rows_of(batched, row_type) == rows_of(whole, row_type)


def test_e31_e33_e35_parse_json(field_dir):
    files = parse_json(field_dir / "E31.jsonl", field_dir / "E33.jsonl", field_dir / "E35.jsonl")
    e31, e33, e35 = files["E31.jsonl"], files["E33.jsonl"], files["E35.jsonl"]
    assert (e31["agent"], e31["messages"], e31["messages_by_class"], e31["human_prompts"]) == (
        "gemini", 3, {"human_prompt": 1, "assistant_text": 2}, 1,
    )  # fmt: skip
    assert (e31["model_calls"], e31["tool_calls"], e31["issues_by_kind"]) == (2, 1, {})
    assert e31["tokens"] == {"input_uncached": 1676, "cache_read": 1024, "cache_write_5m": None,
                             "cache_write_1h": None, "output": 120, "reasoning": 40}  # fmt: skip
    assert (e33["agent"], e33["human_prompts"], e33["model_calls"], e33["issues_by_kind"]) == ("gemini", 1, 1, {})
    assert e33["tokens"] == {"input_uncached": 7173, "cache_read": 0, "cache_write_5m": None,
                             "cache_write_1h": None, "output": 18, "reasoning": 17}  # fmt: skip
    assert (e35["agent"], e35["sessions"], e35["subagent_sessions"], e35["human_prompts"]) == ("opencode", 1, 1, 0)
    assert e35["messages_by_class"] == {"subagent_brief": 1, "assistant_text": 1}
    assert (e35["tokens"]["input_uncached"], e35["tokens"]["output"]) == (900, 60)


# ---------------------------------------------------------------- E33 legacy single object


def _e33_summary(folded: dict) -> tuple:
    msgs = rows_of(folded, MessageRow)
    return (
        [m.text for m in msgs if m.message_class in classes.PROMPTS],
        [m.text for m in msgs if m.message_class == classes.ASSISTANT_TEXT],
        [(m.record_type, m.text) for m in msgs if m.role == "system"],
        [(c.input_uncached, c.cache_read, c.output, c.reasoning) for c in rows_of(folded, ModelCallRow)],
        rows_of(folded, ParseIssueRow),
    )


def test_e33_both_files_give_one_prompt_one_reply_one_info_and_one_error_notice(field_dir):
    expected = (
        ["What is 2+2?"],
        ["4"],
        [("info", "Request cancelled."), ("error", "[API Error: quota exceeded, retry later]")],
        # raw input 7173 (cached 0), output 1, thoughts 17: total 7191 = 7173 + 18
        [(7173, 0, 18, 17)],
        [],
    )
    assert _e33_summary(parse_file(GeminiParser, field_dir / "E33.jsonl")) == expected
    # the pretty-printed companion is one JSON document, not invalid JSONL lines
    (companion,) = (field_dir / "E33.extra").iterdir()
    assert companion.name == "session-2025-09-30T14-11-gemsess0.json"
    assert _e33_summary(_document(GeminiDocumentParser, companion)) == expected


# ---------------------------------------------------------------- E35 OpenCode child session


def test_e35_child_session_has_no_prompt_and_its_usage(field_dir):
    folded = _document(OpencodeDocumentParser, field_dir / "E35.jsonl")
    (s,) = rows_of(folded, SessionRow)
    assert (s.session_uid, s.is_subagent, s.parent_session_uid) == (
        "ses_0035childsession0000", True, "ses_0035parentsession000",
    )  # fmt: skip
    msgs = [(m.role, m.message_class) for m in rows_of(folded, MessageRow)]
    assert msgs == [("user", classes.SUBAGENT_BRIEF), ("assistant", classes.ASSISTANT_TEXT)]  # prompts 0
    (c,) = rows_of(folded, ModelCallRow)
    assert (c.input_uncached, c.output, c.recorded_cost_usd) == (900, 60, 0.0011)


def test_e35_a_child_session_s_user_text_read_from_opencode_db_is_a_brief(field_dir):
    doc = json.loads((field_dir / "E35.jsonl").read_text())
    user = doc["messages"][0]
    (part,) = user["parts"]
    record = {"id": part["id"], "session_id": part["sessionID"], "message_id": part["messageID"], "_role": "user",
              "data": json.dumps({"type": "text", "text": part["text"]})}  # fmt: skip
    parser = OpencodeDbParser(ParseContext("/x/opencode.db"))
    child = [r for r in parser.rows("part", {**record, "_session_parent": "ses_0035parentsession000"}, Pos(0, 0, 1))
             if isinstance(r, MessageRow)]  # fmt: skip
    top = [
        r for r in parser.rows("part", {**record, "_session_parent": None}, Pos(0, 0, 1)) if isinstance(r, MessageRow)
    ]
    assert [m.message_class for m in child] == [classes.SUBAGENT_BRIEF]
    assert [m.message_class for m in top] == [classes.HUMAN_PROMPT]
