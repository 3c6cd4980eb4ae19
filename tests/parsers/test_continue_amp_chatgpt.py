"""Continue sessions, Amp threads and the ChatGPT export (pure, no database), over every sample in
fixtures/samples. Expected values are counted here from the raw JSON, independently of the
parsers."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agent_history.model import classes
from agent_history.model.merge import fold
from agent_history.model.rows import (
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
from tests.repo_sample_homes import AMP, CHATGPT, CONTINUE, sample_documents

AMP_CLAUDE = next(AMP.rglob("T-0a1b*.json"))
AMP_GPT = next(AMP.rglob("T-5e6f*.json"))
CHATGPT_REAL = CHATGPT / "001_simple_text.raw.json"
CHATGPT_TREE = CHATGPT / "hand-written" / "conversations.json"


def _parse(agent: str, path, ctx_path: str | None = None) -> list:
    return list(source_parser(agent, "document")(ParseContext(ctx_path or str(path))).parse(path.read_bytes()))


def _fold(rows) -> dict:
    return {t: list(v.values()) for t, v in fold(list(rows)).items()}


def _json(path):
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("agent", "path"),
    [(a, p) for a, p in sample_documents() if a in ("continue", "amp", "chatgpt")],
    ids=lambda x: str(x).split("samples/")[-1] if not isinstance(x, str) else x,
)
def test_every_sample_parses_with_no_issue_and_no_unknown_record_type(agent, path):
    rows = _parse(agent, path)
    assert [r for r in rows if isinstance(r, ParseIssueRow)] == []
    seen = [r for r in rows if isinstance(r, RecordTypeRow)]
    assert seen and all(r.known for r in seen)


# -- Continue -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(CONTINUE.glob("*/sessions/*-*.json")), ids=lambda p: p.name[:8])
def test_continue_session_counts_from_the_raw_file(path):
    doc = _json(path)
    f = _fold(_parse("continue", path))
    hist = doc["history"]

    def text(m):
        c = m["content"]
        return c if isinstance(c, str) else "".join(p.get("text", "") for p in c)

    users = [h for h in hist if h["message"]["role"] == "user"]
    assistants = [h for h in hist if h["message"]["role"] == "assistant"]
    msgs = f[MessageRow]
    by = lambda c: [m for m in msgs if m.message_class == c]  # noqa: E731
    assert [m.text for m in by(classes.HUMAN_PROMPT)] == [text(h["message"]).strip() for h in users]
    assert len(f[TurnRow]) == len(users)
    assert len(f[ModelCallRow]) == len(assistants) and all(
        c.input_uncached is None and c.output is None for c in f[ModelCallRow]
    )
    # a leading <think>…</think> (empty here, or not) and reasoning.text are reasoning, never the answer
    think = [h for h in assistants if text(h["message"]).lstrip().startswith("<think>")]
    assert all("<think>" not in (m.text or "") for m in by(classes.ASSISTANT_TEXT))
    n_reasoning = sum(1 for h in assistants if (h.get("reasoning") or {}).get("text", "").strip())
    n_reasoning += sum(1 for h in think if text(h["message"]).split("</think>")[0].replace("<think>", "").strip())
    assert len(by(classes.REASONING)) == n_reasoning
    for r in by(classes.REASONING):
        start = next(
            (h.get("reasoning") or {}).get("startAt")
            for h in hist
            if h["message"].get("id") and r.message_uid.startswith(h["message"]["id"])
        )
        assert r.ts == (datetime.fromtimestamp(start / 1000, UTC) if start else None)
    (s,) = f[SessionRow]
    cwd = doc["workspaceDirectory"].removeprefix("file://")
    expected_title = None if doc["title"].startswith("<think>") and "</think>" not in doc["title"] else doc["title"]
    assert (s.session_uid, s.cwd, s.ai_title) == (doc["sessionId"], cwd, expected_title)
    logs = [(h.get("promptLogs") or [{}])[-1] for h in assistants]
    assert s.model == next(
        (lg.get("completionOptions", {}).get("model") or lg.get("modelTitle") for lg in reversed(logs) if lg), None
    )
    assert all(m.ts is None for m in msgs if m.message_class != classes.REASONING)  # Continue keeps no message times


def test_continue_index_gives_start_times_titles_and_sessions_without_files():
    for user in ("user1", "user2"):
        index = _json(CONTINUE / user / "sessions" / "sessions.json")
        f = _fold(_parse("continue", CONTINUE / user / "sessions" / "sessions.json"))
        got = {s.session_uid: (s.started_at, s.ai_title, s.cwd) for s in f[SessionRow]}
        thinking = [e["title"] for e in index if e["title"].startswith("<think>")]
        # user1's reasoning model titled every session with its cut-off thinking: no title
        assert len(thinking) == (len(index) if user == "user1" else 0) and all("</think>" not in t for t in thinking)
        assert got == {
            e["sessionId"]: (
                datetime.fromtimestamp(int(e["dateCreated"]) / 1000, UTC),
                None if e["title"].startswith("<think>") else e["title"],
                e["workspaceDirectory"].removeprefix("file://") or None,
            )
            for e in index
        }
        files = {p.stem for p in (CONTINUE / user / "sessions").glob("*-*.json")}
        assert files < set(got)  # the index lists sessions whose file is gone


def test_continue_agent_mode_tool_calls_and_states():
    doc = {
        "sessionId": "s-agent",
        "title": "t",
        "workspaceDirectory": "file:///home/dev/my%20app",
        "chatModelTitle": "Claude 4 Sonnet",
        "history": [
            {"message": {"id": "u1", "role": "user", "content": "list the tests"}, "contextItems": []},
            {
                "message": {
                    "id": "a1",
                    "role": "assistant",
                    "content": "",
                    "toolCalls": [
                        {
                            "id": "tc1",
                            "type": "function",
                            "function": {"name": "ls", "arguments": '{"dirPath":"tests"}'},
                        }
                    ],
                },
                "contextItems": [],
                "toolCallStates": [
                    {"toolCallId": "tc1", "status": "errored", "output": [{"content": "Permission denied"}]}
                ],
            },
            {"message": {"role": "tool", "content": "test_a.py", "toolCallId": "tc2"}, "contextItems": []},
            {"message": {"role": "thinking", "content": "the listing failed"}, "contextItems": []},
            {"message": {"role": "critic", "content": "?"}, "contextItems": []},
        ],
    }
    rows = list(
        source_parser("continue", "document")(ParseContext("/h/.continue/sessions/s-agent.json")).parse(
            json.dumps(doc).encode()
        )
    )
    f = _fold(rows)
    tools = {t.tool_call_uid: t for t in f[ToolCallRow]}
    assert (tools["tc1"].name, tools["tc1"].input, tools["tc1"].outcome, tools["tc1"].error_class) == (
        "ls",
        '{"dirPath":"tests"}',
        "error",
        "permission",
    )
    assert (tools["tc2"].output, tools["tc2"].outcome) == ("test_a.py", "ok")
    (s,) = f[SessionRow]
    assert (s.cwd, s.model) == ("/home/dev/my app", "Claude 4 Sonnet")
    assert [m.message_class for m in f[MessageRow] if m.role == "assistant"] == [classes.REASONING]
    assert [(r.kind, r.byte_offset) for r in rows if isinstance(r, ParseIssueRow)] == [("unknown_record_type", 4)]


# -- Amp ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [AMP_CLAUDE, AMP_GPT], ids=lambda p: p.stem[:10])
def test_amp_thread_counts_and_tokens_from_the_raw_file(path):
    doc = _json(path)
    f = _fold(_parse("amp", path))
    msgs = doc["messages"]
    assistants = [m for m in msgs if m["role"] == "assistant"]
    calls = f[ModelCallRow]
    assert len(calls) == len(assistants)
    usages = [m["usage"] for m in assistants if "usage" in m]
    gpt = [u for u in usages if u["model"].startswith("gpt-")]
    claude = [u for u in usages if not u["model"].startswith("gpt-")]
    total = lambda rows, k: sum(getattr(c, k) or 0 for c in rows)  # noqa: E731
    assert total(calls, "output") == sum(u["outputTokens"] for u in usages)
    assert total(calls, "cache_read") == sum(u["cacheReadInputTokens"] for u in usages)
    # gpt-*: the uncached prompt is reported as cache creation → input, no cache write
    assert total(calls, "input_uncached") == sum(u["inputTokens"] for u in claude) + sum(
        u["inputTokens"] + u["cacheCreationInputTokens"] for u in gpt
    )
    assert total(calls, "cache_write_5m") == sum(u["cacheCreationInputTokens"] for u in claude)
    assert sum(1 for c in calls if c.output is None) == len(assistants) - len(usages)  # no usage: NULL, not 0
    uses = [b for m in assistants for b in m["content"] if b["type"] == "tool_use"]
    results = {b["toolUseID"]: b["run"] for m in msgs for b in m["content"] if b["type"] == "tool_result"}
    tools = {t.tool_call_uid: t for t in f[ToolCallRow]}
    assert set(tools) == {u["id"] for u in uses}
    status = {"done": "ok", "error": "error", "cancelled": "interrupted", "rejected-by-user": "rejected"}
    for tid, run in results.items():
        code = (run.get("result") or {}).get("exitCode") if isinstance(run.get("result"), dict) else None
        expected = "error" if run["status"] == "done" and code not in (None, 0) else status[run["status"]]
        assert tools[tid].outcome == expected and tools[tid].exit_code == code
    prompts = [b["text"] for m in msgs if m["role"] == "user" for b in m["content"] if b["type"] == "text"]
    assert [m.text for m in f[MessageRow] if m.message_class == classes.HUMAN_PROMPT] == prompts
    (s,) = f[SessionRow]
    ends = [t["endTime"] for t in doc["meta"]["traces"] if t.get("endTime")]
    assert (s.session_uid, s.cwd, s.ai_title) == (
        doc["id"],
        doc["env"]["initial"]["trees"][0]["uri"].removeprefix("file://"),
        doc["title"],
    )
    assert s.started_at == datetime.fromtimestamp(doc["created"] / 1000, UTC)
    assert s.ended_at == (max(datetime.fromisoformat(e) for e in ends) if ends else None)


def test_amp_touches_git_spawn_and_error_classes():
    f = _fold(_parse("amp", AMP_CLAUDE))
    tools = {t.tool_call_uid: t for t in f[ToolCallRow]}
    assert (tools["toolu_amp_test"].error_class, tools["toolu_amp_test"].exit_code) == (
        "nonzero_exit",
        1,
    )  # exit 1: pytest's "E   ModuleNotFoundError" is not at a line start
    assert sorted((t.op, t.path) for t in f[FileTouchRow]) == [
        ("edit", "/home/dev/reports/report.py"),
        ("read", "/home/dev/reports/report.py"),
    ]
    (git,) = f[GitEventRow]
    assert (git.sha, git.branch, git.tool_call_uid) == ("9c41e07", "main", "toolu_amp_commit")
    (spawn,) = f[SubagentSpawnRow]
    assert spawn.spawn_uid == "toolu_amp_task" and spawn.brief.startswith("Look in /home/dev/reports")
    g = _fold(_parse("amp", AMP_GPT))
    assert {t.tool_call_uid: (t.outcome, t.error_class) for t in g[ToolCallRow]} == {
        "call_amp_grep": ("rejected", "denied"),
        "call_amp_grep2": ("interrupted", "interrupted"),
    }


# -- ChatGPT export -----------------------------------------------------------------------------


def _active(conv: dict) -> set[str]:
    out, cur = set(), conv["current_node"]
    while cur:
        out.add(cur)
        cur = conv["mapping"][cur]["parent"]
    return out


@pytest.mark.parametrize("path", [CHATGPT_REAL, CHATGPT_TREE], ids=["real", "tree"])
def test_chatgpt_counts_from_the_raw_export(path):
    doc = _json(path)
    convs = doc if isinstance(doc, list) else [doc]
    f = _fold(_parse("chatgpt", path))
    msgs = {m.message_uid: m for m in f[MessageRow]}
    expected_prompts = expected_answers = 0
    for conv in convs:
        active = _active(conv)
        for nid, node in conv["mapping"].items():
            m = node["message"]
            if not m or m["metadata"].get("is_visually_hidden_from_conversation"):
                continue
            parts = [p for p in m["content"].get("parts", []) if isinstance(p, str) and p]
            kind = m["content"]["content_type"]
            if m["author"]["role"] == "user" and kind in ("text", "multimodal_text"):
                expected_prompts += 1
                assert msgs[nid].message_class == classes.HUMAN_PROMPT and msgs[nid].on_active_branch == (nid in active)
            if m["author"]["role"] == "assistant" and kind == "text" and parts and m["recipient"] == "all":
                expected_answers += 1
                assert msgs[nid].text == "\n".join(parts) and msgs[nid].on_active_branch == (nid in active)
                assert msgs[nid].ts == datetime.fromtimestamp(m["create_time"], UTC)
    by = lambda c: sum(1 for m in msgs.values() if m.message_class == c)  # noqa: E731
    assert (by(classes.HUMAN_PROMPT), by(classes.ASSISTANT_TEXT)) == (expected_prompts, expected_answers)
    assert all(c.input_uncached is None and c.output is None and c.recorded_cost_usd is None for c in f[ModelCallRow])
    sessions = {s.session_uid: s for s in f[SessionRow]}
    assert set(sessions) == {c["conversation_id"] for c in convs}
    for c in convs:
        s = sessions[c["conversation_id"]]
        assert (s.ai_title, s.model, s.started_at) == (
            c["title"],
            c["default_model_slug"],
            datetime.fromtimestamp(c["create_time"], UTC),
        )


def test_chatgpt_real_hidden_nodes_and_placeholder_are_no_messages():
    conv = _json(CHATGPT_REAL)
    f = _fold(_parse("chatgpt", CHATGPT_REAL))
    kinds = sorted(m.message_class for m in f[MessageRow])
    # 8 nodes: the root, 3 hidden system nodes, the custom instructions, the prompt, an empty
    # placeholder and the answer
    assert len(conv["mapping"]) == 8
    assert kinds == sorted([classes.CONTEXT_INJECTION, classes.HUMAN_PROMPT, classes.ASSISTANT_TEXT])
    (call,) = f[ModelCallRow]
    assert call.call_uid == conv["current_node"] and call.model == "gpt-4o"


def test_chatgpt_tree_branch_tools_reasoning_and_versions():
    (conv,) = _json(CHATGPT_TREE)
    parser = source_parser("chatgpt", "document")(ParseContext(str(CHATGPT_TREE)))
    f = _fold(parser.parse(CHATGPT_TREE.read_bytes()))
    assert parser.session_versions() == {conv["conversation_id"]: str(conv["update_time"])}
    mapping = conv["mapping"]
    code = [n for n in mapping.values() if n["message"] and n["message"]["content"]["content_type"] == "code"]
    tools = {t.tool_call_uid: t for t in f[ToolCallRow]}
    assert set(tools) == {n["id"] for n in code}
    for n in code:
        (child,) = n["children"]
        result = mapping[child]["message"]
        assert tools[n["id"]].output == result["content"]["text"]
        assert tools[n["id"]].outcome == ("error" if result["content"]["content_type"] == "system_error" else "ok")
        assert tools[n["id"]].name == n["message"]["recipient"] == "python"
    thoughts = [
        t["content"]
        for n in mapping.values()
        if n["message"] and n["message"]["content"]["content_type"] == "thoughts"
        for t in n["message"]["content"]["thoughts"]
    ]
    assert [m.text for m in f[MessageRow] if m.message_class == classes.REASONING] == thoughts
    off = [m for m in f[MessageRow] if m.on_active_branch is False]
    assert [m.message_uid for m in off] == [k for k in mapping if k not in _active(conv) and mapping[k]["message"]]
    (prompt,) = [m for m in f[MessageRow] if m.attachments]
    assert prompt.attachments == [{"kind": "image_asset_pointer", "size_bytes": 48213, "width": 800, "height": 600}]
    # the turn of the regenerated answer is its prompt's; the abandoned answer starts none
    assert {t.turn_uid for t in f[TurnRow]} == {
        n["id"] for n in mapping.values() if n["message"] and n["message"]["author"]["role"] == "user"
    }


def test_chatgpt_malformed_export_is_an_issue():
    parse = lambda data: list(source_parser("chatgpt", "document")(ParseContext("/x/conversations.json")).parse(data))  # noqa: E731
    assert [(r.kind, r.byte_offset) for r in parse(b'[{"title": "x", "mapping": {')] == [("invalid_json", 0)]
    rows = parse(
        json.dumps(
            [
                3,
                {"title": "no id"},
                {
                    "id": "c",
                    "mapping": {
                        "n": {
                            "id": "n",
                            "parent": None,
                            "children": [],
                            "message": {
                                "id": "n",
                                "author": {"role": "alien"},
                                "content": {"content_type": "text", "parts": ["?"]},
                                "metadata": {},
                            },
                        }
                    },
                },
            ]
        ).encode()
    )
    assert sorted(r.kind for r in rows if isinstance(r, ParseIssueRow)) == [
        "bad_record",
        "non_object",
        "unknown_record_type",
    ]


def test_continue_title_loses_a_reasoning_models_thinking():
    from agent_history.parsers.continuedev.parser import session_title

    assert session_title("<think>\nAlright, so the") is None
    assert session_title("<think>why</think>\n Hello world ") == "Hello world"
    assert session_title("<think>a</think><think>b</think>") is None
    assert session_title("Fix <b>bold</b> tags") == "Fix <b>bold</b> tags"
    assert session_title(None) is None and session_title("") is None
