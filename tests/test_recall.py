"""Recall for agents (issue 17) on a real catalogue of `tests.recall_home`: exclusion before
retrieval, source type, context project, distinct turns, blend with a fixed clock, thread recall
across a fork/resume, `recent_sessions`, `index_stats`, and the CLI (`search`, `recall`, `sql`)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import timedelta

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.read.overview import index_stats, recent_sessions
from agent_history.read.recall import RecallBounds, thread_recall
from agent_history.search.hybrid import run_search
from agent_history.search.request import SearchRequest
from tests.conftest import TEMPLATE, TestDatabase
from tests.recall_home import BASE, HEARTBEAT, UIDS, write_recall_home


@pytest.fixture(scope="module")
def recall_db(pg_server, tmp_path_factory):
    """The recall home indexed once; C3 marked as a memory document. Read-only for tests."""
    from agent_history.db.roles import READER

    home = tmp_path_factory.mktemp("recall") / "home"
    paths = write_recall_home(home)
    name = f"r_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    db = TestDatabase(name, pg_server.dsn(name), pg_server.dsn(name, user=READER), pg_server)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run([Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()])
        assert summary.files_failed == 0
        # memories come from another engineer's parsers; a session marked memory stands in (brief)
        conn.execute("UPDATE ah.session SET source_type = 'memory' WHERE session_uid = %s", (UIDS["C3"],))
    yield db, paths
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _search(db, query, **kw):
    with psycopg.connect(db.dsn) as conn:
        return run_search(conn, SearchRequest(query, **kw), "keyword", None).hits


def test_the_duplicate_is_found_in_both_agents_without_exclusion(recall_db):
    db, _ = recall_db
    hits = _search(db, "websocket heartbeat interval 30 seconds", limit=5)
    assert {(h.agent, h.session_uid) for h in hits if h.plain_snippet().startswith("Increase the websocket")} == {
        ("pi", UIDS["P1"]),
        ("claude", UIDS["C1"]),
    }


def test_exclude_agent_is_applied_before_retrieval(recall_db):
    db, _ = recall_db
    # limit 1: a post-filter would drop the one hit it got and return nothing for one of these
    for excluded, kept in (("pi", "claude"), ("claude", "pi")):
        hits = _search(db, "websocket heartbeat interval 30 seconds", limit=1, exclude_agents=(excluded,))
        assert [h.agent for h in hits] == [kept]
        assert hits[0].plain_snippet() == HEARTBEAT
    assert _search(db, "kafka", agents=("claude",), exclude_agents=("claude",)) == []


def test_source_type_filters_memory_documents(recall_db):
    db, _ = recall_db
    memory = _search(db, "websocket", source_types=("memory",))
    assert {h.session_uid for h in memory} == {UIDS["C3"]}
    sessions = _search(db, "websocket", source_types=("session",), limit=50)
    assert sessions and UIDS["C3"] not in {h.session_uid for h in sessions}


def test_context_project_prefers_without_excluding(recall_db):
    db, _ = recall_db
    plain = _search(db, "websocket heartbeat interval 30 seconds", limit=10)
    boosted = _search(db, "websocket heartbeat interval 30 seconds", limit=10, context_project="/work/web")
    assert boosted[0].cwd == "/work/web" and boosted[0].extra.get("context_project") is True
    assert {h.id for h in boosted} == {h.id for h in plain}  # nothing left out
    assert any(h.cwd == "/work/chat" for h in boosted)


def test_distinct_turns_come_before_more_fragments_of_one_turn(recall_db):
    db, _ = recall_db
    hits = _search(db, "kafka", limit=5, session=UIDS["C2"])
    assert len(hits) == 5
    with psycopg.connect(db.dsn) as conn:
        turn = dict(conn.execute("SELECT id, turn_uid FROM ah.message WHERE id = ANY(%s)", ([h.id for h in hits],)))
    turns = [turn[h.id] for h in hits]
    assert len(set(turns[:3])) == 3  # the three turns first …
    assert turns[3] in turns[:3] and turns[4] in turns[:3]  # … then the other fragments of the first one


def test_blend_with_a_fixed_clock(recall_db):
    db, _ = recall_db
    query = "websocket heartbeat interval 30 seconds"
    default = _search(db, query, limit=10)
    now = BASE + timedelta(days=1, hours=1)  # C1 is an hour old, P1 a day older
    blended = _search(db, query, limit=10, rank="blend", now=now)
    assert {h.id for h in blended} == {h.id for h in default}
    top = blended[0]
    assert set(top.extra) >= {"relevance", "recency", "depth"}
    for h in blended:
        expected = 0.7 * h.extra["relevance"] + 0.2 * h.extra["recency"] + 0.1 * h.extra["depth"]
        assert h.score == pytest.approx(expected, abs=1e-3)
    later = _search(db, query, limit=10, rank="blend", now=now + timedelta(days=400))
    assert all(h.extra["recency"] == 0 for h in later)  # older than 365 days: no recency left
    by_session = {h.session_uid: h.extra["depth"] for h in blended}
    assert by_session[UIDS["P1"]] == pytest.approx(3 / 50)  # three turns


def test_thread_recall_expands_the_hit_and_follows_the_fork(recall_db):
    db, paths = recall_db
    with psycopg.connect(db.dsn) as conn:
        req = SearchRequest("outgoing queue socket reopens", exclude_agents=("claude",))
        recall = thread_recall(conn, req, "keyword", None, RecallBounds(hits=1))
    steps = recall.steps
    hit = [s for s in steps if s.is_hit]
    assert len(hit) == 1 and hit[0].session_uid == UIDS["P1"] and hit[0].turn == 2
    own = [s for s in steps if s.session_uid == UIDS["P1"]]
    assert sorted({s.turn for s in own}) == [1, 2, 3]  # the hit's turn, one before, one after
    assert [s.byte_offset for s in own] == sorted(s.byte_offset for s in own)  # file order
    first = own[0]
    assert (first.label, first.text) == (
        "human_prompt",
        "The websocket reconnect loop keeps dropping messages after a network blip.",
    )
    assert [s.kind for s in own[:4]] == ["message", "message", "tool_call", "message"]
    assert own[2].label == "bash" and "FAILED tests/test_ws.py" in own[2].text
    assert all(s.source_path == str(paths["P1"]) and s.line_number for s in own)
    nxt = [s for s in steps if s.session_uid == UIDS["P2"]]
    assert nxt and {s.relation for s in nxt} == {"resumed_as"}
    assert nxt[-1].text.startswith("Yes: with the outgoing queue")
    assert steps.index(nxt[0]) > steps.index(own[-1])  # later session after the earlier one


def test_recent_sessions_and_index_stats(recall_db):
    db, _ = recall_db
    with psycopg.connect(db.reader_dsn) as conn:
        recent = recent_sessions(conn, 2)
        assert [r["session_uid"] for r in recent] == [UIDS["C3"], UIDS["C2"]]
        assert recent[1]["first_prompt"] == "How should we size the kafka consumer group?"
        assert recent[1]["last_prompt"] == "Anything about the producer?"
        pi = recent_sessions(conn, 5, agents=("pi",), project="/work/chat")
        assert [r["session_uid"] for r in pi] == [UIDS["P2"], UIDS["P1"]]
        stats = index_stats(conn)
    assert stats["counts"]["sessions"] == 5 and stats["counts"]["source_files"] == 5
    assert stats["sessions_by_agent"] == {"claude": 3, "pi": 2}
    assert stats["last_pass"]["status"] == "ok" and stats["embeddings"] == []
    assert stats["counts"]["excluded_sessions"] == 0


def _cli(env, *args):
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True)


@pytest.fixture
def recall_env(recall_db, own_tmp, monkeypatch):
    import os

    db, _ = recall_db
    (own_tmp / "config.toml").touch()
    env = {
        k: v for k, v in os.environ.items() if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
    }
    env.update(AGENT_HISTORY_DSN=db.dsn, AGENT_HISTORY_READER_DSN=db.reader_dsn,
               AGENT_HISTORY_CONFIG=str(own_tmp / "config.toml"), AGENT_HISTORY_DATA_DIR=str(own_tmp / "data"),
               HOME=str(own_tmp / "home"))  # fmt: skip
    return env


def test_cli_search_exclusion_aliases_and_conflicts(recall_env):
    out = _cli(recall_env, "search", "websocket heartbeat interval", "--exclude-agent", "claude-code", "--json")
    assert out.returncode == 0, out.stderr
    assert {h["agent"] for h in json.loads(out.stdout)["hits"]} == {"pi"}
    both = _cli(recall_env, "search", "kafka", "--agent", "claude", "--exclude-agent", "claude")
    assert both.returncode == 1 and "nothing to search: --agent and --exclude-agent both name claude" in both.stdout
    bad = _cli(recall_env, "search", "kafka", "--exclude-agent", "vim")
    assert bad.returncode == 2 and "unknown agent 'vim'" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_recall_json(recall_env):
    out = _cli(recall_env, "recall", "outgoing queue socket reopens", "--hits", "1", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["hits"] == 1 and [s["session_uid"] for s in data["steps"] if s.get("is_hit")] == [UIDS["P1"]]
    assert UIDS["P2"] in {s["session_uid"] for s in data["steps"]}


def test_cli_sql_same_guard_and_limits_as_mcp(recall_env):
    out = _cli(recall_env, "sql", "SELECT agent, count(*) AS n FROM ah.session GROUP BY 1 ORDER BY 1", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rows"] == [["claude", 3], ["pi", 2]]
    csv_out = _cli(recall_env, "sql", "SELECT agent, count(*) AS n FROM ah.session GROUP BY 1 ORDER BY 1", "--csv")
    assert csv_out.stdout == "agent,n\nclaude,3\npi,2\n"
    write = _cli(recall_env, "sql", "DELETE FROM ah.session")  # (row limit, one statement: run_sql, test_mcp_sql)
    assert write.returncode == 2 and "read-only transaction" in write.stderr and "Traceback" not in write.stderr


def test_mcp_tools_listed_with_schemas_and_answering(recall_db, own_tmp):
    from tests.mcp_client import call_tools, server_env

    db, _ = recall_db
    calls = [
        ("search", {"query": "websocket heartbeat interval 30 seconds", "exclude_agent": ["claude-code"], "limit": 3}),
        ("search", {"query": "kafka", "agents": ["claude"], "exclude_agent": ["claude"]}),
        ("thread_recall", {"query": "outgoing queue socket reopens", "hits": 1, "exclude_agent": ["claude-code"]}),
        ("recent_sessions", {"n": 1, "agent": "pi"}),
        ("index_stats", {}),
        ("search", {"query": "kafka", "exclude_agent": ["vim"]}),
    ]
    tools, results = call_tools(server_env(db.dsn, db.reader_dsn, own_tmp), calls)
    by_name = {t.name: t for t in tools}
    assert {"thread_recall", "recent_sessions", "index_stats"} <= set(by_name)
    for name in ("thread_recall", "recent_sessions", "index_stats"):
        assert by_name[name].input_schema["type"] == "object" and by_name[name].annotations.read_only_hint
    search_schema = by_name["search"].input_schema["properties"]
    assert "claude-code" in search_schema["exclude_agent"]["items"]["enum"]
    assert "native memory first" in by_name["search"].description
    assert set(search_schema) >= {"source_type", "context_project", "rank"}
    found, cancelled, recall, recent, stats, bad = results
    assert {h["agent"] for h in found.data["hits"]} == {"pi"}
    assert cancelled.data["hits"] == [] and "both name claude" in cancelled.data["note"]
    steps = recall.data["steps"]
    assert [s["session_uid"] for s in steps if s.get("is_hit")] == [UIDS["P1"]]
    assert {s["relation"] for s in steps} == {"hit", "resumed_as"}
    assert all({"agent", "namespace", "ts", "source_path", "line_number", "byte_offset"} <= set(s) for s in steps)
    assert [s["session_uid"] for s in recent.data["sessions"]] == [UIDS["P2"]]
    assert (
        recent.data["sessions"][0]["first_prompt"] == "Continue from the previous session: did the outgoing queue work?"
    )
    assert stats.data["counts"]["sessions"] == 5 and stats.data["sessions_by_agent"] == {"claude": 3, "pi": 2}
    assert bad.is_error and "exclude_agent" in bad.text
