"""Vector search: nearest chunks to a query vector, with the keyword search's filters (docs/design.md §8).

A query reads the model's vectors through its partial expression HNSW index (see migration
``0003_embeddings``): the SQL repeats the index's expression (``vector::vector(N)``, or
``halfvec(N)`` above 2,000 dims) and predicate (``model = '<model>'``, inlined as a literal so
the planner can match the partial index), orders by cosine distance ``<=>`` and joins chunk →
message (or tool call) → filters from `search.filters.build_filter`, the same conditions the
keyword search applies. With any filter, ``hnsw.iterative_scan = relaxed_order`` lets the index
scan continue past ``ef_search`` candidates until enough rows survive the filters; the
outer query restores exact distance order. Chunks are collapsed to their document (best chunk
wins); the snippet is the start of the best chunk's span; the score is cosine similarity.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from agent_history.embed.store import HNSW_MAX_VECTOR_DIMS, vector_expr, vector_literal
from agent_history.search.filters import build_filter
from agent_history.search.keyword import CORPORA
from agent_history.search.request import Scope, SearchHit, SearchRequest
from agent_history.session.refs import MIN_UID_PREFIX

SNIPPET_CHARS = 240
OVERFETCH = 4
"""Chunks fetched per wanted document (several chunks of one document collapse into one hit)."""

_DOC = {
    "message": {
        "table": "message",
        "chunk_col": "message_id",
        "namespace": "d.namespace",
        "ts": "d.ts",
        "label": "d.message_class",
        "text": "d.text",
        "outcome": "NULL::text",
    },
    "tool_call": {
        "table": "tool_call",
        "chunk_col": "tool_call_id",
        "namespace": "s.namespace",
        "ts": "d.started_at",
        "label": "d.name",
        "text": "CASE WHEN b.kind = 'tool_error' THEN d.error_excerpt ELSE d.output END",
        "outcome": "coalesce(d.error_class, d.outcome)",
    },
}


def _query_sql(corpus: str, model: str, dims: int, where: sql.Composable) -> sql.Composable:
    t = _DOC[corpus]
    kind = sql.SQL("vector" if dims <= HNSW_MAX_VECTOR_DIMS else "halfvec")
    return sql.SQL(
        """
        WITH nn AS MATERIALIZED (
            SELECT c.{chunk_col} AS doc_id, c.kind, c.char_start, c.char_end,
                   {expr} <=> %(q)s::{kind}({dims}) AS distance
            FROM ah.embedding AS e
            JOIN ah.chunk AS c ON c.input_sha256 = e.input_sha256 AND c.{chunk_col} IS NOT NULL
            JOIN ah.{table} AS d ON d.id = c.{chunk_col}
            WHERE e.model = {model} AND {where}
            ORDER BY distance
            LIMIT %(k)s
        ), best AS (
            SELECT DISTINCT ON (doc_id) * FROM nn ORDER BY doc_id, distance
        )
        SELECT d.id, 1 - b.distance, s.session_uid, s.agent_id, d.agent, {namespace}, {ts}, {label},
               coalesce(s.title, r.title), s.cwd, f.path, d.byte_offset, d.line_number,
               left(substr({text}, b.char_start + 1, b.char_end - b.char_start), {snippet}),
               r.session_uid, {outcome}, b.char_start, b.char_end
        FROM best AS b
        JOIN ah.{table} AS d ON d.id = b.doc_id
        JOIN ah.session AS s ON s.id = d.session_id
        LEFT JOIN ah.session AS r ON r.id = s.root_session_id
        LEFT JOIN ah.source_file AS f ON f.id = d.source_id
        ORDER BY b.distance, d.id
        LIMIT %(limit)s
        """
    ).format(
        chunk_col=sql.Identifier(t["chunk_col"]),
        table=sql.Identifier(t["table"]),
        expr=vector_expr(dims),
        kind=kind,
        dims=sql.Literal(dims),
        model=sql.Literal(model),
        where=where,
        namespace=sql.SQL(t["namespace"]),
        ts=sql.SQL(t["ts"]),
        label=sql.SQL(t["label"]),
        text=sql.SQL(t["text"]),
        outcome=sql.SQL(t["outcome"]),
        snippet=sql.Literal(SNIPPET_CHARS),
    )


def search_corpus(
    conn: psycopg.Connection, req: SearchRequest, corpus: str, model: str, dims: int, query_vector: list[float]
) -> list[SearchHit]:
    """Top `req.limit` documents of `corpus` nearest `query_vector`, best first."""
    flt = build_filter(req, corpus)
    k = max(req.limit * OVERFETCH, 40)
    filtered = flt.sql.as_string(conn) != "TRUE"
    with conn.transaction():
        conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(min(1000, k))))
        if filtered:
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(
            _query_sql(corpus, model, dims, flt.sql),
            {**flt.params, "q": vector_literal(query_vector), "k": k, "limit": req.limit},
        ).fetchall()
    return [
        SearchHit(
            kind=corpus, id=r[0], score=float(r[1]), session_uid=r[2], agent_id=r[3], agent=r[4],
            namespace=r[5], ts=r[6], label=r[7], title=r[8], cwd=r[9], source_path=r[10],
            byte_offset=r[11], line_number=r[12], snippet=(r[13] or "").strip(), root_session_uid=r[14],
            outcome=r[15], backend="vector", extra={"span": [r[16], r[17]]},
        )
        for r in rows
    ]  # fmt: skip


def search(
    conn: psycopg.Connection, req: SearchRequest, model: str, dims: int, query_vector: list[float]
) -> list[SearchHit]:
    """Top `req.limit` hits over the corpora `req.scope` names, by cosine similarity."""
    hits: list[SearchHit] = []
    for corpus in CORPORA[Scope(req.scope)]:
        hits.extend(search_corpus(conn, req, corpus, model, dims, query_vector))
    hits.sort(key=lambda h: (-h.score, h.kind, h.id))
    return hits[: req.limit]


# --- similar: documents and sessions nearest a given one ------------------------------------


class NotEmbedded(Exception):
    """The given message or session has no vectors for the model (one line, for the user)."""


def _centroid(conn: psycopg.Connection, model: str, dims: int, where: str, params: dict) -> list[float] | None:
    row = conn.execute(
        sql.SQL(
            "SELECT avg({expr})::text FROM ah.chunk AS c JOIN ah.embedding AS e "
            "ON e.input_sha256 = c.input_sha256 AND e.model = {model} WHERE " + where
        ).format(expr=sql.SQL("e.vector::vector({})").format(sql.Literal(dims)), model=sql.Literal(model)),
        params,
    ).fetchone()
    if row is None or row[0] is None:
        return None
    return [float(x) for x in row[0].strip("[]").split(",")]


def find_message(conn: psycopg.Connection, ref: str) -> int | None:
    """The message id of uid `ref` (newest when several agents share it), else None."""
    # digests compared too: the natural key indexes (agent, ah.key_digest(message_uid)) (`merges.KEY_DIGESTS`)
    row = conn.execute(
        "SELECT id FROM ah.message WHERE ah.key_digest(message_uid) = ah.key_digest(%(r)s) AND message_uid = %(r)s "
        "ORDER BY id DESC LIMIT 1",
        {"r": ref},
    ).fetchone()
    return row[0] if row else None


def find_session_uid(conn: psycopg.Connection, ref: str) -> str | None:
    """The session uid `ref` names (exactly, or as a unique prefix of ≥ `MIN_UID_PREFIX`
    characters, the rule of `session`), else None."""
    rows = conn.execute(
        "SELECT DISTINCT session_uid FROM ah.session WHERE session_uid = %(r)s "
        "OR (length(%(r)s) >= %(n)s AND session_uid LIKE %(p)s) LIMIT 2",
        {"r": ref, "n": MIN_UID_PREFIX, "p": ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"},
    ).fetchall()
    exact = [r[0] for r in rows if r[0] == ref]
    return exact[0] if exact else rows[0][0] if len(rows) == 1 else None


def similar_messages(
    conn: psycopg.Connection, message_id: int, model: str, dims: int, req: SearchRequest
) -> list[SearchHit]:
    """Messages nearest message `message_id` (mean of its chunk vectors), itself excluded.
    Raises NotEmbedded when it has no vectors."""
    centre = _centroid(conn, model, dims, "c.message_id = %(id)s", {"id": message_id})
    if centre is None:
        raise NotEmbedded(f"message {message_id} has no vectors for {model}: run `agent-history embed`")
    hits = search_corpus(conn, replace_limit(req, req.limit + 1), "message", model, dims, centre)
    return [h for h in hits if h.id != message_id][: req.limit]


def similar_sessions(
    conn: psycopg.Connection, session_uid: str, model: str, dims: int, req: SearchRequest
) -> list[SearchHit]:
    """Sessions nearest session `session_uid` (mean of its messages' chunk vectors, sub-agents
    included), itself excluded: one hit per session — its best-matching message, scored by that
    message's similarity. Raises NotEmbedded when the session has no vectors."""
    centre = _centroid(
        conn, model, dims,
        "c.message_id IN (SELECT m.id FROM ah.message AS m JOIN ah.session AS s ON s.id = m.session_id "
        "WHERE s.session_uid = %(uid)s)",
        {"uid": session_uid},
    )  # fmt: skip
    if centre is None:
        raise NotEmbedded(f"session {session_uid} has no vectors for {model}: run `agent-history embed`")
    hits = search_corpus(conn, replace_limit(req, max(200, req.limit * 20)), "message", model, dims, centre)
    best: dict[str, SearchHit] = {}
    for h in hits:
        if h.session_uid != session_uid and h.session_uid not in best:
            best[h.session_uid] = h
    return list(best.values())[: req.limit]


def replace_limit(req: SearchRequest, limit: int) -> SearchRequest:
    """`req` with another limit."""
    from dataclasses import replace

    return replace(req, limit=limit)
