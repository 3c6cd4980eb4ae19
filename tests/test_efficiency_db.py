"""Efficiency classifier in the catalogue: triggers stored per model call by the post-pass, roles,
the `ah.efficiency` view, position over timestamps, rebuild after a parser upgrade, and the
`efficiency` CLI command and MCP tool. Real embedded PostgreSQL, real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import rebuild
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.mcp_client import call, server_env

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "efficiency"
sys.path.insert(0, str(FIXTURES))
from make_fixtures import (  # noqa: E402
    CLAUDE_AGENT,
    CLAUDE_SESSION,
    CODEX_ROOT,
    CODEX_WORKER,
    EXPECTED,
    HOME,
    PI_IDLE,
    PI_SESSION,
)

PY = sys.executable


def _sources(home: Path) -> list[Source]:
    return [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]


def _index(dsn: str, home: Path) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        summary = Loader(conn).run(_sources(home))
    assert summary.files_failed == 0


def _sequences(dsn: str) -> dict[tuple[str, str, str], list[str | None]]:
    with psycopg.connect(dsn) as conn:
        out: dict = {}
        for agent, uid, aid in conn.execute("SELECT agent, session_uid, agent_id FROM ah.session"):
            out[(agent, uid, aid)] = []
        for agent, uid, aid, trig in conn.execute(
            "SELECT s.agent, s.session_uid, s.agent_id, mc.trigger FROM ah.model_call AS mc "
            "JOIN ah.session AS s ON s.id = mc.session_id WHERE NOT coalesce(mc.is_api_error, false) "
            "ORDER BY mc.source_id, mc.byte_offset"
        ):
            out[(agent, uid, aid)].append(trig)
    return out


def _copy_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    return home


def test_post_pass_stores_the_expected_trigger_sequence_of_every_fixture_thread(db):
    _index(db.dsn, HOME)
    assert _sequences(db.dsn) == EXPECTED


def test_roles_worker_root_solo_and_null_poll_share_without_classified_calls(db):
    _index(db.dsn, HOME)
    with psycopg.connect(db.dsn) as conn:
        rows = {
            (r[0], r[1], r[2]): r[3:]
            for r in conn.execute(
                "SELECT agent, session_uid, agent_id, role, calls, n_user, n_status, n_wait, unclassified, "
                "poll_share, input_tokens, cache_read_tokens, output_tokens FROM ah.efficiency"
            )
        }
    assert rows[("claude", CLAUDE_SESSION, "")] == ("root", 11, 2, 1, 2, 0, Decimal("0.2727"), 110, 11000, 220)
    assert rows[("claude", CLAUDE_SESSION, CLAUDE_AGENT)] == ("worker", 2, 1, 1, 0, 0, Decimal("0.5000"), 10, None, 10)
    assert rows[("codex", CODEX_ROOT, "")] == ("root", 9, 1, 1, 1, 0, Decimal("0.2222"), 450, 450, 90)
    assert rows[("codex", CODEX_WORKER, "")] == ("worker", 2, 1, 1, 0, 0, Decimal("0.5000"), 100, 100, 20)
    assert rows[("pi", PI_SESSION, "")] == ("root", 10, 2, 2, 1, 0, Decimal("0.3000"), 100, 1000, 50)
    # an API error is not a call: nothing classified, so poll_share is NULL (never 0), tokens unknown
    assert rows[("pi", PI_IDLE, "")] == ("solo", 0, 0, 0, 0, 0, None, None, None, None)


def test_a_second_post_pass_changes_nothing(db):
    _index(db.dsn, HOME)
    with psycopg.connect(db.dsn) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM ah.session")]
        assert conn.execute("SELECT ah.refresh_efficiency(%s)", (ids,)).fetchone()[0] == 0


def test_root_role_follows_a_child_indexed_after_its_parent(db, tmp_path):
    home = _copy_home(tmp_path)
    worker = next(home.rglob(f"*{CODEX_WORKER}.jsonl"))
    held = tmp_path / worker.name
    worker.rename(held)
    _index(db.dsn, home)
    with psycopg.connect(db.dsn) as conn:
        role = "SELECT thread_role FROM ah.session WHERE session_uid = %s"
        assert conn.execute(role, (CODEX_ROOT,)).fetchone()[0] == "root"  # it spawned (spawn_agent)
        held.rename(worker)
    _index(db.dsn, home)
    with psycopg.connect(db.dsn) as conn:
        assert conn.execute(role, (CODEX_WORKER,)).fetchone()[0] == "worker"
        assert conn.execute(role, (CODEX_ROOT,)).fetchone()[0] == "root"


def _retime_results(home: Path, stamp: str) -> None:
    for path in home.rglob("*.jsonl"):
        out = []
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
            message = rec.get("message") if isinstance(rec.get("message"), dict) else {}
            content = message.get("content")
            if (
                payload.get("type") == "function_call_output"
                or message.get("role") == "toolResult"
                or (isinstance(content, list) and any(b.get("type") == "tool_result" for b in content))
            ):
                rec["timestamp"] = stamp
            out.append(json.dumps(rec))
        path.write_text("\n".join(out) + "\n")


@pytest.mark.parametrize("stamp", ["2000-01-01T00:00:00.000Z", "2026-01-05T10:00:00.123Z"])
def test_position_decides_results_retimed_or_tied_to_one_millisecond(db, tmp_path, stamp):
    home = _copy_home(tmp_path)
    _retime_results(home, stamp)
    _index(db.dsn, home)
    assert _sequences(db.dsn) == EXPECTED


def test_rebuild_after_a_parser_upgrade_fills_the_new_columns_and_triggers(db, tmp_path):
    home = _copy_home(tmp_path)
    _index(db.dsn, home)
    fresh = _sequences(db.dsn)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        # the catalogue as the previous parser versions left it: no positions, record types, triggers
        conn.execute("UPDATE ah.source_file SET parser_version = 1")
        conn.execute("UPDATE ah.tool_call SET output_byte_offset = NULL, output_line = NULL")
        conn.execute("UPDATE ah.message SET record_type = NULL, record_origin = NULL")
        conn.execute("UPDATE ah.model_call SET trigger = NULL")
        conn.execute("UPDATE ah.session SET thread_role = NULL")
    for path in home.rglob("*.jsonl"):  # the files changed since: the loader looks at them again
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run(_sources(home))
        upgraded = conn.execute("SELECT count(*) FROM ah.source_file WHERE status = 'parser_upgraded'").fetchone()[0]
        issues = conn.execute("SELECT count(*) FROM ah.parse_issue WHERE kind = 'parser_upgraded'").fetchone()[0]
        assert (upgraded, issues) == (6, 6)
        assert conn.execute("SELECT count(trigger) FROM ah.model_call").fetchone()[0] == 0
        rebuild(conn, _sources(home), [])
        filled = conn.execute(
            "SELECT count(*), count(output_byte_offset) FROM ah.tool_call WHERE outcome IS NOT NULL"
        ).fetchone()
        assert filled[0] == filled[1] > 0
        assert conn.execute("SELECT count(*) FROM ah.message WHERE record_type IS NULL").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM ah.session WHERE thread_role IS NULL").fetchone()[0] == 0
    assert _sequences(db.dsn) == fresh == EXPECTED


def _cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


def test_cli_efficiency_json_and_filters(db, cli_env):
    _index(db.dsn, HOME)
    out = _cli("efficiency", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    threads = {(t["agent"], t["session_uid"], t["agent_id"]): t for t in data["threads"]}
    assert set(threads) == set(EXPECTED)
    root = threads[("claude", CLAUDE_SESSION, "")]
    assert root["role"] == "root" and root["calls"] == 11 and root["poll_share"] == 0.2727
    assert root["triggers"] == {
        "user": 2,
        "model": 1,
        "work": 1,
        "status": 1,
        "wait": 2,
        "event": 1,
        "noop": 1,
        "orchestrate": 1,
        "agent_msg": 1,
    }
    assert root["tokens"] == {"input": 110, "cache_read": 11000, "output": 220}
    assert threads[("pi", PI_IDLE, "")]["poll_share"] is None
    totals = data["totals"]
    assert (totals["threads"], totals["calls"], totals["unclassified"]) == (6, 34, 0)
    assert (totals["triggers"]["status"], totals["triggers"]["wait"]) == (6, 4)
    assert totals["poll_share"] == 0.2941  # 10 / 34

    workers = json.loads(_cli("efficiency", "--json", "--role", "worker", env=cli_env).stdout)
    assert sorted(t["session_uid"] for t in workers["threads"]) == [CODEX_WORKER, CLAUDE_SESSION]
    one = json.loads(_cli("efficiency", "--json", "--session", CODEX_ROOT, env=cli_env).stdout)
    assert sorted(t["session_uid"] for t in one["threads"]) == [CODEX_ROOT, CODEX_WORKER]  # rooted in it
    codex = json.loads(_cli("efficiency", "--json", "--agent", "codex", env=cli_env).stdout)
    assert {t["agent"] for t in codex["threads"]} == {"codex"}


def test_cli_efficiency_rejects_an_unknown_role_with_one_line(db, cli_env):
    out = _cli("efficiency", "--role", "boss", env=cli_env)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["error: unknown role 'boss' (known: root, worker, solo)"]


def test_cli_efficiency_table_prints_every_corpus_thread(corpus_db, cli_env):  # noqa: F811
    db = corpus_db
    cli_env = {**cli_env, "AGENT_HISTORY_DSN": db.dsn, "AGENT_HISTORY_READER_DSN": db.reader_dsn}
    env = {**cli_env, "COLUMNS": "250"}
    out = _cli("efficiency", env=env)
    assert out.returncode == 0, out.stderr
    with psycopg.connect(db.dsn) as conn:
        threads = conn.execute("SELECT count(*) FROM ah.session").fetchone()[0]
        calls = conn.execute("SELECT count(*) FROM ah.model_call WHERE NOT coalesce(is_api_error, false)").fetchone()[0]
    data = json.loads(_cli("efficiency", "--json", env=cli_env).stdout)
    assert len(data["threads"]) == threads == data["totals"]["threads"]
    assert data["totals"]["calls"] == calls and data["totals"]["unclassified"] == 0
    assert f"{threads} threads" in out.stdout


def test_mcp_efficiency_tool(db, tmp_path):
    _index(db.dsn, HOME)
    env = server_env(db.dsn, db.reader_dsn, tmp_path)
    data = call(env, "efficiency", {"role": "root"}).data
    assert sorted(t["session_uid"] for t in data["threads"]) == [PI_SESSION, CODEX_ROOT, CLAUDE_SESSION]
    assert data["totals"]["calls"] == 30
    assert "scope" in data
    bad = call(env, "efficiency", {"role": "boss"})
    assert bad.is_error and "role" in bad.text
