"""What an embedding provider raises (one line each, for the user)."""

from __future__ import annotations


class EmbeddingError(Exception):
    """The provider failed (one line, for the user): bad configuration, HTTP error, bad reply."""


class InputRejected(EmbeddingError):
    """The endpoint rejected this request's input with a 4xx other than auth/not-found/429:
    retried one input at a time; inputs still rejected are recorded as failed."""
