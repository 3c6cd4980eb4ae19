"""The embed pass against a real OpenAI-compatible server on loopback (docs/design.md §9)."""

from __future__ import annotations

import psycopg
import pytest

from agent_history.embed import store
from agent_history.embed.provider import EmbeddingError, OpenAIEmbedder
from agent_history.embed.redact import REDACTED
from agent_history.embed.worker import AnotherEmbedRunning, EmbedWorker
from agent_history.ingest.rebuild import rebuild
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.embed_corpus import FAILED_TOOL_OUTPUT, PLANTED_SECRETS, sources_for


def run_pass(db, settings, **kw):
    embedder = OpenAIEmbedder(settings, backoff_initial_s=0.01, backoff_max_s=0.05)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        return EmbedWorker(conn, settings, embedder, **kw).run()


def counts(db) -> dict[str, int]:
    with db.connect() as conn:
        return {t: conn.execute(f"SELECT count(*) FROM ah.{t}").fetchone()[0]
                for t in ("chunk", "chunk_source", "embedding", "embedding_failure")}  # fmt: skip


def test_pass_embeds_conversational_messages_and_the_failed_tool_excerpt(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    summary = run_pass(db, embed_settings)
    with db.connect() as conn:
        n_conv = conn.execute(
            "SELECT count(*) FROM ah.message WHERE message_class = ANY(%s) AND length(btrim(text)) >= 20",
            (list(store.MESSAGE_CLASSES),),
        ).fetchone()[0]
        kinds = dict(conn.execute("SELECT kind, count(*) FROM ah.chunk GROUP BY 1").fetchall())
        dims = store.model_dimensions(conn, embed_settings.model_key)
    assert summary.stopped is None and summary.failed == 0
    assert kinds == {"message": n_conv, "tool_error": 1}  # short texts: one chunk each
    assert summary.embedded == len(set(embed_server.inputs)) == counts(db)["embedding"]
    assert dims == 384
    assert any(FAILED_TOOL_OUTPUT.splitlines()[0] in i for i in embed_server.inputs)
    assert all(i.startswith(("human_prompt · ", "assistant_text · ", "Bash error · ")) for i in embed_server.inputs)
    assert summary.index_built == store.index_name(embed_settings.model_key)


def test_second_pass_sends_nothing(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    run_pass(db, embed_settings)
    embed_server.requests.clear()
    summary = run_pass(db, embed_settings)
    assert (summary.sources, summary.embedded, summary.requests) == (0, 0, 0)
    assert embed_server.requests == []


def test_reembedding_after_rebuild_makes_zero_endpoint_calls(topic_db, embed_settings, embed_server):
    db, home, _ = topic_db
    first = run_pass(db, embed_settings)
    before = counts(db)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        rebuild(conn, sources_for(home), [])
        assert conn.execute("SELECT count(*) FROM ah.chunk").fetchone()[0] == 0  # chunks are derived
    embed_server.requests.clear()
    again = run_pass(db, embed_settings)
    assert len(embed_server.requests) == 0
    assert (again.embedded, again.cached) == (0, first.embedded)
    assert counts(db) == before


def test_a_secret_in_a_message_never_reaches_the_server(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    run_pass(db, embed_settings)
    sent = "\n".join(embed_server.inputs)
    for secret in PLANTED_SECRETS:
        assert secret not in sent
    assert any("OPENAI_API_KEY=" + REDACTED in i for i in embed_server.inputs)
    with db.connect() as conn:  # the catalogue itself keeps the original text
        assert (
            conn.execute("SELECT count(*) FROM ah.message WHERE text LIKE %s", (f"%{PLANTED_SECRETS[1]}%",)).fetchone()[
                0
            ]
            == 1
        )
        assert conn.execute("SELECT max(redactions) FROM ah.chunk").fetchone()[0] == 3


def test_per_run_token_cap_stops_before_exceeding(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    embed_settings.max_tokens_per_run = 120
    embed_settings.batch_size = 2
    summary = run_pass(db, embed_settings)
    assert summary.stopped and summary.stopped.startswith("per-run token cap reached")
    assert 0 < summary.tokens <= 120
    rest = run_pass(db, embed_settings.__class__(**{**embed_settings.__dict__, "max_tokens_per_run": 10**9}))
    assert rest.stopped is None and rest.embedded > 0  # resumes where the capped pass stopped


def test_per_day_token_cap_counts_earlier_passes(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    with db.connect() as conn:
        store.add_usage(conn, embed_settings.model_key, 999_990, 1, 1)
        conn.commit()
    embed_settings.max_tokens_per_day = 1_000_000
    summary = run_pass(db, embed_settings)
    assert summary.stopped and summary.stopped.startswith("per-day token cap reached")
    assert embed_server.requests == []


def test_limit_stops_the_pass_and_the_next_pass_resumes(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    first = run_pass(db, embed_settings, limit=3)
    assert first.embedded == 3 and first.stopped == "--limit 3 reached"
    second = run_pass(db, embed_settings)
    assert second.stopped is None
    assert first.embedded + second.embedded == counts(db)["embedding"] == len(set(embed_server.inputs))


def test_429_and_503_are_retried_with_backoff(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    embed_server.fail_with = [429, 503]
    summary = run_pass(db, embed_settings)
    assert summary.stopped is None and summary.embedded > 0
    assert len(embed_server.requests) == summary.requests + 2


def test_retries_give_up_with_a_clear_error(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    embed_settings.max_attempts = 2
    embed_server.fail_with = [503, 503]
    with pytest.raises(EmbeddingError, match="failed after 2 attempts: HTTP 503"):
        run_pass(db, embed_settings)


def test_rejected_input_is_recorded_as_failed_and_the_rest_embedded(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    embed_server.reject_containing = "sidebar overlaps"
    summary = run_pass(db, embed_settings)
    assert summary.failed == 1 and summary.embedded > 0
    assert counts(db)["embedding_failure"] == 1
    embed_server.reject_containing = None
    assert run_pass(db, embed_settings).sources == 0  # failed inputs are not retried every pass


def test_bad_api_key_is_a_clear_error(topic_db, embed_settings, embed_server, monkeypatch):
    db, _, _ = topic_db
    embed_server.api_key = "right"
    monkeypatch.setenv("TEST_EMBED_KEY", "wrong")
    embed_settings.api_key_env = "TEST_EMBED_KEY"
    with pytest.raises(EmbeddingError, match="HTTP 401 unauthorized"):
        run_pass(db, embed_settings)
    monkeypatch.delenv("TEST_EMBED_KEY")
    with pytest.raises(EmbeddingError, match="TEST_EMBED_KEY .* is not set"):
        OpenAIEmbedder(embed_settings)


def test_a_second_concurrent_pass_is_refused(topic_db, embed_settings):
    db, _, _ = topic_db
    with psycopg.connect(db.dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (store.EMBED_LOCK,))
        with pytest.raises(AnotherEmbedRunning):
            run_pass(db, embed_settings)


def test_changed_text_is_chunked_again(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    run_pass(db, embed_settings)
    with db.connect() as conn:
        conn.execute("UPDATE ah.message SET text = text || ' Also rotate the logs weekly.' "
                     "WHERE text LIKE 'Use a multi-stage build%%'")  # fmt: skip
        conn.commit()
    embed_server.requests.clear()
    summary = run_pass(db, embed_settings)
    assert (summary.sources, summary.chunks_written, summary.embedded) == (1, 1, 1)
    assert "rotate the logs weekly" in embed_server.inputs[0]


def test_per_model_hnsw_index_serves_a_filtered_query(topic_db, embed_settings):
    db, _, _ = topic_db
    run_pass(db, embed_settings)
    from agent_history.search import vector
    from agent_history.search.request import SearchRequest

    with db.connect() as conn:
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN "
            + vector._query_sql(
                "message", embed_settings.model_key, 384, vector.sql.SQL("d.namespace = 'claude-local'")
            ).as_string(conn),
            {"q": store.vector_literal([0.1] * 384), "k": 40, "limit": 10},
        ).fetchall()
        hits = vector.search(
            conn, SearchRequest("x", namespaces=("claude-local",)), embed_settings.model_key, 384, [0.1] * 384
        )
    assert store.index_name(embed_settings.model_key) in "\n".join(r[0] for r in plan)
    assert hits and all(h.namespace == "claude-local" for h in hits)


def test_local_provider_embeds_offline_and_shares_the_cache_with_the_endpoint(topic_db, embed_settings, embed_server):
    from agent_history.embed.provider import LocalEmbedder
    from tests.embed_server import model_path

    db, _, _ = topic_db
    local = embed_settings.__class__(provider="local", model=embed_settings.model, local_model_path=model_path())
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        first = EmbedWorker(conn, local, LocalEmbedder(local)).run()
    assert first.embedded > 0 and first.stopped is None and embed_server.requests == []
    with db.connect() as conn:  # unit vectors from the same model
        norm = conn.execute("SELECT min(vector_norm(vector)), max(vector_norm(vector)) FROM ah.embedding").fetchone()
    assert norm == pytest.approx((1.0, 1.0), abs=1e-3)
    with db.connect() as conn:
        conn.execute("DELETE FROM ah.chunk_source")
        conn.commit()
    again = run_pass(db, embed_settings)  # same model key through the endpoint: all cached
    assert (again.embedded, again.cached, len(embed_server.requests)) == (0, first.embedded, 0)


def test_a_source_purged_during_the_pass_is_skipped(topic_db, embed_settings, embed_server):
    from agent_history.embed.worker import EmbedSummary

    db, _, _ = topic_db
    ghost = store.Source(
        "message", 10**9, "message", "human_prompt", "/work/x", "A message the loader purged meanwhile."
    )
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        worker = EmbedWorker(conn, embed_settings, OpenAIEmbedder(embed_settings))
        summary = EmbedSummary(embed_settings.model_key)
        worker._batch([ghost], summary)
    assert (summary.chunks_written, summary.embedded, embed_server.requests) == (0, 0, [])
