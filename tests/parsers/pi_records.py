"""Synthetic pi entries and parse helpers shared by the pi parser tests."""

from __future__ import annotations

import json

from agent_history.model.merge import fold
from agent_history.model.rows import (
    MessageRow,
)
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes
from agent_history.parsers.pi.parser import PARSER
from tests.parsers.util import parse_in_batches, parse_resumed, rows_of

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
