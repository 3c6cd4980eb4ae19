"""SQLite databases built from the harnesses' own published schemas, for tests: Crush's
``crush.db`` (charmbracelet/crush's migrations) and Goose's ``sessions.db`` (block/goose's schema),
each filled with rows modelled on real sessions (FORMATS-NEW.md §9–§10). Split out of
`tests.repo_sample_homes_b`, which lays them out in a home and counts what `status` must show."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

GOOSE = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "goose"


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a JSONL file's non-blank lines."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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
    meta, *legacy = read_jsonl(GOOSE / f"{GOOSE_IMPORTED}.jsonl")
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
