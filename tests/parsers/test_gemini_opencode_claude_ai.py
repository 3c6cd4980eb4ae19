"""Gemini CLI, OpenCode and claude.ai export parsers over every sample (pure, no database).

Expected values are counted here from the sample JSON with `json` (independently of the parsers),
and the token totals are also written out as read off the samples.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agent_history.model import classes
from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow, ModelCallRow, ParseIssueRow, RecordTypeRow, SessionRow, ToolCallRow
from agent_history.parsers import AGENTS, source_parser
from agent_history.parsers.base import ParseContext
from agent_history.parsers.claude_ai.parser import ClaudeAiExportParser
from agent_history.parsers.common.lines import iter_records
from agent_history.parsers.gemini.parser import GeminiDocumentParser, GeminiParser, parse_jsonl
from agent_history.parsers.opencode.parser import OpencodeDocumentParser
from tests.new_formats_home import CLAUDE_AI, GEMINI, OPENCODE, OPENCODE_EXPORT, opencode_storage_files


def _fold(rows):
    return {t.__name__: list(v.values()) for t, v in fold(list(rows)).items()}


def _gemini_rows(path):
    ctx = ParseContext(str(path), "gemini-local")
    data = path.read_bytes()
    return parse_jsonl(ctx, data) if path.suffix == ".jsonl" else list(GeminiDocumentParser(ctx).parse(data))


def _gemini_expected(path) -> dict:
    """Counts from the raw JSON: messages of a document, or of the JSONL message lines."""
    if path.suffix == ".jsonl":
        recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        msgs = [m for r in recs for m in (r["messages"] if "messages" in r else [r]) if "type" in m]
    else:
        msgs = json.loads(path.read_text())["messages"]

    def text(m):
        c = m.get("content", m.get("parts"))
        if isinstance(c, list):
            return "".join(p.get("text", "") for p in c)
        return c or ""

    answers = [m for m in msgs if m["type"] in ("gemini", "model")]
    return {
        "prompts": sum(1 for m in msgs if m["type"] == "user" and text(m)),
        # a reply with text, or one that only calls tools (content "": field case E31)
        "assistant": sum(1 for m in answers if text(m) or (m.get("toolCalls") and m.get("content") is not None)),
        "reasoning": sum(len(m.get("thoughts") or []) for m in answers),
        "tool_calls": sum(len(m.get("toolCalls") or []) for m in answers),
        "model_calls": len(answers),
        "total": sum(m["tokens"]["total"] for m in answers if "tokens" in m)
        if any("tokens" in m for m in answers)
        else None,
    }


def test_every_agent_is_registered():
    assert {"gemini", "opencode", "claude-ai"} <= set(AGENTS)
    assert source_parser("opencode", "database").__name__ == "OpencodeDbParser"
    assert source_parser("gemini", "document") is GeminiDocumentParser
    with pytest.raises(KeyError):
        source_parser("claude-ai", "database")


@pytest.mark.parametrize("path", sorted(GEMINI.iterdir()), ids=lambda p: p.name[:40])
def test_gemini_sample_counts(path):
    rows = _gemini_rows(path)
    f = _fold(rows)
    assert not [r for r in rows if isinstance(r, ParseIssueRow)]
    assert all(r.known for r in f["RecordTypeRow"])
    exp = _gemini_expected(path)
    msgs = f.get("MessageRow", [])
    by_class = lambda c: sum(1 for m in msgs if m.message_class == c)  # noqa: E731
    assert len(f["SessionRow"]) == 1
    assert by_class(classes.HUMAN_PROMPT) == exp["prompts"]
    assert by_class(classes.ASSISTANT_TEXT) == exp["assistant"]
    assert by_class(classes.REASONING) == exp["reasoning"]
    assert len(f.get("ToolCallRow", [])) == exp["tool_calls"]
    calls = f.get("ModelCallRow", [])
    assert len(calls) == exp["model_calls"]
    with_tokens = [c for c in calls if c.input_uncached is not None]
    total = sum(c.input_uncached + (c.cache_read or 0) + (c.output or 0) for c in with_tokens) if with_tokens else None
    assert total == exp["total"]  # disjoint buckets add up to Gemini's own `total`


def test_gemini_jsonl_v040_exact_values():
    path = GEMINI / "agent-sessions__Resources__Fixtures__stage0__agents__gemini__jsonl_v040.jsonl"
    f = _fold(_gemini_rows(path))
    (s,) = f["SessionRow"]
    assert s.session_uid == "gemini_stage0_jsonl" and s.model == "gemini-3-flash-preview" and s.cwd is None
    assert s.started_at == datetime(2026, 4, 29, 21, 39, 22, 319000, tzinfo=UTC)
    assert s.ended_at == datetime(2026, 4, 29, 21, 39, 33, 156000, tzinfo=UTC)  # from the $set line
    calls = sorted(f["ModelCallRow"], key=lambda c: c.call_uid)
    # tokens: input 11855/12069, cached 0/11502, output 81/147, thoughts 0/0, tool 0/0
    assert [(c.input_uncached, c.cache_read, c.output, c.reasoning) for c in calls] == [
        (11855, 0, 81, 0),
        (567, 11502, 147, 0),
    ]
    (tool,) = f["ToolCallRow"]
    assert (tool.tool_call_uid, tool.name, tool.outcome) == (
        "gemini_stage0_jsonl/run_shell_command_stage0",
        "run_shell_command",
        "ok",
    )
    assert tool.output == "Output: AgentSessions/\nREADME.md\nProcess Group PGID: 12345"
    seen: dict = {}
    for r in f["RecordTypeRow"]:
        seen[(r.record_type, r.subtype)] = seen.get((r.record_type, r.subtype), 0) + r.count
    assert seen == {("header", ""): 1, ("message", "user"): 1, ("$set", ""): 1, ("message", "gemini"): 2}


def test_gemini_set_line_applied_not_a_message():
    path = GEMINI / "agent-sessions__Resources__Fixtures__stage0__agents__gemini__jsonl_v040.jsonl"
    lines = path.read_bytes().split(b"\n")
    only = b"\n".join([lines[0], lines[2]]) + b"\n"  # header + {"$set": {"lastUpdated": …}}
    f = _fold(parse_jsonl(ParseContext(str(path)), only))
    assert "MessageRow" not in f
    assert f["SessionRow"][0].ended_at == datetime(2026, 4, 29, 21, 39, 33, 156000, tzinfo=UTC)


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_gemini_jsonl_batch_and_resume_independent(batch):
    path = GEMINI / "agent-sessions__Resources__Fixtures__stage0__agents__gemini__jsonl_v040.jsonl"
    data = path.read_bytes()
    ctx = ParseContext(str(path))
    whole = fold(parse_jsonl(ctx, data))
    records = list(iter_records(data))
    rows, state = [], None
    for i in range(0, len(records), batch):
        p = GeminiParser(ctx, json.loads(json.dumps(state)) if state is not None else None)
        for pos, objs, issues in records[i : i + batch]:
            rows += issues
            for obj in objs:
                rows += p.feed(obj, pos)
        rows += p.flush()
        state = p.state()
    assert fold(rows) == whole


def test_gemini_large_shell_exit_codes_and_cancel_notice():
    f = _fold(_gemini_rows(GEMINI / "agent-sessions__Resources__Fixtures__stage0__agents__gemini__large.json"))
    tools = {t.tool_call_uid.split("/")[-1]: t for t in f["ToolCallRow"]}
    assert (tools["run_shell_command-1"].exit_code, tools["run_shell_command-1"].outcome) == (0, "ok")
    assert (tools["run_shell_command-2"].exit_code, tools["run_shell_command-2"].outcome) == (1, "error")
    notice = [m for m in f["MessageRow"] if m.text == "Request cancelled."]
    assert [m.message_class for m in notice] == [classes.INTERRUPT_MARKER]


# -- OpenCode ---------------------------------------------------------------------------------


def test_opencode_export_one_step_messages_keep_their_usage():
    doc = json.loads(OPENCODE_EXPORT.read_text())
    rows = list(OpencodeDocumentParser(ParseContext(str(OPENCODE_EXPORT))).parse(OPENCODE_EXPORT.read_bytes()))
    assert not [r for r in rows if isinstance(r, ParseIssueRow)]
    f = _fold(rows)
    assert all(r.known for r in f["RecordTypeRow"])
    assistants = [m["info"] for m in doc["messages"] if m["info"]["role"] == "assistant"]
    calls = f["ModelCallRow"]
    assert len(calls) == len(assistants) == 3
    for bucket, get in (
        ("input_uncached", lambda t: t["input"]),
        ("output", lambda t: t["output"]),
        ("cache_read", lambda t: t["cache"]["read"]),
        ("cache_write_5m", lambda t: t["cache"]["write"]),
    ):
        assert sum(getattr(c, bucket) for c in calls) == sum(get(a["tokens"]) for a in assistants)
    # read off the sample: totals 12751 + 13362 + 13408 (one step per message: its step-finish
    # equals the message; counted once, multi-step messages in tests/test_field_opencode.py)
    assert sum(c.input_uncached + c.output + c.cache_read + c.cache_write_5m for c in calls) == 39521
    assert sum(c.recorded_cost_usd for c in calls) == pytest.approx(0.0058191 + 0.0092262 + 0.00542535)
    assert sorted(c.duration_ms for c in calls) == sorted(
        a["time"]["completed"] - a["time"]["created"] for a in assistants
    )
    texts = [(p["text"], m["info"]["role"]) for m in doc["messages"] for p in m["parts"] if p["type"] == "text"]
    msgs = f["MessageRow"]
    assert (
        sum(1 for m in msgs if m.message_class == classes.HUMAN_PROMPT) == sum(1 for _, r in texts if r == "user") == 2
    )
    assert sum(1 for m in msgs if m.message_class == classes.ASSISTANT_TEXT) == sum(
        1 for _, r in texts if r == "assistant"
    )
    (tool,) = f["ToolCallRow"]
    assert (tool.tool_call_uid, tool.name, tool.outcome, tool.duration_ms) == (
        "toolu_vrtx_01PrRtDGucjM4xguyvMvLwx3",
        "glob",
        "ok",
        1,
    )
    (s,) = f["SessionRow"]
    assert (s.session_uid, s.cwd, s.model, s.cli_version) == (
        "ses_3848fca4affehAt47TRCjUOD3d",
        "/Users/user4/Documents/ai/opencode-memory",
        "claude-sonnet-4-6@default",
        "1.2.10",
    )


@pytest.mark.parametrize("sample,rel", opencode_storage_files(), ids=lambda x: str(x)[-40:])
def test_opencode_storage_file_parses(sample, rel):
    rows = list(OpencodeDocumentParser(ParseContext(f"/x/storage/{rel}")).parse(sample.read_bytes()))
    f = _fold(rows)
    assert all(r.known for r in f["RecordTypeRow"])
    issues = [r for r in rows if isinstance(r, ParseIssueRow)]
    doc = json.loads(sample.read_text())
    if rel.startswith("part/") and "sessionID" not in doc:
        # the legacy/cass part files name no session; without their message file beside them
        # (as the loader supplies) the part cannot be placed: recorded, not dropped silently
        assert [i.kind for i in issues] == ["bad_record"]
    else:
        assert issues == []


def test_opencode_storage_message_tokens_and_cost_shapes():
    def parse(name):
        p = OPENCODE / name
        return _fold(OpencodeDocumentParser(ParseContext(f"/x/storage/message/s/{p.name}")).parse(p.read_bytes()))

    (c,) = parse("iansherr-claude-code-log__test__fixtures__opencode__message__test-session__msg-002.json")[
        "ModelCallRow"
    ]
    # output 50 + reasoning 10: OpenCode's output excludes reasoning, ours includes it
    assert (c.input_uncached, c.output, c.reasoning, c.cache_read, c.cache_write_5m, c.recorded_cost_usd) == (
        100,
        60,
        10,
        0,
        0,
        0.01,
    )
    (c,) = parse(
        "agent-sessions__Resources__Fixtures__stage0__agents__opencode__storage_v2__message__s_stage0_large__msg_0002.json"
    )["ModelCallRow"]
    # cost is {input, output} here (no unit stated) → NULL, never a guess
    assert (c.input_uncached, c.output, c.cache_read, c.recorded_cost_usd, c.stop_reason) == (
        120,
        16,
        None,
        None,
        "stop",
    )


def test_opencode_part_uses_sidecar_message_for_role_and_session():
    part = OPENCODE / "cass__tests__fixtures__opencode_json__part__msg_test2__part1.json"
    msg = json.loads(
        (OPENCODE / "cass__tests__fixtures__opencode_json__message__ses_test1__msg_test2.json").read_text()
    )
    ctx = ParseContext("/x/storage/part/msg_test2/part1.json", sidecar=msg)
    (m,) = _fold(OpencodeDocumentParser(ctx).parse(part.read_bytes()))["MessageRow"]
    assert (m.session_uid, m.role, m.message_class, m.parent_uid) == (
        "ses_test1",
        "assistant",
        classes.ASSISTANT_TEXT,
        "msg_test2",
    )


# -- claude.ai ----------------------------------------------------------------------------------

ARTIFACT = CLAUDE_AI / "kenn-agentsview__internal__parser__testdata__claude-ai__artifact-detail.json"
POLYLOGUE = CLAUDE_AI / "polylogue__tests__fixtures__origin-capability__claude-ai-export.json"


def _claude_ai(data: bytes):
    rows = list(ClaudeAiExportParser(ParseContext("/x/conversations.json")).parse(data))
    return rows, _fold(rows)


def test_claude_ai_artifact_detail_exact():
    doc = json.loads(ARTIFACT.read_text())
    rows, f = _claude_ai(ARTIFACT.read_bytes())
    assert not [r for r in rows if isinstance(r, ParseIssueRow)]
    assert all(r.known for r in f["RecordTypeRow"])
    (s,) = f["SessionRow"]
    assert (s.session_uid, s.ai_title, s.model) == (doc["uuid"], "Tiny HTML hello page", "claude-opus-5-5")
    msgs = {m.message_uid: m for m in f["MessageRow"]}
    human = msgs["00000000-0000-4000-8000-000000000004"]
    assert human.message_class == classes.HUMAN_PROMPT and human.text == doc["chat_messages"][0]["content"][0]["text"]
    assert doc["chat_messages"][0]["text"] == ""  # the quirk: top-level text empty, content holds it
    answer = msgs["00000000-0000-4000-8000-000000000003"]
    assert answer.text.startswith('Your "Hello" page is published.') and answer.on_active_branch is True
    assert [m.text for m in msgs.values() if m.message_class == classes.REASONING] == [
        "Preparing a simple HTML page for publishing."
    ]
    blocks = doc["chat_messages"][1]["content"]
    uses = [b for b in blocks if b["type"] == "tool_use"]
    tools = {t.tool_call_uid: t for t in f["ToolCallRow"]}
    assert sorted(tools) == sorted(b["id"] for b in uses) == ["toolu_test0", "toolu_test1", "toolu_test2"]
    assert [tools[b["id"]].outcome for b in uses] == ["ok", "ok", "ok"]
    assert tools["toolu_test1"].output == "File created successfully: /mnt/user-data/outputs/hello.html"
    (call,) = f["ModelCallRow"]
    assert (call.input_uncached, call.output, call.stop_reason) == (None, None, "end_turn")  # no usage: NULL


def test_claude_ai_export_array_and_single_object():
    both = json.dumps([json.loads(ARTIFACT.read_text()), json.loads(POLYLOGUE.read_text())]).encode()
    _, f = _claude_ai(both)
    assert sorted(s.session_uid for s in f["SessionRow"]) == [
        "00000000-0000-4000-8000-000000000001",
        "origin-matrix-claude-ai",
    ]
    _, single = _claude_ai(POLYLOGUE.read_bytes())
    (m,) = single["MessageRow"]
    assert (m.text, m.message_class, m.on_active_branch) == ("Prove the parser claim.", classes.HUMAN_PROMPT, None)
    assert single["SessionRow"][0].ai_title == "Origin capability matrix"


def test_claude_ai_branch_off_the_leaf_is_not_active():
    doc = json.loads(ARTIFACT.read_text())
    retry = dict(doc["chat_messages"][1], uuid="00000000-0000-4000-8000-0000000000ff", index=2)
    retry["content"] = [{"type": "text", "text": "an abandoned retry"}]
    doc["chat_messages"].append(retry)  # same parent as the leaf, but not on the leaf's chain
    _, f = _claude_ai(json.dumps(doc).encode())
    active = {m.text: m.on_active_branch for m in f["MessageRow"] if m.message_class == classes.ASSISTANT_TEXT}
    assert active["an abandoned retry"] is False
    assert [v for k, v in active.items() if k != "an abandoned retry"] == [True]


def test_bad_documents_give_issues_not_exceptions():
    for cls in (GeminiDocumentParser, OpencodeDocumentParser, ClaudeAiExportParser):
        for data in (b"{not json", b"[1, 2]", b'"text"'):
            rows = list(cls(ParseContext("/x/storage/session/p/a.json")).parse(data))
            assert rows and all(isinstance(r, ParseIssueRow | RecordTypeRow | SessionRow) for r in rows), (cls, data)
            assert any(isinstance(r, ParseIssueRow) for r in rows)
    assert [MessageRow, ModelCallRow, ToolCallRow]  # imported row types used above


# -- detection and `agent-history parse` ----------------------------------------------------------


@pytest.mark.parametrize(
    "folder,agent",
    [(GEMINI, "gemini"), (OPENCODE, "opencode"), (CLAUDE_AI, "claude-ai")],
    ids=["gemini", "opencode", "claude-ai"],
)
def test_detect_agent_on_every_sample(folder, agent):
    from agent_history.parsers import detect_agent

    for p in folder.iterdir():
        assert detect_agent(str(p), p.read_bytes()[:65536]) == agent, p.name


def test_parse_file_reads_an_opencode_db_like_its_export(tmp_path):
    from agent_history.ingest.parse_files import parse_file
    from tests.new_formats_home import export_to_sqlite

    export_to_sqlite(json.loads(OPENCODE_EXPORT.read_text()), tmp_path / "opencode.db").close()
    from_db = parse_file(tmp_path / "opencode.db", "opencode")
    from_doc = parse_file(OPENCODE_EXPORT, "opencode")
    assert from_db.error is None and from_doc.error is None
    keep = ("sessions", "messages", "human_prompts", "model_calls", "tokens", "tool_calls")
    assert {k: from_db.summary[k] for k in keep} == {k: from_doc.summary[k] for k in keep}
    assert from_db.summary["model_calls"] == 3
    (tmp_path / "junk.db").write_bytes(b"not sqlite" * 50)
    assert parse_file(tmp_path / "junk.db", "opencode").summary["issues_by_kind"] == {"bad_database": 1}


def test_opencode_child_session_is_a_subagent():
    doc = json.loads(OPENCODE_EXPORT.read_text())
    doc["info"] = dict(doc["info"], id="ses_child", parentID="ses_3848fca4affehAt47TRCjUOD3d")
    (s,) = _fold(OpencodeDocumentParser(ParseContext("/x/export.json")).parse(json.dumps(doc["info"]).encode()))[
        "SessionRow"
    ]
    assert (s.session_uid, s.is_subagent, s.parent_session_uid) == ("ses_child", True, "ses_3848fca4affehAt47TRCjUOD3d")
    real = json.loads(OPENCODE_EXPORT.read_text())["info"]
    (top,) = _fold(OpencodeDocumentParser(ParseContext("/x/export.json")).parse(json.dumps(real).encode()))[
        "SessionRow"
    ]
    assert (top.is_subagent, top.parent_session_uid) == (False, None)


def test_documents_with_nul_or_bad_utf8_are_cleaned_and_flagged():
    doc = json.loads((GEMINI / "agent-sessions__Resources__Fixtures__stage0__agents__gemini__small.json").read_text())
    doc["messages"][0]["content"] = "Hel\u0000lo"
    data = json.dumps(doc).encode().replace(b"Hi!", b"Hi\xff!")
    rows = list(GeminiDocumentParser(ParseContext("/x/session-1.json")).parse(data))
    assert sorted(r.kind for r in rows if isinstance(r, ParseIssueRow)) == ["invalid_utf8", "invalid_utf8"]
    texts = sorted(m.text for m in _fold(rows)["MessageRow"])
    assert texts == ["Hel\ufffdlo", "Hi\ufffd!", "Short reasoning placeholder."]
