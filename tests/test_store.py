"""Migration 0015_store (issue 18): a tool call is searched by its name, the head of its input and
the head and tail of its output; the full text stays stored. Real corpus values: the largest
output of ../shared/corpus/home is a 34,400-character `Read` of an HTML export whose middle
defines ``currentTimestamp`` (nowhere else in any tool call), beyond the indexed 8 KiB head and
2 KiB tail."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import psycopg

from agent_history.db.migrate import downgrade, upgrade
from agent_history.search.keyword import search
from agent_history.search.request import HL_END, HL_START, Scope, SearchRequest
from tests.corpus_db import corpus_rw_db  # noqa: F401 - fixture
from tests.test_search_i18n import stats_mismatches

_SPEC = importlib.util.spec_from_file_location(
    "m0015", Path(__file__).resolve().parents[1] / "migrations" / "versions" / "0015_store.py"
)
store_revision = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(store_revision)

MIDDLE_WORD = "currenttimestamp"
"""A lexeme only in the middle of the corpus's largest tool output (`Read`, 34,400 characters)."""


def tool_calls_with(conn: psycopg.Connection, lexeme: str) -> list[tuple[str, int]]:
    """(tool name, output length) of the tool calls whose vector holds `lexeme` (``tsv`` before
    migration 0028_term_ids, the term ids after it)."""
    ids = conn.execute(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'ah.tool_call'::regclass AND attname = 'terms' "
        "AND NOT attisdropped"
    ).fetchone()[0]
    holds = (
        "terms @> (SELECT array_agg(id) FROM ah.search_term WHERE corpus = 'tool_call' AND lexeme = %s)"
        if ids
        else "tsv @@ ah.tsquery_any(ARRAY[%s])"
    )
    return conn.execute(
        f"SELECT name, length(output) FROM ah.tool_call WHERE {holds} ORDER BY id", (lexeme,)
    ).fetchall()


def test_upgrade_bounds_the_indexed_text_of_a_populated_catalogue_and_downgrade_restores_it(corpus_rw_db):  # noqa: F811
    db = corpus_rw_db  # the corpus indexed at head
    with db.connect() as conn:
        assert tool_calls_with(conn, MIDDLE_WORD) == []
        full = conn.execute("SELECT sum(length(output)) FROM ah.tool_call").fetchone()[0]
    downgrade(db.dsn, "0014_long_context")
    with db.connect() as conn:
        assert tool_calls_with(conn, MIDDLE_WORD) == [("Read", 34400)]
        assert stats_mismatches(conn) == 0
        assert conn.execute("SELECT to_regprocedure('ah.tool_call_doc(text, text, text)')").fetchone()[0] is None
    upgrade(db.dsn)
    with db.connect() as conn:
        assert tool_calls_with(conn, MIDDLE_WORD) == []
        assert stats_mismatches(conn) == 0
        df = "SELECT count(*) FROM ah.search_term WHERE corpus = 'tool_call' AND lexeme = %s"
        assert conn.execute(df, (MIDDLE_WORD,)).fetchone()[0] == 0
        # nothing stored was cut: only the vector is bounded
        assert conn.execute("SELECT sum(length(output)) FROM ah.tool_call").fetchone()[0] == full


def test_head_and_tail_of_a_huge_output_are_found_its_middle_is_not(corpus_rw_db):  # noqa: F811
    head, tail = store_revision.OUTPUT_HEAD, store_revision.OUTPUT_TAIL
    filler = "lorem ipsum dolor sit amet\n" * 2000  # 54,000 characters
    output = "qxheadword starts\n" + filler + "the qxmiddleword here\n" + filler + "ends with qxtailword"
    inp = "qxinputhead " + "x " * 3000 + "qxinputlate"  # the last word beyond INPUT_HEAD
    with corpus_rw_db.connect() as conn:
        tool_id = conn.execute(
            "UPDATE ah.tool_call SET name = 'Bash', input = %s, output = %s "
            "WHERE id = (SELECT min(id) FROM ah.tool_call WHERE name = 'Bash') RETURNING id",
            (inp, output),
        ).fetchone()[0]
        conn.commit()
        assert len(output) > head + tail and len(inp) > store_revision.INPUT_HEAD
        # the stored text is whole
        assert (
            conn.execute("SELECT length(output) FROM ah.tool_call WHERE id = %s", (tool_id,)).fetchone()[0] == 108_060
        )

        def found(word: str) -> list[int]:
            hits = search(conn, SearchRequest(word, scope=Scope.TOOLS, limit=5))
            return [h.id for h in hits if h.kind == "tool_call"]

        assert found("qxheadword") == [tool_id]
        assert found("qxtailword") == [tool_id]
        assert found("qxinputhead") == [tool_id]
        assert found("qxmiddleword") == []
        assert found("qxinputlate") == []
        (hit,) = search(conn, SearchRequest("qxtailword", scope=Scope.TOOLS, limit=5))
        assert f"{HL_START}qxtailword{HL_END}" in hit.snippet  # placed in the indexed tail


def test_large_columns_use_lz4_where_the_server_has_it(corpus_rw_db):  # noqa: F811
    with corpus_rw_db.connect() as conn:
        methods = conn.execute("SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'").fetchone()[
            0
        ]
        has_lz4 = "lz4" in methods
        got = dict(
            conn.execute(
                "SELECT c.relname || '.' || a.attname, a.attcompression FROM pg_attribute AS a "
                "JOIN pg_class AS c ON c.oid = a.attrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'ah' AND a.attcompression <> ''"
            ).fetchall()
        )
        from agent_history.model.tables import LARGE_COLUMNS

        assert LARGE_COLUMNS == store_revision.LARGE_COLUMNS  # what the benchmarks read is what 0015 set
        # ``tool_call.tsv`` was dropped by migration 0028_term_ids
        gone = {("tool_call", "tsv")}
        want = {f"{t}.{c}": "l" for t, c in store_revision.LARGE_COLUMNS if (t, c) not in gone} if has_lz4 else {}
        assert got == want
        # a new large value is compressed with that method (the embedded wheel: pglz only)
        big = "".join(f"line {i} of a long tool output\n" for i in range(3000))
        tool_id = conn.execute(
            "UPDATE ah.tool_call SET output = %s WHERE id = (SELECT min(id) FROM ah.tool_call) RETURNING id", (big,)
        ).fetchone()[0]
        stored = conn.execute("SELECT pg_column_compression(output) FROM ah.tool_call WHERE id = %s", (tool_id,))
        assert stored.fetchone()[0] == ("lz4" if has_lz4 else "pglz")


def test_the_embedded_server_runs_with_bounded_minimal_wal(pg_server):
    """A new data dir's first start applies the WAL settings, those read only at server start
    (wal_level, max_wal_senders) included: `ensure_running` restarted it."""
    with psycopg.connect(pg_server.dsn()) as conn:
        shown = {n: conn.execute(f"SHOW {n}").fetchone()[0] for n in ("max_wal_size", "min_wal_size", "wal_level")}
        shown["max_wal_senders"] = conn.execute("SHOW max_wal_senders").fetchone()[0]
    assert shown == {"max_wal_size": "64MB", "min_wal_size": "32MB", "wal_level": "minimal", "max_wal_senders": "0"}
