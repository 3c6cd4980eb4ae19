"""The search vectors of a batch computed on a second connection (issue 27 item 2; docs/performance.md,
decision 9).

During a bulk pass the loader's *vectors* thread owns one more autocommit connection to the same
server (`connect_like`, the writer's DSN). For each batch it sends the distinct ready search texts
of the batch's messages and tool calls (`ingest.search_ready`: search text, symbol lexemes) and
gets back their vectors as COPY text — ``ah.search_tsv_ready`` for both, the expressions of
`merges.READY_TSV`, the ones the merge would evaluate; a tool call's as the lexemes and their tf
(`merges.TERM_LISTS`) its merge maps to term ids (migration 0028_term_ids), so the positional
vector is never printed nor parsed again (docs/performance.md, decision 19) — while the writer
connection merges the batch before. The staged rows then carry the vector (staging columns
`merges.vector_columns`) and the merge stores it as it is.

Same server, same functions, same configuration (the functions name ``ah.search``): the vectors
are the merge's by construction. This connection holds no transaction of the batch — one short
transaction per batch on its own temp tables (`vector_staging_ddl`, emptied at commit) — so the
batch's crash safety is the writer's alone.
"""

from __future__ import annotations

from functools import cache

import psycopg

from agent_history.db.tables.merges import READY_COLUMNS, READY_TSV, TERM_IDS, TERM_LISTS, term_lists_sql
from agent_history.model.rows import Row


def connect_like(conn: psycopg.Connection) -> psycopg.Connection:
    """A new autocommit connection with `conn`'s parameters (its DSN, and its password when it
    used one), client encoding UTF-8, asynchronous commit, its temp tables created
    (`vector_staging_ddl`). Raises psycopg errors unchanged."""
    info = conn.info
    extra = {"password": info.password} if info.password else {}
    other = psycopg.connect(info.dsn, autocommit=True, **extra)
    try:
        other.execute("SET client_encoding TO 'UTF8'")
        other.execute("SET synchronous_commit = off")  # its commits only empty its temp tables
        for row_type in READY_TSV:
            other.execute(vector_staging_ddl(row_type))
    except BaseException:
        other.close()
        raise
    return other


def vector_table(row_type: type[Row]) -> str:
    """Temp table of the analysis connection holding a batch's distinct ready texts of `row_type`."""
    return f"vec_{row_type.TABLE}"


@cache
def vector_staging_ddl(row_type: type[Row]) -> str:
    """``CREATE TEMP TABLE`` of `vector_table`: the texts in arrival order (``n``), emptied at
    commit; the texts kept out of line uncompressed (read once, never stored)."""
    cols = ", ".join(f"{c} text STORAGE EXTERNAL" for c in READY_COLUMNS)
    return (
        f"CREATE TEMP TABLE IF NOT EXISTS {vector_table(row_type)} "
        f"(n bigint GENERATED ALWAYS AS IDENTITY, {cols}) ON COMMIT DELETE ROWS"
    )


@cache
def texts_copy_sql(row_type: type[Row]) -> str:
    """``COPY … FROM STDIN`` of the ready texts (COPY text lines: search text, symbol lexemes)."""
    return f"COPY {vector_table(row_type)} ({', '.join(READY_COLUMNS)}) FROM STDIN"


@cache
def vectors_copy_sql(row_type: type[Row]) -> str:
    """``COPY (…) TO STDOUT`` of the vectors of the copied texts, one line each, in their order
    (the merge's expression, `merges.READY_TSV`, over the same column names): the positional
    vector of a message; of a tool call the `merges.TERM_LISTS` its merge maps to term ids
    (`merges.term_lists_sql`, the fill's expression), two fields."""
    vector, table = READY_TSV[row_type], vector_table(row_type)
    if row_type in TERM_IDS:
        names = ", ".join(f"x.{c}" for c, _ in TERM_LISTS)
        return (
            f"COPY (SELECT {names} FROM {table} s CROSS JOIN LATERAL ({term_lists_sql(vector)}) AS x "
            "ORDER BY s.n) TO STDOUT"
        )
    return f"COPY (SELECT {vector} FROM {table} s ORDER BY s.n) TO STDOUT"


def compute_vectors(
    conn: psycopg.Connection, texts: dict[type[Row], tuple[bytes | bytearray, int]]
) -> dict[type[Row], list[bytes]]:
    """The vectors of ready texts: `texts` is row type → (COPY text data of (search text,
    symbol lexemes) lines, number of lines); returns row type → one COPY-escaped ``tsvector``
    text per line, in order (ready to stand as a field of a COPY text line; a tool call's
    `merges.TERM_LISTS`, two fields, `vectors_copy_sql`). One transaction on
    `conn` (a `connect_like` connection). Raises psycopg errors unchanged,
    and ValueError when the server returned another number of vectors."""
    out: dict[type[Row], list[bytes]] = {}
    with conn.transaction(), conn.cursor() as cur:
        for row_type, (data, lines) in texts.items():
            if not lines:
                out[row_type] = []
                continue
            with cur.copy(texts_copy_sql(row_type)) as copy:
                copy.write(data)
            got = bytearray()
            with cur.copy(vectors_copy_sql(row_type)) as copy:
                for chunk in copy:
                    got += chunk
            vectors = bytes(got).split(b"\n")
            vectors.pop()  # after the last line's newline
            if len(vectors) != lines:
                raise ValueError(f"{len(vectors)} vectors for {lines} {row_type.TABLE} texts")
            out[row_type] = vectors
    return out
