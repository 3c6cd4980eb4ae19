"""OpenHands V1 conversation directories (`parsers.openhands`) on the hand-written conversation
in fixtures/samples/openhands: counts computed here from the raw JSON files, the usage totals of
``base_state.json`` in our buckets, ``<think>`` reasoning kept once, local wall-clock times, and
every event kind known."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

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
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers import detect_agent, source_parser
from agent_history.parsers.base import ParseContext
from tests import repo_sample_homes_b as b

(CONVERSATION,) = sorted(b.OPENHANDS.iterdir())
FILES = [CONVERSATION / "base_state.json", *sorted((CONVERSATION / "events").iterdir())]


def _rows(path: Path, data: bytes | None = None) -> list:
    return list(source_parser("openhands", "document")(ParseContext(str(path))).parse(data or path.read_bytes()))


@pytest.fixture(scope="module")
def conv() -> tuple[dict, list[dict], dict]:
    rows = [r for p in FILES for r in _rows(p)]
    f = {t: list(v.values()) for t, v in fold(rows).items()}
    events = [json.loads(p.read_text()) for p in FILES[1:]]
    return f, events, json.loads(FILES[0].read_text())


def test_every_event_is_a_known_kind_and_every_file_is_recognised(conv):
    f, events, _ = conv
    assert f.get(ParseIssueRow, []) == []
    seen = f[RecordTypeRow]
    assert seen and all(r.known for r in seen)
    assert {r.subtype for r in seen if r.record_type == "event"} == {e["kind"] for e in events}
    assert [detect_agent(str(p), p.read_bytes()[:4096]) for p in FILES] == ["openhands"] * len(FILES)


def test_counts_from_the_raw_files(conv):
    f, events, base = conv
    files, sessions, messages, calls, tokens = b.openhands_status(FILES)
    assert (len(f[SessionRow]), len(f[MessageRow]), len(f[ModelCallRow])) == (sessions, messages, calls)
    buckets = sum(
        (c.input_uncached or 0) + (c.cache_read or 0) + (c.cache_write_5m or 0) + (c.output or 0)
        for c in f[ModelCallRow]
    )
    assert buckets == tokens
    actions = {e["tool_call_id"]: e for e in events if e["kind"] == "ActionEvent"}
    calls = {t.tool_call_uid.split("/", 1)[1]: t for t in f[ToolCallRow]}
    assert set(calls) == set(actions)
    for cid, t in calls.items():
        assert (t.name, t.input) == (actions[cid]["tool_name"], actions[cid]["tool_call"]["arguments"])
        assert t.call_uid == actions[cid]["llm_response_id"]  # parallel calls of one response share it
    results = {e["tool_call_id"]: e for e in events if e["kind"] == "ObservationEvent"}
    for cid, e in results.items():
        assert calls[cid].output == "".join(c["text"] for c in e["observation"]["content"])
        assert calls[cid].outcome == ("error" if e["observation"]["is_error"] else "ok")
    (failed,) = [e for e in events if e["kind"] == "AgentErrorEvent"]
    t = calls[failed["tool_call_id"]]
    assert (t.outcome, t.output, t.error_class) == ("error", failed["error"], "timeout")
    assert [(g.op, g.sha, g.branch) for g in f[GitEventRow]] == [("commit", "4f5e6d7", "main")]
    assert [(x.op, x.path) for x in f[FileTouchRow]] == [("edit", "/workspace/tool/cli.py")]
    (session,) = f[SessionRow]
    assert (session.cwd, session.model) == (base["workspace"]["working_dir"], base["agent"]["llm"]["model"])


def test_base_state_totals_are_one_call_per_llm_in_our_buckets(conv):
    f, events, base = conv
    (usage,) = [c for c in f[ModelCallRow] if "#usage/" in c.call_uid]
    m = base["stats"]["usage_to_metrics"]["default"]
    u = m["accumulated_token_usage"]
    assert usage.call_uid.endswith("#usage/default")  # the condenser never ran: no call for it
    assert (usage.input_uncached, usage.cache_read, usage.cache_write_5m, usage.output) == (
        u["prompt_tokens"] - u["cache_read_tokens"] - u["cache_write_tokens"],
        u["cache_read_tokens"],
        u["cache_write_tokens"],
        u["completion_tokens"],
    )
    assert (usage.model, usage.recorded_cost_usd) == (m["model_name"], m["accumulated_cost"])
    last = [e for e in events if e["kind"] == "ConversationStateUpdateEvent" and e["key"] == "stats"][-1]
    assert last["value"] == base["stats"]  # the last snapshot: counted once, from base_state.json
    assert all(c.input_uncached is None for c in f[ModelCallRow] if "#usage/" not in c.call_uid)


def test_zero_cost_is_unknown_not_free():
    base = json.loads(FILES[0].read_text())
    base["stats"]["usage_to_metrics"]["default"]["accumulated_cost"] = 0.0
    (usage,) = [r for r in _rows(FILES[0], json.dumps(base).encode()) if isinstance(r, ModelCallRow)]
    assert usage.recorded_cost_usd is None and usage.output is not None


def test_think_block_is_reasoning_once_and_the_rest_is_the_reply(conv):
    f, events, _ = conv
    first = next(e for e in events if e["kind"] == "ActionEvent" and e["thought"])
    thought = first["thought"][0]["text"]
    assert "<think>" in thought and first["reasoning_content"] in thought
    by_uid = {m.message_uid: m for m in f[MessageRow]}
    assert by_uid[f"{first['id']}#reasoning"].text == first["reasoning_content"]
    assert by_uid[f"{first['id']}#text"].text == re.sub(r"<think>.*?</think>", "", thought, flags=re.S).strip()
    assert [m.text for m in f[MessageRow] if m.message_class == classes.REASONING] == [first["reasoning_content"]]


def test_prompt_turn_compaction_and_local_wall_clock_times(conv):
    f, events, _ = conv
    prompt = next(e for e in events if e["kind"] == "MessageEvent" and e["source"] == "user")
    (turn,) = f[TurnRow]
    local = datetime.fromisoformat(prompt["timestamp"]).astimezone(UTC)  # no zone: this machine's
    assert (turn.turn_uid, turn.started_at) == (prompt["id"], local)
    (c,) = f[CompactionRow]
    condensation = next(e for e in events if e["kind"] == "Condensation")
    assert c.summary_message_uid == condensation["id"]
    summary = [m for m in f[MessageRow] if m.message_class == classes.COMPACTION_SUMMARY]
    assert [m.text for m in summary] == [condensation["summary"]]
    assert [m.message_class for m in f[MessageRow] if m.role == "system"] == [classes.SYSTEM_PROMPT]


def test_unknown_kind_and_broken_file_are_issues():
    event = FILES[1]
    rows = _rows(event, json.dumps({"id": "x", "timestamp": "2026-06-20T09:00:00", "kind": "FutureEvent"}).encode())
    assert [(r.kind, r.detail) for r in rows if isinstance(r, ParseIssueRow)] == [
        ("unknown_record_type", "event 'FutureEvent'")
    ]
    torn = _rows(event, event.read_bytes()[:40])
    assert [r.kind for r in torn if isinstance(r, ParseIssueRow)] and not [
        r for r in torn if not isinstance(r, ParseIssueRow)
    ]
