"""Cursor's ``state.vscdb`` (SQLite, written by the Cursor app) as the sidecar of its agent
transcripts: the composer's title and model, best effort (issue 16).

Cursor keeps one ``composerData:<composer id>`` row per chat in table ``cursorDiskKV(key,
value)`` of ``<Cursor user dir>/globalStorage/state.vscdb`` (FORMATS §6: ``name``,
``modelConfig.modelName``, ``createdAt``/``lastUpdatedAt`` in unix ms). A transcript
``agent-transcripts/<id>.jsonl`` is looked up by its ``<id>``. The database is opened read-only
(``mode=ro``, never created, never locked for writing) while Cursor may be writing it; anything
that goes wrong (no file, another schema, a locked or corrupt database, no row) gives None — the
transcript is indexed without title and model.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from agent_history.harnesses import harness
from agent_history.harnesses.places import resolve

MAX_VALUE_BYTES = 4 * 1024 * 1024


def state_db_path(cursor_home: Path, env: dict[str, str] | None = None) -> Path:
    """Where Cursor's global ``state.vscdb`` is for the Cursor home `cursor_home` (``~/.cursor``:
    the user home is its parent): the cursor row's ``app_state`` place (`agent_history.harnesses`).
    The environment (``XDG_CONFIG_HOME``, ``APPDATA``) applies only to the real home; a copy
    laid out like ``~`` (``index --home``) is read as laid out."""
    if env is None and cursor_home.parent != Path.home():
        env = {}
    place = harness("cursor").app_state
    assert place is not None
    return resolve(place, home=cursor_home.parent, env=env)


def composer_sidecar(db_path: Path, transcript: str) -> dict | None:
    """``{"title", "model"}`` of the composer whose id is `transcript`'s file stem (values may be
    None), or None when the database or the row is not there or cannot be read."""
    stem = PurePosixPath(transcript.replace("\\", "/")).name.removesuffix(".jsonl")
    if not db_path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(db_path))}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(
            "SELECT value FROM cursorDiskKV WHERE key = ? AND length(value) <= ?",
            (f"composerData:{stem}", MAX_VALUE_BYTES),
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if row is None or row[0] is None:
        return None
    try:
        data = json.loads(row[0])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    model = data.get("modelConfig")
    return {
        "title": data.get("name") if isinstance(data.get("name"), str) else None,
        "model": model.get("modelName")
        if isinstance(model, dict) and isinstance(model.get("modelName"), str)
        else None,
    }
