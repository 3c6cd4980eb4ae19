"""The embedder's statements (docs/design.md §9; tables: migrations ``0003_embeddings`` and
``0013_summary_chunks``, whose docstrings are the storage contract): the pending sources, the
chunk sets (``ah.chunk_source``/``ah.chunk``, ``ah.summary_chunk_source``/``ah.summary_chunk``),
the vector cache (``ah.embedding``, ``ah.embedding_failure``), the models and their HNSW
indexes (``ah.embedding_model``), the daily usage (``ah.embedding_usage``), the coverage counts
of `status`, and the embed passes' record in ``ah.meta``.

`embed.store` is the embedder's interface over these: it owns the chunking rules (the numbers
the pending statements are composed with are passed in from `embed.chunking`), builds the rows
and the transactions. Nothing here commits.
"""

from __future__ import annotations

from datetime import date
from functools import cache

import psycopg
from psycopg import sql

# A journal summary's embedded text (migration 0013_summary_chunks): its prose fields in reading
# order, joined by blank lines; classification, topics and ids are metadata, not meaning.
SUMMARY_TEXT_SQL = "concat_ws(E'\\n\\n', ss.title, ss.objective, ss.narrative, ss.outcomes)"

SOURCE_TABLES: tuple[str, ...] = ("message", "tool_call", "summary")
"""The tables whose rows the embedder chunks (`pending_statements`' keys)."""

CHUNK_TABLES: dict[str, tuple[str, str, str]] = {
    "message": ("chunk_source", "chunk", "message_id"),
    "tool_call": ("chunk_source", "chunk", "tool_call_id"),
    "summary": ("summary_chunk_source", "summary_chunk", "summary_id"),
}
"""Source table → (its examined-sources table, its chunk table, the source id column)."""
_ALIAS = {"message": "m", "tool_call": "t", "summary": "ss"}


@cache
def pending_statements(tool_output_min_chars: int, tool_output_max_chars: int) -> dict[str, str]:
    """Pending sources per table of `SOURCE_TABLES` (keyset on id > %(after)s; parameters model,
    after, min, classes, max, head, tail), composed with the tool-output rules (characters): a
    tool call is a candidate when it failed with an error excerpt or its output has at least
    `tool_output_min_chars`; its text is the excerpt or the output's first
    `tool_output_max_chars`. A source is pending when never examined, its text changed since
    (``source_sha256``), or one of its chunks has neither a vector nor a failure for the model;
    sessions curated out (``ah.session_exclusion``, `sessions exclude`) are never pending — a
    summary by its natural key."""
    # The chunked text of a tool call, as SQL (twin of `worker._tool_source`): the error excerpt of a
    # failed call, else the first tool_output_max_chars characters of its output.
    tool_is_error = (
        "(t.is_error OR t.error_class IS NOT NULL) AND length(btrim(coalesce(t.error_excerpt, ''))) >= %(min)s"
    )
    tool_text = f"CASE WHEN {tool_is_error} THEN t.error_excerpt ELSE left(t.output, {tool_output_max_chars}) END"
    tool_candidate = f"(({tool_is_error}) OR length(t.output) >= {tool_output_min_chars})"

    unembedded = """EXISTS (
    SELECT 1 FROM ah.chunk AS c
    WHERE c.{col} = {alias}.id
      AND NOT EXISTS (SELECT 1 FROM ah.embedding AS e WHERE e.model = %(model)s AND e.input_sha256 = c.input_sha256)
      AND NOT EXISTS (SELECT 1 FROM ah.embedding_failure AS x WHERE x.model = %(model)s AND x.input_sha256 = c.input_sha256))"""

    pending: dict[str, str] = {
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
       OR {unembedded.format(col="message_id", alias="m")})""",
        "tool_call": f"""
SELECT t.id, ({tool_is_error}) AS failed, coalesce(t.name, 'tool'), s.cwd, {tool_text}
FROM ah.tool_call AS t
JOIN ah.session AS s ON s.id = t.session_id
WHERE t.id > %(after)s
  AND NOT EXISTS (SELECT 1 FROM ah.session_exclusion AS ex WHERE ex.agent = s.agent AND ex.session_uid = s.session_uid)
  AND {tool_candidate}
  AND (NOT EXISTS (SELECT 1 FROM ah.chunk_source AS cs
                   WHERE cs.tool_call_id = t.id AND cs.source_sha256 = ah.utf8_sha256({tool_text}))
       OR {unembedded.format(col="tool_call_id", alias="t")})""",
    }
    pending["summary"] = f"""
SELECT ss.id, coalesce(s.cwd, ss.project), {SUMMARY_TEXT_SQL}
FROM ah.session_summary AS ss
LEFT JOIN ah.session AS s ON s.id = ss.session_id
WHERE ss.id > %(after)s
  AND NOT EXISTS (SELECT 1 FROM ah.session_exclusion AS ex WHERE ex.agent = ss.agent AND ex.session_uid = ss.session_uid)
  AND length(btrim({SUMMARY_TEXT_SQL})) >= %(min)s
  AND (NOT EXISTS (SELECT 1 FROM ah.summary_chunk_source AS cs
                   WHERE cs.summary_id = ss.id AND cs.source_sha256 = ah.utf8_sha256({SUMMARY_TEXT_SQL}))
       OR {unembedded.replace("ah.chunk ", "ah.summary_chunk ").format(col="summary_id", alias="ss")})"""
    return pending


def pending_rows(
    conn: psycopg.Connection, table: str, params: dict, *, tool_output_min_chars: int, tool_output_max_chars: int
) -> list[tuple]:
    """Up to ``params["limit"]`` pending sources of `table` with id > ``params["after"]``, in id
    order (`pending_statements`; its parameters in `params`). Rows: a message's (id,
    message_class, cwd, text or head, tail or None, length, text_sha256); a tool call's (id,
    failed, name, cwd, text); a summary's (id, cwd or project, text)."""
    pending = pending_statements(tool_output_min_chars, tool_output_max_chars)
    return conn.execute(f"{pending[table]}\nORDER BY {_ALIAS[table]}.id LIMIT %(limit)s", params).fetchall()


def count_pending(
    conn: psycopg.Connection, params: dict, *, tool_output_min_chars: int, tool_output_max_chars: int
) -> int:
    """How many sources of every table of `SOURCE_TABLES` are pending (`pending_statements`)."""
    pending = pending_statements(tool_output_min_chars, tool_output_max_chars)
    return sum(conn.execute(f"SELECT count(*) FROM ({pending[t]}) AS p", params).fetchone()[0] for t in SOURCE_TABLES)


def replace_chunk_set(
    conn: psycopg.Connection, table: str, source_id: int, kind: str, source_sha256: bytes, rows: list[tuple]
) -> None:
    """Make `rows` the chunk set of source `source_id` of `table` (deleting an older set) and
    record the source examined at `source_sha256` with `kind`. Each row: (seq, char_start,
    char_end, input_sha256, input_chars, redactions), written by COPY."""
    examined, chunk_table, col = CHUNK_TABLES[table]
    conn.execute(f"DELETE FROM ah.{chunk_table} WHERE {col} = %s", (source_id,))
    conn.execute(f"DELETE FROM ah.{examined} WHERE {col} = %s", (source_id,))
    conn.execute(
        f"INSERT INTO ah.{examined} ({col}, kind, source_sha256, chunks) VALUES (%s, %s, %s, %s)",
        (source_id, kind, source_sha256, len(rows)),
    )
    if rows:
        with conn.cursor().copy(
            f"COPY ah.{chunk_table} ({col}, kind, seq, char_start, char_end, input_sha256, input_chars, redactions) FROM STDIN"
        ) as copy:
            for seq, start, end, sha, chars, redactions in rows:
                copy.write_row((source_id, kind, seq, start, end, sha, chars, redactions))


def examined_sha256(conn: psycopg.Connection, table: str, source_id: int) -> bytes | None:
    """The text sha256 source `source_id` of `table` was last chunked at (None: never examined)."""
    examined, _, col = CHUNK_TABLES[table]
    row = conn.execute(f"SELECT source_sha256 FROM ah.{examined} WHERE {col} = %s", (source_id,)).fetchone()
    return None if row is None else bytes(row[0])


def stored_chunks(conn: psycopg.Connection, table: str, source_id: int) -> list[tuple[int, bytes]]:
    """(seq, input_sha256) of the stored chunks of source `source_id` of `table`, by seq."""
    _, chunk_table, col = CHUNK_TABLES[table]
    stored = conn.execute(
        f"SELECT seq, input_sha256 FROM ah.{chunk_table} WHERE {col} = %s ORDER BY seq", (source_id,)
    ).fetchall()
    return [(s, bytes(h)) for s, h in stored]


def stored_sets(
    conn: psycopg.Connection, table: str, ids: list[int]
) -> dict[int, tuple[bytes, list[tuple[int, bytes]]]]:
    """Source id → (the text sha256 it was last chunked at, its stored chunks' (seq,
    input_sha256) by seq) for the examined sources among `ids` of `table` (two statements for a
    whole batch; a source never examined is absent)."""
    examined, chunk_table, col = CHUNK_TABLES[table]
    out: dict[int, tuple[bytes, list[tuple[int, bytes]]]] = {
        i: (bytes(h), [])
        for i, h in conn.execute(f"SELECT {col}, source_sha256 FROM ah.{examined} WHERE {col} = ANY(%s)", (ids,))
    }
    for i, seq, h in conn.execute(
        f"SELECT {col}, seq, input_sha256 FROM ah.{chunk_table} WHERE {col} = ANY(%s) ORDER BY 1, 2", (ids,)
    ):
        if i in out:
            out[i][1].append((seq, bytes(h)))
    return out


def cached(conn: psycopg.Connection, model: str, shas: list[bytes]) -> set[bytes]:
    """Which of `shas` (chunk input sha256s) have a vector or a recorded failure for `model`."""
    rows = conn.execute(
        "SELECT input_sha256 FROM ah.embedding WHERE model = %(m)s AND input_sha256 = ANY(%(s)s) "
        "UNION SELECT input_sha256 FROM ah.embedding_failure WHERE model = %(m)s AND input_sha256 = ANY(%(s)s)",
        {"m": model, "s": shas},
    ).fetchall()
    return {bytes(r[0]) for r in rows}


def add_model(conn: psycopg.Connection, model: str, provider: str, dimensions: int) -> int:
    """Record `model` with `dimensions` unless already recorded; returns its recorded dimensions."""
    conn.execute(
        "INSERT INTO ah.embedding_model (model, provider, dimensions) VALUES (%s, %s, %s) ON CONFLICT (model) DO NOTHING",
        (model, provider, dimensions),
    )
    return conn.execute("SELECT dimensions FROM ah.embedding_model WHERE model = %s", (model,)).fetchone()[0]


def model_row(conn: psycopg.Connection, model: str) -> tuple[int, str | None] | None:
    """(dimensions, HNSW index name or None) of `model`; None: no vectors yet."""
    return conn.execute("SELECT dimensions, index_name FROM ah.embedding_model WHERE model = %s", (model,)).fetchone()


def model_dimensions(conn: psycopg.Connection, model: str) -> int | None:
    """The recorded dimension of `model` (None: no vectors yet)."""
    row = conn.execute("SELECT dimensions FROM ah.embedding_model WHERE model = %s", (model,)).fetchone()
    return row[0] if row else None


def insert_vectors(conn: psycopg.Connection, model: str, items: list[tuple[bytes, str]]) -> int:
    """Insert (input sha256, vector in pgvector's text form) of `model` (existing keys are kept);
    returns rows inserted."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO ah.embedding (model, input_sha256, vector) VALUES (%s, %s, %s::vector) "
            "ON CONFLICT (model, input_sha256) DO NOTHING",
            [(model, sha, v) for sha, v in items],
        )
        return cur.rowcount


def insert_failures(conn: psycopg.Connection, model: str, items: list[tuple[bytes, str]]) -> None:
    """Record (input sha256, error) the endpoint rejected for `model` (a newer error replaces an
    older one)."""
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO ah.embedding_failure (model, input_sha256, error) VALUES (%s, %s, %s) "
            "ON CONFLICT (model, input_sha256) DO UPDATE SET error = EXCLUDED.error, failed_at = now()",
            [(model, sha, err) for sha, err in items],
        )


def tokens_on(conn: psycopg.Connection, day: date, model: str) -> int:
    """Tokens spent on `model` on `day` (UTC), all runs; 0 when none recorded."""
    row = conn.execute("SELECT tokens FROM ah.embedding_usage WHERE day = %s AND model = %s", (day, model)).fetchone()
    return int(row[0]) if row else 0


def add_usage(conn: psycopg.Connection, day: date, model: str, tokens: int, inputs: int, requests: int) -> None:
    """Add tokens, inputs and requests to `model`'s usage of `day` (UTC)."""
    conn.execute(
        "INSERT INTO ah.embedding_usage AS u (day, model, tokens, inputs, requests) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (day, model) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens, "
        "inputs = u.inputs + EXCLUDED.inputs, requests = u.requests + EXCLUDED.requests",
        (day, model, tokens, inputs, requests),
    )


def create_model_index(conn: psycopg.Connection, model: str, name: str, expression: sql.Composable, ops: str) -> None:
    """Build `model`'s partial HNSW index `name` on `expression` with operator class `ops` and
    record its name (run it in a transaction: the two go together). Raises
    psycopg.errors.InsufficientPrivilege without the table owner's privilege."""
    stmt = sql.SQL("CREATE INDEX IF NOT EXISTS {} ON ah.embedding USING hnsw ({} {}) WHERE model = {}").format(
        sql.Identifier(name), expression, sql.SQL(ops), sql.Literal(model)
    )
    conn.execute(stmt)
    conn.execute("UPDATE ah.embedding_model SET index_name = %s WHERE model = %s", (name, model))


def elided_sources(conn: psycopg.Connection, max_source_chars: int) -> int:
    """Examined messages with chunks whose text is longer than `max_source_chars` characters."""
    return conn.execute(
        "SELECT count(*) FROM ah.chunk_source AS cs JOIN ah.message AS m ON m.id = cs.message_id "
        "WHERE cs.chunks > 0 AND octet_length(m.text) > %(max)s AND length(m.text) > %(max)s",
        {"max": max_source_chars},
    ).fetchone()[0]


def embedding_counts(conn: psycopg.Connection, model: str) -> dict[str, int]:
    """Message and tool-call chunks: ``chunks``, ``embedded`` (a vector for `model`), ``failed``
    (a recorded failure, no vector), ``unembedded`` (neither)."""
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


def record_embed_pass(conn: psycopg.Connection, key: str, *, init: str, last: str, count: str) -> None:
    """One atomic upsert of the embed passes' record, a JSON object in ``ah.meta`` `key`: a new
    record is `init` (JSON text); an existing one is merged with `last` (JSON text: the last
    pass's figures) and its counter `count` (e.g. ``success_total``) goes up by one."""
    conn.execute(
        """
        INSERT INTO ah.meta (key, value) VALUES (%(key)s, %(init)s)
        ON CONFLICT (key) DO UPDATE SET updated_at = now(), value = (
            ah.meta.value::jsonb || %(last)s::jsonb
            || jsonb_build_object(%(count)s::text, coalesce((ah.meta.value::jsonb ->> %(count)s::text)::bigint, 0) + 1)
        )::text
        """,
        {"key": key, "init": init, "last": last, "count": count},
    )
