"""Vector and hybrid search end to end: real catalogue, real loopback embedding server (docs/design.md §8)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from agent_history.embed.provider import OpenAIEmbedder
from agent_history.embed.worker import EmbedWorker
from agent_history.search import vector
from agent_history.search.hybrid import Mode, VectorUnavailable, default_mode, run_search, search
from agent_history.search.request import SearchRequest
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.embed_server import MODEL_NAME

NO_SHARED_WORDS = "memory loss between sessions"  # the target is the "50 First Dates" session (t0)


@pytest.fixture
def embedded_db(topic_db, embed_settings, embed_server):
    """The topic catalogue, embedded; the server's request log starts empty."""
    db, home, uids = topic_db
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        EmbedWorker(conn, embed_settings, OpenAIEmbedder(embed_settings)).run()
    embed_server.requests.clear()
    return db, uids


def _search(db, query, mode, settings, **kw):
    with db.connect() as conn:
        return run_search(conn, SearchRequest(query, **kw), mode, settings)


def test_a_query_sharing_no_words_with_its_target_finds_it(embedded_db, embed_settings):
    db, uids = embedded_db
    with db.connect() as conn:
        text = "\n".join(r[0] for r in conn.execute(
            "SELECT m.text FROM ah.message m JOIN ah.session s ON s.id = m.session_id WHERE s.session_uid = %s",
            (uids["t0"],)))  # fmt: skip
    assert not {"memory", "loss", "between", "sessions"} & set(text.lower().replace(".", " ").replace(",", " ").split())
    kw = _search(db, NO_SHARED_WORDS, "keyword", embed_settings)
    assert uids["t0"] not in [h.session_uid for h in kw.hits]
    vec = _search(db, NO_SHARED_WORDS, "vector", embed_settings, limit=5)
    assert vec.mode is Mode.VECTOR and vec.hits[0].session_uid == uids["t0"]
    assert vec.hits[0].backend == "vector" and vec.hits[0].source_path and vec.hits[0].snippet
    hyb = _search(db, NO_SHARED_WORDS, "hybrid", embed_settings, limit=5)
    assert hyb.mode is Mode.HYBRID and hyb.note is None
    assert uids["t0"] in [h.session_uid for h in hyb.hits]


def test_hybrid_fuses_keyword_and_vector_ranks(embedded_db, embed_settings):
    db, uids = embedded_db
    result = _search(db, "how long should entries stay in the redis cache", "hybrid", embed_settings, limit=5)
    top = result.hits[0]
    assert top.backend == "hybrid" and "keyword_rank" in top.extra and "vector_rank" in top.extra
    assert {h.session_uid for h in result.hits[:2]} <= {uids["t1"], uids["t7"]}


def test_keyword_mode_never_calls_the_endpoint(embedded_db, embed_settings, embed_server):
    db, _ = embedded_db
    result = _search(db, "redis cache", "keyword", embed_settings)
    assert result.mode is Mode.KEYWORD and result.hits
    assert embed_server.requests == []


def test_hybrid_answers_keyword_only_when_the_embedding_stalls(embedded_db, embed_settings, embed_server):
    db, _ = embedded_db
    # The query's embedding request is held in the server until the search has returned: the
    # answer cannot have come first, however loaded the machine (no upper time bound to race).
    release, held = threading.Event(), threading.Event()

    def hold(body: dict) -> None:
        held.set()
        release.wait(120)

    embed_server.on_request = hold
    budget = embed_settings.__class__(**{**embed_settings.__dict__, "query_timeout_s": 3.0})  # the default
    t0 = time.monotonic()
    try:
        result = _search(db, "how long should entries stay in the redis cache", "hybrid", budget)
        elapsed = time.monotonic() - t0
        assert held.is_set() and not release.is_set()  # asked, and still unanswered
    finally:
        release.set()
    assert result.mode is Mode.KEYWORD and result.hits
    assert result.note == "the query embedding did not return within 3 s: keyword results only"
    assert elapsed >= 2.9  # it waited for the 3 s budget (a lower bound: load only lengthens it)
    assert all(h.backend != "hybrid" for h in result.hits)


def test_vector_mode_reports_an_unreachable_endpoint(embedded_db, embed_settings):
    db, _ = embedded_db
    embed_settings.base_url = "http://127.0.0.1:9/v1"  # discard port: connection refused
    with pytest.raises(VectorUnavailable, match="query embedding failed"):
        _search(db, NO_SHARED_WORDS, "vector", embed_settings)
    fallback = _search(db, "redis cache", "hybrid", embed_settings)
    assert fallback.mode is Mode.KEYWORD and fallback.note.startswith("vector search failed")


def test_vector_search_honours_the_keyword_filters(embedded_db, embed_settings):
    db, uids = embedded_db
    result = _search(db, NO_SHARED_WORDS, "vector", embed_settings, project="/work/web", limit=10)
    assert result.hits and {h.cwd for h in result.hits} == {"/work/web"}
    prompts = _search(db, NO_SHARED_WORDS, "vector", embed_settings, classes=("human_prompt",), limit=10)
    assert prompts.hits and {h.label for h in prompts.hits} == {"human_prompt"}
    one = _search(db, NO_SHARED_WORDS, "vector", embed_settings, session=uids["t3"], limit=10)
    assert {h.session_uid for h in one.hits} == {uids["t3"]}
    tools = _search(db, "package could not be found in the registry", "vector", embed_settings, scope="tools")
    assert [h.kind for h in tools.hits] == ["tool_call"] and tools.hits[0].outcome


def test_default_mode_is_hybrid_once_the_model_has_vectors(embedded_db, embed_settings):
    db, _ = embedded_db
    other = embed_settings.__class__(**{**embed_settings.__dict__, "model": "another-model"})
    with db.connect() as conn:
        assert default_mode(conn, embed_settings) is Mode.HYBRID
        assert default_mode(conn, None) is Mode.KEYWORD
        assert default_mode(conn, other) is Mode.KEYWORD
        with pytest.raises(VectorUnavailable, match="embeddings are off"):
            search(conn, SearchRequest("x"), Mode.VECTOR)


def test_similar_session_and_message(embedded_db, embed_settings):
    db, uids = embedded_db
    with db.connect() as conn:
        hits = vector.similar_sessions(conn, uids["t1"], embed_settings.model_key, 384, SearchRequest("", limit=3))
        assert hits[0].session_uid == uids["t7"]  # the other redis-expiry conversation
        assert uids["t1"] not in {h.session_uid for h in hits}
        mid, uid = conn.execute(
            "SELECT m.id, m.message_uid FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
            "WHERE s.session_uid = %s AND m.message_class = 'human_prompt'", (uids["t1"],)).fetchone()  # fmt: skip
        assert vector.find_message(conn, uid) == mid
        near = vector.similar_messages(conn, mid, embed_settings.model_key, 384, SearchRequest("", limit=4))
        assert mid not in {h.id for h in near}
        assert [h.session_uid for h in near if h.session_uid != uids["t1"]][0] == uids["t7"]


def _cli(*args, env):
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_cli_embed_status_search_and_similar(topic_db, cli_env, embed_server):
    db, _, uids = topic_db
    config = Path(cli_env["AGENT_HISTORY_CONFIG"])
    off = _cli("status", env=cli_env)
    assert off.returncode == 0, off.stderr
    assert "embeddings: off" in off.stdout
    config.write_text(
        f'[embedding]\nprovider = "openai"\nbase_url = "{embed_server.base_url}"\nmodel = "{MODEL_NAME}"\n'
    )
    before = json.loads(_cli("status", "--json", env=cli_env).stdout)["embedding"]
    assert before["configured"] and before["embedded"] == 0 and before["pending"] > 0
    run = _cli("embed", env=cli_env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"embedded ({MODEL_NAME}): ") and "0 failed" in run.stdout
    after = json.loads(_cli("status", "--json", env=cli_env).stdout)["embedding"]
    assert after["pending"] == 0 and after["failed"] == 0 and after["embedded"] == after["chunks"] > 0
    out = _cli("search", NO_SHARED_WORDS, "--json", "-n", "3", env=cli_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "hybrid" and uids["t0"] in [h["session_uid"] for h in data["hits"]]
    kw = json.loads(_cli("search", NO_SHARED_WORDS, "--json", "--mode", "keyword", env=cli_env).stdout)
    assert kw["mode"] == "keyword"
    sim = _cli("similar", uids["t1"], "--json", "-n", "2", env=cli_env)
    assert sim.returncode == 0, sim.stderr
    assert json.loads(sim.stdout)["hits"][0]["session_uid"] == uids["t7"]
