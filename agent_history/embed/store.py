"""SQL of the embedder: pending sources, chunk rows, the vector cache, usage, per-model indexes.

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


# The chunked text of a tool call, as SQL (twin of `worker._tool_source`): the error excerpt of a
# failed call, else the first TOOL_OUTPUT_MAX_CHARS characters of its output.
_TOOL_IS_ERROR = "(t.is_error OR t.error_class IS NOT NULL) AND length(btrim(coalesce(t.error_excerpt, ''))) >= %(min)s"
_TOOL_TEXT = f"CASE WHEN {_TOOL_IS_ERROR} THEN t.error_excerpt ELSE left(t.output, {TOOL_OUTPUT_MAX_CHARS}) END"
_TOOL_CANDIDATE = f"(({_TOOL_IS_ERROR}) OR length(t.output) >= {TOOL_OUTPUT_MIN_CHARS})"

_UNEMBEDDED = """EXISTS (
    SELECT 1 FROM ah.chunk AS c
    WHERE c.{col} = {alias}.id
      AND NOT EXISTS (SELECT 1 FROM ah.embedding AS e WHERE e.model = %(model)s AND e.input_sha256 = c.input_sha256)
      AND NOT EXISTS (SELECT 1 FROM ah.embedding_failure AS x WHERE x.model = %(model)s AND x.input_sha256 = c.input_sha256))"""

_PENDING: dict[str, str] = {
    "message": f"""
SELECT m.id, m.message_class, s.cwd,
       CASE WHEN length(m.text) <= %(max)s THEN m.text ELSE left(m.text, %(head)s) END,
       CASE WHEN length(m.text) > %(max)s THEN right(m.text, %(tail)s) END,
       length(m.text), m.text_sha256
FROM ah.message AS m
JOIN ah.session AS s ON s.id = m.session_id
WHERE m.id > %(after)s
  AND NOT EXISTS (SELECT 1 FROM ah.session_exclusion AS ex WHERE ex.agent = s.agent AND ex.session_uid = s.session_uid)
  AND m.message_class = ANY(%(classes)s)
  AND length(btrim(m.text)) >= %(min)s
  AND (NOT EXISTS (SELECT 1 FROM ah.chunk_source AS cs WHERE cs.message_id = m.id AND cs.source_sha256 = m.text_sha256)
       OR {_UNEMBEDDED.format(col="message_id", alias="m")})""",
    "tool_call": f"""
SELECT t.id, ({_TOOL_IS_ERROR}) AS failed, coalesce(t.name, 'tool'), s.cwd, {_TOOL_TEXT}
FROM ah.tool_call AS t
JOIN ah.session AS s ON s.id = t.session_id
WHERE t.id > %(after)s
  AND NOT EXISTS (SELECT 1 FROM ah.session_exclusion AS ex WHERE ex.agent = s.agent AND ex.session_uid = s.session_uid)
  AND {_TOOL_CANDIDATE}
  AND (NOT EXISTS (SELECT 1 FROM ah.chunk_source AS cs
                   WHERE cs.tool_call_id = t.id AND cs.source_sha256 = ah.utf8_sha256({_TOOL_TEXT}))
       OR {_UNEMBEDDED.format(col="tool_call_id", alias="t")})""",
}
# A journal summary's embedded text (migration 0013_summary_chunks): its prose fields in reading
# order, joined by blank lines; classification, topics and ids are metadata, not meaning.
SUMMARY_TEXT_SQL = "concat_ws(E'\\n\\n', ss.title, ss.objective, ss.narrative, ss.outcomes)"
_PENDING["summary"] = f"""
SELECT ss.id, coalesce(s.cwd, ss.project), {SUMMARY_TEXT_SQL}
FROM ah.session_summary AS ss
LEFT JOIN ah.session AS s ON s.id = ss.session_id
WHERE ss.id > %(after)s
  AND NOT EXISTS (SELECT 1 FROM ah.session_exclusion AS ex WHERE ex.agent = ss.agent AND ex.session_uid = ss.session_uid)
  AND length(btrim({SUMMARY_TEXT_SQL})) >= %(min)s
  AND (NOT EXISTS (SELECT 1 FROM ah.summary_chunk_source AS cs
                   WHERE cs.summary_id = ss.id AND cs.source_sha256 = ah.utf8_sha256({SUMMARY_TEXT_SQL}))
       OR {_UNEMBEDDED.replace("ah.chunk ", "ah.summary_chunk ").format(col="summary_id", alias="ss")})"""
"""Pending sources per table (keyset on id > %(after)s); sessions curated out
(``ah.session_exclusion``, `sessions exclude`) are never pending — a summary by its natural key."""
SOURCE_TABLES: tuple[str, ...] = ("message", "tool_call", "summary")

CHUNK_TABLES: dict[str, tuple[str, str, str]] = {
    "message": ("chunk_source", "chunk", "message_id"),
    "tool_call": ("chunk_source", "chunk", "tool_call_id"),
    "summary": ("summary_chunk_source", "summary_chunk", "summary_id"),
}
"""Source table → (its examined-sources table, its chunk table, the source id column)."""
_ALIAS = {"message": "m", "tool_call": "t", "summary": "ss"}


def _params(model: str, after: int, limit: int) -> dict:
    return {"model": model, "after": after, "limit": limit, "min": MIN_CHARS, "classes": list(MESSAGE_CLASSES),
            "max": MAX_SOURCE_CHARS, "head": HEAD_CHARS + CONTEXT_CHARS, "tail": TAIL_CHARS + CONTEXT_CHARS}  # fmt: skip


def pending_sources(conn: psycopg.Connection, table: str, model: str, after: int, limit: int) -> list[Source]:
    """Up to `limit` pending sources of `table` ('message' | 'tool_call' | 'summary') with id > `after`, in id order."""
    rows = conn.execute(
        f"{_PENDING[table]}\nORDER BY {_ALIAS[table]}.id LIMIT %(limit)s", _params(model, after, limit)
    ).fetchall()
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
    return sum(
        conn.execute(f"SELECT count(*) FROM ({_PENDING[t]}) AS p", _params(model, 0, 0)).fetchone()[0]
        for t in SOURCE_TABLES
    )


def replace_chunks(conn: psycopg.Connection, source: Source, source_sha256: bytes, chunks: list[Chunk]) -> None:
    """Make `chunks` the source's chunk set (deleting an older set) and record it as examined."""
    examined, chunk_table, col = CHUNK_TABLES[source.table]
    conn.execute(f"DELETE FROM ah.{chunk_table} WHERE {col} = %s", (source.id,))
    conn.execute(f"DELETE FROM ah.{examined} WHERE {col} = %s", (source.id,))
    conn.execute(
        f"INSERT INTO ah.{examined} ({col}, kind, source_sha256, chunks) VALUES (%s, %s, %s, %s)",
        (source.id, source.kind, source_sha256, len(chunks)),
    )
    if chunks:
        with conn.cursor().copy(
            f"COPY ah.{chunk_table} ({col}, kind, seq, char_start, char_end, input_sha256, input_chars, redactions) FROM STDIN"
        ) as copy:
            for c in chunks:
                copy.write_row(
                    (source.id, source.kind, c.seq, c.start, c.end, c.input_sha256, len(c.input), c.redactions)
                )


def chunk_set_matches(conn: psycopg.Connection, source: Source, source_sha256: bytes, chunks: list[Chunk]) -> bool:
    """True when the stored chunk set of `source` is exactly `chunks` of this text (nothing to write)."""
    examined, chunk_table, col = CHUNK_TABLES[source.table]
    row = conn.execute(f"SELECT source_sha256 FROM ah.{examined} WHERE {col} = %s", (source.id,)).fetchone()
    if row is None or bytes(row[0]) != source_sha256:
        return False
    stored = conn.execute(
        f"SELECT seq, input_sha256 FROM ah.{chunk_table} WHERE {col} = %s ORDER BY seq", (source.id,)
    ).fetchall()
    return [(s, bytes(h)) for s, h in stored] == [(c.seq, c.input_sha256) for c in chunks]


def cached(conn: psycopg.Connection, model: str, shas: list[bytes]) -> set[bytes]:
    """Which of `shas` already have a vector (or a recorded failure) for `model`."""
    if not shas:
        return set()
    rows = conn.execute(
        "SELECT input_sha256 FROM ah.embedding WHERE model = %(m)s AND input_sha256 = ANY(%(s)s) "
        "UNION SELECT input_sha256 FROM ah.embedding_failure WHERE model = %(m)s AND input_sha256 = ANY(%(s)s)",
        {"m": model, "s": shas},
    ).fetchall()
    return {bytes(r[0]) for r in rows}


def vector_literal(vector: list[float]) -> str:
    """pgvector's text form ``[x,y,…]``."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def register_model(conn: psycopg.Connection, model: str, provider: str, dimensions: int) -> None:
    """Record `model`'s dimension; raises ValueError when the catalogue knows another one."""
    conn.execute(
        "INSERT INTO ah.embedding_model (model, provider, dimensions) VALUES (%s, %s, %s) ON CONFLICT (model) DO NOTHING",
        (model, provider, dimensions),
    )
    known = conn.execute("SELECT dimensions FROM ah.embedding_model WHERE model = %s", (model,)).fetchone()[0]
    if known != dimensions:
        raise ValueError(
            f"model {model!r} has {known}-dimensional vectors in the catalogue but the provider returned {dimensions}; "
            "configure a different embedding.model or embedding.dimensions"
        )


def model_dimensions(conn: psycopg.Connection, model: str) -> int | None:
    """The recorded dimension of `model` (None: no vectors yet)."""
    row = conn.execute("SELECT dimensions FROM ah.embedding_model WHERE model = %s", (model,)).fetchone()
    return row[0] if row else None


def store_vectors(conn: psycopg.Connection, model: str, items: list[tuple[bytes, list[float]]]) -> int:
    """Insert vectors (existing keys are kept); returns rows inserted."""
    if not items:
        return 0
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO ah.embedding (model, input_sha256, vector) VALUES (%s, %s, %s::vector) "
            "ON CONFLICT (model, input_sha256) DO NOTHING",
            [(model, sha, vector_literal(v)) for sha, v in items],
        )
        return cur.rowcount


def store_failures(conn: psycopg.Connection, model: str, items: list[tuple[bytes, str]]) -> None:
    """Record inputs the endpoint rejected (skipped until a rebuild)."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO ah.embedding_failure (model, input_sha256, error) VALUES (%s, %s, %s) "
            "ON CONFLICT (model, input_sha256) DO UPDATE SET error = EXCLUDED.error, failed_at = now()",
            [(model, sha, err[:500]) for sha, err in items],
        )


def tokens_today(conn: psycopg.Connection, model: str) -> int:
    """Tokens spent on `model` today (UTC), all runs."""
    row = conn.execute(
        "SELECT tokens FROM ah.embedding_usage WHERE day = %s AND model = %s", (datetime.now(UTC).date(), model)
    ).fetchone()
    return int(row[0]) if row else 0


def add_usage(conn: psycopg.Connection, model: str, tokens: int, inputs: int, requests: int) -> None:
    """Add to today's (UTC) usage of `model`."""
    conn.execute(
        "INSERT INTO ah.embedding_usage AS u (day, model, tokens, inputs, requests) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (day, model) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens, "
        "inputs = u.inputs + EXCLUDED.inputs, requests = u.requests + EXCLUDED.requests",
        (datetime.now(UTC).date(), model, tokens, inputs, requests),
    )


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
    row = conn.execute("SELECT dimensions, index_name FROM ah.embedding_model WHERE model = %s", (model,)).fetchone()
    if row is None or row[1] is not None:
        return None
    dims = row[0]
    name = index_name(model)
    ops = "vector_cosine_ops" if dims <= HNSW_MAX_VECTOR_DIMS else "halfvec_cosine_ops"
    stmt = sql.SQL("CREATE INDEX IF NOT EXISTS {} ON ah.embedding USING hnsw ({} {}) WHERE model = {}").format(
        sql.Identifier(name), vector_expr(dims, sql.SQL("vector")), sql.SQL(ops), sql.Literal(model)
    )
    try:
        with conn.transaction():
            conn.execute(stmt)
            conn.execute("UPDATE ah.embedding_model SET index_name = %s WHERE model = %s", (name, model))
    except psycopg.errors.InsufficientPrivilege:
        return None
    return name


def elided_sources(conn: psycopg.Connection) -> int:
    """Examined messages too long to embed whole (embedded by head and tail, `chunking.is_elided`)."""
    return conn.execute(
        "SELECT count(*) FROM ah.chunk_source AS cs JOIN ah.message AS m ON m.id = cs.message_id "
        "WHERE cs.chunks > 0 AND octet_length(m.text) > %(max)s AND length(m.text) > %(max)s",
        {"max": MAX_SOURCE_CHARS},
    ).fetchone()[0]


def embedding_counts(conn: psycopg.Connection, model: str) -> dict[str, int]:
    """Chunks, chunks with a vector for `model`, failed chunks, chunks waiting for a vector."""
    row = conn.execute(
        """
        SELECT count(*),
               count(*) FILTER (WHERE e.input_sha256 IS NOT NULL),
               count(*) FILTER (WHERE e.input_sha256 IS NULL AND x.input_sha256 IS NOT NULL),
               count(*) FILTER (WHERE e.input_sha256 IS NULL AND x.input_sha256 IS NULL)
        FROM ah.chunk AS c
        LEFT JOIN ah.embedding AS e ON e.model = %(m)s AND e.input_sha256 = c.input_sha256
        LEFT JOIN ah.embedding_failure AS x ON x.model = %(m)s AND x.input_sha256 = c.input_sha256
        """,
        {"m": model},
    ).fetchone()
    return {"chunks": row[0], "embedded": row[1], "failed": row[2], "unembedded": row[3]}


def summary_counts(conn: psycopg.Connection, model: str) -> dict[str, int]:
    """Summary embedding coverage for `model`: ``summaries`` (rows of ah.session_summary),
    ``examined`` (chunked at their current text or found not worth embedding), ``embedded``
    (summaries with chunks, every one with a vector), ``chunks``, ``chunks_embedded``."""
    row = conn.execute(
        f"""
        WITH c AS (
            SELECT c.summary_id, count(*) AS n, count(e.input_sha256) AS done
            FROM ah.summary_chunk AS c
            LEFT JOIN ah.embedding AS e ON e.model = %(m)s AND e.input_sha256 = c.input_sha256
            GROUP BY c.summary_id
        )
        SELECT (SELECT count(*) FROM ah.session_summary),
               (SELECT count(*) FROM ah.session_summary AS ss JOIN ah.summary_chunk_source AS cs
                  ON cs.summary_id = ss.id AND cs.source_sha256 = ah.utf8_sha256({SUMMARY_TEXT_SQL})),
               count(*) FILTER (WHERE c.n = c.done), coalesce(sum(c.n), 0), coalesce(sum(c.done), 0)
        FROM c
        """,
        {"m": model},
    ).fetchone()
    keys = ("summaries", "examined", "embedded", "chunks", "chunks_embedded")
    return dict(zip(keys, (int(v) for v in row), strict=True))
