"""Embedding providers: an OpenAI-compatible ``/embeddings`` endpoint, or a local in-process model.

Both take already-redacted inputs (the worker redacts; nothing else calls them) and return one
vector per input, in input order.

- `OpenAIEmbedder` — ``POST {base_url}/embeddings`` with ``{"model", "input": [...],
  "encoding_format": "float"}`` (+ ``"dimensions"`` when configured), bearer key from the
  environment variable named by ``api_key_env``. Works with OpenAI, Ollama (``/v1``), vLLM,
  TEI, LiteLLM. Retries (tenacity, exponential backoff with jitter, honouring ``Retry-After``)
  on 429, 5xx and transport errors, up to ``max_attempts``; 401/403/404 and other 4xx are not
  retried. Token usage: the response's ``usage.prompt_tokens`` (or ``total_tokens``) when
  present, else the estimate.
- `LocalEmbedder` — sentence-transformers in process (extra ``[local]``), loaded from
  ``local_model_path`` on first use, CPU, offline.
- `WarmLocalEmbedder` — what ``provider = "local"`` gives by default: the same model held by the
  warm embedding service (`agent_history.embed.service`, started on demand, shared by every
  process); when the service cannot start or be reached it says why in one line on stderr and
  falls back to `LocalEmbedder`. ``[embedding] service_idle_s = 0`` turns the service off.

`estimate_tokens` (characters / 4, rounded up) is what the token caps use *before* a request.

`Embedder.check` is called before a pass does any work, so a misconfigured provider fails at
once with one line: the local model is loaded; the endpoint gets one request of one short input
(`CHECK_INPUT`), no retries — unreachable, 401/403/404 or a malformed reply is an error; 429 and
5xx mean it is there but busy (the pass retries those).
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent_history.config import EmbeddingSettings
from agent_history.config import data_dir as default_data_dir
from agent_history.embed.errors import EmbeddingError, InputRejected
from agent_history.embed.local_model import encode, load_local_model
from agent_history.lazy import lazy_module

if TYPE_CHECKING:
    import httpx
    import tenacity
    from tenacity import RetryCallState
else:  # loaded on first use: `search` and `index` never need them (start-up time, issue 18)
    httpx = lazy_module("httpx")
    tenacity = lazy_module("tenacity")

__all__ = [
    "CHECK_INPUT",
    "EmbedResult",
    "Embedder",
    "EmbeddingError",
    "InputRejected",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "WarmLocalEmbedder",
    "estimate_tokens",
    "load_local_model",
    "make_embedder",
]


@dataclass(frozen=True, slots=True)
class EmbedResult:
    """Vectors in input order and the tokens the provider counted (None: not reported)."""

    vectors: list[list[float]]
    tokens: int | None


class Embedder(Protocol):
    """What the worker and the hybrid search need from a provider."""

    settings: EmbeddingSettings

    def embed(self, texts: list[str]) -> EmbedResult:
        """Embed a batch (retries included). Raises EmbeddingError / InputRejected."""
        ...

    def embed_query(self, text: str, timeout_s: float) -> list[float]:
        """Embed one query with no retries, bounded by `timeout_s` where the provider can.
        Raises EmbeddingError or httpx.TimeoutException."""
        ...

    def close(self) -> None: ...


CHECK_INPUT = "agent-history provider check"
"""The one input `check` sends to an endpoint."""


def estimate_tokens(text: str) -> int:
    """A provider-independent token estimate: ceil(characters / 4)."""
    return max(1, math.ceil(len(text) / 4))


# --- OpenAI-compatible ------------------------------------------------------------------------

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
FATAL_STATUS = {401: "unauthorized (check the API key)", 403: "forbidden (check the API key's permissions)",
                404: "not found (check base_url and model)"}  # fmt: skip


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status  # None: a transport error (no HTTP answer)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(60.0, max(0.0, float(value))) if value else None
    except ValueError:
        return None


class _WaitRetryAfter:
    """Exponential backoff with jitter, but at least the server's ``Retry-After``."""

    def __init__(self, initial: float, maximum: float):
        self._backoff = tenacity.wait_exponential(multiplier=initial, max=maximum) + tenacity.wait_random(0, initial)

    def __call__(self, state: RetryCallState) -> float:
        wait = self._backoff(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            wait = max(wait, exc.retry_after)
        return wait


def _excerpt(response: httpx.Response) -> str:
    try:
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return str(body["error"].get("message", ""))[:200]
        return str(body)[:200]
    except ValueError:
        return response.text[:200]


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint (see the module docstring)."""

    def __init__(self, settings: EmbeddingSettings, *, backoff_initial_s: float = 1.0, backoff_max_s: float = 30.0):
        self.settings = settings
        headers = {"Content-Type": "application/json"}
        if settings.api_key_env:
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise EmbeddingError(f"environment variable {settings.api_key_env} (embedding.api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        try:
            base = httpx.URL(settings.base_url)
        except httpx.InvalidURL as exc:
            raise EmbeddingError(f"embedding.base_url {settings.base_url!r} is not a URL: {exc}") from None
        if base.scheme not in ("http", "https") or not base.host:
            raise EmbeddingError(f"embedding.base_url {settings.base_url!r} must be an http:// or https:// URL")
        self._url = settings.base_url.rstrip("/") + "/embeddings"
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(settings.timeout_s, connect=10.0))
        self._wait = _WaitRetryAfter(backoff_initial_s, backoff_max_s)

    def _body(self, texts: list[str]) -> dict:
        body: dict = {"model": self.settings.model, "input": texts, "encoding_format": "float"}
        if self.settings.dimensions:
            body["dimensions"] = self.settings.dimensions
        return body

    def _parse(self, response: httpx.Response, n: int) -> EmbedResult:
        try:
            payload = response.json()
            data = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = [[float(x) for x in d["embedding"]] for d in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"embedding endpoint {self._url} returned an unexpected body: {exc}") from None
        if len(vectors) != n:
            raise EmbeddingError(f"embedding endpoint {self._url} returned {len(vectors)} vectors for {n} inputs")
        usage = payload.get("usage") or {}
        tokens = usage.get("prompt_tokens") or usage.get("total_tokens")
        return EmbedResult(vectors, int(tokens) if tokens else None)

    def _post_once(self, texts: list[str]) -> EmbedResult:
        try:
            response = self._client.post(self._url, json=self._body(texts))
        except httpx.TransportError as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if response.status_code in RETRY_STATUS:
            raise _Retryable(
                f"HTTP {response.status_code}: {_excerpt(response)}", _retry_after(response), response.status_code
            )
        if response.status_code in FATAL_STATUS:
            raise EmbeddingError(
                f"embedding endpoint {self._url}: HTTP {response.status_code} {FATAL_STATUS[response.status_code]}"
            )
        if 400 <= response.status_code < 500:
            raise InputRejected(f"HTTP {response.status_code}: {_excerpt(response)}")
        if response.status_code >= 300:
            raise EmbeddingError(f"embedding endpoint {self._url}: HTTP {response.status_code} {_excerpt(response)}")
        return self._parse(response, len(texts))

    def embed(self, texts: list[str]) -> EmbedResult:
        """Embed a batch, retrying 429 / 5xx / transport errors with backoff."""
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda e: isinstance(e, _Retryable)),
            wait=self._wait,
            stop=tenacity.stop_after_attempt(self.settings.max_attempts),
            reraise=True,
        )
        try:
            return retrying(self._post_once, texts)
        except _Retryable as exc:
            raise EmbeddingError(
                f"embedding endpoint {self._url} failed after {self.settings.max_attempts} attempts: {exc}"
            ) from None

    def embed_query(self, text: str, timeout_s: float) -> list[float]:
        """One attempt, `timeout_s` for each of connect/write/read (the caller bounds the wall time)."""
        try:
            response = self._client.post(self._url, json=self._body([text]), timeout=timeout_s)
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as exc:
            raise EmbeddingError(f"embedding endpoint {self._url}: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 300:
            raise EmbeddingError(f"embedding endpoint {self._url}: HTTP {response.status_code} {_excerpt(response)}")
        return self._parse(response, 1).vectors[0]

    def check(self) -> None:
        """One request of `CHECK_INPUT`, no retries (see the module docstring)."""
        try:
            self._post_once([CHECK_INPUT])
        except _Retryable as exc:
            if exc.status is None:  # transport: nothing answers at base_url
                raise EmbeddingError(
                    f"embedding endpoint {self._url} is unreachable (check embedding.base_url): {exc}"
                ) from None
        except InputRejected as exc:
            raise EmbeddingError(f"embedding endpoint {self._url} rejected a one-line input: {exc}") from None

    def warm_up(self) -> None:
        """Nothing to prepare for an HTTP endpoint."""

    def close(self) -> None:
        self._client.close()


# --- local in-process ------------------------------------------------------------------------


class LocalEmbedder:
    """sentence-transformers in process (see the module docstring)."""

    def __init__(self, settings: EmbeddingSettings):
        self.settings = settings
        self._path = str(settings.local_model_path)

    @property
    def model(self):
        return load_local_model(self._path)

    def embed(self, texts: list[str]) -> EmbedResult:
        return EmbedResult(encode(self.model, texts), None)

    def warm_up(self) -> None:
        """Load the model (before a query's deadline starts)."""
        self.model  # noqa: B018

    def check(self) -> None:
        """Load the model now (a bad ``local_model_path`` fails here). Raises EmbeddingError."""
        self.warm_up()

    def embed_query(self, text: str, timeout_s: float) -> list[float]:
        """In process: the deadline is enforced by the caller (loading the model is not counted
        when it was loaded before)."""
        return self.embed([text]).vectors[0]

    def close(self) -> None:
        pass


class WarmLocalEmbedder:
    """The local model through the warm embedding service, falling back to `LocalEmbedder` (see
    the module docstring). Vectors are identical either way (the service runs the same
    `LocalEmbedder.embed` computation). `data_dir` holds the service's socket, pid file and log."""

    def __init__(self, settings: EmbeddingSettings, data_dir: Path):
        self.settings = settings
        self._data_dir = data_dir
        self._path = str(settings.local_model_path)
        self._client = None
        self._local: LocalEmbedder | None = None  # set once the service failed: in process from then on

    def _fallback(self, reason: str) -> LocalEmbedder:
        print(f"embedding service unavailable ({reason}): loading the model in this process", file=sys.stderr)
        self._local = LocalEmbedder(self.settings)
        return self._local

    def _service(self):
        """The service client, or None when this embedder has fallen back to in-process."""
        # imported on first use: a keyword-only process never needs the service client (start-up time)
        from agent_history.embed.service import ServiceUnavailable, ensure_service

        if self._local is None and self._client is None:
            if not os.path.isdir(self._path):
                raise EmbeddingError(f"embedding.local_model_path {self._path} is not a directory")
            try:
                self._client = ensure_service(self._path, self._data_dir, self.settings.service_idle_s)
            except ServiceUnavailable as exc:
                self._fallback(str(exc))
        return self._client

    def _call(self, texts: list[str], timeout_s: float | None) -> list[list[float]]:
        from agent_history.embed.service import ServiceUnavailable

        for attempt in (1, 2):  # the service may have timed out between two calls: start it again once
            client = self._service()
            if client is None:
                return self._local.embed(texts).vectors
            try:
                return client.embed(texts, self.settings.batch_size, timeout_s)
            except ServiceUnavailable as exc:
                client.close()
                self._client = None
                if attempt == 2:
                    self._fallback(str(exc))
        return self._local.embed(texts).vectors

    def embed(self, texts: list[str]) -> EmbedResult:
        return EmbedResult(self._call(texts, None), None)  # no deadline, as in process

    def embed_query(self, text: str, timeout_s: float) -> list[float]:
        """One query; over the service bounded by `timeout_s` per socket operation (raises
        TimeoutError; the hybrid search also keeps its own deadline)."""
        return self._call([text], timeout_s)[0]

    def warm_up(self) -> None:
        """Reach (or start) the service, or load the model in process (before a query's deadline)."""
        if self._service() is None:
            self._local.warm_up()

    def check(self) -> None:
        """Reach the service or load the model now. Raises EmbeddingError."""
        self.warm_up()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def make_embedder(settings: EmbeddingSettings, data_dir: Path | None = None) -> Embedder:
    """The provider `settings` names: for ``local``, the warm service (in ``data_dir``, default
    `agent_history.config.data_dir()`) unless ``service_idle_s`` is 0. Raises EmbeddingError for
    a bad configuration."""
    if settings.provider == "local":
        if settings.service_idle_s > 0:
            return WarmLocalEmbedder(settings, data_dir if data_dir is not None else default_data_dir())
        return LocalEmbedder(settings)
    return OpenAIEmbedder(settings)
