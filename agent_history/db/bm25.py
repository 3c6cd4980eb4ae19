"""The BM25 indexes of a ParadeDB catalogue (``pg_search`` 0.25, docs/design.md §8): their DDL,
whether this catalogue uses them, and building the missing ones.

Runs only where ``ah.meta.keyword_backend = 'bm25'`` (migration 0001 sets it when ``pg_search``
is installable); `ensure_bm25_indexes` is a no-op on ``fts``. Facts relied on (ParadeDB docs,
0.25): one BM25 index per table, ``CREATE INDEX … USING bm25 (id, (text::pdb.source_code), …)
WITH (key_field = 'id')`` — the key field first; text cast to a tokenizer; ``pdb.literal`` for
columns filtered by equality / ``IN`` / ``= ANY`` so those filters are pushed into the index
scan; integer and timestamp columns are indexed as fast fields for range pushdown.

Indexes are built after the first bulk load (a BM25 index maintained row by row during a bulk
load is slow: `ingest.postpass`) and by ``db upgrade``. The queries over them live in
`search.bm25` (messages, tool calls) and `search.summaries_bm25` (journal summaries).
"""

from __future__ import annotations

import contextlib

import psycopg

FOLD = "'ascii_folding=true'"
"""Token filter on every tokenized text field: accents folded (``café`` ↔ ``cafe``), as the
FTS fallback does with ``unaccent``."""

ENGLISH = "'stemmer=english','ascii_folding=true'"
"""Tokenizer options of the summary text fields (ParadeDB docs, "Token filters": ``stemmer``,
``ascii_folding``)."""

SUMMARY_TEXT_FIELDS: tuple[str, ...] = ("title", "objective", "outcomes", "narrative")
"""The summary text fields, each matched by the query (title first: the field a person wrote
to name the session)."""

SUMMARY_INDEX = "session_summary_bm25"

SUMMARY_INDEX_DDL = (
    f"CREATE INDEX IF NOT EXISTS {SUMMARY_INDEX} ON ah.session_summary USING bm25 (id, "
    + ", ".join(f"({f}::pdb.simple({ENGLISH}))" for f in SUMMARY_TEXT_FIELDS)
    + ", (agent::pdb.literal), (namespace::pdb.literal), analysed_at) WITH (key_field = 'id')"
)
"""The BM25 index over ``ah.session_summary``: prose written for people, so the ``simple``
tokenizer with the English Snowball stemmer and accent folding; agent and namespace literals,
``analysed_at`` a fast field."""

INDEXES: dict[str, str] = {
    "message_bm25": (
        "CREATE INDEX IF NOT EXISTS message_bm25 ON ah.message USING bm25 ("
        f"id, (text::pdb.source_code({FOLD})), (text::pdb.unicode_words('alias=text_words', {FOLD})), "
        "(namespace::pdb.literal), (agent::pdb.literal), (message_class::pdb.literal), session_id, ts"
        ") WITH (key_field = 'id')"
    ),
    "tool_call_bm25": (
        "CREATE INDEX IF NOT EXISTS tool_call_bm25 ON ah.tool_call USING bm25 ("
        f"id, (name::pdb.literal), (input::pdb.source_code({FOLD})), "
        f"(input::pdb.unicode_words('alias=input_words', {FOLD})), (output::pdb.source_code({FOLD})), "
        f"(output::pdb.unicode_words('alias=output_words', {FOLD})), "
        "(agent::pdb.literal), session_id, started_at"
        ") WITH (key_field = 'id')"
    ),
    SUMMARY_INDEX: SUMMARY_INDEX_DDL,
}
"""Index name → DDL. Message text, and tool input/output, use the source-code tokenizer
(splits camelCase, snake_case, punctuation) and, under an alias (``<column>_words``), the
``unicode_words`` tokenizer (UAX #29 word boundaries: each Han / Hiragana character a token of
its own, emoji kept as tokens — ParadeDB docs, "Unicode" tokenizer), which the query uses only
for its CJK and symbol terms; namespace, agent, class and tool name are literals (exact-match
filters pushed down); session id and time are fast fields. Migration 0004_search_i18n drops
indexes built with older definitions, so `ensure_bm25_indexes` rebuilds them."""


def is_bm25(conn: psycopg.Connection) -> bool:
    """True when this catalogue's keyword backend is ParadeDB BM25."""
    row = conn.execute("SELECT value FROM ah.meta WHERE key = 'keyword_backend'").fetchone()
    return bool(row and row[0] == "bm25")


BM25_BUILD_LOCK = 0x61685F626D32  # 'ah_bm2': held while the BM25 indexes are created


def ensure_bm25_indexes(conn: psycopg.Connection) -> list[str]:
    """Create the BM25 indexes that do not exist yet; returns their names. No-op (returns [])
    when the backend is ``fts``. Call after a bulk load and from ``db upgrade``; building an
    index over a large table takes a while and blocks writes to that table meanwhile. While another
    session creates them (`BM25_BUILD_LOCK`) it returns [] at once."""
    if not is_bm25(conn):
        return []
    # Two passes (two hosts') after their first loads would build the same index at once (CREATE
    # INDEX takes a SHARE lock, which does not conflict with itself) and one would fail on the
    # name: one builds, the other leaves it to its next call.
    if not conn.execute("SELECT pg_try_advisory_lock(%s)", (BM25_BUILD_LOCK,)).fetchone()[0]:
        return []
    try:
        created = _create_missing(conn)
    except BaseException:
        with contextlib.suppress(psycopg.Error):  # a failed transaction: the lock ends with the session
            conn.execute("SELECT pg_advisory_unlock(%s)", (BM25_BUILD_LOCK,))
        raise
    conn.execute("SELECT pg_advisory_unlock(%s)", (BM25_BUILD_LOCK,))
    return created


def _create_missing(conn: psycopg.Connection) -> list[str]:
    existing = {
        r[0]
        for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'ah' AND indexname = ANY(%s)", (list(INDEXES),)
        )
    }
    created = []
    for name, ddl in INDEXES.items():
        if name not in existing:
            conn.execute(ddl)
            created.append(name)
    return created
