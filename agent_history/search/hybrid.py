"""Search modes — keyword, vector, hybrid — behind one call (docs/design.md §8).

- ``keyword``: `search.keyword.search`; never touches an embedding endpoint.
- ``vector``: the query is embedded (one attempt, `EmbeddingSettings.query_timeout_s`) and
  `search.vector.search` returns the nearest documents under the same filters.
- ``hybrid``: the query embedding is requested on a background thread while the keyword search
  runs; both lists (each up to ``max(limit, CANDIDATES)`` long) are fused by
  `search.fusion.rrf` with `fusion.vector_weight`. If the embedding has not come back by the
  deadline (3 s from the start, by default) or fails, the answer is keyword-only and
  `SearchResult.note` says so.

`default_mode`: hybrid once embeddings are configured and the configured model has vectors in
the catalogue, else keyword.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.search import keyword
from agent_history.search.fusion import KEYWORD_WEIGHT, rrf, vector_weight
from agent_history.search.query import analyze
from agent_history.search.request import SearchHit, SearchRequest
from agent_history.session.refs import SessionNotFound, resolve_session

if TYPE_CHECKING:
    from agent_history.embed.provider import Embedder


def model_dimensions(conn: psycopg.Connection, model: str) -> int | None:
    """`embed.store.model_dimensions`, imported on first use: a keyword search never loads the
    embedding modules (start-up time, issue 18; tests/test_cli_import_boundary.py)."""
    from agent_history.embed.store import model_dimensions as dims

    return dims(conn, model)


def _vector_search(conn, req, model, dims, qvec):
    """`search.vector.search`, imported on first use (as `model_dimensions`)."""
    from agent_history.search import vector

    return vector.search(conn, req, model, dims, qvec)


CANDIDATES = 50
"""Each branch of a hybrid search contributes up to this many ranked documents (or `limit`)."""


class Mode(StrEnum):
    """How to search."""

    KEYWORD = "keyword"
    VECTOR = "vector"
    HYBRID = "hybrid"


class VectorUnavailable(Exception):
    """Vector search cannot run: embeddings are off, the model has no vectors, or the endpoint
    failed (one line, for the user)."""


@dataclass(slots=True)
class SearchResult:
    """Hits best first, the mode that produced them and a note for the person (None: nothing
    to say), e.g. that a hybrid search fell back to keyword results."""

    hits: list[SearchHit]
    mode: Mode
    note: str | None = None


def default_mode(conn: psycopg.Connection, settings: EmbeddingSettings | None) -> Mode:
    """Hybrid when embeddings are configured and the model has vectors, else keyword."""
    if settings is None or model_dimensions(conn, settings.model_key) is None:
        return Mode.KEYWORD
    return Mode.HYBRID


class _QueryEmbedding:
    """The query embedding on a daemon thread (a stalled endpoint never delays the exit)."""

    def __init__(self, embedder: Embedder, text: str, timeout_s: float):
        self.vector: list[float] | None = None
        self.error: BaseException | None = None
        self._done = threading.Event()
        warm_up = getattr(embedder, "warm_up", None)
        if warm_up:
            warm_up()  # a local model loads before the clock starts
        self.deadline = time.monotonic() + timeout_s
        threading.Thread(target=self._run, args=(embedder, text, timeout_s), daemon=True).start()

    def _run(self, embedder: Embedder, text: str, timeout_s: float) -> None:
        try:
            self.vector = embedder.embed_query(text, timeout_s)
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            self.error = exc
        finally:
            self._done.set()

    def wait(self) -> list[float] | None:
        """The vector, or None when the deadline passed; raises the thread's error."""
        if not self._done.wait(max(0.0, self.deadline - time.monotonic())):
            return None
        if self.error is not None:
            raise self.error
        return self.vector


def _vector_hits(
    conn, req: SearchRequest, settings: EmbeddingSettings, qvec: list[float], vector_search=_vector_search
) -> list[SearchHit]:
    dims = model_dimensions(conn, settings.model_key)
    if dims is None:
        return []
    if len(qvec) != dims:
        raise VectorUnavailable(
            f"the query vector has {len(qvec)} dimensions, the catalogue's {settings.model_key} has {dims}"
        )
    return vector_search(conn, req, settings.model_key, dims, qvec)


def _fuse(req: SearchRequest, kw: list[SearchHit], vec: list[SearchHit]) -> list[SearchHit]:
    w = vector_weight(analyze(req.query))
    by_key: dict[tuple[str, int], SearchHit] = {}
    ranks: dict[tuple[str, int], dict[str, int]] = {}
    for name, hits in (("keyword_rank", kw), ("vector_rank", vec)):
        for rank, h in enumerate(hits, 1):
            by_key.setdefault((h.kind, h.id), h)  # keyword first: its snippet has highlights
            ranks.setdefault((h.kind, h.id), {})[name] = rank
    fused = rrf([(KEYWORD_WEIGHT, [(h.kind, h.id) for h in kw]), (w, [(h.kind, h.id) for h in vec])])
    return [
        replace(by_key[key], score=score, backend="hybrid", extra={**by_key[key].extra, **ranks[key]})
        for key, score in fused[: req.limit]
    ]


def search(
    conn: psycopg.Connection,
    req: SearchRequest,
    mode: Mode,
    settings: EmbeddingSettings | None = None,
    embedder: Embedder | None = None,
    *,
    keyword_search=keyword.search,
    vector_search=_vector_search,
) -> SearchResult:
    """Search in `mode` (see the module docstring).

    `keyword_search(conn, req)` and `vector_search(conn, req, model, dims, qvec)` are the two
    branches (default: messages and tool calls; `search.summaries_vector.run_summary_search`
    passes the journal-summary twins).

    Raises VectorUnavailable for ``vector`` mode when it cannot run (hybrid falls back to
    keyword with a note instead), psycopg errors unchanged.
    """
    if mode is Mode.KEYWORD:
        return SearchResult(keyword_search(conn, req), Mode.KEYWORD)
    if settings is None or embedder is None:
        if mode is Mode.VECTOR:
            raise VectorUnavailable("embeddings are off: configure [embedding] in the config file")
        return SearchResult(keyword_search(conn, req), Mode.KEYWORD, "embeddings are off: keyword results only")
    if model_dimensions(conn, settings.model_key) is None:  # nothing to compare with: no model load
        missing = f"no vectors for {settings.model_key} yet (run `agent-history embed`)"
        if mode is Mode.VECTOR:
            raise VectorUnavailable(missing)
        return SearchResult(keyword_search(conn, req), Mode.KEYWORD, f"{missing}: keyword results only")
    timeout = settings.query_timeout_s
    pending = _QueryEmbedding(embedder, req.query, timeout)
    if mode is Mode.VECTOR:
        try:
            qvec = pending.wait()
        except Exception as exc:  # noqa: BLE001 - EmbeddingError, httpx errors: one line for the user
            raise VectorUnavailable(f"query embedding failed: {exc}") from None
        if qvec is None:
            raise VectorUnavailable(f"the query embedding did not return within {timeout:g} s")
        return SearchResult(_vector_hits(conn, req, settings, qvec, vector_search), Mode.VECTOR)
    wide = replace(req, limit=max(req.limit, CANDIDATES))
    kw = keyword_search(conn, wide)
    try:
        qvec = pending.wait()
    except Exception as exc:  # noqa: BLE001 - any failure of the vector branch falls back
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return SearchResult(kw[: req.limit], Mode.KEYWORD, f"vector search failed ({first}): keyword results only")
    if qvec is None:
        return SearchResult(
            kw[: req.limit],
            Mode.KEYWORD,
            f"the query embedding did not return within {timeout:g} s: keyword results only",
        )
    try:
        vec = _vector_hits(conn, wide, settings, qvec, vector_search)
    except VectorUnavailable as exc:
        return SearchResult(kw[: req.limit], Mode.KEYWORD, f"{exc}: keyword results only")
    return SearchResult(_fuse(req, kw, vec), Mode.HYBRID)


def run_search(
    conn: psycopg.Connection, req: SearchRequest, mode: str | None, settings: EmbeddingSettings | None
) -> SearchResult:
    """`search` for the CLI and MCP: resolve `mode` (None → `default_mode`), make the provider
    when one is needed, search, close it. Raises VectorUnavailable as `search` does, and for
    a provider that cannot be made (e.g. the API key variable is unset) in vector mode, and
    AmbiguousSession for a ``session`` prefix naming several sessions. When
    nothing is found and the query has no searchable term (blank, stop words, punctuation), the
    note says so (`QueryAnalysis.empty_note`) instead of leaving a bare "no matches".
    Retrieves `postrank.candidate_limit` candidates and re-ranks them (`postrank.rerank`:
    context-project boost, ``blend``, distinct turns first) down to `req.limit`."""
    from agent_history.search.postrank import candidate_limit, rerank
    from agent_history.search.request import MAX_LIMIT

    req = with_session_resolved(conn, req)
    result = _run_search(conn, replace(req, limit=candidate_limit(req.limit, MAX_LIMIT)), mode, settings)
    result.hits = rerank(conn, req, result.hits)  # boost, blend, distinct turns first; then `limit`
    if not result.hits:
        empty = analyze(req.query).empty_note()
        if empty:
            result.note = f"{result.note}; {empty}" if result.note else empty
    return result


def with_session_resolved(conn: psycopg.Connection, req: SearchRequest) -> SearchRequest:
    """`req` with its ``session`` prefix replaced by the one session uid it names — the rule
    of `session.refs.resolve_session` (exact uid, else a unique prefix of ≥ `MIN_UID_PREFIX`
    characters). Unchanged when no session matches (the search then finds nothing). Raises
    AmbiguousSession when the prefix names several sessions."""
    if not req.session:
        return req
    try:
        ref = resolve_session(conn, req.session)
    except SessionNotFound:
        return req
    return replace(req, session=ref.session_uid)


def _run_search(
    conn: psycopg.Connection,
    req: SearchRequest,
    mode: str | None,
    settings: EmbeddingSettings | None,
    *,
    keyword_search=keyword.search,
    vector_search=_vector_search,
) -> SearchResult:
    branches = {"keyword_search": keyword_search, "vector_search": vector_search}
    if mode and mode not in tuple(Mode):  # the CLI's words (the web API passes ?mode= as given)
        raise ValueError(f"unknown search mode {mode!r} (known: {', '.join(Mode)})")
    chosen = Mode(mode) if mode else default_mode(conn, settings)
    if chosen is Mode.KEYWORD or settings is None:
        return search(conn, req, chosen, **branches)
    from agent_history.embed.provider import EmbeddingError, make_embedder

    try:
        embedder = make_embedder(settings)
    except EmbeddingError as exc:
        if chosen is Mode.VECTOR:
            raise VectorUnavailable(str(exc)) from None
        return SearchResult(keyword_search(conn, req), Mode.KEYWORD, f"{exc}: keyword results only")
    try:
        return search(conn, req, chosen, settings, embedder, **branches)
    except EmbeddingError as exc:  # e.g. a local model path that is not a model: raised on first use
        if chosen is Mode.VECTOR:
            raise VectorUnavailable(str(exc)) from None
        return SearchResult(keyword_search(conn, req), Mode.KEYWORD, f"{exc}: keyword results only")
    finally:
        embedder.close()
