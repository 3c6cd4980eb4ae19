"""Field cases that need the loader (install paths, offsets, sidecars): ../shared/field/EXPECTED.md."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import Loader


def install(field_dir: Path, home: Path, case: str, rel: str, extra: str | None = None) -> Path:
    dst = home / ".claude" / "projects" / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(field_dir / f"{case}.jsonl", dst)
    if extra:
        for f in (field_dir / f"{case}.extra").iterdir():
            shutil.copy(f, dst.parent / f.name)
    return dst


def index_claude(db, home: Path):
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        return Loader(conn).run([Source("claude-local", "claude", home / ".claude")])


def test_e04_subagent_transcript_adds_no_top_level_session_and_reads_its_sidecar(db, field_dir, tmp_path):
    parent = "33333333-3333-4333-8333-333333333333"
    install(field_dir, tmp_path, "E04", f"-home-user-proj/{parent}/subagents/agent-a1b2c3d4.jsonl", extra="E04.extra")
    summary = index_claude(db, tmp_path)
    assert summary.files_failed == 0
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT session_uid, agent_id, is_subagent, parent_session_uid, subagent_type, prompt_count, "
            "input_uncached, cache_write_5m, cache_read, output FROM ah.session"
        ).fetchall()
        found = conn.execute("SELECT count(*) FROM ah.tool_call WHERE output LIKE '%%src/config.ts:12%%'").fetchone()[0]
        role = conn.execute("SELECT role FROM ah.source_file").fetchone()[0]
    assert rows == [(parent, "a1b2c3d4", True, parent, "general-purpose", 0, 8, 5000, 5040, 60)]
    assert found == 1
    assert role == "subagent"


def test_e13_torn_last_line_keeps_the_offset_at_its_first_byte(db, field_dir, tmp_path):
    path = install(field_dir, tmp_path, "E13", "-home-user-proj/00000013-0000-4000-8000-000000000000.jsonl")
    data = path.read_bytes()
    line6_start = data.rfind(b"\n") + 1
    index_claude(db, tmp_path)
    with db.connect() as conn:
        offset, lines = conn.execute("SELECT indexed_offset, line_count FROM ah.source_file").fetchone()
        issues = conn.execute("SELECT kind, line_number FROM ah.parse_issue ORDER BY line_number, kind").fetchall()
        messages = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
    assert (offset, lines) == (line6_start, 5)
    assert ("invalid_json", 4) in issues
    assert not any(kind == "invalid_json" and line in (2, 6) for kind, line in issues)
    assert messages == 4  # lines 1, 3, 5 and the object recovered at the end of line 4


def test_e14_a_1_2_mb_line_is_indexed_with_attachment_metadata_only(db, field_dir, tmp_path):
    install(field_dir, tmp_path, "E14", "-home-user-proj/00000014-0000-4000-8000-000000000000.jsonl")
    summary = index_claude(db, tmp_path)
    assert "line_too_long" not in summary.issues
    with db.connect() as conn:
        n_sessions = conn.execute("SELECT count(*) FROM ah.session").fetchone()[0]
        n_messages = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
        longest = conn.execute("SELECT max(length(text)) FROM ah.message").fetchone()[0]
        att = conn.execute("SELECT attachments FROM ah.message WHERE attachments IS NOT NULL").fetchall()
        hit = conn.execute(
            "SELECT count(*) FROM ah.message WHERE text LIKE 'Compare this screenshot with the mockup%%'"
        ).fetchone()[0]
    assert (n_sessions, n_messages, hit) == (1, 2, 1)
    assert longest < 1000
    assert len(att) == 1 and att[0][0][0]["media_type"] == "image/png"


@pytest.mark.parametrize("project_dir", ["-home-user-my-proj-v2-sub-dir"])
def test_e15_project_path_comes_from_cwd_not_the_lossy_directory_name(db, field_dir, tmp_path, project_dir):
    install(field_dir, tmp_path, "E15", f"{project_dir}/00000015-0000-4000-8000-000000000000.jsonl")
    index_claude(db, tmp_path)
    with db.connect() as conn:
        cwd, repo = conn.execute(
            "SELECT s.cwd, r.name FROM ah.session s LEFT JOIN ah.repo r ON r.id = s.repo_id"
        ).fetchone()
    assert (cwd, repo) == ("/home/user/my_proj.v2/sub-dir", "sub-dir")
