"""The local sentence-transformers model, loaded once per process (CPU, offline).

Shared by the in-process `embed.provider.LocalEmbedder` and the warm embedding service
(`embed.service`), so both compute the same vectors. sentence-transformers (and torch) are
imported only when a model is loaded, never by importing this module.
"""

from __future__ import annotations

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
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise EmbeddingError(
                    "embedding.provider = \"local\" needs sentence-transformers: pip install 'agent-history[local]'"
                ) from None
            if not os.path.isdir(path):
                raise EmbeddingError(f"embedding.local_model_path {path} is not a directory")
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                _LOCAL_MODELS[path] = SentenceTransformer(path, device="cpu", local_files_only=True)
            except (OSError, ValueError, RuntimeError) as exc:  # not a model directory, bad weights
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise EmbeddingError(
                    f"embedding.local_model_path {path} is not a sentence-transformers model: {first}"
                ) from None
        return _LOCAL_MODELS[path]
