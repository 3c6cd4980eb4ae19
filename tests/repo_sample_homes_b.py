"""Homes for Aider, Goose, Qwen Code, Factory Droid, Kimi Code CLI and Crush built from
``fixtures/samples/<harness>/`` (real excerpts and hand-written files, each with its
PROVENANCE.md), laid out where each harness writes them (the directories come from the registry
rows, `places.resolve` with no environment); a Crush database built from Crush's own schema; and
what `status` must show for them, counted here from the raw files — never through the parsers."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

from agent_history.harnesses import BY_NAME
from agent_history.harnesses.places import resolve
from tests.sample_databases import (
    GOOSE,
    crush_db,
    goose_db,
    read_jsonl,
)

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"
AIDER = SAMPLES / "aider"
QWEN = SAMPLES / "qwen-code"
DROID = SAMPLES / "factory-droid"
KIMI = SAMPLES / "kimi"
OPENHANDS = SAMPLES / "openhands" / "hand-written" / "conversations"

KIMI_SESSION = "0198f2c1-5a6b-7c8d-9e0f-1a2b3c4d5e6f"
"""The session directory (``session_<uuid>``) the Kimi journals are laid out in."""
KIMI_STATE = {
    "createdAt": 1785618900000,
    "updatedAt": 1785619064679,
    "title": "Count the Swift files",
    "isCustomTitle": False,
    "workDir": "/private/tmp/as-agent-lab/kimi/project",
    "agents": {
        "main": {"homedir": "agents/main", "type": "main"},
        "agent-0": {"homedir": "agents/agent-0", "type": "sub", "parentAgentId": "main"},
    },
    "lastPrompt": 'read README.md then grep for "Kimi"',
}
"""A hand-written ``state.json`` in the shape FORMATS-NEW.md §9 gives (no real one is public)."""


def home_of(agent: str, home: Path) -> Path:
    """`agent`'s default home inside the directory `home` laid out like ``~``."""
    return resolve(BY_NAME[agent].home, home=home, env={})


# -- layouts ------------------------------------------------------------------------------------


def aider_projects(root: Path) -> dict[str, Path]:
    """Three projects below `root` (``src/<name>/``) holding the Aider samples as
    ``.aider.chat.history.md`` (the aider-repo excerpts joined, as in the source file) and the
    input histories beside them; → project name → chat history path."""
    out = {}
    for name, parts in {
        "quickdraw": [AIDER / "quickdraw" / ".aider.chat.history.md"],
        "aider": [AIDER / "aider-repo" / "chat-history.part1.md", AIDER / "aider-repo" / "chat-history.part2.md"],
        "simple-calculator": [AIDER / "simple-calculator" / ".aider.chat.history.md"],
    }.items():
        project = root / "src" / name
        project.mkdir(parents=True, exist_ok=True)
        (project / ".git").mkdir(exist_ok=True)
        dst = project / ".aider.chat.history.md"
        dst.write_bytes(b"".join(p.read_bytes() for p in parts))
        history = parts[0].parent / ".aider.input.history"
        if history.is_file():
            shutil.copyfile(history, project / ".aider.input.history")
        out[name] = dst
    return out


def goose_layout(home: Path) -> list[Path]:
    """The legacy Goose session files in ``sessions/`` and the ``sessions.db`` Goose made of
    them (`goose_db`); → their paths."""
    root = home_of("goose", home) / "sessions"
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for src in sorted(GOOSE.glob("*.jsonl")):
        dst = root / src.name
        shutil.copyfile(src, dst)
        out.append(dst)
    goose_db(root / "sessions.db")
    return [*out, root / "sessions.db"]


def qwen_layout(home: Path) -> Path:
    """The mock-model Qwen Code run as ``projects/-tmp-qwentest/chats/<sessionId>.jsonl``."""
    sid = json.loads((QWEN / "qwen_code.jsonl").read_text().split("\n", 1)[0])["sessionId"]
    dst = home_of("qwen-code", home) / "projects" / "-tmp-qwentest" / "chats" / f"{sid}.jsonl"
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(QWEN / "qwen_code.jsonl", dst)
    return dst


def droid_layout(home: Path) -> list[Path]:
    """The hand-written Droid session (``sessions/-tmp/<id>.jsonl``) and its hand-written
    ``<id>.settings.json``; → their paths."""
    sid = json.loads((DROID / "session_store_schema_drift.jsonl").read_text().split("\n", 1)[0])["id"]
    root = home_of("droid", home) / "sessions" / "-tmp"
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DROID / "session_store_schema_drift.jsonl", root / f"{sid}.jsonl")
    shutil.copyfile(DROID / "hand-written" / "droid_drift.settings.json", root / f"{sid}.settings.json")
    return [root / f"{sid}.jsonl", root / f"{sid}.settings.json"]


def kimi_layout(home: Path) -> list[Path]:
    """Session 1: the journal of the main agent (assistant_tools) and of its sub-agent (agent-0)
    and a hand-written ``state.json``; session 2: small.jsonl as its main journal; → paths."""
    root = home_of("kimi", home) / "sessions" / "wd_project_3f2a9c1b2d4e"
    one, two = root / f"session_{KIMI_SESSION}", root / "session_0198f2c1-0000-7000-8000-000000000002"
    files = {
        one / "agents" / "main" / "wire.jsonl": KIMI / "assistant_tools.jsonl",
        one / "agents" / "agent-0" / "wire.jsonl": KIMI / "subagent_agent-0.jsonl",
        two / "agents" / "main" / "wire.jsonl": KIMI / "small.jsonl",
    }
    for dst, src in files.items():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    (one / "state.json").write_text(json.dumps(KIMI_STATE, indent=2))
    return [*files, one / "state.json"]


# -- what `status` shows, counted from the raw files ------------------------------------------


def qwen_status(path: Path) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens) of one Qwen Code recording: prompts,
    replies, thoughts and slash commands; one call per assistant line; tokens = prompt (cached
    included) + candidates (OpenAI-converted usage: thoughts inside)."""
    recs = read_jsonl(path)
    msgs = sum(1 for r in recs if r["type"] == "user" and any(p.get("text") for p in r["message"]["parts"]))
    assistants = [r for r in recs if r["type"] == "assistant"]
    for r in assistants:
        parts = r["message"]["parts"]
        msgs += any(p.get("text") and not p.get("thought") for p in parts)
        msgs += sum(1 for p in parts if p.get("text") and p.get("thought") is True)
    msgs += sum(1 for r in recs if r.get("subtype") == "slash_command")
    tokens = sum(
        r["usageMetadata"]["promptTokenCount"] + r["usageMetadata"]["candidatesTokenCount"] for r in assistants
    )
    return {"ok": 1}, len({r["sessionId"] for r in recs}), msgs, len(assistants), tokens


def kimi_status(paths: list[Path]) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens) of Kimi journals: one session per
    journal; prompts, steers, think/text parts and compaction summaries; one call per step
    end plus each session-scope usage record (a compaction)."""
    journals = [p for p in paths if p.name == "wire.jsonl"]
    msgs = calls = tokens = 0
    for p in journals:
        for r in read_jsonl(p):
            t = r["type"]
            if t in ("turn.prompt", "turn.steer") and any(i.get("text", "").strip() for i in r["input"]):
                msgs += 1
            elif t == "context.append_loop_event" and r["event"]["type"] == "content.part":
                part = r["event"]["part"]
                msgs += bool((part.get("think") or part.get("text") or "").strip())
            elif t == "context.apply_compaction" and r.get("summary"):
                msgs += 1
            usage = None
            if t == "context.append_loop_event" and r["event"]["type"] == "step.end":
                usage = r["event"]["usage"]
            elif t == "usage.record" and r.get("usageScope") == "session":
                usage = r["usage"]
            if usage is not None:
                calls += 1
                tokens += usage["inputOther"] + usage["inputCacheRead"] + usage["inputCacheCreation"] + usage["output"]
    return {"ok": len(paths)}, len(journals), msgs, calls, tokens


def droid_status(paths: list[Path]) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens): text blocks (a leading system reminder
    is a message of its own), one call with the settings' cumulative usage."""
    transcript = next(p for p in paths if p.suffix == ".jsonl")
    settings = json.loads(next(p for p in paths if p.name.endswith(".settings.json")).read_text())
    msgs = 0
    for r in read_jsonl(transcript):
        if r["type"] != "message":
            continue
        for b in r["message"]["content"]:
            if b["type"] == "text" and b["text"].strip():
                reminder = re.match(r"\s*<system-reminder>.*?</system-reminder>\s*", b["text"], re.S)
                msgs += 1 + (reminder is not None and bool(b["text"][reminder.end() :].strip()))
    usage = settings["tokenUsage"]
    tokens = sum(usage[k] for k in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"))
    return {"ok": len(paths)}, 1, msgs, 1, tokens


def goose_status(paths: list[Path]) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens) of legacy session files and a
    ``sessions.db``: text of user and assistant messages and thinking blocks, one call per
    assistant message plus one per session with accumulated totals (their sum). A session Goose
    imported into the database is the same session (file stem = id) and its messages the same
    messages (by place in the session): each is counted once. Other files (the database's
    ``-wal`` and ``-shm``) are not sources."""
    paths = [p for p in paths if p.suffix in (".jsonl", ".db")]
    sessions: dict[str, dict] = {}

    def add(sid: str, place: int, role: str, content: list) -> None:
        text = "".join(b.get("text", "") for b in content if b.get("type", "text") == "text")
        thinking = sum(1 for b in content if b.get("type") == "thinking" and b.get("thinking"))
        s = sessions.setdefault(sid, {"msgs": {}, "usage": None})
        s["msgs"][place] = (bool(text.strip()) + thinking, role == "assistant")

    for p in paths:
        if p.suffix == ".db":
            con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            try:
                for sid, inp, out in con.execute(
                    "SELECT id, accumulated_input_tokens, accumulated_output_tokens FROM sessions"
                ):
                    sessions.setdefault(sid, {"msgs": {}, "usage": None})["usage"] = inp + out
                by_session: dict[str, int] = {}
                for sid, role, content in con.execute(
                    "SELECT session_id, role, content_json FROM messages ORDER BY id"
                ):
                    by_session[sid] = by_session.get(sid, 0) + 1
                    add(sid, by_session[sid], role, json.loads(content))
            finally:
                con.close()
            continue
        recs = read_jsonl(p)
        for i, r in enumerate(recs):
            if "role" not in r:
                if "accumulated_input_tokens" in r:
                    sessions.setdefault(p.stem, {"msgs": {}, "usage": None})["usage"] = (
                        r["accumulated_input_tokens"] + r["accumulated_output_tokens"]
                    )
                continue
            add(p.stem, i, r["role"], r["content"])
    msgs = sum(n for s in sessions.values() for n, _ in s["msgs"].values())
    calls = sum(a for s in sessions.values() for _, a in s["msgs"].values())
    usage = [s["usage"] for s in sessions.values() if s["usage"] is not None]
    return {"ok": len(paths)}, len(sessions), msgs, calls + len(usage), sum(usage)


_AIDER_TOKENS = re.compile(
    r"Tokens: ([\d.,]+k?) sent(?:, ([\d.,]+k?) cache write)?(?:, ([\d.,]+k?) cache hit)?, ([\d.,]+k?) received"
)


def _n(text: str | None) -> int:
    if not text:
        return 0
    return int(round(float(text[:-1].replace(",", "")) * 1000)) if text.endswith("k") else int(text.replace(",", ""))


def aider_status(paths: list[Path]) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens) of Aider chat histories: sessions are
    headers (plus a headed-less start); messages are runs of ``####`` lines, of ``>`` lines
    (with their unprefixed continuations) and of reply lines; one call per ``Tokens:`` report.
    Tokens: everything Aider reports, ``sent`` counted once — DeepSeek's ``sent`` includes its
    cache hits; before 0.51 Anthropic-style hits and writes were outside ``sent`` (all samples
    with cache counts are 0.50.2-dev)."""
    sessions = msgs = calls = tokens = 0
    for p in paths:
        lines = [line.rstrip() for line in p.read_text().split("\n")]
        if lines and lines[-1] == "":
            lines.pop()
        sessions += sum(1 for line in lines if line.startswith("# aider chat started at "))
        first = next((line for line in lines if line.strip()), "")
        sessions += not first.startswith("# aider chat started at ")
        kinds = []
        for line in lines:
            if line.startswith("# aider chat started at "):
                kinds.append("h")
            elif line == "####" or line.startswith("#### "):
                kinds.append("u")
            elif line == ">" or line.startswith("> "):
                kinds.append("t")
            elif not line.strip():
                kinds.append("a" if kinds and kinds[-1] == "a" else "-")
            else:
                kinds.append("t" if kinds and kinds[-1] == "t" and lines[len(kinds) - 1].strip() else "a")
        runs = [k for i, k in enumerate(kinds) if k in "uta" and (i == 0 or kinds[i - 1] != k)]
        msgs += len(runs)
        text = "\n".join(lines)
        model = None
        for line in lines:
            m = re.match(r"> (?:Main model|Model|Models): (\S+)", line)
            if m:
                model = m.group(1)
            t = _AIDER_TOKENS.search(line)
            if t:
                calls += 1
                sent, write, hit, recv = (_n(t.group(i)) for i in range(1, 5))
                tokens += sent + recv + (0 if "deepseek" in (model or "") else hit + write)
        assert text  # every sample has content
    return {"ok": len(paths)}, sessions, msgs, calls, tokens


def crush_status(db: Path) -> tuple[dict, int, int, int, None]:
    """(files, sessions, messages, model calls, tokens: none recorded) of a Crush database, by
    SQL over its rows: user and assistant text parts (one message per message row) and
    reasoning parts; one call per assistant message plus one cost row per session."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        sessions = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
        rows = con.execute("SELECT role, parts FROM messages").fetchall()
    finally:
        con.close()
    msgs = calls = 0
    for role, parts in rows:
        parts = json.loads(parts)
        msgs += role in ("user", "assistant") and any(p["type"] == "text" for p in parts)
        msgs += sum(1 for p in parts if p["type"] == "reasoning")
        calls += role == "assistant"
    return {"ok": 1}, sessions, msgs, calls + sessions, None


def openhands_layout(home: Path) -> list[Path]:
    """The hand-written OpenHands conversation in ``~/.openhands/conversations/``; → its files."""
    root = home_of("openhands", home) / "conversations"
    root.mkdir(parents=True, exist_ok=True)
    for src in sorted(OPENHANDS.iterdir()):
        shutil.copytree(src, root / src.name, dirs_exist_ok=True)
    return sorted(p for p in root.rglob("*.json"))


_THINK = re.compile(r"<think>(.*?)</think>", re.S)


def openhands_status(paths: list[Path]) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens) of OpenHands conversation files, from the
    raw JSON: the system prompt, user and agent message texts, an action's reasoning and its
    thought text outside ``<think>``, condensation summaries; one call per distinct
    ``llm_response_id`` of agent messages and actions plus one per ``base_state.json`` usage id
    with tokens (their prompt + completion)."""
    msgs = tokens = 0
    responses: set[str] = set()
    usage = 0
    sessions = set()
    for p in paths:
        d = json.loads(p.read_text())
        if p.name == "base_state.json":
            sessions.add(p.parent.name)
            for m in d["stats"]["usage_to_metrics"].values():
                u = m["accumulated_token_usage"]
                if u["prompt_tokens"] or u["completion_tokens"]:
                    usage += 1
                    tokens += u["prompt_tokens"] + u["completion_tokens"]
            continue
        kind = d["kind"]
        text = lambda items: "".join(i.get("text", "") for i in items)  # noqa: E731
        if kind == "SystemPromptEvent":
            msgs += bool(d["system_prompt"]["text"])
        elif kind == "MessageEvent":
            msgs += bool(text(d["llm_message"]["content"]).strip())
            if d["source"] == "agent" and d.get("llm_response_id"):
                responses.add(d["llm_response_id"])
        elif kind == "ActionEvent":
            thought = text(d["thought"])
            msgs += bool((d.get("reasoning_content") or "".join(_THINK.findall(thought))).strip())
            msgs += bool(_THINK.sub("", thought).strip())
            responses.add(d["llm_response_id"])
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            msgs += bool(d.get("summary"))
    return {"ok": len(paths)}, len(sessions), msgs, len(responses) + usage, tokens


CRUSH_PROJECT = "src/timer"
"""Where the built Crush database's project sits below a sample home."""


def build_sample_home_b(home: Path) -> Path:
    """Every harness above in one directory laid out like ``~``: Aider projects and the Crush
    project under ``src/`` (found from ``--home``), the others in their homes; → `home`."""
    aider_projects(home)
    goose_layout(home)
    qwen_layout(home)
    droid_layout(home)
    kimi_layout(home)
    openhands_layout(home)
    crush_db(home / CRUSH_PROJECT / ".crush" / "crush.db")
    return home


LOOSE_SAMPLES: tuple[tuple[str, Path], ...] = (
    ("qwen-code", QWEN / "system_telemetry.jsonl"),
    ("droid", DROID / "stream_json_schema_drift.jsonl"),
)
"""Samples no harness stores where a home would hold them: records with every value trimmed
(one session id shared by all), and a ``droid exec --output-format stream-json`` run."""

HARNESSES_B: tuple[str, ...] = ("aider", "goose", "qwen-code", "droid", "kimi", "crush", "openhands")
"""The harnesses whose sample homes this module builds."""
