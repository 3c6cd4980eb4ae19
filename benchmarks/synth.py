"""Synthetic agent homes at scale for benchmarks: Claude Code, Codex and pi sessions shaped like
the real files in ../shared/corpus (tool calls with outputs, sub-agents, split responses).

`write_home(root, sessions, seed)` writes ``root/.claude``, ``root/.codex``, ``root/.pi/agent``
and returns (files, bytes, approx_messages). Deterministic for a given seed.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

WORDS = (
    "cache ttl pool connection retry timeout parser loader session index query rank token model "
    "commit branch merge rebase deploy build test fixture error warning config yaml json schema "
    "migration postgres vector embedding search snippet highlight lineage rollup cost price "
    "refactor module function class method variable import export async await promise future"
).split()
IDENTS = ("getUserById", "parse_config", "ECONNRESET", "src/db/pool.py", "max_retries", "HttpClient", "useEffect")


def _text(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(IDENTS))
    return " ".join(words).capitalize() + "."


def _ts(base: datetime, i: int) -> str:
    return (base + timedelta(seconds=7 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _dump(path: Path, records: list[dict]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    path.write_bytes(data)
    return len(data)


def claude_session(rng: random.Random, turns: int, sid: str, base: datetime, cwd: str, agent_id: str | None = None):
    recs, parent, i, msgs = [], None, 0, 0
    common = {
        "sessionId": sid,
        "cwd": cwd,
        "version": "2.1.17",
        "gitBranch": "main",
        "userType": "external",
        "isSidechain": agent_id is not None,
    }
    if agent_id:
        common["agentId"] = agent_id
    for _ in range(turns):
        u = str(uuid.UUID(int=rng.getrandbits(128)))
        recs.append(
            {
                **common,
                "type": "user",
                "uuid": u,
                "parentUuid": parent,
                "timestamp": _ts(base, i),
                "message": {"role": "user", "content": _text(rng, rng.randint(8, 40))},
            }
        )
        parent, i, msgs = u, i + 1, msgs + 1
        for _ in range(rng.randint(1, 3)):
            mid = f"msg_{rng.getrandbits(64):016x}"
            tid = f"toolu_{rng.getrandbits(64):016x}"
            usage = {
                "input_tokens": rng.randint(1, 50),
                "cache_creation_input_tokens": rng.randint(0, 5000),
                "cache_read_input_tokens": rng.randint(0, 50000),
                "output_tokens": rng.randint(10, 800),
            }
            for block in (
                {"type": "text", "text": _text(rng, rng.randint(10, 60))},
                {
                    "type": "tool_use",
                    "id": tid,
                    "name": "Bash",
                    "input": {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py"},
                },
            ):
                a = str(uuid.UUID(int=rng.getrandbits(128)))
                recs.append(
                    {
                        **common,
                        "type": "assistant",
                        "uuid": a,
                        "parentUuid": parent,
                        "timestamp": _ts(base, i),
                        "requestId": f"req_{mid}",
                        "message": {
                            "id": mid,
                            "type": "message",
                            "role": "assistant",
                            "model": "claude-sonnet-4-5-20250929",
                            "content": [block],
                            "stop_reason": "tool_use",
                            "usage": usage,
                        },
                    }
                )
                parent, i, msgs = a, i + 1, msgs + 1
            r = str(uuid.UUID(int=rng.getrandbits(128)))
            out = "\n".join(_text(rng, 12) for _ in range(rng.randint(1, 30)))
            is_err = rng.random() < 0.1
            recs.append(
                {
                    **common,
                    "type": "user",
                    "uuid": r,
                    "parentUuid": parent,
                    "timestamp": _ts(base, i),
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": is_err}],
                    },
                    "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False},
                }
            )
            parent, i = r, i + 1
    return recs, msgs


def codex_session(rng: random.Random, turns: int, sid: str, base: datetime, cwd: str):
    recs = [
        {
            "timestamp": _ts(base, 0),
            "type": "session_meta",
            "payload": {
                "id": sid,
                "timestamp": _ts(base, 0),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.58.0",
                "source": "cli",
                "git": {"branch": "main"},
            },
        }
    ]
    i, msgs, total = 1, 0, 0
    for _ in range(turns):
        prompt = _text(rng, rng.randint(8, 40))
        recs.append(
            {"timestamp": _ts(base, i), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.1-codex"}}
        )
        recs.append(
            {
                "timestamp": _ts(base, i),
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
            }
        )
        recs.append(
            {"timestamp": _ts(base, i), "type": "event_msg", "payload": {"type": "user_message", "message": prompt}}
        )
        msgs += 1
        cid = f"call_{rng.getrandbits(64):016x}"
        recs.append(
            {
                "timestamp": _ts(base, i + 1),
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": orjson.dumps({"command": ["bash", "-lc", "rg -n cache src"]}).decode(),
                    "call_id": cid,
                },
            }
        )
        out = "\n".join(_text(rng, 10) for _ in range(rng.randint(1, 20)))
        recs.append(
            {
                "timestamp": _ts(base, i + 2),
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": cid,
                    "output": orjson.dumps(
                        {"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.4}}
                    ).decode(),
                },
            }
        )
        answer = _text(rng, rng.randint(20, 80))
        recs.append(
            {
                "timestamp": _ts(base, i + 3),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": answer}],
                },
            }
        )
        recs.append(
            {
                "timestamp": _ts(base, i + 3),
                "type": "event_msg",
                "payload": {"type": "agent_message", "message": answer},
            }
        )
        msgs += 1
        inp, cached, outp = rng.randint(1000, 9000), rng.randint(0, 900), rng.randint(10, 700)
        total += inp + outp
        recs.append(
            {
                "timestamp": _ts(base, i + 4),
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": {
                            "input_tokens": total,
                            "cached_input_tokens": 0,
                            "output_tokens": 0,
                            "reasoning_output_tokens": 0,
                            "total_tokens": total,
                        },
                        "last_token_usage": {
                            "input_tokens": inp,
                            "cached_input_tokens": cached,
                            "output_tokens": outp,
                            "reasoning_output_tokens": 0,
                            "total_tokens": inp + outp,
                        },
                    },
                },
            }
        )
        i += 5
    return recs, msgs


def pi_session(rng: random.Random, turns: int, sid: str, base: datetime, cwd: str):
    recs = [{"type": "session", "version": 3, "id": sid, "timestamp": _ts(base, 0), "cwd": cwd}]
    parent, i, msgs = None, 1, 0
    for _ in range(turns):
        for role in ("user", "assistant"):
            eid = f"{rng.getrandbits(32):08x}"
            msg: dict = {
                "role": role,
                "content": [{"type": "text", "text": _text(rng, rng.randint(8, 50))}],
                "timestamp": 1766536349359 + i,
            }
            if role == "assistant":
                msg.update(
                    api="anthropic-messages",
                    provider="anthropic",
                    model="claude-opus-4-5",
                    stopReason="stop",
                    usage={
                        "input": rng.randint(100, 4000),
                        "output": rng.randint(10, 400),
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 0,
                    },
                )
            recs.append({"type": "message", "id": eid, "parentId": parent, "timestamp": _ts(base, i), "message": msg})
            parent, i, msgs = eid, i + 1, msgs + 1
    return recs, msgs


def write_home(root: Path, sessions: int, seed: int = 1, turns: tuple[int, int] = (2, 12)) -> tuple[int, int, int]:
    """Write `sessions` sessions (≈ 60% Claude incl. sub-agents, 25% Codex, 15% pi) under `root`.

    Returns (files, bytes, messages). Every 10th Claude session gets a sub-agent file; every
    50th session is long (10× turns).
    """
    rng = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    files = nbytes = nmsgs = 0
    for n in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        t = rng.randint(*turns) * (10 if n % 50 == 49 else 1)
        start = base + timedelta(minutes=37 * n)
        project = f"proj{n % 40}"
        kind = rng.random()
        if kind < 0.6:
            recs, m = claude_session(rng, t, sid, start, f"/work/{project}")
            nbytes += _dump(root / ".claude" / "projects" / f"-work-{project}" / f"{sid}.jsonl", recs)
            files, nmsgs = files + 1, nmsgs + m
            if n % 10 == 0:
                aid = f"a{rng.getrandbits(32):08x}"
                recs, m = claude_session(rng, max(1, t // 2), sid, start, f"/work/{project}", agent_id=aid)
                nbytes += _dump(
                    root / ".claude" / "projects" / f"-work-{project}" / sid / "subagents" / f"agent-{aid}.jsonl", recs
                )
                files, nmsgs = files + 1, nmsgs + m
        elif kind < 0.85:
            recs, m = codex_session(rng, t, sid, start, f"/work/{project}")
            day = start.strftime("%Y/%m/%d")
            nbytes += _dump(root / ".codex" / "sessions" / day / f"rollout-{start:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl", recs)
            files, nmsgs = files + 1, nmsgs + m
        else:
            recs, m = pi_session(rng, t, sid, start, f"/work/{project}")
            nbytes += _dump(
                root / ".pi" / "agent" / "sessions" / f"--work-{project}--" / f"{start:%Y-%m-%dT%H-%M-%S}_{sid}.jsonl",
                recs,
            )
            files, nmsgs = files + 1, nmsgs + m
    return files, nbytes, nmsgs
