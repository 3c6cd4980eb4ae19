"""journal-sync (issue 15) against real SQLite journals the tests build, a real PostgreSQL journal
on the test server, and the real catalogue database."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import truncate_derived
from agent_history.journal.rows import COLUMNS
from agent_history.journal.sync import sync_journal

PY = sys.executable
# A real Claude Code session of the corpus (its file name is its session id).
CORPUS_SESSION = "5ed31c36-bca8-40fd-8d24-f1a1f0af7901"
CORPUS_FILE = f".claude/projects/-Users-user1-workspace-example-site-dev-next/{CORPUS_SESSION}.jsonl"

_DDL = f"""
CREATE TABLE conversation ({", ".join(f"{c} TEXT" for c in COLUMNS)}, deleted INTEGER NOT NULL DEFAULT 0);
CREATE VIEW ah_export_session_summary AS SELECT {", ".join(COLUMNS)} FROM conversation WHERE deleted = 0;
"""


class Journal:
    """A real SQLite journal database exporting the view, written the way a journal app would."""

    def __init__(self, path: Path, instance: str = "inst-A") -> None:
        self.path, self.instance = path, instance
        with sqlite3.connect(path) as conn:
            conn.executescript(_DDL)

    def put(self, conv: str, session_uid: str, analysed_at: str, *, title: str = "t", topics=("cache",), **kw) -> None:
        row = {c: None for c in COLUMNS} | {
            "journal_conversation_id": conv,
            "agent": "claude",
            "session_uid": session_uid,
            "agent_id": "",
            "namespace": "claude-local",
            "revision_id": f"{conv}-r",
            "analysed_at": analysed_at,
            "model": "summariser-1",
            "title": title,
            "objective": "find why builds fail",
            "narrative": "we decided to cache the TTL",
            "outcomes": "fixed",
            "topics_json": json.dumps(list(topics)) if topics is not None else None,
            "app_instance_id": self.instance,
        }
        row.update(kw)
        with sqlite3.connect(self.path) as conn:
            conn.execute("DELETE FROM conversation WHERE journal_conversation_id = ?", (conv,))
            conn.execute(
                f"INSERT INTO conversation ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                [row[c] for c in COLUMNS],
            )

    def delete(self, conv: str) -> None:
        with sqlite3.connect(self.path) as conn:
            conn.execute("UPDATE conversation SET deleted = 1 WHERE journal_conversation_id = ?", (conv,))


@pytest.fixture
def journal(tmp_path) -> Journal:
    return Journal(tmp_path / "journal.db")


@pytest.fixture
def conn(db):
    with db.connect(autocommit=True) as c:
        yield c


def summaries(conn) -> dict[str, tuple]:
    rows = conn.execute(
        "SELECT journal_conversation_id, title, analysed_at, session_id, app_instance_id FROM ah.session_summary"
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


def topics(conn, conv: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT t.topic FROM ah.session_topic t JOIN ah.session_summary s ON s.id = t.summary_id "
            "WHERE s.journal_conversation_id = %s ORDER BY t.position",
            (conv,),
        )
    ]


def meta(conn, key: str) -> str | None:
    row = conn.execute("SELECT value FROM ah.meta WHERE key = %s", (key,)).fetchone()
    return row[0] if row else None


T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def test_first_sync_copies_rows_topics_and_records_the_pass(conn, journal):
    journal.put("c1", "s-1", "2026-11-30T10:00:00+00:00", title="Cache TTL", topics=["cache", "ttl", " "])
    journal.put("c2", "s-2", "2026-11-30T12:30:00+02:00", agent_id="agent-7", topics=None)
    r = sync_journal(conn, str(journal.path), now=T0)
    assert (r.status, r.full_pass, r.rows_read, r.inserted, r.updated, r.topics) == ("ok", True, 2, 2, 0, 2)
    got = summaries(conn)
    assert got["c1"] == ("Cache TTL", T0, None, "inst-A")
    assert got["c2"][1] == T0 + timedelta(minutes=30)  # +02:00 normalised to UTC
    assert topics(conn, "c1") == ["cache", "ttl"]  # blank topic dropped, order kept
    assert topics(conn, "c2") == []
    assert conn.execute("SELECT agent_id FROM ah.session_summary WHERE journal_conversation_id='c2'").fetchone() == (
        "agent-7",
    )
    assert meta(conn, "journal_sync:cursor") == "2026-11-30T10:30:00+00:00"
    assert meta(conn, "journal_sync:app_instance_id") == "inst-A"
    run = conn.execute(
        "SELECT status, full_pass, skip_reason, rows_read, rows_written FROM ah.journal_sync_run ORDER BY id DESC"
    ).fetchone()
    assert run == ("ok", True, None, 2, 2)


def test_incremental_pass_reads_only_rows_at_or_after_the_cursor(conn, journal):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    journal.put("c2", "s-2", "2026-11-30T11:00:00Z")
    assert sync_journal(conn, str(journal.path), now=T0).inserted == 2
    journal.put("c3", "s-3", "2026-11-30T12:00:00Z")
    r = sync_journal(conn, str(journal.path), now=T0 + timedelta(hours=1))
    # c2 sits exactly at the cursor (>=, so a row written at the same instant is not missed)
    assert (r.full_pass, r.rows_read, r.inserted, r.unchanged) == (False, 2, 1, 1)
    assert sorted(summaries(conn)) == ["c1", "c2", "c3"]
    assert meta(conn, "journal_sync:cursor") == "2026-11-30T12:00:00+00:00"


def test_newer_analysed_at_replaces_and_older_does_not(conn, journal):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z", title="first", topics=["a", "b"])
    sync_journal(conn, str(journal.path), now=T0)
    journal.put("c1", "s-1", "2026-11-30T11:00:00Z", title="second", topics=["c"])
    r = sync_journal(conn, str(journal.path), now=T0, full=True)
    assert (r.updated, r.inserted) == (1, 0)
    assert summaries(conn)["c1"][0] == "second"
    assert topics(conn, "c1") == ["c"]  # replaced, not appended
    journal.put("c1", "s-1", "2026-11-30T09:00:00Z", title="stale", topics=["z"])
    r = sync_journal(conn, str(journal.path), now=T0, full=True)
    assert (r.updated, r.unchanged) == (0, 1)
    assert summaries(conn)["c1"][0] == "second"
    assert topics(conn, "c1") == ["c"]


def test_full_pass_prunes_deleted_conversations_and_runs_daily(conn, journal):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    journal.put("c2", "s-2", "2026-11-30T10:05:00Z")
    sync_journal(conn, str(journal.path), now=T0)
    journal.delete("c2")
    r = sync_journal(conn, str(journal.path), now=T0 + timedelta(hours=2))
    assert (r.full_pass, r.pruned) == (False, 0)  # incremental passes never prune
    assert sorted(summaries(conn)) == ["c1", "c2"]
    r = sync_journal(conn, str(journal.path), now=T0 + timedelta(days=1))  # a day after the last full pass
    assert (r.full_pass, r.pruned) == (True, 1)
    assert sorted(summaries(conn)) == ["c1"]
    assert conn.execute("SELECT count(*) FROM ah.session_topic").fetchone()[0] == 1


def test_changed_instance_id_wipes_and_resyncs(conn, journal, tmp_path):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    journal.put("c2", "s-2", "2026-11-30T10:05:00Z")
    sync_journal(conn, str(journal.path), now=T0)
    other = Journal(tmp_path / "other.db", instance="inst-B")
    other.put("x1", "s-9", "2026-11-01T08:00:00Z", title="from B")  # older than the cursor
    r = sync_journal(conn, str(other.path), now=T0 + timedelta(minutes=5))
    assert (r.status, r.full_pass, r.wiped, r.inserted) == ("ok", True, 2, 1)
    assert summaries(conn) == {"x1": ("from B", datetime(2026, 11, 1, 8, tzinfo=UTC), None, "inst-B")}
    assert meta(conn, "journal_sync:app_instance_id") == "inst-B"
    assert meta(conn, "journal_sync:cursor") == "2026-11-01T08:00:00+00:00"


def test_two_instance_ids_refuse_and_write_nothing(conn, journal):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    journal.put("c2", "s-2", "2026-11-30T10:05:00Z", app_instance_id="inst-B")
    r = sync_journal(conn, str(journal.path), now=T0)
    assert (r.status, r.reason) == ("refused", "instance_ids")
    assert r.message == "the journal holds 2 app_instance_id values ('inst-A', 'inst-B'); refusing"
    assert summaries(conn) == {}
    assert meta(conn, "journal_sync:cursor") is None


@pytest.mark.parametrize("bad", ["2026-11-30T10:00:00", "yesterday", ""])
def test_a_bad_timestamp_refuses_the_whole_batch(conn, journal, bad):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    sync_journal(conn, str(journal.path), now=T0)
    journal.put("c2", "s-2", "2026-11-30T11:00:00Z", title="good, but in a bad batch")
    journal.put("c3", "s-3", bad)
    r = sync_journal(conn, str(journal.path), now=T0 + timedelta(hours=1))
    assert r.status == "refused"
    assert r.reason == ("missing_value" if bad == "" else "bad_timestamp")
    assert sorted(summaries(conn)) == ["c1"]  # c2 not written either
    assert meta(conn, "journal_sync:cursor") == "2026-11-30T10:00:00+00:00"
    row = conn.execute("SELECT status, skip_reason FROM ah.journal_sync_run ORDER BY id DESC").fetchone()
    assert row == ("refused", r.reason)


def test_missing_file_view_and_column_are_skip_reasons(conn, tmp_path):
    r = sync_journal(conn, str(tmp_path / "nope.db"), now=T0)
    assert (r.status, r.reason, r.message) == (
        "skipped",
        "source_missing",
        f"journal file {tmp_path}/nope.db does not exist",
    )
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    r = sync_journal(conn, str(empty), now=T0)
    assert (r.status, r.reason) == ("skipped", "view_missing")
    partial = tmp_path / "partial.db"
    with sqlite3.connect(partial) as c:
        c.execute("CREATE VIEW ah_export_session_summary AS SELECT 1 AS journal_conversation_id, 2 AS agent")
    r = sync_journal(conn, str(partial), now=T0)
    assert r.reason == "column_missing"
    assert r.message.startswith("view ah_export_session_summary lacks column(s): session_uid, agent_id, namespace")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    assert sync_journal(conn, str(garbage), now=T0).reason == "source_unreadable"
    assert sync_journal(conn, None, now=T0).reason == "source_not_configured"
    assert [r[0] for r in conn.execute("SELECT skip_reason FROM ah.journal_sync_run ORDER BY id")] == [
        "source_missing",
        "view_missing",
        "column_missing",
        "source_unreadable",
        "source_not_configured",
    ]


def test_the_journal_file_is_opened_read_only(conn, journal):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    journal.path.chmod(0o444)
    before = journal.path.read_bytes()
    assert sync_journal(conn, str(journal.path), now=T0).status == "ok"
    assert journal.path.read_bytes() == before
    assert not Path(f"{journal.path}-journal").exists() and not Path(f"{journal.path}-wal").exists()


def test_summary_is_linked_to_a_session_indexed_later(conn, journal, corpus_home, tmp_path):
    journal.put("c1", CORPUS_SESSION, "2026-11-30T10:00:00Z")
    sync_journal(conn, str(journal.path), now=T0)
    assert summaries(conn)["c1"][2] is None  # kept, unmatched
    home = tmp_path / "home"
    (home / CORPUS_FILE).parent.mkdir(parents=True)
    shutil.copy(corpus_home / CORPUS_FILE, home / CORPUS_FILE)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    Loader(conn).run(sources)
    session_id = conn.execute(
        "SELECT id FROM ah.session WHERE agent = 'claude' AND session_uid = %s AND agent_id = ''", (CORPUS_SESSION,)
    ).fetchone()[0]
    assert summaries(conn)["c1"][2] == session_id
    # a rebuild keeps the summaries and renumbers sessions: the post-pass relinks by natural key
    truncate_derived(conn)
    conn.execute("INSERT INTO ah.session (agent, session_uid) VALUES ('claude', 'takes-the-old-id')")
    assert summaries(conn)["c1"][2] is None  # unlinked, never pointing at a renumbered session
    Loader(conn).run(sources)
    new_id = conn.execute("SELECT id FROM ah.session WHERE session_uid = %s", (CORPUS_SESSION,)).fetchone()[0]
    assert new_id != session_id
    assert summaries(conn)["c1"][2] == new_id


def test_postgresql_source_in_a_read_only_transaction(conn, db):
    name = f"{db.name}_journal"
    with psycopg.connect(db.server.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(db.server.dsn(name), autocommit=True) as j:
            j.execute(
                "CREATE TABLE conv (journal_conversation_id text, agent text, session_uid text, agent_id text, "
                "namespace text, revision_id text, analysed_at timestamptz, model text, title text, objective text, "
                "narrative text, outcomes text, unfinished text, classification text, project text, "
                "topics_json jsonb, app_instance_id uuid)"
            )
            j.execute("CREATE VIEW ah_export_session_summary AS SELECT * FROM conv")
            j.execute(
                "INSERT INTO conv VALUES ('p1', 'codex', 's-1', NULL, 'codex-local', 'r1', '2026-11-30 10:00+00', "
                "'m', 'From PG', NULL, NULL, NULL, NULL, NULL, NULL, '[\"pg\", \"ro\"]', "
                "'0b5e8f8e-8a1c-4c38-9d7f-3f3a1e2f9a10')"
            )
        dsn = db.server.dsn(name)
        r = sync_journal(conn, dsn, now=T0)
        assert (r.status, r.inserted, r.topics) == ("ok", 1, 2)
        assert summaries(conn)["p1"] == ("From PG", T0, None, "0b5e8f8e-8a1c-4c38-9d7f-3f3a1e2f9a10")
        assert topics(conn, "p1") == ["pg", "ro"]
        r = sync_journal(conn, dsn, now=T0 + timedelta(hours=1))  # incremental, pushed into the query
        assert (r.full_pass, r.rows_read, r.unchanged) == (False, 1, 1)
    finally:
        with psycopg.connect(db.server.dsn(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


def test_cli_json_status_and_config_source(cli_env, journal, tmp_path):
    journal.put("c1", "s-1", "2026-11-30T10:00:00Z")
    p = cli("journal-sync", "--json", env=cli_env)
    assert p.returncode == 2
    assert p.stderr.strip() == "error: no journal source: pass --source or set [journal] source in the config file"
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[journal]\nsource = "{journal.path}"\n')
    p = cli("journal-sync", "--json", env=cli_env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert (out["status"], out["inserted"], out["source"]) == ("ok", 1, str(journal.path))
    p = cli("journal-sync", "--source", str(tmp_path / "missing.db"), env=cli_env)
    assert p.returncode == 1
    assert (
        p.stderr.strip() == f"journal-sync skipped (source_missing): journal file {tmp_path}/missing.db does not exist"
    )
    p = cli("status", "--json", env=cli_env)
    data = json.loads(p.stdout)["journal_sync"]
    assert (data["summaries"], data["linked"], data["topics"]) == (1, 0, 1)
    assert (data["last_pass"]["status"], data["last_pass"]["skip_reason"]) == ("skipped", "source_missing")
    p = cli("status", env=cli_env)
    assert "journal-sync: 1 summary (0 linked to sessions), 1 topic; last pass " in p.stdout
    assert "(skipped: source_missing)" in p.stdout


def test_passes_are_exported_as_run_journal_sync_metrics(conn, journal, tmp_path):
    from agent_history.config import Settings
    from agent_history.telemetry.collectors import CollectContext, collect_runs
    from agent_history.telemetry.policy import ModelLabels

    journal.put("c1", "s-1", "2026-11-30T10:00:00Z", topics=["a", "b"])
    sync_journal(conn, str(journal.path), now=T0)
    sync_journal(conn, str(tmp_path / "gone.db"), now=T0)  # skipped: source_missing
    ctx = CollectContext(Settings(), [], [], ModelLabels(()), runs=("journal_sync",))
    got = {(s.family, s.labels): s.value for s in collect_runs(conn, ctx)}
    run = (("run", "journal_sync"),)
    assert got[("ah_runs_total", (("outcome", "success"), *run))] == 1
    assert got[("ah_runs_total", (("outcome", "failure"), *run))] == 1
    assert got[("ah_run_success", run)] == 0  # the last pass was skipped
    assert got[("ah_run_rows_written", run)] == 0
    assert got[("ah_run_lock_held", run)] == 0
    first_end = conn.execute("SELECT extract(epoch FROM min(finished_at)) FROM ah.journal_sync_run").fetchone()[0]
    assert got[("ah_run_last_success_timestamp_seconds", run)] == float(first_end)
    assert ("ah_run_read_bytes", run) not in got  # a journal pass reads no transcript bytes: absent, not 0


def test_journal_source_config_key_env_override_and_typo(tmp_path, monkeypatch):
    from agent_history.config import ConfigError, load_settings

    cfg = tmp_path / "config.toml"
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(cfg))
    monkeypatch.delenv("AGENT_HISTORY_JOURNAL_SOURCE", raising=False)
    cfg.write_text('[journal]\nsource = "/srv/journal.db"\n')
    assert load_settings().journal_source == "/srv/journal.db"
    monkeypatch.setenv("AGENT_HISTORY_JOURNAL_SOURCE", "postgresql://j@journal/db")
    assert load_settings().journal_source == "postgresql://j@journal/db"
    cfg.write_text('[journal]\nsorce = "/srv/journal.db"\n')
    with pytest.raises(ConfigError, match="sorce"):
        load_settings()
    cfg.write_text("[journal]\nsource = 3\n")
    with pytest.raises(ConfigError, match="journal.source must be a string"):
        load_settings()
