"""Cline, Roo Code and Kilo Code task folders (pure, no database): the real Cline 3.51 excerpt and
the hand-written task folders of fixtures/samples. Expected values are counted here from the raw
JSON with `json` and plain string tests, independently of the parsers."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

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
from agent_history.parsers import source_parser
from agent_history.parsers.base import ParseContext
from agent_history.parsers.cline.ui import tokens
from tests.repo_sample_homes import CLINE, KILO, ROO, sample_documents, task_folders

XML_TASK = CLINE / "hand-written" / "tasks" / "1727000000000"
ROO_PARENT = ROO / "hand-written" / "tasks" / "0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
ROO_CHILD = ROO / "hand-written" / "tasks" / "0198a1b9-0a1b-7c2d-9e3f-4a5b6c7d8e9f"
KILO_TASK = task_folders(KILO)[0]


def _parse(agent: str, path, folder: str | None = None) -> list:
    """Rows of one task-folder document; `folder` overrides the task id (the folder name)."""
    ctx_path = f"/h/tasks/{folder}/{path.name}" if folder else str(path)
    return list(source_parser(agent, "document")(ParseContext(ctx_path)).parse(path.read_bytes()))


def _folder(agent: str, folder) -> dict:
    """The folded rows of every document of a task folder, as the loader merges them."""
    rows = [r for f in sorted(folder.iterdir()) for r in _parse(agent, f)]
    return {t: list(v.values()) for t, v in fold(rows).items()}


def _of(folded: dict, t) -> list:
    return folded.get(t, [])


def _json(path):
    return json.loads(path.read_text())


# -- every sample -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "path"),
    [(a, p) for a, p in sample_documents() if a in ("cline", "roo-code", "kilo-code")],
    ids=lambda x: str(x).split("samples/")[-1] if not isinstance(x, str) else x,
)
def test_every_sample_parses_with_no_issue_and_no_unknown_record_type(agent, path):
    rows = _parse(agent, path)
    assert [r for r in rows if isinstance(r, ParseIssueRow)] == []
    seen = [r for r in rows if isinstance(r, RecordTypeRow)]
    assert seen and all(r.known for r in seen)


# -- the real Cline 3.51 excerpt -----------------------------------------------------------------


def test_real_cline_api_history_counts_and_session():
    api = _json(CLINE / "api_conversation_history.json")
    f = {
        t: list(v.values())
        for t, v in fold(_parse("cline", CLINE / "api_conversation_history.json", "1769053680585")).items()
    }
    blocks = [(m["role"], b) for m in api for b in m["content"]]
    user_texts = [b["text"] for r, b in blocks if r == "user"]
    msgs = _of(f, MessageRow)
    by = lambda c: sorted(m.text for m in msgs if m.message_class == c)  # noqa: E731
    task = next(t for t in user_texts if t.startswith("<task>"))
    assert by(classes.HUMAN_PROMPT) == [task.removeprefix("<task>\n").removesuffix("\n</task>")]
    env = [t for t in user_texts if t.startswith("<environment_details>")]
    assert len(by(classes.CONTEXT_INJECTION)) == len(env) == 1
    assert (
        len(by(classes.SYSTEM_REMINDER)) == sum(1 for t in user_texts if t.lstrip().startswith("# task_progress")) == 1
    )
    assert by(classes.REASONING) == [b["thinking"] for r, b in blocks if b["type"] == "thinking"]
    assert by(classes.ASSISTANT_TEXT) == [
        b["text"].strip() for r, b in blocks if r == "assistant" and b["type"] == "text"
    ]
    uses = [b for r, b in blocks if b["type"] == "tool_use"]
    (tool,) = _of(f, ToolCallRow)
    assert (tool.tool_call_uid, tool.name, tool.outcome) == (
        uses[0]["id"],
        uses[0]["name"],
        None,
    )  # no result in the excerpt
    assert json.loads(tool.input) == uses[0]["input"]
    (touch,) = _of(f, FileTouchRow)
    cwd = re.search(r"# Current Working Directory \((.+?)\) Files", env[0]).group(1)
    assert (touch.op, touch.path) == ("read", f"{cwd}/{uses[0]['input']['path']}")
    (s,) = _of(f, SessionRow)
    assert (s.session_uid, s.cwd, s.model) == ("1769053680585", cwd, api[1]["modelInfo"]["modelId"])
    assert (s.started_at, s.ended_at) == (None, None)  # the API history records no times
    assert _of(f, ModelCallRow) == []  # model calls come from ui_messages.json only


def test_real_cline_ui_tokens_follow_the_ui_record_not_the_api_metrics():
    ui = _json(CLINE / "ui_messages.json")
    api = _json(CLINE / "api_conversation_history.json")
    f = {t: list(v.values()) for t, v in fold(_parse("cline", CLINE / "ui_messages.json", "1769053680585")).items()}
    reqs = [r for r in ui if r.get("say") == "api_req_started"]
    (call,) = _of(f, ModelCallRow)
    info = json.loads(reqs[0]["text"])
    assert reqs[0]["modelInfo"]["providerId"] == "anthropic"
    assert (call.input_uncached, call.output, call.cache_write_5m, call.cache_read) == (
        info["tokensIn"],
        info["tokensOut"],
        info["cacheWrites"],
        info["cacheReads"],
    )
    assert (call.input_uncached, call.output, call.cache_write_5m, call.cache_read) == (10, 595, 9573, 0)
    # the API history's metrics fold writes and reads into one number: the disagreement decided here
    metrics = api[1]["metrics"]["tokens"]
    assert metrics["cached"] == info["cacheWrites"] + info["cacheReads"] and metrics["prompt"] == info["tokensIn"]
    # the recorded cost is the cache *write* price (claude-sonnet-4.5: 3 / 15 / 3.75 USD per million)
    assert (
        call.recorded_cost_usd == pytest.approx(info["cost"]) == pytest.approx((10 * 3 + 595 * 15 + 9573 * 3.75) / 1e6)
    )
    assert (
        call.ts == datetime.fromtimestamp(reqs[0]["ts"] / 1000, UTC) and call.model == reqs[0]["modelInfo"]["modelId"]
    )
    assert call.turn_uid == "1769053680585#0" and call.is_complete is True
    # the UI repeats the conversation (and api_req_started.request replays the prompt): no messages
    assert _of(f, MessageRow) == [] and sum(1 for r in ui if r.get("partial") is True) == 1
    (s,) = _of(f, SessionRow)
    assert (s.started_at, s.ended_at) == (
        datetime.fromtimestamp(min(r["ts"] for r in ui) / 1000, UTC),
        datetime.fromtimestamp(max(r["ts"] for r in ui) / 1000, UTC),
    )


def test_real_cline_task_metadata_gives_version_model_and_no_touches():
    meta = _json(CLINE / "task_metadata.json")
    rows = _parse("cline", CLINE / "task_metadata.json", "1769053680585")
    (s,) = [r for r in rows if isinstance(r, SessionRow)]
    assert (s.cli_version, s.model) == (
        meta["environment_history"][-1]["cline_version"],
        meta["model_usage"][-1]["model_id"],
    )
    assert not [r for r in rows if isinstance(r, FileTouchRow)]  # files_in_context repeat the tool calls
    counted = sum(r.count for r in rows if isinstance(r, RecordTypeRow) and r.record_type == "files_in_context")
    assert counted == len(meta["files_in_context"]) == 5


def test_token_rule_by_provider_and_protocol():
    info = {"tokensIn": 1000, "tokensOut": 50, "cacheWrites": 200, "cacheReads": 700}
    assert tokens(info, "anthropic", None) == {
        "input_uncached": 1000,
        "output": 50,
        "cache_write_5m": 200,
        "cache_read": 700,
    }
    assert tokens(info, None, "anthropic")["input_uncached"] == 1000
    assert tokens(info, None, "openai") == {
        "input_uncached": 100,
        "output": 50,
        "cache_write_5m": 200,
        "cache_read": 700,
    }
    # an unknown (or OpenAI-compatible Cline) provider with cache tokens: input and writes unknown
    assert tokens(info, "deepseek", None) == {
        "input_uncached": None,
        "output": 50,
        "cache_write_5m": None,
        "cache_read": 700,
    }
    # no cache tokens: every convention agrees
    assert tokens({"tokensIn": 9, "tokensOut": 2, "cacheWrites": 0, "cacheReads": 0}, None, None)["input_uncached"] == 9
    # filled late: a request still running has no counters → NULL, never 0
    assert tokens({"request": "…"}, "anthropic", None) == dict.fromkeys(
        ("output", "cache_read", "input_uncached", "cache_write_5m")
    )


# -- the hand-written XML-era Cline task ---------------------------------------------------------


def test_xml_era_task_tool_calls_results_and_turns():
    api = _json(XML_TASK / "api_conversation_history.json")
    ui = _json(XML_TASK / "ui_messages.json")
    f = _folder("cline", XML_TASK)
    assistant_text = [b["text"] for m in api if m["role"] == "assistant" for b in m["content"]]
    xml_calls = [
        m.group(1)
        for t in assistant_text
        for m in re.finditer(r"<(read_file|replace_in_file|execute_command|attempt_completion|write_to_file)>", t)
    ]
    tools = sorted(_of(f, ToolCallRow), key=lambda t: t.byte_offset)
    assert [t.name for t in tools] == xml_calls
    headers = [
        b["text"]
        for m in api
        if m["role"] == "user"
        for b in m["content"]
        if re.match(r"\[\w+( for .*)?\] Result:", b["text"])
    ]
    assert sum(1 for t in tools if t.outcome is not None) == len(headers) == 7
    by_outcome = {(t.name, t.outcome, t.error_class) for t in tools}
    assert ("replace_in_file", "rejected", "denied") in by_outcome  # "The user denied this operation"
    assert ("read_file", "error", "not_found") in by_outcome  # "The tool execution failed … ENOENT"
    first = tools[0]
    assert first.output == next(b["text"] for b in api[2]["content"][1:2])  # header block, then the output block
    (git,) = _of(f, GitEventRow)
    assert (git.op, git.sha, git.branch, git.subject) == ("commit", "3f2a9c1", "main", "Add --verbose flag")
    # prompts: the task, two answers inside results (<feedback>), a resumption's <user_message>
    prompts = sorted((m.turn_uid, m.text) for m in _of(f, MessageRow) if m.message_class == classes.HUMAN_PROMPT)
    feedback = [s["text"] for s in ui if s.get("say") in ("task", "user_feedback")]
    assert sorted(t for _, t in prompts) == sorted(feedback)
    turns = {t.turn_uid for t in _of(f, TurnRow)}
    assert (
        turns
        == {uid for uid, _ in prompts}
        == {
            f"1727000000000#{s['conversationHistoryIndex'] + 1}"
            for s in ui
            if s.get("say") in ("task", "user_feedback")
        }
    )
    reasoning = [m.text for m in _of(f, MessageRow) if m.message_class == classes.REASONING]
    assert reasoning == re.findall(r"<thinking>\s*(.*?)\s*</thinking>", "".join(assistant_text), re.S)


def test_xml_era_task_model_calls_tokens_errors_and_compaction():
    ui = _json(XML_TASK / "ui_messages.json")
    f = _folder("cline", XML_TASK)
    reqs = [r for r in ui if r.get("say") == "api_req_started"]
    calls = {c.call_uid: c for c in _of(f, ModelCallRow)}
    assert len(calls) == len(reqs) == 9
    infos = [json.loads(r["text"]) for r in reqs]
    # no provider recorded: counts taken as written only when no cache tokens were reported
    for r, info in zip(reqs, infos, strict=True):
        c = calls[f"1727000000000:req:{r['ts']}"]
        cached = info.get("cacheWrites") or info.get("cacheReads")
        assert c.input_uncached == (None if cached else info.get("tokensIn"))
        assert (c.output, c.cache_read) == (info.get("tokensOut"), info.get("cacheReads"))
        assert c.turn_uid == max(
            (
                f"1727000000000#{s['conversationHistoryIndex'] + 1}"
                for s in ui
                if s.get("say") in ("task", "user_feedback") and s["ts"] <= r["ts"]
            ),
            key=lambda u: int(u.split("#")[1]),
        )
    last = calls[f"1727000000000:req:{reqs[-1]['ts']}"]
    assert (last.stop_reason, last.output, last.input_uncached, last.is_complete) == (
        "user_cancelled",
        None,
        None,
        None,
    )
    assert sum(c.recorded_cost_usd or 0 for c in calls.values()) == pytest.approx(sum(i.get("cost", 0) for i in infos))
    notices = sorted(
        m.text for m in _of(f, MessageRow) if m.message_class == classes.SYSTEM_REMINDER and m.role == "system"
    )
    assert notices == sorted(r["text"] for r in ui if r.get("ask") == "api_req_failed" or r.get("say") == "error")
    (comp,) = _of(f, CompactionRow)
    ranges = {tuple(r["conversationHistoryDeletedRange"]) for r in ui if "conversationHistoryDeletedRange" in r}
    assert ranges == {(2, 5)} and comp.compaction_uid == "1727000000000:deleted:2-5" and comp.trigger == "auto"


# -- Roo Code -----------------------------------------------------------------------------------


def test_roo_parent_task_native_tools_spawn_reasoning_and_summary():
    api = _json(ROO_PARENT / "api_conversation_history.json")
    f = _folder("roo-code", ROO_PARENT)
    uses = {b["id"]: b for m in api if m.get("role") == "assistant" for b in m["content"] if b["type"] == "tool_use"}
    results = {
        b["tool_use_id"]: b for m in api if m.get("role") == "user" for b in m["content"] if b["type"] == "tool_result"
    }
    tools = {t.tool_call_uid: t for t in _of(f, ToolCallRow)}
    assert set(tools) == set(uses) == set(results)
    for tid, t in tools.items():
        assert t.outcome == ("error" if results[tid].get("is_error") else "ok")
    assert tools["toolu_roo_cmd1"].error_class == "network"  # "Could not resolve host"
    (spawn,) = _of(f, SubagentSpawnRow)
    assert (spawn.spawn_uid, spawn.subagent_type, spawn.brief) == (
        "toolu_roo_task1",
        uses["toolu_roo_task1"]["input"]["mode"],
        uses["toolu_roo_task1"]["input"]["message"],
    )
    msgs = _of(f, MessageRow)
    reasoning_items = [m for m in api if m.get("type") == "reasoning"]
    assert [m.text for m in msgs if m.message_class == classes.REASONING] == [
        i["summary"][0]["text"] for i in reasoning_items
    ]
    summaries = [b["text"] for m in api if m.get("isSummary") for b in m["content"]]
    assert [m.text for m in msgs if m.message_class == classes.COMPACTION_SUMMARY] == summaries
    model = re.search(r"<model>(.+?)</model>", api[0]["content"][1]["text"]).group(1)
    assert {m.model for m in msgs if m.role == "assistant"} == {model}
    assert all(
        m.ts == datetime.fromtimestamp(next(a["ts"] for i, a in enumerate(api) if m.byte_offset == i) / 1000, UTC)
        for m in msgs
        if "#" in m.message_uid  # the API history's (the UI's are keyed <task>:ui:<ts>)
    )
    (touch_read, touch_edit) = sorted(_of(f, FileTouchRow), key=lambda t: t.byte_offset)
    assert (touch_read.op, touch_read.path, touch_edit.op) == ("read", "/home/dev/app/src/config.ts", "edit")
    (s,) = _of(f, SessionRow)
    hist = _json(ROO_PARENT / "history_item.json")
    assert (s.cwd, s.first_prompt, s.is_subagent, s.model) == (hist["workspace"], hist["task"], False, model)


def test_roo_ui_tokens_by_api_protocol_compactions_and_report():
    ui = _json(ROO_PARENT / "ui_messages.json")
    f = _folder("roo-code", ROO_PARENT)
    calls = {c.call_uid.rsplit(":", 1)[1]: c for c in _of(f, ModelCallRow)}
    reqs = [r for r in ui if r.get("say") == "api_req_started"]
    assert len(calls) == len(reqs) == 6
    for r in reqs:
        info, c = json.loads(r["text"]), calls[str(r["ts"])]
        if "tokensIn" not in info:
            assert (c.input_uncached, c.output, c.cache_read) == (None, None, None)  # never filled
            continue
        expected_in = info["tokensIn"] - (
            info["cacheWrites"] + info["cacheReads"] if info["apiProtocol"] == "openai" else 0
        )
        assert (c.input_uncached, c.cache_write_5m, c.cache_read, c.output) == (
            expected_in,
            info["cacheWrites"],
            info["cacheReads"],
            info["tokensOut"],
        )
        assert c.model is None and c.turn_uid is None  # Roo's UI records carry neither
    history = _json(ROO_PARENT / "history_item.json")  # its totals repeat the per-request counts: no rows from them
    filled = [json.loads(r["text"]) for r in reqs if "tokensOut" in json.loads(r["text"])]
    assert sum(i["tokensOut"] for i in filled) == history["tokensOut"]
    assert sum(c.output or 0 for c in calls.values()) == history["tokensOut"]
    comps = {c.compaction_uid.split(":", 1)[1]: c for c in _of(f, CompactionRow)}
    cond = next(r for r in ui if r.get("say") == "condense_context")["contextCondense"]
    trunc = next(r for r in ui if r.get("say") == "sliding_window_truncation")["contextTruncation"]
    assert (comps["condense:cnd-1"].tokens_before, comps["condense:cnd-1"].tokens_after) == (
        cond["prevContextTokens"],
        cond["newContextTokens"],
    )
    assert (comps["truncation:trc-1"].tokens_before, comps["truncation:trc-1"].trigger) == (
        trunc["prevContextTokens"],
        "auto",
    )
    (report,) = [m for m in _of(f, MessageRow) if m.message_class == classes.SUBAGENT_REPORT]
    assert report.text == next(r["text"] for r in ui if r.get("say") == "subtask_result")


def test_roo_child_task_names_its_parent():
    hist = _json(ROO_CHILD / "history_item.json")
    (s,) = _of(_folder("roo-code", ROO_CHILD), SessionRow)
    assert (s.session_uid, s.is_subagent, s.parent_session_uid) == (ROO_CHILD.name, True, hist["parentTaskId"])
    assert (
        s.parent_session_uid == ROO_PARENT.name
        and ROO_CHILD.name in _json(ROO_PARENT / "history_item.json")["childIds"]
    )


# -- Kilo Code (legacy) ---------------------------------------------------------------------------


def test_kilo_task_xml_calls_model_from_environment_and_openai_tokens():
    api = _json(KILO_TASK / "api_conversation_history.json")
    ui = _json(KILO_TASK / "ui_messages.json")
    f = _folder("kilo-code", KILO_TASK)
    (s,) = _of(f, SessionRow)
    env = api[0]["content"][1]["text"]
    assert s.model == re.search(r"<model>(.+?)</model>", env).group(1)
    assert s.cwd == re.search(r"# Current Workspace Directory \((.+?)\) Files", env).group(1)
    assert [t.name for t in sorted(_of(f, ToolCallRow), key=lambda t: t.byte_offset)] == [
        "execute_command",
        "attempt_completion",
    ]
    infos = [json.loads(r["text"]) for r in ui if r.get("say") == "api_req_started"]
    got = sorted((c.input_uncached, c.cache_read, c.output) for c in _of(f, ModelCallRow))
    assert got == sorted(
        (i["tokensIn"] - i["cacheWrites"] - i["cacheReads"], i["cacheReads"], i["tokensOut"]) for i in infos
    )


# -- malformed input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["api_conversation_history.json", "ui_messages.json", "task_metadata.json", "history_item.json"]
)
def test_a_truncated_document_is_one_issue_at_offset_zero(name):
    rows = list(
        source_parser("cline", "document")(ParseContext(f"/h/tasks/1/{name}")).parse(
            b'[{"role":"user","content":[{"type":"te'
        )
    )
    assert [(r.kind, r.byte_offset) for r in rows] == [("invalid_json", 0)]


def test_wrong_shapes_and_odd_items_are_issues_not_exceptions():
    def parse(name, doc):
        parser = source_parser("roo-code", "document")(ParseContext(f"/h/tasks/t/{name}"))
        return list(parser.parse(json.dumps(doc).encode()))

    assert [r.kind for r in parse("ui_messages.json", {"not": "a list"}) if isinstance(r, ParseIssueRow)] == [
        "non_object"
    ]
    rows = parse(
        "ui_messages.json",
        [
            7,
            {"ts": 1, "type": "say", "say": "brand_new"},
            {"ts": 2, "type": "say", "say": "api_req_started", "text": "not json"},
        ],
    )
    assert sorted((r.kind, r.byte_offset) for r in rows if isinstance(r, ParseIssueRow)) == [
        ("bad_record", 2),
        ("non_object", 0),
        ("unknown_record_type", 1),
    ]
    unknown = [r for r in rows if isinstance(r, RecordTypeRow) and not r.known]
    assert [(r.record_type, r.subtype) for r in unknown] == [("say", "brand_new")]
    rows = parse(
        "api_conversation_history.json",
        [{"role": "tool", "content": "x"}, "text", {"role": "user", "content": [{"type": "video"}]}],
    )
    assert sorted((r.kind, r.byte_offset) for r in rows if isinstance(r, ParseIssueRow)) == [
        ("non_object", 1),
        ("unknown_record_type", 0),
        ("unknown_record_type", 2),
    ]


def test_files_where_each_harness_writes_them_are_detected_as_that_harness(tmp_path):
    from agent_history.parsers import detect_agent
    from tests.repo_sample_homes import REPO_SAMPLE_DIRS, build_sample_home, chatgpt_export, home_of

    home = build_sample_home(tmp_path / "home")
    export = chatgpt_export(tmp_path / "export")
    found = {}
    for agent in {a for a in REPO_SAMPLE_DIRS.values() if a != "chatgpt"}:
        for path in sorted(home_of(agent, home).rglob("*.json")):
            found[path] = (agent, detect_agent(str(path), path.read_bytes()[:65536]))
    found[export / "conversations.json"] = (
        "chatgpt",
        detect_agent(str(export / "conversations.json"), (export / "conversations.json").read_bytes()[:65536]),
    )
    assert len(found) == 5 + 8 + 3 + 3 + 2 + 1  # cline, roo-code, kilo-code, continue (user1), amp, chatgpt
    assert {p.name: got for p, (want, got) in found.items() if got != want} == {}
