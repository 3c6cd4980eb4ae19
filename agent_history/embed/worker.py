"""The embed pass: pending sources → chunks (redacted) → vectors from the provider → cache.

One pass (`EmbedWorker.run`) holds the ``EMBED_LOCK`` advisory lock (a second concurrent pass
raises `AnotherEmbedRunning`), then walks pending messages, tool calls and journal summaries
(``ah.summary_chunk``, migration 0013) in id order, a batch of sources at a time:

1. chunk each source (`chunking.chunk_windows`: spans, header, redaction — bounded work per
   source: a message longer than `chunking.MAX_SOURCE_CHARS` is read from the database as its
   head and tail only and embedded so, counted in ``elided``) and, in one transaction, replace
   the chunk sets that changed and mark every source examined;
2. look the batch's inputs up in the cache by (model, sha256(input)); only inputs never seen
   by this model go to the provider, ``batch_size`` per request, each request committed on its
   own — so an interrupted pass keeps everything it paid for, and the next pass resumes with
   what is still pending (chunks without a vector are pending by definition);
3. before each request the estimated tokens are checked against the per-run and per-day caps
   (``ah.embedding_usage``, UTC days): the pass stops *before* exceeding either, and says so.

`stop` (set by SIGINT/SIGTERM in the CLI) is honoured between sources while chunking and
between requests: the pass ends with ``stopped = "interrupted"``, keeping every request already
answered. The CLI checks the provider (`Embedder.check`) before a pass starts.

A request whose input the endpoint rejects (4xx) is retried one input at a time; inputs still
rejected are recorded in ``ah.embedding_failure`` and counted as failed. Any other provider
error ends the pass (work already committed stays). After the pass, a model with vectors and
no HNSW index gets one (`store.ensure_index`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.db.tables import chunks
from agent_history.embed import store
from agent_history.embed.chunking import (
    Chunk,
    chunk_windows,
    head_tail,
    is_elided,
    sha256,
    source_text,
    windows,
    worth_embedding,
)
from agent_history.embed.provider import Embedder, EmbeddingError, InputRejected, estimate_tokens

SOURCE_BATCH = 128
"""Sources chunked per transaction."""


class AnotherEmbedRunning(Exception):
    """Another embed pass holds the advisory lock."""


@dataclass
class EmbedSummary:
    """What one pass did. ``stopped`` says why it ended early (None: nothing left pending)."""

    model: str
    sources: int = 0  # sources examined
    chunks_written: int = 0  # chunk rows (re)written
    embedded: int = 0  # new vectors stored
    cached: int = 0  # chunk inputs already in the cache (no request)
    failed: int = 0  # inputs the endpoint rejected
    elided: int = 0  # sources too long to embed whole: embedded by their head and tail
    tokens: int = 0  # reported by the endpoint, else estimated
    requests: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    index_built: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


class _Stop(Exception):
    def __init__(self, reason: str):
        self.reason = reason


class EmbedWorker:
    """One embed pass over the catalogue (see the module docstring).

    `conn` must be in autocommit mode (the worker opens its own transactions). `limit` caps the
    inputs sent to the provider in this pass; `progress(n)` is called with the number of
    sources done after each batch; `stop` ends the pass after the request in flight.
    """

    def __init__(
        self,
        conn: psycopg.Connection,
        settings: EmbeddingSettings,
        embedder: Embedder,
        *,
        limit: int | None = None,
        stop: threading.Event | None = None,
        progress: Callable[[int], None] | None = None,
        source_batch: int = SOURCE_BATCH,
    ):
        self.conn = conn
        self.settings = settings
        self.embedder = embedder
        self.model = settings.model_key
        self.limit = limit
        self.stop = stop or threading.Event()
        self.progress = progress
        self.source_batch = source_batch
        self._day_tokens = 0

    def count_pending(self) -> int:
        """Sources the pass would examine now."""
        return store.count_pending_sources(self.conn, self.model)

    def run(self) -> EmbedSummary:
        """Run one pass. Raises AnotherEmbedRunning, EmbeddingError (work done so far is kept)."""
        conn = self.conn
        if not conn.execute("SELECT pg_try_advisory_lock(%s)", (store.EMBED_LOCK,)).fetchone()[0]:
            raise AnotherEmbedRunning("another embed pass is running (one pass at a time embeds the whole catalogue)")
        summary = EmbedSummary(self.model)
        t0 = time.perf_counter()
        try:
            self._day_tokens = store.tokens_today(conn, self.model)
            for table in store.SOURCE_TABLES:
                after = 0
                while True:
                    sources = store.pending_sources(conn, table, self.model, after, self.source_batch)
                    if not sources:
                        break
                    after = sources[-1].id
                    self._batch(sources, summary)
                    summary.sources += len(sources)
                    if self.progress:
                        self.progress(len(sources))
                    if self.stop.is_set():
                        raise _Stop("interrupted")
        except _Stop as stop:
            summary.stopped = stop.reason
        finally:
            try:
                if summary.stopped != "interrupted":
                    summary.index_built = store.ensure_index(conn, self.model)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (store.EMBED_LOCK,))
                summary.seconds = time.perf_counter() - t0
        return summary

    # --- one batch of sources ---------------------------------------------------------------

    def _chunks(self, src: store.Source) -> tuple[bytes, list[Chunk]]:
        text = source_text(src.kind, src.text)
        digest = src.sha256 if src.sha256 is not None else sha256(text)
        if not worth_embedding(src.kind, text):
            return digest, []
        parts = head_tail(text, src.tail, src.length) if src.tail is not None else windows(text)
        s = self.settings
        return digest, chunk_windows(parts, src.label, src.cwd, chunk_chars=s.chunk_chars, overlap=s.chunk_overlap)

    def _stored_sets(self, sources: list[store.Source]) -> dict[int, tuple[bytes, list[tuple[int, bytes]]]]:
        return chunks.stored_sets(self.conn, sources[0].table, [s.id for s in sources])

    def _batch(self, sources: list[store.Source], summary: EmbedSummary) -> None:
        chunked = []
        for src in sources:  # each source is bounded work: a signal is honoured between them
            if self.stop.is_set():
                raise _Stop("interrupted")
            chunked.append((src, *self._chunks(src)))
        stored = self._stored_sets(sources)
        gone: set[int] = set()
        with self.conn.transaction():
            for src, source_sha, chunks in chunked:
                if stored.get(src.id) != (source_sha, [(c.seq, c.input_sha256) for c in chunks]):
                    try:
                        with self.conn.transaction():  # savepoint: the source may be purged meanwhile
                            store.replace_chunks(self.conn, src, source_sha, chunks)
                    except psycopg.errors.ForeignKeyViolation:
                        gone.add(src.id)  # the loader deleted it (file rewritten): nothing to embed
                        continue
                    summary.chunks_written += len(chunks)
                    if chunks and is_elided(src.length if src.length is not None else len(src.text)):
                        summary.elided += 1
        inputs: dict[bytes, str] = {}
        for src, _, chunks in chunked:
            if src.id in gone:
                continue
            for c in chunks:
                inputs.setdefault(c.input_sha256, c.input)
        known = store.cached(self.conn, self.model, list(inputs))
        summary.cached += len(known)
        todo = [(sha, text) for sha, text in inputs.items() if sha not in known]
        size = max(1, self.settings.batch_size)
        for i in range(0, len(todo), size):
            self._request(todo[i : i + size], summary)
            if self.stop.is_set():
                raise _Stop("interrupted")

    def _request(self, items: list[tuple[bytes, str]], summary: EmbedSummary) -> None:
        if self.limit is not None:
            room = self.limit - (summary.embedded + summary.failed)
            if room <= 0:
                raise _Stop(f"--limit {self.limit} reached")
            items = items[:room]
        estimate = sum(estimate_tokens(t) for _, t in items)
        s = self.settings
        if summary.tokens + estimate > s.max_tokens_per_run:
            raise _Stop(f"per-run token cap reached ({summary.tokens:,} of {s.max_tokens_per_run:,} tokens)")
        if self._day_tokens + estimate > s.max_tokens_per_day:
            raise _Stop(
                f"per-day token cap reached ({self._day_tokens:,} of {s.max_tokens_per_day:,} tokens today, UTC)"
            )
        vectors: list[tuple[bytes, list[float]]] = []
        failures: list[tuple[bytes, str]] = []
        requests, tokens = 1, None
        try:
            result = self.embedder.embed([t for _, t in items])
            vectors, tokens = list(zip([sha for sha, _ in items], result.vectors, strict=True)), result.tokens
        except InputRejected:
            requests, tokens = 0, 0
            for sha, text in items:  # find the offending inputs
                requests += 1
                try:
                    one = self.embedder.embed([text])
                    vectors.append((sha, one.vectors[0]))
                    tokens += one.tokens or estimate_tokens(text)
                except InputRejected as exc:
                    failures.append((sha, str(exc)))
        spent = tokens if tokens is not None else estimate
        with self.conn.transaction():
            if vectors:
                try:
                    store.register_model(self.conn, self.model, s.provider, len(vectors[0][1]))
                except ValueError as exc:
                    raise EmbeddingError(str(exc)) from None
                summary.embedded += store.store_vectors(self.conn, self.model, vectors)
            if failures:
                store.store_failures(self.conn, self.model, failures)
                summary.failed += len(failures)
            store.add_usage(self.conn, self.model, spent, len(items), requests)
        summary.tokens += spent
        summary.requests += requests
        self._day_tokens += spent
