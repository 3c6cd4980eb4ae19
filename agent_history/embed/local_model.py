"""The local sentence-transformers model, loaded once per process (CPU, offline).

Shared by the in-process `embed.provider.LocalEmbedder` and the warm embedding service
(`embed.service`), so both compute the same vectors. sentence-transformers (and torch) are
imported only when a model is loaded, never by importing this module.
"""

from __future__ import annotations

import importlib.util
import os
import threading

from agent_history.embed.errors import EmbeddingError

_LOCAL_MODELS: dict[str, object] = {}
_LOCAL_LOCK = threading.Lock()


def load_local_model(path: str):
    """A sentence-transformers model from the directory `path`, loaded once per process (CPU,
    offline: ``HF_HUB_OFFLINE=1`` unless set). Raises EmbeddingError when sentence-transformers is
    not installed (extra ``[local]``), `path` is not a directory or holds no such model."""
    with _LOCAL_LOCK:
        if path not in _LOCAL_MODELS:
            # both checks before the import: importing sentence-transformers imports torch
            # (seconds to minutes of CPU), and a mistyped path must not wait for it
            if importlib.util.find_spec("sentence_transformers") is None:
                raise _not_installed()
            if not os.path.isdir(path):
                raise EmbeddingError(f"embedding.local_model_path {path} is not a directory")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise _not_installed() from None
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                _LOCAL_MODELS[path] = SentenceTransformer(path, device="cpu", local_files_only=True)
            except (OSError, ValueError, RuntimeError) as exc:  # not a model directory, bad weights
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise EmbeddingError(
                    f"embedding.local_model_path {path} is not a sentence-transformers model: {first}"
                ) from None
        return _LOCAL_MODELS[path]


def _not_installed() -> EmbeddingError:
    return EmbeddingError(
        "embedding.provider = \"local\" needs sentence-transformers: pip install 'agent-history[local]'"
    )


ENCODE_BATCH = 8
"""Inputs the model runs at once, whatever the request's ``batch_size`` (which still sets how many
inputs one request carries and one commit stores). Measured with all-MiniLM-L6-v2 on 2 cores
(torch 2.13 CPU, 64 inputs of 256 tokens; 2026-12-02): at 64 at once the process peaked at
1.11 GB RSS and took 4.8 s; at 16, 0.75 GB and 4.1 s; at 8, 0.61 GB and 2.7 s — the attention
activations of a large batch cost memory and cache misses, not speed (issue 27: every process
< 1 GB RSS; the warm embedding service reached 1.07 GB in `just bench-scale`)."""


def encode(model, texts: list[str]) -> list[list[float]]:
    """Unit-length vectors (list of floats, the model's dimension) of `texts`, in order, computed
    `ENCODE_BATCH` inputs at a time by the sentence-transformers `model`."""
    vectors = model.encode(texts, batch_size=ENCODE_BATCH, normalize_embeddings=True, show_progress_bar=False)
    return [[float(x) for x in v] for v in vectors]
