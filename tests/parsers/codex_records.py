"""Synthetic Codex records and parse helpers shared by the Codex parser tests."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from agent_history.model.merge import fold
from agent_history.model.rows import (
    MessageRow,
    ParseIssueRow,
)
from agent_history.parsers.base import ParseContext
from agent_history.parsers.codex.parser import PARSER
from agent_history.parsers.common.lines import iter_lines
from agent_history.parsers.driver import parse_bytes
from tests.parsers.util import parse_in_batches, parse_resumed, rows_of

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
