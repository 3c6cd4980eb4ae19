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

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"
AIDER = SAMPLES / "aider"
GOOSE = SAMPLES / "goose"
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


# -- Crush: a database built from Crush's schema ------------------------------------------------

CRUSH_SCHEMA = """
-- charmbracelet/crush internal/db/migrations/20250424200609_initial.sql @ b86336ac3268 (tables,
-- the triggers that keep updated_at and message_count), then the columns of the migrations up to
-- 20250627000000 that the two real databases carry (FORMATS-NEW.md §10)
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
    updated_at INTEGER NOT NULL,  -- Unix timestamp in seconds
    created_at INTEGER NOT NULL   -- Unix timestamp in seconds
);
CREATE TRIGGER IF NOT EXISTS update_sessions_updated_at
AFTER UPDATE ON sessions
BEGIN
UPDATE sessions SET updated_at = strftime('%s', 'now')
WHERE id = new.id;
END;
CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    UNIQUE(path, session_id, version)
);
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts BLOB NOT NULL default '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages (session_id);
CREATE TRIGGER IF NOT EXISTS update_session_message_count_on_insert
AFTER INSERT ON messages
BEGIN
UPDATE sessions SET
    message_count = message_count + 1
WHERE id = new.session_id;
END;
ALTER TABLE sessions ADD COLUMN summary_message_id TEXT;
ALTER TABLE messages ADD COLUMN provider TEXT;
"""

T0 = 1_757_000_000
"""Seconds since the epoch (Crush stores seconds, FORMATS-NEW.md §10)."""
PARENT, CHILD = "4f0e7d3a-crush-session", "call_agent_01"


def _parts(*parts: tuple[str, dict]) -> str:
    return json.dumps([{"type": t, "data": d} for t, d in parts])


def _finish(reason: str, t: int) -> tuple[str, dict]:
    return ("finish", {"reason": reason, "time": t, "message": "", "details": ""})


CRUSH_MESSAGES = [
    # (id, session, role, parts, model, created seconds)
    ("m01", PARENT, "user", _parts(("text", {"text": "Make the timer beep at zero"}), _finish("stop", T0)), None, T0),
    (
        "m02",
        PARENT,
        "assistant",
        _parts(
            (
                "reasoning",
                {
                    "thinking": "Need to see the timer code first.",
                    "signature": "",
                    "started_at": T0 + 1,
                    "finished_at": T0 + 2,
                },
            ),
            ("text", {"text": "Looking at the timer and its test."}),
            (
                "tool_call",
                {
                    "id": "call_view_1",
                    "name": "view",
                    "input": json.dumps({"file_path": "/work/timer/src/timer.ts"}),
                    "provider_executed": False,
                    "finished": True,
                },
            ),
            (
                "tool_call",
                {
                    "id": "call_bash_1",
                    "name": "bash",
                    "input": json.dumps({"command": "cat test/timer.test.ts && git status"}),
                    "provider_executed": False,
                    "finished": True,
                },
            ),
            _finish("tool_use", T0 + 3),
        ),
        "openrouter/sonoma-sky-alpha",
        T0 + 1,
    ),
    (
        "m03",
        PARENT,
        "tool",
        _parts(
            (
                "tool_result",
                {
                    "tool_call_id": "call_view_1",
                    "name": "view",
                    "content": "export function tick() {}",
                    "metadata": "{}",
                    "is_error": False,
                },
            ),
            (
                "tool_result",
                {
                    "tool_call_id": "call_bash_1",
                    "name": "bash",
                    "content": "cat: test/timer.test.ts: No such file or directory",
                    "metadata": "{}",
                    "is_error": True,
                },
            ),
            _finish("stop", T0 + 4),
        ),
        None,
        T0 + 4,
    ),
    (
        "m04",
        PARENT,
        "assistant",
        _parts(
            (
                "tool_call",
                {
                    "id": CHILD,
                    "name": "agent",
                    "input": json.dumps({"prompt": "Find where the timer reaches zero"}),
                    "provider_executed": False,
                    "finished": True,
                },
            ),
            (
                "tool_call",
                {
                    "id": "call_edit_1",
                    "name": "edit",
                    "input": json.dumps(
                        {"file_path": "/work/timer/src/timer.ts", "old_string": "{}", "new_string": "{ beep(); }"}
                    ),
                    "provider_executed": False,
                    "finished": True,
                },
            ),
            _finish("tool_use", T0 + 6),
        ),
        "openrouter/sonoma-sky-alpha",
        T0 + 5,
    ),
    (
        "m05",
        PARENT,
        "tool",
        _parts(
            (
                "tool_result",
                {
                    "tool_call_id": CHILD,
                    "name": "agent",
                    "content": "tick() in src/timer.ts",
                    "metadata": "",
                    "is_error": False,
                },
            ),
            (
                "tool_result",
                {
                    "tool_call_id": "call_edit_1",
                    "name": "edit",
                    "content": "edited",
                    "metadata": "{}",
                    "is_error": False,
                },
            ),
            _finish("stop", T0 + 8),
        ),
        None,
        T0 + 8,
    ),
    (
        "m06",
        PARENT,
        "assistant",
        _parts(
            ("text", {"text": "Summary: the timer now beeps at zero; src/timer.ts changed."}),
            _finish("end_turn", T0 + 10),
        ),
        "openrouter/sonoma-sky-alpha",
        T0 + 9,
    ),
    (
        "c01",
        CHILD,
        "user",
        _parts(("text", {"text": "Find where the timer reaches zero"}), _finish("stop", T0 + 5)),
        None,
        T0 + 5,
    ),
    (
        "c02",
        CHILD,
        "assistant",
        _parts(("text", {"text": "tick() in src/timer.ts"}), _finish("end_turn", T0 + 7)),
        "openrouter/sonoma-sky-alpha",
        T0 + 6,
    ),
]
"""A session with a sub-agent: parallel tool calls answered by one tool message with several
results, every message ending in a finish part, seconds timestamps, the last reply a summary."""


def crush_db(path: Path, *, keep_open: bool = False) -> sqlite3.Connection | None:
    """Create ``path`` (``<project>/.crush/crush.db``) in WAL mode with `CRUSH_MESSAGES`; the
    session counters as Crush keeps them (last request's tokens, accumulated cost with the
    sub-agent's added to the parent's, ``summary_message_id``). Returns the open connection when
    `keep_open` (the ``-wal`` then holds the rows, as in a running Crush), else None."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(CRUSH_SCHEMA)
    con.execute(
        "INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens, cost, updated_at, "
        "created_at) VALUES (?, NULL, 'Timer beep', 0, 0, 0.0, ?, ?)",
        (PARENT, T0, T0),
    )
    con.execute(
        "INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens, cost, updated_at, "
        "created_at) VALUES (?, ?, 'New Agent Session', 0, 0, 0.0, ?, ?)",
        (CHILD, PARENT, T0 + 5, T0 + 5),
    )
    for mid, sid, role, parts, model, created in CRUSH_MESSAGES:
        con.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (mid, sid, role, parts, model, "openrouter" if model else None, created, created, created + 1),
        )
    # the counters: the sub-agent's last request and cost, then the parent's (child cost added)
    con.execute("UPDATE sessions SET prompt_tokens = 812, completion_tokens = 21, cost = 0.0021 WHERE id = ?", (CHILD,))
    con.execute(
        "UPDATE sessions SET prompt_tokens = 0, completion_tokens = 57, cost = 0.0021 + 0.0134, summary_message_id = 'm06' "
        "WHERE id = ?",
        (PARENT,),
    )
    con.commit()
    if keep_open:
        return con
    con.close()
    return None


GOOSE_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version) VALUES (10);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE,
    session_type TEXT NOT NULL DEFAULT 'user',
    working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER,
    schedule_id TEXT,
    recipe_json TEXT,
    user_recipe_values_json TEXT,
    provider_name TEXT,
    model_config_json TEXT,
    goose_mode TEXT NOT NULL DEFAULT 'auto',
    thread_id TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content_json TEXT NOT NULL,
    created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER,
    metadata_json TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id);
"""
"""Goose's ``sessions.db`` schema version 10: ``SessionStorage::create_schema`` in aaif-goose/goose
``crates/goose/src/session/session_manager.rs`` @ 9922a92e90e416e15e15a8ee67a44c1502a45f0c
(the ``threads`` tables omitted: not read)."""

GOOSE_IMPORTED = "issue-2529-excerpt"
"""A session Goose imported from the legacy file of that name (same id, same messages)."""
GOOSE_NATIVE, GOOSE_CHILD = "20251001_1", "20251001_2"
G0 = 1759305600  # 2025-10-01T08:00:00Z
_VISIBLE = json.dumps({"userVisible": True, "agentVisible": True})


def _g(role: str, created: int, *content: dict, meta: str = _VISIBLE) -> tuple[str, int, str, str]:
    return role, created, json.dumps(content), meta


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


GOOSE_MESSAGES: dict[str, list[tuple[str, int, str, str]]] = {
    GOOSE_NATIVE: [
        _g("user", G0, _text("Commit the watcher and write the notes file")),
        _g(
            "assistant",
            G0 + 2,
            {"type": "thinking", "thinking": "Commit first, then the notes.", "signature": "sig"},
            _text("Committing."),
            {
                "type": "toolRequest",
                "id": "toolu_01",
                "toolCall": {
                    "status": "success",
                    "value": {"name": "developer__shell", "arguments": {"command": "git commit -am 'Add watcher'"}},
                },
            },
        ),
        _g(
            "user",
            G0 + 3,
            {
                "type": "toolResponse",
                "id": "toolu_01",
                "toolResult": {
                    "status": "success",
                    "value": [{"type": "text", "text": "[main 1a2b3c4] Add watcher\n 1 file changed, 3 insertions(+)"}],
                },
            },
        ),
        _g(
            "assistant",
            G0 + 5,
            {
                "type": "toolRequest",
                "id": "toolu_02",
                "toolCall": {
                    "status": "success",
                    "value": {
                        "name": "developer__text_editor",
                        "arguments": {"command": "write", "path": "/work/watcher/NOTES.md", "file_text": "notes"},
                    },
                },
            },
            {
                "type": "toolRequest",
                "id": "toolu_03",
                "toolCall": {
                    "status": "success",
                    "value": {"name": "developer__shell", "arguments": {"command": "cat missing.txt"}},
                },
            },
        ),
        # the two results in one message; the second as rmcp's CallToolResult
        _g(
            "user",
            G0 + 6,
            {
                "type": "toolResponse",
                "id": "toolu_02",
                "toolResult": {
                    "status": "success",
                    "value": {
                        "content": [{"type": "text", "text": "Successfully wrote to NOTES.md"}],
                        "isError": False,
                    },
                },
            },
            {
                "type": "toolResponse",
                "id": "toolu_03",
                "toolResult": {"status": "error", "error": "cat: missing.txt: No such file or directory"},
            },
        ),
        # a compaction: the summary only the model sees
        _g(
            "user",
            G0 + 60,
            _text("Summary: watcher committed; notes written."),
            meta=json.dumps({"userVisible": False, "agentVisible": True}),
        ),
        _g("assistant", G0 + 62, _text("Done: committed 1a2b3c4 and wrote NOTES.md.")),
        _g("user", G0 + 63, {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "Compacted"}),
    ],
    GOOSE_CHILD: [
        _g("user", G0 + 10, _text("List the tests")),
        _g("assistant", G0 + 11, _text("There are none yet.")),
    ],
    GOOSE_IMPORTED: [],  # filled from the legacy file by goose_db
}


def goose_db(path: Path, *, keep_open: bool = False) -> sqlite3.Connection | None:
    """Create ``path`` (``<data>/sessions/sessions.db``) in WAL mode with `GOOSE_SCHEMA`: the
    legacy sample ``issue-2529-excerpt.jsonl`` imported as Goose's ``import_legacy`` does (same
    session id, metadata and messages in order) plus one message Goose added after, a native
    session with calls, parallel results, a hidden summary and a notification, and a sub-agent
    session. Timestamps as Goose writes them (``created_timestamp`` seconds, ``created_at`` /
    ``updated_at`` SQLite UTC text). Returns the open connection when `keep_open`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(GOOSE_SCHEMA)
    meta, *legacy = _jsonl(GOOSE / f"{GOOSE_IMPORTED}.jsonl")
    imported = [(r["role"], r["created"], json.dumps(r["content"]), _VISIBLE) for r in legacy]
    imported.append(_g("assistant", legacy[-1]["created"] + 4, _text("I'll add a watcher with notify.")))
    stamp = "2025-10-01 08:01:03"
    sessions = [
        (GOOSE_IMPORTED, meta["description"], "user", meta["working_dir"], meta, imported),
        (GOOSE_NATIVE, "Commit the watcher", "user", "/work/watcher", None, GOOSE_MESSAGES[GOOSE_NATIVE]),
        (GOOSE_CHILD, "List the tests", "sub_agent", "/work/watcher", None, GOOSE_MESSAGES[GOOSE_CHILD]),
    ]
    for sid, name, stype, cwd, m, messages in sessions:
        totals = (m["accumulated_input_tokens"], m["accumulated_output_tokens"]) if m else (5210, 388)
        con.execute(
            "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, extension_data, "
            "total_tokens, input_tokens, output_tokens, accumulated_total_tokens, accumulated_input_tokens, "
            "accumulated_output_tokens, provider_name, model_config_json) "
            "VALUES (?, ?, ?, ?, '2025-10-01 08:00:00', ?, '{}', 900, 800, 100, ?, ?, ?, 'anthropic', ?)",
            (sid, name, stype, cwd, stamp, sum(totals), *totals, json.dumps({"model_name": "claude-sonnet-4-5"})),
        )
        for role, created, content, metadata in messages:
            con.execute(
                "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
                "VALUES ('msg_' || ? || '_' || lower(hex(randomblob(8))), ?, ?, ?, ?, ?)",
                (sid, sid, role, content, created, metadata),
            )
    con.commit()
    if keep_open:
        return con
    con.close()
    return None


# -- what `status` shows, counted from the raw files ------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def qwen_status(path: Path) -> tuple[dict, int, int, int, int]:
    """(files, sessions, messages, model calls, tokens) of one Qwen Code recording: prompts,
    replies, thoughts and slash commands; one call per assistant line; tokens = prompt (cached
    included) + candidates (OpenAI-converted usage: thoughts inside)."""
    recs = _jsonl(path)
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
        for r in _jsonl(p):
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
    for r in _jsonl(transcript):
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
        recs = _jsonl(p)
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
