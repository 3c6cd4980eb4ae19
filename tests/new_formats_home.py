"""Build agent homes from the Gemini / OpenCode / claude.ai samples, laid out in their real
directories (FORMATS.md §4, §5, §8), and an ``opencode.db`` with OpenCode's SQLite schema."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "samples"
if not SAMPLES.is_dir():  # worktrees live in /work/wt/<name>; shared is /work/shared
    SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "samples"
GEMINI = SAMPLES / "gemini"
OPENCODE = SAMPLES / "opencode"
CLAUDE_AI = SAMPLES / "claude-ai-export"
OPENCODE_EXPORT = OPENCODE / "code-session-memory__tests__fixtures__opencode-session.json"

# OpenCode's SQLite tables (Drizzle schema of OpenCode ≥ 1.2: session columns; message/part a
# `data` JSON column beside their ids); only the columns the reader uses.
OPENCODE_DDL = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text, directory text,
    title text, version text, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
    time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
    time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""


def gemini_layout(home: Path) -> dict[str, Path]:
    """Each Gemini sample at ``.gemini/tmp/<projectHash>/chats/session-<n>.json[l]``; → sample name → path."""
    out = {}
    for i, src in enumerate(sorted(GEMINI.iterdir())):
        head = src.read_text().split("\n", 1)[0] if src.suffix == ".jsonl" else src.read_text()
        try:
            project = json.loads(head).get("projectHash") or "nohash"
        except json.JSONDecodeError:
            project = "nohash"
        dst = home / ".gemini" / "tmp" / project / "chats" / f"session-{i:02d}{src.suffix}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        out[src.name] = dst
    return out


def opencode_storage_files() -> list[tuple[Path, str]]:
    """(sample, storage-relative path) for every OpenCode storage-tree sample."""
    out = []
    for src in sorted(OPENCODE.iterdir()):
        if src == OPENCODE_EXPORT:
            continue
        tail = src.name.split("__")
        kind_at = max(i for i, seg in enumerate(tail) if seg in ("session", "message", "part"))
        segs = tail[kind_at:]
        if len(segs) == 2:  # storage_legacy part: no parent directory in the name
            segs = [segs[0], json.loads(src.read_text())["messageID"], segs[1]]
        out.append((src, "/".join(segs)))
    return out


def opencode_layout(home: Path) -> Path:
    """The storage tree under ``.local/share/opencode/storage``; returns the OpenCode data dir."""
    root = home / ".local" / "share" / "opencode"
    for src, rel in opencode_storage_files():
        dst = root / "storage" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return root


def export_to_sqlite(export: dict, db_path: Path) -> sqlite3.Connection:
    """An ``opencode.db`` (WAL mode) holding one ``opencode export`` document; returns the open
    writer connection (autocommit)."""
    con = sqlite3.connect(db_path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(OPENCODE_DDL)
    info = export["info"]
    t = info["time"]
    con.execute(
        "INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
        (
            info["id"],
            info["projectID"],
            info.get("parentID"),
            info.get("slug"),
            info.get("directory"),
            info.get("title"),
            info.get("version"),
            t["created"],
            t["updated"],
        ),
    )
    for m in export["messages"]:
        add_message(con, m)
    return con


def add_message(con: sqlite3.Connection, m: dict, bump_ms: int = 0) -> None:
    """Insert one export message (``{info, parts}``) as OpenCode writes it: message row, part rows."""
    info = m["info"]
    data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
    created = info["time"]["created"] + bump_ms
    con.execute(
        "INSERT INTO message VALUES (?,?,?,?,?)", (info["id"], info["sessionID"], created, created, json.dumps(data))
    )
    for j, p in enumerate(m["parts"]):
        pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
        con.execute(
            "INSERT INTO part VALUES (?,?,?,?,?,?)",
            (p["id"], p["messageID"], p["sessionID"], created + j, created + j, json.dumps(pdata)),
        )


def claude_ai_layout(root: Path) -> Path:
    """A data-export folder whose ``conversations.json`` is the array of both samples."""
    root.mkdir(parents=True, exist_ok=True)
    convs = [json.loads(p.read_text()) for p in sorted(CLAUDE_AI.iterdir())]
    path = root / "conversations.json"
    path.write_text(json.dumps(convs))
    return path
