"""Journal summaries are searchable (issue 15): `search --in summaries` and the MCP tools
`search_summaries`, `find_sessions` and `session`, against a real database, a real SQLite
journal and the real MCP server over stdio."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.journal.sync import sync_journal
from agent_history.search.request import HL_END, HL_START, Scope, SearchRequest
from agent_history.search.summaries import search_summaries
from tests.mcp_client import call_tools, server_env
from tests.test_journal_sync import CORPUS_FILE, CORPUS_SESSION, Journal

PY = sys.executable
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def catalogue(db, tmp_path, corpus_home):
    """A catalogue holding one real corpus session and three journal summaries (one of it)."""
    home = tmp_path / "home"
    (home / CORPUS_FILE).parent.mkdir(parents=True)
    shutil.copy(corpus_home / CORPUS_FILE, home / CORPUS_FILE)
    journal = Journal(tmp_path / "journal.db")
    journal.put(
        "c-mdx",
        CORPUS_SESSION,
        "2026-11-30T10:00:00Z",
        title="MDX build errors from angle-bracket URLs",
        objective="Find why MDX files with <https://…> links break the build",
        narrative="We decided to escape autolinks in the remark plugin instead of rewriting posts.",
        outcomes="Build passes; plugin patched.",
        topics=["mdx", "build"],
    )
    journal.put(
        "c-cache",
        "s-cache",
        "2026-11-29T09:00:00Z",
        title="Cache TTL",
        narrative="Kept the TTL at five minutes; the cache warms on deploy.",
        objective="tune the cache",
        outcomes="unchanged",
    )
    journal.put(
        "c-both",
        "s-both",
        "2026-11-28T09:00:00Z",
        title="Deploy checklist",
        narrative="A decision about the cache: flush it on every deploy.",
        objective="write the checklist",
        outcomes="checklist merged",
    )
    with db.connect(autocommit=True) as conn:
        Loader(conn).run([Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()])
        assert sync_journal(conn, str(journal.path), now=T0).inserted == 3
    return db


def test_stemmed_word_finds_the_summary_with_highlights(catalogue):
    with psycopg.connect(catalogue.dsn) as conn:
        hits = search_summaries(conn, SearchRequest(query="decisions", scope=Scope.SUMMARIES))
        # Snowball: "decisions" → decis (exact in "A decision about…"), "decided" → decid (a loose
        # match by the shared prefix, worth less)
        assert [h.extra["journal_conversation_id"] for h in hits] == ["c-both", "c-mdx"]
        assert hits[0].score > hits[1].score
        hits = hits[1:]
        h = hits[0]
        assert (h.kind, h.session_uid, h.agent, h.title) == (
            "summary",
            CORPUS_SESSION,
            "claude",
            "MDX build errors from angle-bracket URLs",
        )
        assert h.cwd == "/Users/user1/workspace/example-site.dev-next"  # from the linked session
        assert f"{HL_START}decided{HL_END}" in h.snippet
        assert h.extra["topics"] == ["mdx", "build"] and h.extra["linked"] is True


def test_or_matching_ranks_more_matched_words_higher_and_stop_words_find_nothing(catalogue):
    with psycopg.connect(catalogue.dsn) as conn:
        hits = search_summaries(conn, SearchRequest(query="cache decision deploy", scope=Scope.SUMMARIES))
        # c-mdx only by "decided", a loose relative of "decision"
        assert [h.extra["journal_conversation_id"] for h in hits] == ["c-both", "c-cache", "c-mdx"]
        assert [h.matched_terms for h in hits] == [3, 2, 1]
        assert search_summaries(conn, SearchRequest(query="the of and", scope=Scope.SUMMARIES)) == []
        only_claude_mdx = SearchRequest(query="cache build", scope=Scope.SUMMARIES, project="/Users/user1/workspace")
        assert [h.extra["journal_conversation_id"] for h in search_summaries(conn, only_claude_mdx)] == ["c-mdx"]


def test_cli_search_in_summaries(catalogue, cli_env):
    p = subprocess.run(
        [PY, "-m", "agent_history", "search", "--in", "summaries", "decisions", "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["mode"] == "keyword"
    assert [(h["kind"], h["session_uid"], h["title"]) for h in out["hits"]] == [
        ("summary", "s-both", "Deploy checklist"),
        ("summary", CORPUS_SESSION, "MDX build errors from angle-bracket URLs"),
    ]
    marked = [[h["snippet"][a:b] for a, b in h["highlights"]] for h in out["hits"]]
    assert marked == [["decision"], ["decided"]]
    p = subprocess.run(
        [PY, "-m", "agent_history", "search", "--in", "summaries", "--mode", "vector", "x"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (p.returncode, p.stderr.strip()) == (
        2,
        "error: embeddings are off: configure [embedding] in the config file",
    )


def test_mcp_search_summaries_find_sessions_and_session_show_summaries(catalogue, tmp_path):
    env = server_env(catalogue.dsn, catalogue.reader_dsn, tmp_path)
    _, (found, sessions, session) = call_tools(
        env,
        [
            ("search_summaries", {"query": "decided autolinks"}),
            ("find_sessions", {"query": "MDX angle brackets URLs build errors", "mode": "keyword"}),
            ("session", {"uid": CORPUS_SESSION, "limit": 1}),
        ],
    )
    data = found.data
    assert data["query"] == "decided autolinks"
    hit = data["hits"][0]
    assert (hit["session_uid"], hit["journal_conversation_id"], hit["indexed"]) == (CORPUS_SESSION, "c-mdx", True)
    assert hit["topics"] == ["mdx", "build"] and hit["analysed_at"].startswith("2026-11-30T10:00:00")
    assert "decided" in hit["snippet"] and "autolinks" in hit["snippet"]
    first = sessions.data["sessions"][0]
    assert first["session_uid"] == CORPUS_SESSION
    assert first["journal_summary"]["title"] == "MDX build errors from angle-bracket URLs"
    assert first["journal_summary"]["topics"] == ["mdx", "build"]
    assert session.data["journal_summary"]["outcomes"] == "Build passes; plugin patched."
