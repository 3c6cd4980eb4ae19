"""A curated-out session (`sessions exclude`, ah.session_exclusion) is left out everywhere: the
`sessions` listing and `search --in summaries` (CLI), and the MCP `session`, `why`, `touched`,
`active_sessions`, `search_summaries` and `find_sessions` tools over the real stdio client.

One corpus catalogue per module (its own clone, since the test writes exclusions); each surface
is shown to answer with the session first, so the "left out" assertions cannot pass vacuously."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest

from tests.conftest import clone_database, drop_database
from tests.mcp_client import call_tools, server_env

# Real corpus sessions (../shared/corpus/home) and facts about them.
COMMITTER = ("claude", "9e953218-585f-4692-89df-9e0747a31c68")  # made commit 030d80d
TOUCHER = ("codex", "cf4def41-21e0-4b91-adb4-5397c1492084")  # edited …/codex-session-viewer/src/App.tsx
ACTIVE = ("claude", "c097049f-347e-4312-8542-ed2489378a8b")  # last model call 2026-02-20T14:24:34.653Z
SUMMARY_WORD = "zebracornfix"  # only in the journal summary inserted below, of COMMITTER


@pytest.fixture(scope="module")
def catalogue(pg_server, corpus_template):
    database = clone_database(pg_server, corpus_template, "gx")
    with psycopg.connect(database.dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ah.session_summary (journal_conversation_id, session_id, agent, session_uid, agent_id,"
            " analysed_at, title, objective, app_instance_id, synced_at)"
            " SELECT 'conv-1', s.id, s.agent, s.session_uid, '', '2026-03-01T00:00Z', 'Release prep',"
            " %s, 'app-1', now() FROM ah.session s WHERE s.agent = %s AND s.session_uid = %s AND s.agent_id = ''",
            (f"Fix the {SUMMARY_WORD} release", *COMMITTER),
        )
    yield database
    drop_database(database)


def _exclude(database, *refs):
    with psycopg.connect(database.dsn, autocommit=True) as conn:
        for agent, uid in refs:
            conn.execute("INSERT INTO ah.session_exclusion (agent, session_uid) VALUES (%s, %s)", (agent, uid))


def _restore(database):
    with psycopg.connect(database.dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM ah.session_exclusion")


def _title_word(database) -> str:
    with psycopg.connect(database.dsn) as conn:
        return conn.execute(
            "SELECT title FROM ah.session WHERE agent = %s AND session_uid = %s AND agent_id = ''", COMMITTER
        ).fetchone()[0]


def _mcp_view(database, tmp) -> dict[str, set[str]]:
    """Which session uids each MCP surface answers with."""
    calls = [
        ("session", {"uid": COMMITTER[1], "limit": 1}),
        ("why", {"sha": "030d80d"}),
        ("touched", {"pattern": "**/codex-session-viewer/src/App.tsx"}),
        ("active_sessions", {"at": "2026-02-20T14:25:00Z", "minutes": 5}),
        ("search_summaries", {"query": SUMMARY_WORD}),
        ("find_sessions", {"query": _title_word(database), "limit": 30, "mode": "keyword"}),
    ]
    _, results = call_tools(server_env(database.dsn, database.reader_dsn, tmp), calls)
    session, why, touched, active, summaries, found = results
    return {
        "session": {session.data["session"]["session_uid"]} if not session.is_error else set(),
        "why": {o["session"]["session_uid"] for o in why.data["origins"]},
        "touched": {s["session"]["session_uid"] for s in touched.data["sessions"]},
        "active_sessions": {s["session_uid"] for s in active.data["sessions"]},
        "search_summaries": {h["session_uid"] for h in summaries.data["hits"]},
        "find_sessions": {s["session_uid"] for s in found.data["sessions"]},
    }


def _cli_view(database, tmp) -> dict[str, set[str]]:
    env = server_env(database.dsn, database.reader_dsn, tmp)

    def run(*args):
        out = subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True)
        assert out.returncode in (0, 1), out.stderr
        return json.loads(out.stdout) if out.returncode == 0 else None

    listing = run("sessions", "--limit", "500", "--json")
    summaries = run("search", SUMMARY_WORD, "--in", "summaries", "--json")
    return {
        "sessions": {r["session_uid"] for r in listing},
        "search --in summaries": {h["session_uid"] for h in (summaries or {"hits": []})["hits"]},
    }


def test_mcp_tools_leave_excluded_sessions_out(catalogue, own_tmp):
    before = _mcp_view(catalogue, own_tmp)
    expected = {
        "session": {COMMITTER[1]},
        "why": {COMMITTER[1]},
        "touched": {TOUCHER[1]},
        "active_sessions": {ACTIVE[1]},
        "search_summaries": {COMMITTER[1]},
    }
    for surface, uids in expected.items():
        assert uids <= before[surface], surface
    assert COMMITTER[1] in before["find_sessions"]
    _exclude(catalogue, COMMITTER, TOUCHER, ACTIVE)
    try:
        after = _mcp_view(catalogue, own_tmp)
    finally:
        _restore(catalogue)
    gone = {COMMITTER[1], TOUCHER[1], ACTIVE[1]}
    assert {surface: uids & gone for surface, uids in after.items()} == dict.fromkeys(after, set())


def test_cli_listing_and_summary_search_leave_excluded_sessions_out(catalogue, own_tmp):
    before = _cli_view(catalogue, own_tmp)
    assert COMMITTER[1] in before["sessions"] and before["search --in summaries"] == {COMMITTER[1]}
    _exclude(catalogue, COMMITTER)
    try:
        after = _cli_view(catalogue, own_tmp)
    finally:
        _restore(catalogue)
    assert after["sessions"] == before["sessions"] - {COMMITTER[1]}
    assert after["search --in summaries"] == set()


def test_cli_session_refuses_an_excluded_session_with_how_to_restore(catalogue, own_tmp):
    env = server_env(catalogue.dsn, catalogue.reader_dsn, own_tmp)

    def session():
        return subprocess.run(
            [sys.executable, "-m", "agent_history", "session", COMMITTER[1][:8], "--json"],
            env=env,
            capture_output=True,
            text=True,
        )

    before = session()
    assert before.returncode == 0 and json.loads(before.stdout)["session"]["session_uid"] == COMMITTER[1]
    _exclude(catalogue, COMMITTER)
    try:
        after = session()
    finally:
        _restore(catalogue)
    assert (after.returncode, after.stdout) == (1, "")
    assert after.stderr.strip().splitlines() == [
        f"error: session {COMMITTER[1]} is excluded (sessions exclude); "
        f"`agent-history sessions restore {COMMITTER[1]}` brings it back"
    ]


def test_curation_commands_refuse_a_short_prefix_as_a_usage_error(catalogue, own_tmp):
    env = server_env(catalogue.dsn, catalogue.reader_dsn, own_tmp)
    for verb in ("exclude", "restore", "delete"):
        out = subprocess.run(
            [sys.executable, "-m", "agent_history", "sessions", verb, "9e95", *(["--yes"] if verb == "delete" else [])],
            env=env,
            capture_output=True,
            text=True,
        )
        assert (out.returncode, out.stdout) == (2, ""), (verb, out.stderr)
        assert "at least 6 characters" in out.stderr and "'9e95'" in out.stderr and "no session" not in out.stderr
