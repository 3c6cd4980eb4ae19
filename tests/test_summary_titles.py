"""Claude `summary` records title the session that owns their leaf, in either indexing order."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import Loader

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
LEAF = "1eaf0000-0000-4000-8000-000000000003"


def write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def session_a(home: Path) -> None:
    base = {"sessionId": A, "cwd": "/p", "version": "2.0.0", "type": "user", "timestamp": "2025-10-01T10:00:00Z"}
    write(
        home / ".claude/projects/-p" / f"{A}.jsonl",
        [
            {
                **base,
                "uuid": LEAF,
                "parentUuid": None,
                "message": {"role": "user", "content": "fix the flaky retry test"},
            },
        ],
    )


def session_b(home: Path) -> None:
    write(
        home / ".claude/projects/-p" / f"{B}.jsonl",
        [
            {"type": "summary", "summary": "Flaky retry test fixed", "leafUuid": LEAF},
            {
                "sessionId": B,
                "cwd": "/p",
                "type": "user",
                "uuid": "b1",
                "parentUuid": None,
                "timestamp": "2025-10-02T10:00:00Z",
                "message": {"role": "user", "content": "continue"},
            },
        ],
    )


def index(db, home: Path) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run([Source("claude-local", "claude", home / ".claude")])


@pytest.mark.parametrize("order", ["leaf_first", "summary_first"])
def test_summary_in_a_later_file_titles_the_session_owning_its_leaf(db, tmp_path, order):
    first, second = (session_a, session_b) if order == "leaf_first" else (session_b, session_a)
    first(tmp_path)
    index(db, tmp_path)
    second(tmp_path)
    index(db, tmp_path)
    with db.connect() as conn:
        titles = dict(conn.execute("SELECT session_uid, title FROM ah.session WHERE agent_id = ''").fetchall())
    assert titles[A] == "Flaky retry test fixed"
    assert titles[B] == "continue"
