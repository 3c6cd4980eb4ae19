"""Issue 16 parsers on the corpus samples: Cursor, Copilot CLI, VS Code Copilot, memories.

Expected values were read off the sample files by hand (``../shared/corpus/samples/<format>``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_history.model import classes
from agent_history.model.merge import fold
from agent_history.model.rows import (
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
)
from agent_history.parsers import detect_agent, document_parser_class, parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.copilot.events import CopilotEventsParser
from agent_history.parsers.copilot.legacy import LegacySessionParser
from agent_history.parsers.copilot_vscode.agent_log import VSCodeAgentLogParser
from agent_history.parsers.copilot_vscode.chat_sessions import ChatSessionsParser
from agent_history.parsers.cursor.parser import CursorParser, unwrap_user_query
from agent_history.parsers.memory.parser import is_instruction_file
from tests.parsers.util import parse_file, parse_in_batches, parse_resumed, rows_of

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "samples"
if not SAMPLES.is_dir():  # worktrees live at /work/wt/<name>; the shared dir is /work/shared
    SAMPLES = Path("/work/shared/corpus/samples")


def _sample(fmt: str, name: str) -> Path:
    path = SAMPLES / fmt / name
    if not path.is_file():
        pytest.skip(f"sample {path} missing")
    return path


def summary(folded: dict) -> dict:
    """Per-file counts: sessions, prompts, assistant texts, tool calls, model calls, token sums."""
    msgs = rows_of(folded, MessageRow)
    calls = rows_of(folded, ModelCallRow)

    def total(field: str):
        values = [getattr(c, field) for c in calls if getattr(c, field) is not None]
        return sum(values) if values else None

    return {
        "sessions": len(rows_of(folded, SessionRow)),
        "prompts": sum(m.message_class == classes.HUMAN_PROMPT for m in msgs),
        "assistant": sum(m.message_class == classes.ASSISTANT_TEXT for m in msgs),
        "tools": len(rows_of(folded, ToolCallRow)),
        "calls": len(calls),
        "input": total("input_uncached"),
        "output": total("output"),
        "cache_read": total("cache_read"),
    }


def unknown_types(folded: dict) -> list[str]:
    return [r.record_type for r in rows_of(folded, RecordTypeRow) if not r.known]


def issues(folded: dict) -> list[tuple[str, int | None]]:
    return [(i.kind, i.line_number) for i in rows_of(folded, ParseIssueRow)]


# -- Cursor ------------------------------------------------------------------------------------
NO_TOKENS = {"calls": 0, "input": None, "output": None, "cache_read": None}
CURSOR = {
    "agent-sessions__AgentSessionsTests__Fixtures__Cursor__test-session.jsonl": dict(
        sessions=1, prompts=2, assistant=4, tools=2, **NO_TOKENS
    ),
    "agent-sessions__Resources__Fixtures__stage0__agents__cursor__large.jsonl": dict(
        sessions=1, prompts=3, assistant=4, tools=2, **NO_TOKENS
    ),
    "agent-sessions__Resources__Fixtures__stage0__agents__cursor__small.jsonl": dict(
        sessions=1, prompts=2, assistant=2, tools=1, **NO_TOKENS
    ),
    "agent-sessions__Resources__Fixtures__stage0__agents__cursor__subagent__parent.jsonl": dict(
        sessions=1, prompts=1, assistant=1, tools=1, **NO_TOKENS
    ),
    # at its flat sample path this is a main session (under `subagents/` its user line is the
    # parent's brief: test_cursor_subagent_thread_and_spawn_come_from_the_layout)
    "agent-sessions__Resources__Fixtures__stage0__agents__cursor__subagent__subagents__child.jsonl": dict(
        sessions=1, prompts=1, assistant=1, tools=0, **NO_TOKENS
    ),
    "claude-mem__tests__fixtures__cursor-session.jsonl": dict(sessions=1, prompts=2, assistant=2, tools=1, **NO_TOKENS),
    "code-session-memory__tests__fixtures__cursor-transcript.jsonl": dict(
        sessions=1, prompts=2, assistant=3, tools=0, **NO_TOKENS
    ),
}
# Not agent-transcripts JSONL, so not parsed by the Cursor transcript parser (FORMATS §6):
# `cass__…headers_only_workspace_project_dir.json` is a test harness's export of state.vscdb
# rows (used below for the state.vscdb sidecar), `code-session-memory__…cursor-session.json` is
# Cursor data converted by another tool into an OpenCode-like shape.


@pytest.mark.parametrize("name", sorted(CURSOR))
def test_cursor_sample_counts_and_no_unknown_types(name):
    folded = parse_file(CursorParser, _sample("cursor", name))
    assert summary(folded) == CURSOR[name]
    assert unknown_types(folded) == [] and issues(folded) == []


@pytest.mark.parametrize("name", sorted(CURSOR))
def test_cursor_sample_batch_and_resume_independent(name):
    path = _sample("cursor", name)
    ctx = ParseContext(path=str(path), namespace="test")
    whole = parse_file(CursorParser, path)
    data = path.read_bytes()
    for batch in (1, 2, 3):
        assert parse_in_batches(CursorParser, data, batch, ctx) == whole
    assert parse_resumed(CursorParser, data, [2, 5], ctx) == whole


def test_cursor_user_query_unwrapped_and_results_paired_in_order():
    folded = parse_file(
        CursorParser, _sample("cursor", "code-session-memory__tests__fixtures__cursor-transcript.jsonl")
    )
    prompts = [m.text for m in rows_of(folded, MessageRow) if m.message_class == classes.HUMAN_PROMPT]
    assert prompts == ["Read a file", "Read another one"]
    assert all(m.ts is None for m in rows_of(folded, MessageRow))  # no timestamps in the format
    large = parse_file(
        CursorParser, _sample("cursor", "agent-sessions__Resources__Fixtures__stage0__agents__cursor__large.jsonl")
    )
    tools = rows_of(large, ToolCallRow)
    assert [(t.name, json.loads(t.input), t.output) for t in tools] == [
        ("Bash", {"command": "ls -la"}, "file1.txt\nfile2.txt"),
        ("Read", {"file_path": "file1.txt"}, "hello world"),
    ]
    assert [m.text for m in rows_of(large, MessageRow) if m.message_class == classes.REASONING] == [
        "Let me check the directory."
    ]
    assert unwrap_user_query("<user_query>\n\nRead a file\n</user_query>") == "Read a file"


def test_cursor_subagent_thread_and_spawn_come_from_the_layout(tmp_path):
    parent = _sample("cursor", "agent-sessions__Resources__Fixtures__stage0__agents__cursor__subagent__parent.jsonl")
    child = _sample(
        "cursor", "agent-sessions__Resources__Fixtures__stage0__agents__cursor__subagent__subagents__child.jsonl"
    )
    base = "/h/.cursor/projects/p/agent-transcripts/c0ffee"
    p = parse_file(CursorParser, parent, f"{base}/c0ffee.jsonl")
    c = parse_file(CursorParser, child, f"{base}/subagents/kid.jsonl")
    assert [(s.session_uid, s.agent_id, s.is_subagent) for s in rows_of(p, SessionRow)] == [("c0ffee", "", False)]
    assert [(s.session_uid, s.agent_id, s.is_subagent, s.parent_session_uid) for s in rows_of(c, SessionRow)] == [
        ("c0ffee", "kid", True, "c0ffee")
    ]
    assert [sp.brief for sp in rows_of(p, SubagentSpawnRow)] == ["List files"]
    assert [m.message_class for m in rows_of(c, MessageRow)] == [classes.SUBAGENT_BRIEF, classes.ASSISTANT_TEXT]
    assert not set(p[MessageRow]) & set(c[MessageRow])  # same session uid, distinct line keys


def test_cursor_title_and_model_come_from_the_sidecar():
    path = _sample("cursor", "claude-mem__tests__fixtures__cursor-session.jsonl")
    from agent_history.parsers.driver import parse_bytes

    ctx = ParseContext(path=str(path), sidecar={"title": "Cursor Headers Fixture", "model": "claude-3.5-sonnet"})
    (session,) = rows_of(fold(parse_bytes(CursorParser, ctx, path.read_bytes())), SessionRow)
    assert (session.ai_title, session.model) == ("Cursor Headers Fixture", "claude-3.5-sonnet")


# -- Copilot CLI --------------------------------------------------------------------------------
COPILOT = {
    # main thread + the sub-agent thread of parentToolCallId; 5 assistant.message lines with
    # outputTokens (12, 3, 0, 0, 0) + the shutdown (input 100, output 15 of which 15 already
    # counted, cache_read 5). Tool calls: `call-1` and every redacted "[trimmed for fixture]" id,
    # which are identical, so they merge into one call (the redaction, not the format).
    "agent-sessions__Resources__Fixtures__stage0__agents__copilot__small.jsonl": dict(
        sessions=2, prompts=2, assistant=5, tools=2, calls=6, input=100, output=15, cache_read=5
    ),
    # msg-0001 has empty content and one tool request; outputTokens 12 + 14
    "agent-sessions__Resources__Fixtures__stage0__agents__copilot__subdir_v1__aaaabbbb-1111-2222-3333-ccccddddeeee__events.jsonl": dict(
        sessions=1, prompts=1, assistant=1, tools=1, calls=2, input=None, output=26, cache_read=None
    ),
    "cass__tests__fixtures__copilot__cli_prompt_output_unicode.events.jsonl": dict(
        sessions=1, prompts=1, assistant=1, tools=0, **NO_TOKENS
    ),
    "cass__tests__fixtures__copilot__cli_truncated_resume.events.jsonl": dict(
        sessions=1, prompts=1, assistant=1, tools=0, **NO_TOKENS
    ),
}


@pytest.mark.parametrize("name", sorted(COPILOT))
def test_copilot_sample_counts_and_no_unknown_types(name):
    folded = parse_file(CopilotEventsParser, _sample("copilot-cli", name))
    assert summary(folded) == COPILOT[name]
    assert unknown_types(folded) == []
    expected = [("invalid_json", 2)] if "truncated" in name else []  # line 2 is cut mid-object
    if name.endswith("copilot__small.jsonl"):  # lines 17–32: "timestamp": "[trimmed for fixture]"
        expected = [("bad_value", line) for line in range(17, 33)]
    assert issues(folded) == expected


@pytest.mark.parametrize("name", sorted(COPILOT))
def test_copilot_sample_batch_and_resume_independent(name):
    path = _sample("copilot-cli", name)
    ctx = ParseContext(path=str(path), namespace="test")
    whole = parse_file(CopilotEventsParser, path)
    data = path.read_bytes()
    for batch in (1, 2, 7):
        assert parse_in_batches(CopilotEventsParser, data, batch, ctx) == whole
    assert parse_resumed(CopilotEventsParser, data, [1, 16, 17], ctx) == whole


def test_copilot_session_facts_from_the_real_redacted_sample():
    folded = parse_file(
        CopilotEventsParser,
        _sample("copilot-cli", "agent-sessions__Resources__Fixtures__stage0__agents__copilot__small.jsonl"),
    )
    main = next(s for s in rows_of(folded, SessionRow) if s.agent_id == "")
    assert (main.session_uid, main.cwd, main.cli_version, main.first_prompt) == (
        "copilot_stage0_small",
        "/tmp/repo",
        "1.0.77",
        "List the files",
    )
    call1 = next(t for t in rows_of(folded, ToolCallRow) if t.tool_call_uid == "copilot_stage0_small:call-1")
    assert (call1.name, json.loads(call1.input), call1.output, call1.outcome, call1.duration_ms) == (
        "shell",
        {"command": "ls"},
        "a.txt\nb.txt\n",
        "ok",
        4,
    )
    (spawn,) = rows_of(folded, SubagentSpawnRow)
    assert (spawn.child_session_uid, spawn.child_agent_id) == ("copilot_stage0_small", "[trimmed for fixture]")
    shutdown = next(c for c in rows_of(folded, ModelCallRow) if c.request_id == "session.shutdown")
    assert (shutdown.input_uncached, shutdown.output, shutdown.cache_read, shutdown.cache_write_5m) == (100, 0, 5, 0)
    assert (shutdown.duration_ms, shutdown.duration_basis) == (5000, "recorded")


def _events(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_copilot_two_shutdowns_are_two_runs_and_never_double_count():
    def ev(i, type_, **data):
        return {"type": type_, "data": data, "id": f"e{i}", "timestamp": f"2026-01-01T00:00:{i:02d}Z"}

    data = _events(
        ev(1, "session.start", sessionId="s1", context={"cwd": "/r"}),
        ev(2, "user.message", content="one", interactionId="i1"),
        ev(3, "assistant.message", messageId="m1", content="a", outputTokens=10),
        ev(4, "session.shutdown", tokenDetails={"input": {"tokenCount": 50}, "output": {"tokenCount": 10}}),
        ev(5, "session.resume", context={"cwd": "/r"}),
        ev(6, "user.message", content="two", interactionId="i2"),
        ev(7, "assistant.message", messageId="m2", content="b", outputTokens=7),
        ev(8, "session.shutdown", tokenDetails={"input": {"tokenCount": 30}, "output": {"tokenCount": 9}}),
    )
    ctx = ParseContext(path="/h/.copilot/session-state/s1/events.jsonl")
    from agent_history.parsers.driver import parse_bytes

    folded = fold(parse_bytes(CopilotEventsParser, ctx, data))
    assert summary(folded) | {"calls": None} == dict(
        sessions=1, prompts=2, assistant=2, tools=0, calls=None, input=80, output=19, cache_read=None
    )
    for cuts in ([3], [4], [5, 7]):
        assert parse_resumed(CopilotEventsParser, data, cuts, ctx) == folded


def test_copilot_legacy_document():
    doc = {
        "sessionId": "legacy-1",
        "startTime": "2025-09-01T10:00:00.000Z",
        "chatMessages": [
            {"role": "system", "content": "You are Copilot."},
            {"role": "user", "content": "list files"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "tc1", "type": "function", "function": {"name": "bash", "arguments": '{"command":"ls"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "tc1", "content": "a\nb"},
            {"role": "assistant", "content": "Two files."},
        ],
        "timeline": [
            {"id": "t1", "timestamp": "2025-09-01T10:00:01.000Z", "type": "user", "text": "list files"},
            {"id": "t2", "timestamp": "2025-09-01T10:00:05.000Z", "type": "copilot", "text": "Two files."},
        ],
    }
    parser = LegacySessionParser(ParseContext(path="/h/.copilot/history-session-state/legacy-1.json"))
    folded = fold(parser.parse(json.dumps(doc).encode()))
    assert summary(folded) == dict(sessions=1, prompts=1, assistant=1, tools=1, **NO_TOKENS)
    (tool,) = rows_of(folded, ToolCallRow)
    assert (tool.tool_call_uid, tool.name, tool.input, tool.output) == (
        "legacy-1:tc1",
        "bash",
        '{"command":"ls"}',
        "a\nb",
    )
    (session,) = rows_of(folded, SessionRow)
    assert (session.started_at.isoformat(), session.ended_at.isoformat()) == (
        "2025-09-01T10:00:00+00:00",
        "2025-09-01T10:00:05+00:00",
    )
    assert unknown_types(folded) == []
    assert issues(fold(parser.parse(b"{not json"))) == [("invalid_json", 1)]


# -- VS Code Copilot Chat -----------------------------------------------------------------------
VSCODE_DOCS = {
    # no token counts in this one: no model calls, tokens NULL
    "copilot-token-usage__test-data__chatSessions__sample-session-2.json": dict(
        sessions=1, prompts=3, assistant=3, tools=0, **NO_TOKENS
    ),
    # promptTokens 42+58+47+35+44, outputTokens 312+428+356+389+498
    "copilot-token-usage__vscode-extension__test__fixtures__sample-session-data__chatSessions__session-01-today.json": dict(
        sessions=1, prompts=5, assistant=5, tools=0, calls=5, input=226, output=1983, cache_read=None
    ),
}


@pytest.mark.parametrize("name", sorted(VSCODE_DOCS))
def test_vscode_chat_session_counts(name):
    path = _sample("vscode-copilot", name)
    folded = fold(ChatSessionsParser(ParseContext(path=str(path))).parse(path.read_bytes()))
    assert summary(folded) == VSCODE_DOCS[name]
    assert unknown_types(folded) == [] and issues(folded) == []


def test_vscode_chat_session_facts():
    path = _sample("vscode-copilot", "copilot-token-usage__test-data__chatSessions__sample-session-2.json")
    folded = fold(ChatSessionsParser(ParseContext(path=str(path))).parse(path.read_bytes()))
    (s,) = rows_of(folded, SessionRow)
    assert (s.session_uid, s.started_at.isoformat(), s.ended_at.isoformat(), s.model) == (
        "test-session-002",
        "2024-01-20T08:00:00+00:00",
        "2024-01-20T09:00:00+00:00",
        "gpt-4o-2024-11-20",
    )
    # markdownContent text sits in `value` here and in `content.value` in the other sample
    answers = [m.text for m in rows_of(folded, MessageRow) if m.role == "assistant"]
    assert answers[0].startswith("Here's a Python function to calculate Fibonacci numbers:")
    # the other sample has no sessionId: the file name is the session
    other = _sample(
        "vscode-copilot",
        "copilot-token-usage__vscode-extension__test__fixtures__sample-session-data__chatSessions__session-01-today.json",
    )
    folded = fold(
        ChatSessionsParser(ParseContext(path="/u/workspaceStorage/h/chatSessions/today.json")).parse(other.read_bytes())
    )
    assert {s.session_uid for s in rows_of(folded, SessionRow)} == {"today"}
    assert [c.model for c in rows_of(folded, ModelCallRow)] == [
        "claude-sonnet-4.5",
        "gpt-4o",
        "claude-sonnet-4.5",
        "o3-mini",
        "gpt-4o",
    ]


def test_vscode_chat_session_edit_gives_exactly_the_new_content():
    path = _sample("vscode-copilot", "copilot-token-usage__test-data__chatSessions__sample-session-2.json")
    doc = json.loads(path.read_text())
    parser = ChatSessionsParser(ParseContext(path=str(path)))
    doc["requests"] = doc["requests"][1:]  # one request removed…
    doc["requests"].append(
        {
            "requestId": "req-new",
            "message": {"text": "and now?"},
            "response": [{"kind": "markdownContent", "value": "Done."}],
        }
    )
    folded = fold(parser.parse(json.dumps(doc).encode()))
    prompts = [m.text for m in rows_of(folded, MessageRow) if m.message_class == classes.HUMAN_PROMPT]
    assert prompts == [
        "Add memoization to optimize the recursive version",
        "Add unit tests for the fibonacci function",
        "and now?",
    ]


def test_vscode_agent_log_counts_and_batches():
    path = _sample("vscode-copilot", "code-session-memory__tests__fixtures__vscode-session.jsonl")
    folded = parse_file(VSCodeAgentLogParser, path)
    assert summary(folded) == dict(sessions=1, prompts=2, assistant=2, tools=2, **NO_TOKENS)
    assert unknown_types(folded) == [] and issues(folded) == []
    tools = rows_of(folded, ToolCallRow)
    assert [(t.name, t.output, t.outcome) for t in tools] == [
        ("readFile", '{ "name": "my-project", "version": "1.0.0" }', "ok"),
        ("editFiles", "File edited successfully", "ok"),
    ]
    assert {r.agent for r in rows_of(folded, SessionRow)} == {"copilot-vscode"}
    ctx = ParseContext(path=str(path), namespace="test")
    for batch in (1, 3):
        assert parse_in_batches(VSCodeAgentLogParser, path.read_bytes(), batch, ctx) == folded


def test_detect_and_registry_know_the_new_agents():
    assert (
        detect_agent("x.jsonl", _sample("cursor", "claude-mem__tests__fixtures__cursor-session.jsonl").read_bytes())
        == "cursor"
    )
    small = _sample("copilot-cli", "agent-sessions__Resources__Fixtures__stage0__agents__copilot__small.jsonl")
    assert detect_agent("x.jsonl", small.read_bytes()) == "copilot"
    vs = _sample("vscode-copilot", "code-session-memory__tests__fixtures__vscode-session.jsonl")
    assert detect_agent("x.jsonl", vs.read_bytes()) == "copilot-vscode"
    assert parser_class("copilot-vscode") is VSCodeAgentLogParser
    assert document_parser_class("copilot-vscode-chat", "copilot-vscode") is ChatSessionsParser
    assert document_parser_class("memory", "codex").AGENT == "codex"


# -- Markdown memories --------------------------------------------------------------------------
MEMORY = b"""---
title: Release checklist
project_path: /srv/app
session_id: 0199a-session
date: 2026-03-04
tags: [release, ci]
---

# Release

Bump the version, tag, push; CI publishes.
"""


def test_memory_frontmatter_kept():
    parser = document_parser_class("memory", "codex")(
        ParseContext(path="/h/.codex/memories/release.md", home="/h/.codex")
    )
    folded = fold(parser.parse(MEMORY))
    (session,) = rows_of(folded, SessionRow)
    (msg,) = rows_of(folded, MessageRow)
    assert (session.agent, session.session_uid, session.source_type, session.custom_title, session.cwd) == (
        "codex",
        "memory:memories/release.md",
        "memory",
        "Release checklist",
        "/srv/app",
    )
    assert session.started_at.isoformat() == "2026-03-04T00:00:00+00:00"
    assert (msg.message_class, msg.text) == ("memory", "# Release\n\nBump the version, tag, push; CI publishes.")
    assert msg.attachments == [
        {
            "type": "frontmatter",
            "title": "Release checklist",
            "project_path": "/srv/app",
            "session_id": "0199a-session",
            "date": "2026-03-04",
            "tags": ["release", "ci"],
        }
    ]


def test_memory_without_frontmatter_and_with_broken_frontmatter():
    parser = document_parser_class("memory", "claude")(ParseContext(path="/p/memory/MEMORY.md", home="/h"))
    folded = fold(parser.parse(b"# Project notes\n\n- uses uv\n"))
    (session,) = rows_of(folded, SessionRow)
    assert (session.agent, session.custom_title, session.cwd) == ("claude", "Project notes", None)
    assert rows_of(folded, MessageRow)[0].attachments is None
    broken = fold(parser.parse(b"---\ntitle: [unclosed\n---\nbody\n"))
    assert [k for k, _ in issues(broken)] == ["bad_record"]
    assert rows_of(broken, MessageRow)[0].text.endswith("body")  # nothing lost: the whole file is the body


@pytest.mark.parametrize(
    ("rel", "instruction"),
    [
        ("memories/AGENTS.md", True),
        ("projects/p/memory/CLAUDE.md", True),
        ("memories/rules/style.md", True),
        ("projects/p/memory/MEMORY.md", False),
        ("memories/2026/release.md", False),
    ],
)
def test_instruction_files_are_not_memories(rel, instruction):
    assert is_instruction_file(rel) is instruction
