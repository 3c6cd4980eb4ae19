"""The embedder's store: pending sources, chunk rows, the vector cache, usage, per-model indexes
(the statements are `db.tables.chunks`'s; this module applies the chunking rules to them).

Tables: migration ``0003_embeddings`` (its docstring is the storage contract). A *source* is a
message or a tool call the embedder looks at; it is pending when it was never examined, its
text changed since (``chunk_source.source_sha256``), or one of its chunks has no vector for the
model and has not failed. Pending sources are read in id order (keyset), so a pass is linear
in the catalogue and an interrupted pass resumes where the next one starts scanning.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg
from psycopg import sql

from agent_history.db.tables import chunks
from agent_history.embed.chunking import (
    CONTEXT_CHARS,
    HEAD_CHARS,
    KIND_MESSAGE,
    KIND_SUMMARY,
    KIND_TOOL_ERROR,
    KIND_TOOL_OUTPUT,
    MAX_SOURCE_CHARS,
    MESSAGE_CLASSES,
    MIN_CHARS,
    TAIL_CHARS,
    TOOL_OUTPUT_MAX_CHARS,
    TOOL_OUTPUT_MIN_CHARS,
    Chunk,
)

EMBED_LOCK = 0x61685F656D62  # 'ah_emb': one embed pass at a time
HNSW_MAX_VECTOR_DIMS = 2000  # pgvector: HNSW indexes `vector` up to 2,000 dims, `halfvec` up to 4,000


@dataclass(frozen=True, slots=True)
class Source:
    """A message or tool call to chunk: `table` is 'message' | 'tool_call'.

    A message longer than `MAX_SOURCE_CHARS` is read bounded: `text` is then its head and
    `tail` its tail (`chunking.head_tail`), `length` its length in characters; `sha256` is the
    sha256 of the whole text (``ah.message.text_sha256``), None for tool calls (computed)."""

    table: str
    id: int
    kind: str
    label: str
    cwd: str | None
    text: str
    tail: str | None = None
    length: int | None = None
    sha256: bytes | None = None


SUMMARY_TEXT_SQL = chunks.SUMMARY_TEXT_SQL
SOURCE_TABLES = chunks.SOURCE_TABLES
CHUNK_TABLES = chunks.CHUNK_TABLES
_RULES = {"tool_output_min_chars": TOOL_OUTPUT_MIN_CHARS, "tool_output_max_chars": TOOL_OUTPUT_MAX_CHARS}


def _params(model: str, after: int, limit: int) -> dict:
    return {"model": model, "after": after, "limit": limit, "min": MIN_CHARS, "classes": list(MESSAGE_CLASSES),
            "max": MAX_SOURCE_CHARS, "head": HEAD_CHARS + CONTEXT_CHARS, "tail": TAIL_CHARS + CONTEXT_CHARS}  # fmt: skip


def pending_sources(conn: psycopg.Connection, table: str, model: str, after: int, limit: int) -> list[Source]:
    """Up to `limit` pending sources of `table` ('message' | 'tool_call' | 'summary') with id > `after`, in id order."""
    rows = chunks.pending_rows(conn, table, _params(model, after, limit), **_RULES)
    if table == "summary":
        return [Source("summary", r[0], KIND_SUMMARY, "summary", r[1], r[2] or "") for r in rows]
    if table == "message":
        return [Source("message", r[0], KIND_MESSAGE, r[1], r[2], r[3], r[4], r[5], bytes(r[6])) for r in rows]
    return [
        Source("tool_call", r[0], KIND_TOOL_ERROR if r[1] else KIND_TOOL_OUTPUT,
               f"{r[2]} {'error' if r[1] else 'output'}", r[3], r[4] or "")
        for r in rows
    ]  # fmt: skip


def count_pending_sources(conn: psycopg.Connection, model: str) -> int:
    """How many sources a pass would look at now (for the progress bar and `status`)."""
    return chunks.count_pending(conn, _params(model, 0, 0), **_RULES)


def replace_chunks(conn: psycopg.Connection, source: Source, source_sha256: bytes, pieces: list[Chunk]) -> None:
    """Make `pieces` the source's chunk set (deleting an older set) and record it as examined."""
    rows = [(c.seq, c.start, c.end, c.input_sha256, len(c.input), c.redactions) for c in pieces]
    chunks.replace_chunk_set(conn, source.table, source.id, source.kind, source_sha256, rows)


def chunk_set_matches(conn: psycopg.Connection, source: Source, source_sha256: bytes, pieces: list[Chunk]) -> bool:
    """True when the stored chunk set of `source` is exactly `pieces` of this text (nothing to write)."""
    if chunks.examined_sha256(conn, source.table, source.id) != source_sha256:
        return False
    return chunks.stored_chunks(conn, source.table, source.id) == [(c.seq, c.input_sha256) for c in pieces]


def cached(conn: psycopg.Connection, model: str, shas: list[bytes]) -> set[bytes]:
    """Which of `shas` already have a vector (or a recorded failure) for `model`."""
    if not shas:
        return set()
    return chunks.cached(conn, model, shas)


def vector_literal(vector: list[float]) -> str:
    """pgvector's text form ``[x,y,…]``."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def register_model(conn: psycopg.Connection, model: str, provider: str, dimensions: int) -> None:
    """Record `model`'s dimension; raises ValueError when the catalogue knows another one."""
    known = chunks.add_model(conn, model, provider, dimensions)
    if known != dimensions:
        raise ValueError(
            f"model {model!r} has {known}-dimensional vectors in the catalogue but the provider returned {dimensions}; "
            "configure a different embedding.model or embedding.dimensions"
        )


def model_dimensions(conn: psycopg.Connection, model: str) -> int | None:
    """The recorded dimension of `model` (None: no vectors yet)."""
    return chunks.model_dimensions(conn, model)


def store_vectors(conn: psycopg.Connection, model: str, items: list[tuple[bytes, list[float]]]) -> int:
    """Insert vectors (existing keys are kept); returns rows inserted."""
    if not items:
        return 0
    return chunks.insert_vectors(conn, model, [(sha, vector_literal(v)) for sha, v in items])


def store_failures(conn: psycopg.Connection, model: str, items: list[tuple[bytes, str]]) -> None:
    """Record inputs the endpoint rejected (skipped until a rebuild)."""
    chunks.insert_failures(conn, model, [(sha, err[:500]) for sha, err in items])


def tokens_today(conn: psycopg.Connection, model: str) -> int:
    """Tokens spent on `model` today (UTC), all runs."""
    return chunks.tokens_on(conn, datetime.now(UTC).date(), model)


def add_usage(conn: psycopg.Connection, model: str, tokens: int, inputs: int, requests: int) -> None:
    """Add to today's (UTC) usage of `model`."""
    chunks.add_usage(conn, datetime.now(UTC).date(), model, tokens, inputs, requests)


def index_name(model: str) -> str:
    """The per-model HNSW index name: ``embedding_hnsw_<md5(model)[:12]>``."""
    return "embedding_hnsw_" + hashlib.md5(model.encode()).hexdigest()[:12]


def vector_expr(dimensions: int, column: sql.Composable = sql.SQL("e.vector")) -> sql.Composable:
    """The indexed expression: ``vector::vector(N)``, or ``::halfvec(N)`` above 2,000 dims."""
    kind = "vector" if dimensions <= HNSW_MAX_VECTOR_DIMS else "halfvec"
    return sql.SQL("({}::{}({}))").format(column, sql.SQL(kind), sql.Literal(dimensions))


def ensure_index(conn: psycopg.Connection, model: str) -> str | None:
    """Build `model`'s partial expression HNSW index if it has vectors and no index yet.

    Returns the name of an index built now, else None. Needs the table owner; without the
    privilege the search runs as an exact scan and this returns None.
    """
    row = chunks.model_row(conn, model)
    if row is None or row[1] is not None:
        return None
    dims = row[0]
    name = index_name(model)
    ops = "vector_cosine_ops" if dims <= HNSW_MAX_VECTOR_DIMS else "halfvec_cosine_ops"
    try:
        with conn.transaction():
            chunks.create_model_index(conn, model, name, vector_expr(dims, sql.SQL("vector")), ops)
    except psycopg.errors.InsufficientPrivilege:
        return None
    return name


def elided_sources(conn: psycopg.Connection) -> int:
    """Examined messages too long to embed whole (embedded by head and tail, `chunking.is_elided`)."""
    return chunks.elided_sources(conn, MAX_SOURCE_CHARS)


def embedding_counts(conn: psycopg.Connection, model: str) -> dict[str, int]:
    """Chunks, chunks with a vector for `model`, failed chunks, chunks waiting for a vector."""
    return chunks.embedding_counts(conn, model)


def summary_counts(conn: psycopg.Connection, model: str) -> dict[str, int]:
    """Summary embedding coverage for `model` (`db.tables.chunks.summary_counts`): ``summaries``,
    ``examined``, ``embedded``, ``chunks``, ``chunks_embedded``."""
    return chunks.summary_counts(conn, model)
