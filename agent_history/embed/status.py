"""Embedding status for `agent-history status`: off until configured; else pending/embedded/failed."""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.db.tables import chunks
from agent_history.embed import store


def embedding_status(conn: psycopg.Connection, settings: EmbeddingSettings | None) -> dict[str, Any]:
    """JSON-ready status. Keys: configured; when configured also provider, model, dimensions
    (None before the first vector), index (HNSW index name or None), pending (sources to
    examine + chunks waiting for a vector), chunks, embedded, failed, elided (messages too long
    to embed whole, embedded by their head and tail), tokens_today, and summaries (journal
    summary coverage, `store.summary_counts`: summaries, examined, embedded, chunks,
    chunks_embedded). chunks/embedded/failed count message and tool-call chunks only."""
    if settings is None:
        return {"configured": False}
    model = settings.model_key
    counts = store.embedding_counts(conn, model)
    row = chunks.model_row(conn, model)
    return {
        "configured": True,
        "provider": settings.provider,
        "model": model,
        "dimensions": row[0] if row else None,
        "index": row[1] if row else None,
        "pending": store.count_pending_sources(conn, model) + counts["unembedded"],
        "chunks": counts["chunks"],
        "embedded": counts["embedded"],
        "failed": counts["failed"],
        "elided": store.elided_sources(conn),
        "tokens_today": store.tokens_today(conn, model),
        "summaries": store.summary_counts(conn, model),
    }


def status_line(status: dict[str, Any]) -> str:
    """One line for `status`."""
    if not status.get("configured"):
        return "embeddings: off (configure [embedding] in the config file to enable vector and hybrid search)"
    dims = f", {status['dimensions']} dims" if status["dimensions"] else ""
    elided = f" ({status['elided']:,} long messages by head and tail)" if status.get("elided") else ""
    sums = status.get("summaries") or {}
    summaries = f" · summaries {sums['embedded']:,} of {sums['summaries']:,} embedded" if sums.get("summaries") else ""
    return (
        f"embeddings: {status['provider']} {status['model']}{dims} · {status['embedded']:,} embedded, "
        f"{status['pending']:,} pending, {status['failed']:,} failed{elided} · {status['tokens_today']:,} tokens today"
        f"{summaries}"
    )
