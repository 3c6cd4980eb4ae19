"""Message uids reused by another session (`db.tables.merges.CONTENT_COLUMNS`): a crafted
transcript that copies a real session's record uuids with other text must not merge into (and
overwrite) that session's messages — the stored rows are kept and a `uid_conflict` issue names
both sessions — while Claude Code's resume copies (same uuid and text, new sessionId) still merge,
counted once. Real transcripts from the shared corpus, the real loader, the embedded server."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.homes import index

REAL = ".claude/projects/-Users-user1-workspace-JSSoundRecorder"
REAL_SESSION = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"
RESUMED = ".claude/projects/-Users-user1-workspace-claude-code-log-sample"
RESUME_PAIR = ("71c9afe9-d9cc-4583-86b3-e62ba682b83a", "b45ad5d8-81fb-4bcb-baba-19d9f503d731")
"""Two real files holding the same record uuid under their own sessionId (FORMATS.md)."""


def craft(src: Path, dst_dir: Path) -> tuple[str, set[str]]:
    """A transcript reusing `src`'s user-record uuids under a new session id with other text →
    (its session id, the uuids whose text it changed)."""
    # a fixed id sorting after the real one: the crafted copy starts and ends with the real
    # session, so the rows it copies unchanged go by session uid (`db.tables.claims`,
    # tests/test_uid_owner.py) — here they stay the real session's
    session = "ffffffff-0000-4000-8000-" + uuid.uuid4().hex[:12]
    changed: set[str] = set()
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "sessionId" in rec:
            rec["sessionId"] = session
        content = rec.get("message", {}).get("content") if rec.get("type") in ("user", "assistant") else None
        if isinstance(content, str):
            rec["message"]["content"] = f"crafted text {len(changed)}: ignore the stored history"
            changed.add(rec["uuid"])
        elif isinstance(content, list) and any(isinstance(c, dict) and c.get("type") == "text" for c in content):
            for c in content:
                if isinstance(c, dict) and c.get("type") == "text":
                    c["text"] = f"crafted text {len(changed)}: ignore the stored history"
            changed.add(rec["uuid"])
        out.append(json.dumps(rec))
    dst_dir.mkdir(parents=True)
    (dst_dir / f"{session}.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    return session, changed


def messages(conn: psycopg.Connection, session_uid: str) -> dict[str, str | None]:
    return dict(
        conn.execute(
            "SELECT m.message_uid, m.text FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
            "WHERE s.session_uid = %s",
            (session_uid,),
        ).fetchall()
    )


def conflicts(conn: psycopg.Connection) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT f.rel_path, i.detail FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
        "WHERE i.kind = 'uid_conflict' ORDER BY i.byte_offset"
    ).fetchall()


@pytest.fixture
def home(corpus_home, own_tmp) -> Path:
    for rel in (REAL, RESUMED):
        shutil.copytree(corpus_home / rel, own_tmp / rel)
    return own_tmp


@pytest.mark.parametrize("passes", ["crafted in a later pass", "both in one batch"])
def test_a_crafted_file_reusing_a_sessions_uids_keeps_the_stored_messages_and_records_the_conflict(db, home, passes):
    if passes == "crafted in a later pass":
        first = index(db, home)
        assert first.issues["uid_conflict"] == 0
        with psycopg.connect(db.dsn) as conn:
            before = messages(conn, REAL_SESSION)
    crafted, changed = craft(home / REAL / f"{REAL_SESSION}.jsonl", home / ".claude/projects/-zz-crafted")
    assert len(changed) >= 3
    summary = index(db, home, batch_lines=100_000)  # one batch: the conflict met while folding
    assert summary.files_failed == 0
    with psycopg.connect(db.dsn) as conn:
        real = messages(conn, REAL_SESSION)
        if passes == "crafted in a later pass":
            assert real == before  # nothing overwritten
        assert changed <= set(real) and not any("crafted text" in (real[u] or "") for u in changed)
        # the crafted session got none of the conflicting uids; its other records merged as copies
        assert not changed & set(messages(conn, crafted))
        found = conflicts(conn)
        assert summary.issues["uid_conflict"] == len(changed) == len(found)
        assert {rel for rel, _ in found} == {f"projects/-zz-crafted/{crafted}.jsonl"}
        assert all(f"of session {crafted} was already stored for session {REAL_SESSION}" in d for _, d in found)
    again = index(db, home)  # nothing new: no conflict counted twice
    assert again.issues["uid_conflict"] == 0
    with psycopg.connect(db.dsn) as conn:
        assert len(conflicts(conn)) == len(changed)


def test_resume_copies_of_a_record_still_merge_once_without_a_conflict(db, home):
    base = home / RESUMED
    uuids = [
        {json.loads(line).get("uuid") for line in (base / f"{name}.jsonl").read_text().splitlines()}
        for name in RESUME_PAIR
    ]
    shared = (uuids[0] & uuids[1]) - {None}
    assert shared  # the real resume copy
    summary = index(db, home, batch_lines=7)  # the copies meet in the SQL merge, batches apart
    assert summary.issues["uid_conflict"] == 0
    with psycopg.connect(db.dsn) as conn:
        assert conflicts(conn) == []
        rows = conn.execute(
            "SELECT message_uid, count(*) FROM ah.message WHERE message_uid = ANY(%s) GROUP BY 1", (list(shared),)
        ).fetchall()
        assert sorted(u for u, n in rows if n == 1) == sorted(shared)  # once each
