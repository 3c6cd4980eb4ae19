"""The catalogue dashboard's Embeddings tab on a catalogue with embeddings: the synthetic topic
home (`tests.embed_corpus`) embedded through the loopback OpenAI-compatible server (a real local
model, no fake vectors), one input refused by it — the three embedding panels, run as
``ah_reader`` the way Grafana runs them, show the chunks, the spend and the failure."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from agent_history.embed.provider import OpenAIEmbedder
from agent_history.embed.worker import EmbedWorker
from dashboards.generate import outputs
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.embed_server import MODEL_NAME
from tests.grafana_sql import load, run, targets, variable_options

START = datetime(2000, 1, 1, tzinfo=UTC)
END = datetime(2100, 1, 1, tzinfo=UTC)
PANELS = ("Chunks by model and state", "Embedding spend by day", "Embedding failures by model")


def test_embedding_panels_show_the_chunks_spend_and_failures_of_an_embed_pass(topic_db, embed_settings, embed_server):
    db, _, _ = topic_db
    embed_server.reject_containing = "sidebar overlaps"  # one prompt of the topic home
    embedder = OpenAIEmbedder(embed_settings, backoff_initial_s=0.01, backoff_max_s=0.05)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = EmbedWorker(conn, embed_settings, embedder).run()
        day = conn.execute("SELECT current_date").fetchone()[0]
    # the server charges max(1, characters // 4) per input of each request it answers
    answered = [r["input"] for r in embed_server.requests if not any("sidebar overlaps" in t for t in r["input"])]
    sent = sum(max(1, len(t) // 4) for inputs in answered for t in inputs)
    dash = load(outputs()["dashboards/catalogue.json"])
    got = {}
    with psycopg.connect(db.reader_dsn) as conn:
        variables = variable_options(conn, dash)
        for t in targets(dash):
            if t.panel in PANELS:
                got[t.panel] = run(conn, t, variables, START, END)
    assert (summary.embedded, summary.failed, summary.tokens) == (16, 1, 462)
    assert got["Chunks by model and state"] == [(MODEL_NAME, 17, 16, 1)]  # chunks, with a vector, pending
    ((at, model, tokens),) = got["Embedding spend by day"]
    assert (datetime.fromtimestamp(int(at), UTC).date(), model, tokens) == (day, MODEL_NAME, 462)
    assert sent == 462
    ((model, failed, last, example),) = got["Embedding failures by model"]
    assert (model, failed, example) == (MODEL_NAME, 1, "HTTP 400: input rejected")
    assert START < last < END
