"""A small synthetic agent home for the recall tests (issue 17), in the real formats the parsers
read (Claude Code JSONL as in ``FORMATS.md``; pi v3 as in ``corpus/samples/pi/kenn-agentsview…``).

- ``P1`` (pi, /work/chat): the websocket story — turn 1 tries a heartbeat change (tool call fails),
  turn 2 tries an outgoing queue, turn 3 is unrelated. ``P2`` (pi, /work/chat) is forked/resumed
  from P1 (``parentSession`` = P1's file) and says the queue fixed it.
- ``C1`` (claude, /work/web): the same heartbeat advice as P1, near word for word — the
  cross-agent duplicate.
- ``C2`` (claude, /work/api): one turn whose reply has three text blocks about kafka, then two
  turns that mention kafka once each — for distinct-turn diversification.
- ``C3`` (claude, /work/web): the memory document (marked ``source_type = 'memory'`` by the tests).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

HEARTBEAT = "Increase the websocket heartbeat interval to 30 seconds so the reconnect loop stops dropping messages."
UIDS = {
    "P1": "0a1b2c3d-0000-4000-8000-000000000001",
    "P2": "0a1b2c3d-0000-4000-8000-000000000002",
    "C1": str(uuid.UUID(int=0xC1)),
    "C2": str(uuid.UUID(int=0xC2)),
    "C3": str(uuid.UUID(int=0xC3)),
}
BASE = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _pi_file(root: Path, key: str, start: datetime, turns: list[dict], parent: Path | None = None) -> Path:
    sid = UIDS[key]
    path = root / ".pi" / "agent" / "sessions" / "--work-chat--" / f"{start:%Y-%m-%dT%H-%M-%S-000Z}_{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": sid, "timestamp": _iso(start), "cwd": "/work/chat"}
    if parent is not None:
        header["parentSession"] = str(parent)
    recs, prev, t = [header], None, start
    for n, turn in enumerate(turns):
        for m, (role, content) in enumerate(turn["messages"]):
            t += timedelta(seconds=5)
            eid = f"{key}-{n}-{m}"
            msg: dict = {"role": role, "content": content, "timestamp": int(t.timestamp() * 1000)}
            if role == "assistant":
                msg.update(model="claude-sonnet-4-5", provider="anthropic", stopReason="stop",
                           usage={"input": 100, "output": 20, "totalTokens": 120})  # fmt: skip
            if role == "toolResult":
                msg.update(toolCallId=turn["tool_id"], toolName="bash", isError=turn.get("tool_error", False))
            recs.append({"type": "message", "id": eid, "parentId": prev, "timestamp": _iso(t), "message": msg})
            prev = eid
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return path


def _text(s: str) -> list[dict]:
    return [{"type": "text", "text": s}]


def _claude_file(root: Path, key: str, project: str, start: datetime, turns: list[tuple[str, list[str]]]) -> Path:
    sid = UIDS[key]
    path = root / ".claude" / "projects" / f"-work-{project}" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    common = {"sessionId": sid, "cwd": f"/work/{project}", "version": "2.1.17", "gitBranch": "main",
              "userType": "external", "isSidechain": False}  # fmt: skip
    recs, parent, t, k = [], None, start, int(sid.replace("-", ""), 16) * 1000
    for n, (prompt, blocks) in enumerate(turns):
        t += timedelta(seconds=5)
        u = str(uuid.UUID(int=k + n * 10))
        recs.append({**common, "type": "user", "uuid": u, "parentUuid": parent, "timestamp": _iso(t),
                     "message": {"role": "user", "content": prompt}})  # fmt: skip
        parent = u
        mid = f"msg_{key}_{n}"
        for b, block in enumerate(blocks):
            t += timedelta(seconds=2)
            a = str(uuid.UUID(int=k + n * 10 + 1 + b))
            recs.append({**common, "type": "assistant", "uuid": a, "parentUuid": parent, "timestamp": _iso(t),
                         "requestId": f"req_{mid}", "message": {"id": mid, "type": "message", "role": "assistant",
                         "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": block}],
                         "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 20,
                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})  # fmt: skip
            parent = a
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return path


def write_recall_home(root: Path) -> dict[str, Path]:
    """Write the home under `root`; returns {key: transcript path}."""
    p1_turns = [
        {"messages": [
            ("user", _text("The websocket reconnect loop keeps dropping messages after a network blip.")),
            ("assistant", [{"type": "text", "text": HEARTBEAT},
                           {"type": "toolCall", "id": "tc1", "name": "bash", "arguments": {"command": "pytest tests/test_ws.py"}}]),
            ("toolResult", _text("FAILED tests/test_ws.py::test_reconnect - dropped 3 messages")),
            ("assistant", _text("The heartbeat change alone did not help: test_reconnect still drops messages.")),
        ], "tool_id": "tc1", "tool_error": True},
        {"messages": [
            ("user", _text("Try something else for the dropped websocket messages.")),
            ("assistant", _text("Buffer outgoing messages in a queue until the socket reopens, then flush it in order.")),
        ]},
        {"messages": [
            ("user", _text("Unrelated: rename the config module to settings.")),
            ("assistant", _text("Renamed config.py to settings.py and updated the imports.")),
        ]},
    ]  # fmt: skip
    p1 = _pi_file(root, "P1", BASE, p1_turns)
    p2_turns = [
        {"messages": [
            ("user", _text("Continue from the previous session: did the outgoing queue work?")),
            ("assistant", _text("Yes: with the outgoing queue the reconnect test passes and no messages are lost.")),
        ]},
    ]  # fmt: skip
    p2 = _pi_file(root, "P2", BASE + timedelta(hours=2), p2_turns, parent=p1)
    c1 = _claude_file(root, "C1", "web", BASE + timedelta(days=1), [
        ("Our websocket client loses messages on reconnect, any idea?", [HEARTBEAT]),
    ])  # fmt: skip
    c2 = _claude_file(root, "C2", "api", BASE + timedelta(days=2), [
        ("How should we size the kafka consumer group?", [
            "Kafka consumer lag grows when the kafka partitions outnumber the kafka consumers.",
            "Add kafka consumers up to the kafka partition count; beyond that kafka consumers sit idle.",
            "Watch the kafka consumer lag metric per kafka partition after the change.",
        ]),
        ("And the retention?", ["Seven days of kafka retention is enough for replays."]),
        ("Anything about the producer?", ["Enable idempotence on the kafka producer."]),
    ])  # fmt: skip
    c3 = _claude_file(root, "C3", "web", BASE + timedelta(days=3), [
        ("memory", ["Team memory: the websocket gateway runs behind nginx with a 60 second proxy timeout."]),
    ])  # fmt: skip
    return {"P1": p1, "P2": p2, "C1": c1, "C2": c2, "C3": c3}
