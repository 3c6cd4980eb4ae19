"""Journal summaries chunked for embeddings and searched by meaning (issue 15, last part).

A real SQLite journal (built like tests/test_journal_sync.py does) synced into a fresh catalogue,
the real embed pass against the loopback OpenAI-compatible server (tests/embed_server.py: real
all-MiniLM-L6-v2 vectors), and the real CLI in subprocesses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.config import EmbeddingSettings
from agent_history.embed import store
from agent_history.embed.provider import OpenAIEmbedder
from agent_history.embed.worker import EmbedWorker
from agent_history.journal.sync import sync_journal
from agent_history.mcp.tools import ToolEnv, ToolFailure
from agent_history.mcp.tools.summaries import SEARCH_SUMMARIES
from agent_history.search.request import Scope, SearchRequest
from agent_history.search.summaries_vector import run_summary_search
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.embed_server import MODEL_NAME
from tests.test_journal_sync import Journal

# Three summaries on unrelated subjects; the query below shares no word (nor stem) with any.
LOGIN = dict(
    title="Flaky sign-in page",
    objective="Find why people were thrown back to the sign-in form",
    narrative="The session cookie expired after five minutes because the clock of the web server drifted.",
    outcomes="Cookie lifetime now comes from the identity provider; the form no longer times out.",
)
THUMBS = dict(
    title="Faster image thumbnails",
    objective="Make picture previews appear quickly in the gallery",
    narrative="Resizing moved into a background worker queue with a small cache of recent previews.",
    outcomes="Gallery previews render in a fraction of the time.",
)
INVOICE = dict(
    title="Invoice totals off by a cent",
    objective="Explain rounding differences in monthly invoices",
    narrative="Amounts were summed as floating point numbers; switched to decimal arithmetic.",
    outcomes="Totals match the accounting export.",
)
MEANING_QUERY = "authentication trouble: users get logged out unexpectedly"


def put(journal: Journal, conv: str, at: str, fields: dict) -> None:
    journal.put(conv, f"s-{conv}", at, topics=(), **fields)


@pytest.fixture
def synced(db, tmp_path):
    """A catalogue holding the three summaries; returns (db, journal)."""
    journal = Journal(tmp_path / "journal.db")
    put(journal, "c-login", "2026-11-30T10:00:00+00:00", LOGIN)
    put(journal, "c-thumbs", "2026-11-30T11:00:00+00:00", THUMBS)
    put(journal, "c-invoice", "2026-11-30T12:00:00+00:00", INVOICE)
    with db.connect(autocommit=True) as conn:
        assert sync_journal(conn, str(journal.path)).status == "ok"
    return db, journal


def run_pass(db, settings):
    embedder = OpenAIEmbedder(settings, backoff_initial_s=0.01, backoff_max_s=0.05)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        return EmbedWorker(conn, settings, embedder).run()


def chunks(db) -> dict[str, list[tuple[int, bytes]]]:
    """Conversation id → its chunks' (seq, input sha256)."""
    out: dict[str, list[tuple[int, bytes]]] = {}
    with db.connect() as conn:
        for conv, seq, sha in conn.execute(
            "SELECT ss.journal_conversation_id, c.seq, c.input_sha256 FROM ah.summary_chunk c "
            "JOIN ah.session_summary ss ON ss.id = c.summary_id ORDER BY 1, 2"
        ):
            out.setdefault(conv, []).append((seq, bytes(sha)))
    return out


def test_summaries_get_chunks_and_a_second_pass_embeds_nothing(synced, embed_settings, embed_server):
    db, _ = synced
    first = run_pass(db, embed_settings)
    assert first.stopped is None and first.failed == 0
    assert first.sources == 3 and first.embedded == 3  # short summaries: one chunk each
    assert {c: [s for s, _ in v] for c, v in chunks(db).items()} == {"c-login": [0], "c-thumbs": [0], "c-invoice": [0]}
    login = next(i for i in embed_server.inputs if "sign-in" in i)
    assert login == "summary\n" + "\n\n".join(LOGIN[k] for k in ("title", "objective", "narrative", "outcomes"))
    with db.connect() as conn:
        assert store.summary_counts(conn, embed_settings.model_key) == {
            "summaries": 3, "examined": 3, "embedded": 3, "chunks": 3, "chunks_embedded": 3,
        }  # fmt: skip
        assert store.count_pending_sources(conn, embed_settings.model_key) == 0
    embed_server.requests.clear()
    again = run_pass(db, embed_settings)
    assert (again.sources, again.embedded, again.chunks_written, again.requests) == (0, 0, 0, 0)
    assert embed_server.requests == []


def test_a_changed_summary_is_reembedded_and_a_deleted_one_purged(synced, embed_settings, embed_server):
    db, journal = synced
    run_pass(db, embed_settings)
    before = chunks(db)
    embed_server.requests.clear()
    changed = THUMBS | {"outcomes": "Previews are now generated ahead of time when a picture is uploaded."}
    put(journal, "c-thumbs", "2026-12-01T09:00:00+00:00", changed)  # newer analysed_at: replaces
    journal.delete("c-invoice")
    with db.connect(autocommit=True) as conn:
        result = sync_journal(conn, str(journal.path), full=True)  # the full pass prunes deletions
        assert result.status == "ok"
        pending = store.count_pending_sources(conn, embed_settings.model_key)
    assert pending == 1
    after_sync = chunks(db)
    assert "c-invoice" not in after_sync  # purged with its summary (ON DELETE CASCADE)
    second = run_pass(db, embed_settings)
    assert (second.sources, second.embedded, second.chunks_written) == (1, 1, 1)
    assert embed_server.inputs == [
        "summary\n" + "\n\n".join(changed[k] for k in ("title", "objective", "narrative", "outcomes"))
    ]
    now = chunks(db)
    assert set(now) == {"c-login", "c-thumbs"}
    assert now["c-login"] == before["c-login"] and now["c-thumbs"] != before["c-thumbs"]


def _cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_cli_hybrid_search_in_summaries_finds_a_summary_by_meaning(synced, cli_env, embed_server):
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(
        f'[embedding]\nprovider = "openai"\nbase_url = "{embed_server.base_url}"\nmodel = "{MODEL_NAME}"\n'
    )
    before = json.loads(_cli("status", "--json", env=cli_env).stdout)["embedding"]["summaries"]
    assert before == {"summaries": 3, "examined": 0, "embedded": 0, "chunks": 0, "chunks_embedded": 0}
    run = _cli("embed", env=cli_env)
    assert run.returncode == 0, run.stderr
    status = _cli("status", env=cli_env)
    assert "summaries 3 of 3 embedded" in status.stdout, status.stdout
    kw = _cli("search", "--in", "summaries", MEANING_QUERY, "--mode", "keyword", "--json", env=cli_env)
    assert kw.returncode == 1 and json.loads(kw.stdout)["hits"] == []  # no shared word: keyword finds nothing
    out = _cli("search", "--in", "summaries", MEANING_QUERY, "--mode", "hybrid", "--json", "-n", "3", env=cli_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "hybrid"
    top = data["hits"][0]
    assert (top["kind"], top["session_uid"], top["title"]) == ("summary", "s-c-login", LOGIN["title"])
    assert top["extra"]["vector_rank"] == 1 and "keyword_rank" not in top["extra"]
    assert top["snippet"].startswith(LOGIN["title"])
    with psycopg.connect(cli_env["AGENT_HISTORY_DSN"], autocommit=True) as conn:  # the modes, in-process
        settings = EmbeddingSettings(provider="openai", model=MODEL_NAME, base_url=embed_server.base_url)
        req = SearchRequest(query="invoice rounding", limit=3, scope=Scope.SUMMARIES)
        default = run_summary_search(conn, req, None, settings)
        vec = run_summary_search(conn, req, "vector", settings)
        off = run_summary_search(conn, req, "hybrid", None)
    assert default.mode == "hybrid" and default.hits[0].title == INVOICE["title"]  # vectors exist: as for messages
    assert vec.mode == "vector" and vec.hits[0].title == INVOICE["title"] and vec.hits[0].backend == "vector"
    assert len(vec.hits) == 3  # every summary has a vector; the nearest first
    assert (off.mode, off.note, [h.title for h in off.hits]) == (
        "keyword",
        "embeddings are off: keyword results only",
        [INVOICE["title"]],
    )


def test_mcp_search_summaries_mode_through_the_reader_guard(synced, embed_settings, embed_server):
    db, _ = synced
    run_pass(db, embed_settings)
    env = ToolEnv(reader_dsn=lambda: db.reader_dsn, embedding=embed_settings)
    out = json.loads(env.call(SEARCH_SUMMARIES, {"query": MEANING_QUERY, "mode": "hybrid", "limit": 2}))
    assert out["mode"] == "hybrid" and "note" not in out
    assert [h["title"] for h in out["hits"]][:1] == [LOGIN["title"]]
    kw = json.loads(env.call(SEARCH_SUMMARIES, {"query": MEANING_QUERY, "mode": "keyword"}))
    assert (kw["mode"], kw["hits"]) == ("keyword", [])
    with pytest.raises(ToolFailure, match="invalid mode for search_summaries"):
        env.call(SEARCH_SUMMARIES, {"query": "x", "mode": "semantic"})
    off = ToolEnv(reader_dsn=lambda: db.reader_dsn)
    with pytest.raises(ToolFailure, match="^vector search unavailable: embeddings are off"):
        off.call(SEARCH_SUMMARIES, {"query": "x", "mode": "vector"})
