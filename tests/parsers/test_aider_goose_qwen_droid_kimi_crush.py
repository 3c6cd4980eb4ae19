"""Aider, Goose, Qwen Code, Factory Droid, Kimi Code CLI and Crush parsers (pure, no database) over
every sample in fixtures/samples and a Crush database built from Crush's schema. Expected values
are counted here from the raw files, independently of the parsers; each format quirk of
FORMATS-NEW.md §4–§10 has a test."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from agent_history.ingest.databases import read_all
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
from agent_history.parsers import detect_agent, source_parser
from agent_history.parsers.aider import parser as aider
from agent_history.parsers.base import ParseContext
from agent_history.parsers.common.lines import iter_lines
from agent_history.parsers.driver import parse_bytes
from tests import repo_sample_homes_b as b
from tests import sample_databases as sdb
from tests.parsers.util import parse_in_batches, parse_resumed

QWEN_RUN = b.QWEN / "qwen_code.jsonl"
QWEN_TRIMMED = b.QWEN / "system_telemetry.jsonl"
KIMI_PATH = "/h/.kimi-code/sessions/wd_p_1/session_s1/agents/{agent}/wire.jsonl"
AIDER_FILES = {
    "quickdraw": b.AIDER / "quickdraw" / ".aider.chat.history.md",
    "part1": b.AIDER / "aider-repo" / "chat-history.part1.md",
    "part2": b.AIDER / "aider-repo" / "chat-history.part2.md",
    "simple-calculator": b.AIDER / "simple-calculator" / ".aider.chat.history.md",
}


def _f(rows) -> dict:
    return {t: list(v.values()) for t, v in fold(list(rows)).items()}


def _jsonl(agent: str, data: bytes, path: str) -> dict:
    return _f(parse_bytes(source_parser(agent, "jsonl"), ParseContext(path), data))


def _doc(agent: str, data: bytes, path: str) -> dict:
    return _f(source_parser(agent, "document")(ParseContext(path)).parse(data))


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _by(f: dict, mclass: str) -> list[MessageRow]:
    return [m for m in f.get(MessageRow, []) if m.message_class == mclass]


def _clean(f: dict) -> None:
    """No parse issue, and every record type seen is a known one."""
    assert f.get(ParseIssueRow, []) == []
    seen = f.get(RecordTypeRow, [])
    assert seen and all(r.known for r in seen), [r for r in seen if not r.known]


def _batch_independent(agent: str, data: bytes, path: str) -> None:
    """Batches of 1, 2, 3, 7 lines and resumption from a saved state give the whole-file rows."""
    cls = source_parser(agent, "jsonl")
    ctx = ParseContext(path=path, namespace="test")
    whole = fold(parse_bytes(cls, ctx, data))
    n = len(list(iter_lines(data)))
    for batch in (1, 2, 3, 7):
        assert parse_in_batches(cls, data, batch, ctx) == whole, f"batches of {batch}"
    for cuts in ([n // 3], [n // 2], [2 * n // 3], [1, n // 2, n - 1]):
        assert parse_resumed(cls, data, cuts, ctx) == whole, f"resumed at {cuts}"


# -- Qwen Code --------------------------------------------------------------------------------


def test_qwen_run_counts_tokens_and_tool_result_from_the_raw_file():
    recs = _records(QWEN_RUN)
    f = _jsonl("qwen-code", QWEN_RUN.read_bytes(), str(QWEN_RUN))
    _clean(f)
    assistants = [r for r in recs if r["type"] == "assistant"]
    calls = {c.call_uid: c for c in f[ModelCallRow]}
    assert set(calls) == {r["uuid"] for r in assistants}  # telemetry api_response lines add no call
    for r in assistants:
        u, c = r["usageMetadata"], calls[r["uuid"]]
        assert (c.input_uncached, c.cache_read, c.output, c.reasoning, c.cache_write_5m) == (
            u["promptTokenCount"] - u["cachedContentTokenCount"],
            u["cachedContentTokenCount"],
            u["candidatesTokenCount"],
            u["thoughtsTokenCount"],
            None,  # no cache-write bucket in Qwen's usage: NULL, never 0
        )
        assert (c.model, c.ts) == (r["model"], datetime.fromisoformat(r["timestamp"]))
    (prompt,) = _by(f, classes.HUMAN_PROMPT)
    assert prompt.text == recs[0]["message"]["parts"][0]["text"]
    assert [m.text for m in _by(f, classes.ASSISTANT_TEXT)] == [
        p["text"] for r in assistants for p in r["message"]["parts"] if "text" in p
    ]
    (call,) = f[ToolCallRow]
    result = next(r for r in recs if r["type"] == "tool_result")
    fc = assistants[0]["message"]["parts"][0]["functionCall"]
    assert (call.name, json.loads(call.input), call.output) == (
        fc["name"],
        fc["args"],
        result["toolCallResult"]["resultDisplay"],
    )
    # the structured errorType says more than the text: invalid_tool_params → validation_error
    assert (call.outcome, call.is_error, call.error_class) == ("error", True, "validation_error")
    (s,) = f[SessionRow]
    assert (s.session_uid, s.cwd, s.cli_version, s.model) == (
        recs[0]["sessionId"],
        recs[0]["cwd"],
        recs[0]["version"],
        assistants[-1]["model"],
    )
    _batch_independent("qwen-code", QWEN_RUN.read_bytes(), str(QWEN_RUN))


def test_qwen_trimmed_records_are_all_known_types():
    recs = _records(QWEN_TRIMMED)
    f = _jsonl("qwen-code", QWEN_TRIMMED.read_bytes(), str(QWEN_TRIMMED))
    # every record's timestamp is "[trimmed for fixture]": unknown, each with its bad_value issue
    detail = "read as unknown (NULL): str '[trimmed for fixture]' is not a timestamp"
    assert [(i.kind, i.line_number, i.detail) for i in f[ParseIssueRow]] == [
        ("bad_value", n, detail) for n in range(1, len(recs) + 1)
    ]
    _clean({**f, ParseIssueRow: []})
    seen = Counter()
    for r in f[RecordTypeRow]:
        seen[(r.record_type, r.subtype)] += r.count
    assert seen == Counter((r["type"], r.get("subtype", "")) for r in recs)
    assert f[SessionRow][0].git_branch == recs[0]["gitBranch"]


def _qwen(type_: str, **fields) -> dict:
    base = {"uuid": f"u-{type_}-{len(fields)}", "sessionId": "s1", "timestamp": "2026-06-15T14:40:22.832Z", "cwd": "/p"}
    return {**base, "type": type_, **fields}


def test_qwen_thoughts_are_inside_candidates_unless_the_telemetry_says_gemini():
    usage = {
        "promptTokenCount": 100,
        "candidatesTokenCount": 30,
        "thoughtsTokenCount": 12,
        "cachedContentTokenCount": 40,
    }
    reply = {"role": "model", "parts": [{"text": "thinking…", "thought": True}, {"text": "answer"}]}

    def run(auth: str | None) -> ModelCallRow:
        recs = [_qwen("user", message={"role": "user", "parts": [{"text": "hi"}]})]
        if auth:
            event = {"event.name": "qwen-code.api_response", "auth_type": auth}
            recs.append(_qwen("system", subtype="ui_telemetry", systemPayload={"uiEvent": event}))
        recs.append(_qwen("assistant", model="m", message=reply, usageMetadata=usage, uuid="a1"))
        f = _jsonl("qwen-code", b"".join(orjson.dumps(r) + b"\n" for r in recs), "/h/.qwen/projects/p/chats/s1.jsonl")
        assert [m.text for m in _by(f, classes.REASONING)] == ["thinking…"]
        return f[ModelCallRow][0]

    for auth in (None, "openai", "qwen-oauth"):  # Qwen Code's OpenAI converter: completion_tokens
        c = run(auth)
        assert (c.input_uncached, c.cache_read, c.output, c.reasoning) == (60, 40, 30, 12)
    c = run("gemini")  # the Gemini API's usage: thoughts beside candidates
    assert (c.output, c.reasoning) == (42, 12)


def test_qwen_api_error_telemetry_is_a_failed_call_and_slash_commands_are_not_prompts():
    event = {
        "event.name": "qwen-code.api_error",
        "model": "coder-model",
        "error_type": "rate_limit",
        "response_id": "r1",
    }
    recs = [
        _qwen("system", subtype="ui_telemetry", systemPayload={"uiEvent": event}, uuid="e1"),
        _qwen(
            "system", subtype="slash_command", systemPayload={"phase": "invocation", "rawCommand": "/about"}, uuid="c1"
        ),
    ]
    f = _jsonl("qwen-code", b"".join(orjson.dumps(r) + b"\n" for r in recs), "/h/s1.jsonl")
    (c,) = f[ModelCallRow]
    assert (c.is_api_error, c.stop_reason, c.model, c.input_uncached) == (True, "rate_limit", "coder-model", None)
    assert [(m.message_class, m.text) for m in f[MessageRow]] == [(classes.COMMAND_EXPANSION, "/about")]


def test_qwen_sample_is_detected_as_qwen_and_not_claude():
    assert detect_agent("x.jsonl", QWEN_RUN.read_bytes()) == "qwen-code"
    assert detect_agent("x.jsonl", QWEN_TRIMMED.read_bytes()) == "qwen-code"


# -- Kimi Code CLI ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "agent"),
    [("assistant_tools.jsonl", "main"), ("subagent_agent-0.jsonl", "agent-0"), ("small.jsonl", "main")],
)
def test_kimi_journal_counts_from_the_raw_file(name, agent):
    path = b.KIMI / name
    recs = _records(path)
    f = _jsonl("kimi", path.read_bytes(), KIMI_PATH.format(agent=agent))
    _clean(f)
    events = [r["event"] for r in recs if r["type"] == "context.append_loop_event"]
    steps = [e for e in events if e["type"] == "step.end"]
    session_usage = [r for r in recs if r["type"] == "usage.record" and r["usageScope"] == "session"]
    calls = f.get(ModelCallRow, [])
    assert len(calls) == len(steps) + len(session_usage)  # usage.record of a step is not counted again
    for bucket, key in (
        ("input_uncached", "inputOther"),
        ("cache_read", "inputCacheRead"),
        ("cache_write_5m", "inputCacheCreation"),
        ("output", "output"),
    ):
        assert sum(getattr(c, bucket) for c in calls) == sum(
            u[key] for u in [s["usage"] for s in steps] + [r["usage"] for r in session_usage]
        )
    assert all(c.reasoning is None for c in calls)  # Kimi records no reasoning bucket
    models = {r["model"] for r in recs if r["type"] == "llm.request"}
    assert {c.model for c in calls} <= models
    parts = [e["part"] for e in events if e["type"] == "content.part"]
    assert [m.text for m in _by(f, classes.REASONING)] == [p["think"] for p in parts if p["type"] == "think"]
    assert [m.text for m in _by(f, classes.ASSISTANT_TEXT)] == [p["text"] for p in parts if p["type"] == "text"]
    calls_by_id = {t.tool_call_uid.rsplit("/", 1)[1]: t for t in f.get(ToolCallRow, [])}
    assert set(calls_by_id) == {e["toolCallId"] for e in events if e["type"] == "tool.call"}
    for e in events:
        if e["type"] == "tool.result":
            assert calls_by_id[e["toolCallId"]].output == e["result"]["output"]
    (s,) = f[SessionRow]
    assert (s.session_uid, s.agent_id, s.is_subagent) == ("s1", "" if agent == "main" else agent, agent != "main")
    assert s.parent_session_uid == (None if agent == "main" else "s1")
    _batch_independent("kimi", path.read_bytes(), KIMI_PATH.format(agent=agent))


def test_kimi_prompts_steers_and_subagent_briefs_are_told_apart():
    small = _jsonl("kimi", (b.KIMI / "small.jsonl").read_bytes(), KIMI_PATH.format(agent="main"))
    assert [(m.message_class, m.text) for m in small[MessageRow]] == [
        (classes.QUEUED_PROMPT, "stop"),  # turn.steer: typed while the agent works
        (classes.HUMAN_PROMPT, "hi"),  # turn.prompt; its context.append_message copies are not messages
    ]
    sub = _jsonl("kimi", (b.KIMI / "subagent_agent-0.jsonl").read_bytes(), KIMI_PATH.format(agent="agent-0"))
    (brief,) = _by(sub, classes.SUBAGENT_BRIEF)  # origin system_trigger/subagent: never a human prompt
    assert brief.text.startswith("<git-context>") and _by(sub, classes.HUMAN_PROMPT) == []
    assert sub[SessionRow][0].cwd == "/private/tmp/as-agent-lab/kimi/project"  # config.update cwd


def test_kimi_manual_compaction_with_its_usage_and_summary():
    path = b.KIMI / "assistant_tools.jsonl"
    recs = _records(path)
    f = _jsonl("kimi", path.read_bytes(), KIMI_PATH.format(agent="main"))
    apply = next(r for r in recs if r["type"] == "context.apply_compaction")
    (c,) = f[CompactionRow]
    assert (c.trigger, c.tokens_before, c.tokens_after) == ("manual", apply["tokensBefore"], apply["tokensAfter"])
    (summary,) = _by(f, classes.COMPACTION_SUMMARY)
    assert summary.text == apply["summary"] and c.summary_message_uid == summary.message_uid
    usage = next(r for r in recs if r["type"] == "usage.record" and r["usageScope"] == "session")["usage"]
    compaction_call = next(m for m in f[ModelCallRow] if m.stop_reason is None)
    assert (compaction_call.input_uncached, compaction_call.output) == (usage["inputOther"], usage["output"])
    (touch,) = f[FileTouchRow]
    assert (touch.op, touch.path) == ("read", "/private/tmp/as-agent-lab/kimi/project/README.md")


def test_kimi_refused_call_is_rejected_and_an_unknown_loop_event_is_an_issue():
    lines = [
        {
            "type": "turn.prompt",
            "input": [{"type": "text", "text": "delete it"}],
            "origin": {"kind": "user"},
            "time": 1785618968972,
        },
        {
            "type": "context.append_loop_event",
            "event": {"type": "tool.call", "toolCallId": "Bash_3", "name": "Bash", "args": {"command": "rm -rf build"}},
            "time": 1785618968980,
        },
        {
            "type": "permission.record_approval_result",
            "toolCallId": "Bash_3",
            "toolName": "Bash",
            "result": {"decision": "rejected"},
            "time": 1785618968990,
        },
        {
            "type": "context.append_loop_event",
            "event": {
                "type": "tool.result",
                "toolCallId": "Bash_3",
                "result": {"output": "denied by the user", "isError": True},
            },
            "time": 1785618969000,
        },
        {"type": "context.append_loop_event", "event": {"type": "step.retry", "uuid": "x"}, "time": 1785618969001},
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in lines)
    f = _jsonl("kimi", data, KIMI_PATH.format(agent="main"))
    (call,) = f[ToolCallRow]
    assert (call.outcome, call.is_error, call.error_class) == ("rejected", True, "denied")
    assert [t.op for t in f[FileTouchRow]] == ["delete"]
    (issue,) = f[ParseIssueRow]
    assert (issue.kind, issue.line_number) == ("unknown_record_type", 5)
    _batch_independent("kimi", data, KIMI_PATH.format(agent="main"))


def test_kimi_state_document_titles_the_session_and_links_sub_agents():
    state = dict(
        b.KIMI_STATE, agents={**b.KIMI_STATE["agents"], "agent-1": {"type": "sub", "parentAgentId": "agent-0"}}
    )
    f = _doc("kimi", json.dumps(state).encode(), f"/h/.kimi-code/sessions/wd/session_{b.KIMI_SESSION}/state.json")
    _clean(f)
    rows = {s.agent_id: s for s in f[SessionRow]}
    assert set(rows) == {"", "agent-0", "agent-1"}
    main = rows[""]
    assert (main.session_uid, main.ai_title, main.custom_title, main.cwd) == (
        b.KIMI_SESSION,
        state["title"],
        None,
        state["workDir"],
    )
    assert main.started_at == datetime.fromtimestamp(state["createdAt"] / 1000, UTC)
    assert (rows["agent-0"].parent_agent_id, rows["agent-1"].parent_agent_id) == (None, "agent-0")
    bad = _doc("kimi", b"{not json", "/h/.kimi-code/sessions/wd/session_x/state.json")
    assert [(i.kind, i.byte_offset) for i in bad[ParseIssueRow]] == [("invalid_json", 0)]


# -- Factory Droid ------------------------------------------------------------------------------


def test_droid_session_reminder_prompt_and_reply():
    path = b.DROID / "session_store_schema_drift.jsonl"
    recs = _records(path)
    f = _jsonl("droid", path.read_bytes(), "/h/.factory/sessions/-tmp/droid_drift.jsonl")
    _clean(f)
    user_text = recs[1]["message"]["content"][0]["text"]
    reminder, prompt = re.match(r"\s*(<system-reminder>.*?</system-reminder>)\s*(.*)", user_text, re.S).groups()
    assert [(m.message_class, m.text) for m in f[MessageRow]] == [
        (classes.SYSTEM_REMINDER, reminder),  # injected by Droid: split off, never part of the prompt
        (classes.HUMAN_PROMPT, prompt),
        (classes.ASSISTANT_TEXT, recs[2]["message"]["content"][0]["text"]),
    ]
    (s,) = f[SessionRow]
    assert (s.session_uid, s.cwd, s.custom_title) == (recs[0]["id"], recs[0]["cwd"], recs[0]["title"])
    assert f.get(ModelCallRow, []) == []  # the transcript records no model and no usage
    _batch_independent("droid", path.read_bytes(), "/h/.factory/sessions/-tmp/droid_drift.jsonl")


def test_droid_settings_document_is_the_sessions_cumulative_usage():
    path = b.DROID / "hand-written" / "droid_drift.settings.json"
    doc = json.loads(path.read_text())
    f = _doc("droid", path.read_bytes(), "/h/.factory/sessions/-tmp/droid_drift.settings.json")
    _clean(f)
    (c,) = f[ModelCallRow]
    u = doc["tokenUsage"]
    assert (c.call_uid, c.model) == ("droid_drift#session-usage", doc["model"])
    assert (c.input_uncached, c.cache_read, c.cache_write_5m, c.output, c.reasoning) == (
        u["inputTokens"],
        u["cacheReadTokens"],
        u["cacheCreationTokens"],
        u["outputTokens"],
        u["thinkingTokens"],
    )
    no_usage = _doc("droid", b'{"model": "m"}', "/h/.factory/sessions/x.settings.json")  # Droid 0.56
    assert no_usage.get(ModelCallRow, []) == [] and no_usage[SessionRow][0].model == "m"


def test_droid_stream_json_run():
    path = b.DROID / "stream_json_schema_drift.jsonl"
    recs = _records(path)
    f = _jsonl("droid", path.read_bytes(), str(path))
    _clean(f)
    init, completion = recs[0], recs[-1]
    (call,) = f[ToolCallRow]
    result = next(r for r in recs if r["type"] == "tool_result")
    assert (call.name, call.output, call.is_error, call.error_class) == ("Execute", result["value"], True, "not_found")
    (c,) = f[ModelCallRow]
    u = completion["usage"]
    assert (c.model, c.input_uncached, c.output, c.cache_read, c.cache_write_5m) == (
        init["model"],
        u["input_tokens"],
        u["output_tokens"],
        u["cache_read_input_tokens"],
        u["cache_creation_input_tokens"],
    )
    assert _by(f, classes.ASSISTANT_TEXT)[0].text == completion["finalText"]
    assert f[SessionRow][0].session_uid == init["sessionId"]


# -- Goose (legacy JSONL, a whole document) -----------------------------------------------------


def test_goose_nov_2024_calls_pair_with_results_by_position():
    path = b.GOOSE / "BsNz.jsonl"
    recs = _records(path)
    f = _doc("goose", path.read_bytes(), "/h/.local/share/goose/sessions/BsNz.jsonl")
    _clean(f)
    calls = [blk for r in recs for blk in r["content"] if "tool_name" in blk]
    results = [blk for r in recs for blk in r["content"] if "tool_result" in blk]
    rows = f[ToolCallRow]
    assert [t.tool_call_uid for t in rows] == [f"BsNz/{r['id']}" for r in results]  # the result's id names the call
    assert [t.name for t in rows] == [c["tool_name"] for c in calls]
    assert [t.output for t in rows] == [json.loads(r["tool_result"])[0]["Text"]["text"] for r in results]
    assert [(t.op, t.path) for t in f[FileTouchRow]] == [("read", "inst.md"), ("edit", "inst.md")]
    assert len(f[ModelCallRow]) == sum(r["role"] == "assistant" for r in recs)
    assert all(c.input_uncached is None for c in f[ModelCallRow])  # no per-message usage in Goose


def test_goose_metadata_totals_are_one_session_level_call():
    path = b.GOOSE / "issue-2529-excerpt.jsonl"
    meta, first = _records(path)
    f = _doc("goose", path.read_bytes(), "/h/.local/share/goose/sessions/20250513_231848.jsonl")
    _clean(f)
    (c,) = f[ModelCallRow]
    assert (c.input_uncached, c.output) == (meta["accumulated_input_tokens"], meta["accumulated_output_tokens"])
    assert c.ts == datetime.fromtimestamp(first["created"], UTC)  # stamped with the last message
    (s,) = f[SessionRow]
    assert (s.cwd, s.ai_title, s.first_prompt) == (
        meta["working_dir"],
        meta["description"],
        first["content"][0]["text"],
    )


def test_goose_torn_last_line_is_an_issue_at_its_offset_and_the_rest_is_kept():
    data = (b.GOOSE / "issue-2529-excerpt.jsonl").read_bytes()
    torn = data + b'{"role":"assistant","created":1747178330,"content":[{"type":"text","text":"On it"}],"ole":'
    f = _doc("goose", torn, "/h/.local/share/goose/sessions/t.jsonl")
    (issue,) = f[ParseIssueRow]
    assert (issue.kind, issue.byte_offset, issue.line_number) == ("invalid_json", len(data), 3)
    assert [m.text for m in f[MessageRow]] == [json.loads(data.splitlines()[1])["content"][0]["text"]]


@pytest.fixture(scope="module")
def goose_db(tmp_path_factory) -> tuple[Path, dict]:
    db = tmp_path_factory.mktemp("goose") / "data" / "sessions" / "sessions.db"
    sdb.goose_db(db)
    return db, _f(read_all(str(db), source_parser("goose", "database")(ParseContext(str(db)))))


def _goose_raw(db: Path) -> tuple[list[tuple], dict]:
    """(messages as (session, place, role, content, metadata) in row order, sessions by id) read
    by SQL, independently of the parser."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        places: Counter = Counter()
        msgs = []
        for r in con.execute("SELECT * FROM messages ORDER BY id"):
            places[r["session_id"]] += 1
            meta = json.loads(r["metadata_json"])
            msgs.append((r["session_id"], places[r["session_id"]], r["role"], json.loads(r["content_json"]), meta))
        sessions = {r["id"]: dict(r) for r in con.execute("SELECT * FROM sessions")}
    finally:
        con.close()
    return msgs, sessions


def test_goose_database_counts_calls_and_tokens_from_its_rows(goose_db):
    db, f = goose_db
    _clean(f)
    msgs, sessions = _goose_raw(db)
    texts = [(s, n, r, c, m) for s, n, r, c, m in msgs if any(x.get("type") == "text" for x in c)]
    assert len(f[MessageRow]) == len(texts) + sum(x.get("type") == "thinking" for *_, c, _ in msgs for x in c)
    hidden = [f"{s}#{n}" for s, n, _, _, m in texts if m["userVisible"] is False]
    assert [m.message_uid for m in _by(f, classes.SYSTEM_REMINDER)] == hidden  # a summary the user never saw
    prompts = [f"{s}#{n}" for s, n, r, _, m in texts if r == "user" and m["userVisible"]]
    assert sorted(t.turn_uid for t in f[TurnRow]) == sorted(prompts)
    requests = {x["id"]: x for *_, c, _ in msgs for x in c if x.get("type") == "toolRequest"}
    responses = {x["id"]: x for *_, c, _ in msgs for x in c if x.get("type") == "toolResponse"}
    calls = {t.tool_call_uid.split("/", 1)[1]: t for t in f[ToolCallRow]}
    assert set(calls) == set(requests) == set(responses)
    for cid, t in calls.items():
        assert t.name == requests[cid]["toolCall"]["value"]["name"]
        assert t.outcome == ("error" if responses[cid]["toolResult"]["status"] == "error" else "ok")
    assert calls["toolu_03"].error_class == "not_found"
    assert calls["toolu_02"].output == "Successfully wrote to NOTES.md"  # CallToolResult {content, isError}
    assert [(g.op, g.sha, g.branch) for g in f[GitEventRow]] == [("commit", "1a2b3c4", "main")]
    assert sorted((t.op, t.path) for t in f[FileTouchRow]) == [
        ("create", "/work/watcher/NOTES.md"),
        ("read", "/work/watcher/missing.txt"),
    ]
    usage = {c.session_uid: c for c in f[ModelCallRow] if c.call_uid.endswith("#session-usage")}
    assert {k: (c.input_uncached, c.output) for k, c in usage.items()} == {
        k: (s["accumulated_input_tokens"], s["accumulated_output_tokens"]) for k, s in sessions.items()
    }
    assert len(f[ModelCallRow]) - len(usage) == sum(r == "assistant" for _, _, r, _, _ in msgs)
    rows = {s.session_uid: s for s in f[SessionRow]}
    assert {k: s.is_subagent for k, s in rows.items()} == {
        k: s["session_type"] == "sub_agent" for k, s in sessions.items()
    }
    assert {s.model for s in rows.values()} == {"claude-sonnet-4-5"}
    assert rows[sdb.GOOSE_NATIVE].started_at == datetime(2025, 10, 1, 8, 0, tzinfo=UTC)  # SQLite UTC text
    assert rows[sdb.GOOSE_NATIVE].cwd == sessions[sdb.GOOSE_NATIVE]["working_dir"]


def test_goose_database_session_imported_from_a_legacy_file_is_counted_once(goose_db):
    db, from_db = goose_db
    legacy = b.GOOSE / f"{sdb.GOOSE_IMPORTED}.jsonl"
    rows = list(
        source_parser("goose", "document")(ParseContext(str(db.parent / legacy.name))).parse(legacy.read_bytes())
    )
    rows += read_all(str(db), source_parser("goose", "database")(ParseContext(str(db))))
    both = _f(rows)
    mine = [m for m in both[MessageRow] if m.session_uid == sdb.GOOSE_IMPORTED]
    in_db = [m for m in from_db[MessageRow] if m.session_uid == sdb.GOOSE_IMPORTED]
    assert sorted(m.message_uid for m in mine) == sorted(m.message_uid for m in in_db)  # merged, not doubled
    assert len(in_db) == len(_records(legacy)) - 1 + 1  # the file's messages + the one Goose added later
    assert sum(s.session_uid == sdb.GOOSE_IMPORTED for s in both[SessionRow]) == 1


def test_goose_database_conversation_replaced_under_new_row_ids_merges(goose_db, tmp_path):
    db = tmp_path / "sessions" / "sessions.db"
    sdb.goose_db(db)
    con = sqlite3.connect(db)
    try:  # replace_conversation: delete the session's messages, insert them again (new row ids)
        kept = con.execute(
            "SELECT message_id, session_id, role, content_json, created_timestamp, metadata_json FROM messages "
            "WHERE session_id = ? ORDER BY created_timestamp, id",
            (sdb.GOOSE_NATIVE,),
        ).fetchall()
        con.execute("DELETE FROM messages WHERE session_id = ?", (sdb.GOOSE_NATIVE,))
        con.executemany(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            kept,
        )
        con.commit()
    finally:
        con.close()
    again = _f(read_all(str(db), source_parser("goose", "database")(ParseContext(str(db)))))
    _, before = goose_db
    assert sorted(m.message_uid for m in again[MessageRow]) == sorted(m.message_uid for m in before[MessageRow])


def test_goose_database_late_row_with_an_older_time_moves_no_earlier_message(goose_db, tmp_path):
    db = tmp_path / "sessions" / "sessions.db"
    sdb.goose_db(db)
    con = sqlite3.connect(db)
    try:  # a message stamped before the session's first one, written last
        con.execute(
            "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
            "VALUES ('late', ?, 'user', ?, ?, '{}')",
            (sdb.GOOSE_NATIVE, json.dumps([{"type": "text", "text": "late"}]), sdb.G0 - 60),
        )
        con.commit()
        n = con.execute("SELECT count(*) FROM messages WHERE session_id = ?", (sdb.GOOSE_NATIVE,)).fetchone()[0]
    finally:
        con.close()
    _, before = goose_db
    after = _f(read_all(str(db), source_parser("goose", "database")(ParseContext(str(db)))))
    old = {m.message_uid: m.text for m in before[MessageRow]}
    new = {m.message_uid: m.text for m in after[MessageRow]}
    assert new == {**old, f"{sdb.GOOSE_NATIVE}#{n}": "late"}
    (late,) = [t for t in after[TurnRow] if t.turn_uid == f"{sdb.GOOSE_NATIVE}#{n}"]
    assert late.started_at == datetime.fromtimestamp(sdb.G0 - 60, UTC)  # its own time, not its place


# -- Aider --------------------------------------------------------------------------------------


def _aider(name: str) -> dict:
    path = AIDER_FILES[name]
    return _f(parse_bytes(aider.AiderParser, ParseContext(str(path)), path.read_bytes()))


@pytest.mark.parametrize("name", sorted(AIDER_FILES))
def test_aider_counts_from_the_raw_file(name):
    path = AIDER_FILES[name]
    text = path.read_text()
    f = _aider(name)
    _clean(f)
    _, sessions, messages, calls, tokens = b.aider_status([path])
    assert (len(f[SessionRow]), len(f[MessageRow]), len(f.get(ModelCallRow, []))) == (sessions, messages, calls)
    total = sum(
        sum(v or 0 for v in (c.input_uncached, c.cache_read, c.cache_write_5m, c.output))
        for c in f.get(ModelCallRow, [])
    )
    assert total == tokens
    prompts = [m.text.split("\n", 1)[0] for m in _by(f, classes.HUMAN_PROMPT) + _by(f, classes.COMMAND_EXPANSION)]
    first_lines = [
        line[5:].rstrip()
        for i, line in enumerate(text.split("\n"))
        if line.startswith("#### ") and not text.split("\n")[i - 1].startswith("####")
    ]
    assert sorted(prompts) == sorted(first_lines)
    assert all(m.ts is None for m in f[MessageRow])  # Aider writes no message times
    headers = re.findall(r"^# aider chat started at (.+)$", text, re.M)
    assert sorted(s.started_at for s in f[SessionRow] if s.started_at) == sorted(
        datetime.strptime(h, "%Y-%m-%d %H:%M:%S").astimezone(UTC) for h in headers
    )
    assert {s.cwd for s in f[SessionRow]} == {str(path.parent)}
    _batch_independent("aider", path.read_bytes(), str(path))


def test_aider_token_reports_by_provider_and_version():
    """0.50.2-dev: DeepSeek's sent holds its cache hits; Anthropic's hits and writes were outside
    sent; a split Tokens/Cost report (streaming) still gives the message cost."""
    f = _aider("part2")
    calls = [
        (c.model, c.input_uncached, c.cache_read, c.cache_write_5m, c.output, c.recorded_cost_usd)
        for c in f[ModelCallRow]
    ]
    assert calls[0] == ("deepseek/deepseek-coder", 21_523 - 13_952, 13_952, None, 9, 0.0030)
    assert calls[1] == ("anthropic/claude-3-haiku-20240307", 194, None, 9_474, 7, 0.0000088)
    assert calls[2] == ("anthropic/claude-3-haiku-20240307", 194, 9_474, None, 7, 0.00029)
    split = next(c for c in f[ModelCallRow] if c.model == "claude-3-5-sonnet-20240620")
    assert (split.input_uncached, split.output, split.recorded_cost_usd) == (9_869, 0, 0.03)
    assert aider._tokens("Tokens: 12k sent, 2.5k cache write, 8k cache hit, 300 received.", "claude", [0, 70, 0]) == {
        "input_uncached": 12_000 - 2_500,  # ≥ 0.63: sent = prompt + write
        "cache_read": 8_000,
        "cache_write_5m": 2_500,
        "output": 300,
        "recorded_cost_usd": None,
    }
    assert (
        aider._tokens("Tokens: 12k sent, 8k cache hit, 300 received.", "claude", [0, 55, 0])["input_uncached"] == 4_000
    )
    assert aider._tokens("Tokens: 12k sent, 8k cache hit, 300 received.", "claude", None)["input_uncached"] is None


def test_aider_edits_commits_and_runs_are_calls_with_touches_and_git_events():
    f = _aider("quickdraw")
    assert [(t.name, t.input, t.outcome) for t in f[ToolCallRow]] == [
        ("apply_edit", "components/icons/heart-icon.tsx", "ok"),
        ("apply_edit", "app\\page.tsx", "ok"),
        ("commit", "feat: Add heart button to like images", "ok"),
        ("run", "npm install", None),  # Aider does not log a command's output
        ("run", "npm run dev", None),
    ]
    root = str(AIDER_FILES["quickdraw"].parent)
    assert [(t.op, t.path) for t in f[FileTouchRow]] == [
        ("create", f"{root}/components/icons/heart-icon.tsx"),  # "Create new file? … y" just before
        ("edit", f"{root}/app\\page.tsx"),
    ]
    (git,) = f[GitEventRow]
    assert (git.op, git.sha, git.subject) == ("commit", "2dc76fd", "feat: Add heart button to like images")
    (s,) = f[SessionRow]
    assert (s.model, s.cli_version) == ("claude-3-5-sonnet-20240620", "0.57.1")


def test_aider_prelude_before_the_first_header_is_a_session_of_its_own():
    f = _aider("part1")
    prelude = next(s for s in f[SessionRow] if s.started_at is None)
    assert prelude.session_uid.endswith("-0") and prelude.byte_offset == 0
    (lint,) = [m for m in _by(f, classes.HUMAN_PROMPT) if m.session_uid == prelude.session_uid]
    lines = AIDER_FILES["part1"].read_text().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("#### # Fix any errors"))
    run = [line[5:].rstrip() for line in itertools.takewhile(lambda x: x.startswith("####"), lines[start:])]
    assert lint.text == "\n".join(run).strip("\n")  # one multi-line input: every `####` line of it


def test_aider_long_block_splits_where_the_content_says_and_torn_tail_waits(monkeypatch):
    monkeypatch.setattr(aider, "MAX_BLOCK_CHARS", 200)
    data = AIDER_FILES["quickdraw"].read_bytes()
    path = str(AIDER_FILES["quickdraw"])
    f = _f(parse_bytes(aider.AiderParser, ParseContext(path), data))
    replies = _by(f, classes.ASSISTANT_TEXT)
    assert len(replies) > 5 and all(len(m.text) <= 200 + 120 for m in replies)
    _batch_independent("aider", data, path)
    torn = data + b"> Tokens: 1.2k sent, 30"  # a write in progress: the line has no newline yet
    assert fold(parse_bytes(aider.AiderParser, ParseContext(path), torn)) == fold(
        parse_bytes(aider.AiderParser, ParseContext(path), data)
    )


# -- Crush --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crush(tmp_path_factory) -> tuple[Path, dict]:
    db = tmp_path_factory.mktemp("crush") / "project" / ".crush" / "crush.db"
    sdb.crush_db(db)
    return db, _f(read_all(str(db), source_parser("crush", "database")(ParseContext(str(db)))))


def test_crush_sessions_sub_agent_and_own_cost(crush):
    db, f = crush
    _clean(f)
    sessions = {s.session_uid: s for s in f[SessionRow]}
    parent, child = sessions[sdb.PARENT], sessions[sdb.CHILD]
    assert (parent.is_subagent, child.is_subagent, child.parent_session_uid) == (False, True, sdb.PARENT)
    (spawn,) = f[SubagentSpawnRow]
    assert (
        child.spawn_uid == spawn.spawn_uid == f"{sdb.PARENT}/{sdb.CHILD}"
    )  # Crush names the task session after the call
    assert spawn.brief == "Find where the timer reaches zero"
    assert parent.cwd == child.cwd == str(db.parent.parent)
    costs = {c.session_uid: c.recorded_cost_usd for c in f[ModelCallRow] if c.call_uid.endswith("#session-usage")}
    assert costs == {sdb.CHILD: 0.0021, sdb.PARENT: 0.0134}  # the parent's accumulated cost minus its child's
    # prompt/completion_tokens are the last request's: no bucket anywhere
    assert all(getattr(c, k) is None for c in f[ModelCallRow] for k in ("input_uncached", "cache_read", "output"))
    assert parent.started_at == datetime.fromtimestamp(sdb.T0, UTC)  # seconds, not milliseconds


def test_crush_messages_parallel_results_and_summary(crush):
    _, f = crush
    rows = sdb.CRUSH_MESSAGES
    parts = {mid: json.loads(p) for mid, _, _, p, _, _ in rows}
    assert len(f[TurnRow]) == sum(role == "user" for _, _, role, *_ in rows)
    calls = {t.tool_call_uid.split("/", 1)[1]: t for t in f[ToolCallRow]}
    results = [p["data"] for ps in parts.values() for p in ps if p["type"] == "tool_result"]
    assert set(calls) == {p["data"]["id"] for ps in parts.values() for p in ps if p["type"] == "tool_call"}
    for r in results:  # several results in one tool message, each paired by id
        t = calls[r["tool_call_id"]]
        assert (t.output, t.is_error or False) == (r["content"], r["is_error"])
    assert calls["call_bash_1"].error_class == "not_found"
    assert [(t.op, t.path) for t in f[FileTouchRow]] == [
        ("read", "/work/timer/src/timer.ts"),
        ("read", "test/timer.test.ts"),
        ("edit", "/work/timer/src/timer.ts"),
    ]
    models = {c.call_uid: (c.stop_reason, c.is_complete, c.model) for c in f[ModelCallRow] if "#" not in c.call_uid}
    for mid, _, role, _parts_json, model, _ in rows:
        if role == "assistant":
            assert models[mid] == (parts[mid][-1]["data"]["reason"], True, model)  # every message ends with finish
    (summary,) = _by(f, classes.COMPACTION_SUMMARY)
    (c,) = f[CompactionRow]
    assert summary.message_uid == c.summary_message_uid == "m06"
    assert [m.text for m in _by(f, classes.REASONING)] == ["Need to see the timer code first."]


def test_crush_file_that_is_not_a_database_is_one_issue(tmp_path):
    bad = tmp_path / ".crush" / "crush.db"
    bad.parent.mkdir()
    bad.write_bytes(b"not sqlite at all" * 10)
    rows = read_all(str(bad), source_parser("crush", "database")(ParseContext(str(bad))))
    assert [(r.kind, r.byte_offset) for r in rows if isinstance(r, ParseIssueRow)] == [("bad_database", 0)]


# -- detection ----------------------------------------------------------------------------------


def test_every_sample_laid_out_where_its_harness_writes_it_is_recognised(tmp_path):
    home = tmp_path / "home"
    paths = {
        "aider": list(b.aider_projects(home).values()),
        "goose": b.goose_layout(home),
        "qwen-code": [b.qwen_layout(home)],
        "droid": b.droid_layout(home),
        "kimi": b.kimi_layout(home),
    }
    db = home / "src" / "crushapp" / ".crush" / "crush.db"
    sdb.crush_db(db)
    paths["crush"] = [db]
    for agent, files in paths.items():
        for p in files:
            assert detect_agent(str(p), p.read_bytes()[:65536]) == agent, p


@pytest.mark.parametrize("path", sorted(b.GOOSE.glob("*.jsonl")), ids=lambda p: p.name)
def test_goose_file_read_line_by_line_equals_the_document(path):
    """`agent-history parse` feeds a Goose file line by line; the loader reads it as a document."""
    ctx = ParseContext(str(path))
    lines = fold(parse_bytes(source_parser("goose", "jsonl"), ctx, path.read_bytes()))
    assert lines == fold(source_parser("goose", "document")(ctx).parse(path.read_bytes()))
