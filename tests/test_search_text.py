"""The search text computed in Python (`agent_history.analysis.search_text`) and sent ready by the
loader (migration 0016) gives the vectors and term statistics of the SQL functions."""

from __future__ import annotations

import random

import psycopg
import pytest

from agent_history.analysis import search_text as st
from tests.corpus_db import corpus_db, corpus_rw_db  # noqa: F401 - fixtures
from tests.term_form import terms_differ
from tests.test_search_stats import recomputed, stats

EDGE_CASES = [
    "",
    "plain words only",
    "use snake_case here, __dunder__ and trailing_ and _leading",
    "call useEffect now; an HTTPServer instance; XMLHttpRequest2Go",
    "sha256 digest, v1.2.3, 019a93b9-f380-7600-98ff-940e6b99603c, 3f2a9c1, deadbeef:00ff-a1",
    "see src/db/pool.py and /usr/lib/x86_64-linux-gnu/ and ./a/b_c and a/ b/c.d/",
    "ERR_CONNECTION_REFUSED at http://localhost:8080/api/v1/users?id=42#frag",
    "a b c x1 1x a_b A.B a:b a-b --flag -x ::: ... ___ 9a 99 a9b9c9",
    "为什么构建失败了 使用Python写代码 构建 한국어텍스트 カタカナテスト 日本",
    "emoji 🚀 ✅ → € 👍🏽 ⚠️ in text 🚀🚀 and ╔══╗ box ▓▓ ⠋ braille",
    "mixedCJK构建Python3使用snake_case和camelCase",
    "x" * 5000 + "Y" + "z" * 5000,
    "a" * 3000 + "_" + "b" * 3000 + " " + "1" * 4000 + "q",
]


def _random_texts(n: int, seed: int = 27) -> list[str]:
    """Seeded text made of the characters the analysis treats specially (letters of both cases,
    digits, separators, CJK, symbols, spaces, newlines)."""
    alphabet = list("aAbBzZ09_./:-  \n\t") + ["构", "建", "失", "败", "한", "カ", "🚀", "✅", "→", "é", "ß", "'", "\\"]
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(n)]


def _sql(conn: psycopg.Connection, texts: list[str]) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT ah.search_text(t), ah.script_lexemes(t)::text FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i",
        (texts,),
    ).fetchall()
    return [(a, b) for a, b in rows]


def test_python_search_text_equals_the_sql_function_on_edge_cases_and_seeded_text(db):
    texts = EDGE_CASES + _random_texts(2000)
    with db.connect() as conn:
        expected = _sql(conn, texts)
        ours = [st.ready(t) for t in texts]
        assert [a for a, _ in ours] == [a for a, _ in expected]
        same = conn.execute(
            "SELECT bool_and(p::tsvector = q::tsvector), count(*) FILTER (WHERE q <> '') "
            "FROM unnest(%s::text[], %s::text[]) AS u(p, q)",
            ([b for _, b in ours], [b for _, b in expected]),
        ).fetchone()
    assert same[0] is True
    assert same[1] > 500  # the seeded text does exercise the symbol/CJK lexemes


def test_python_search_text_equals_the_sql_function_on_every_shared_corpus_document(corpus_db):  # noqa: F811
    """The optimised Python analysis (one-pass compound runs, zero-width case splits, the ASCII
    short cut) gives the SQL functions' exact strings on every message and tool-call document of
    the shared corpus."""
    with corpus_db.connect() as conn:
        docs = [st.message_doc(t) for (t,) in conn.execute("SELECT text FROM ah.message ORDER BY id")]
        docs += [st.tool_call_doc(*r) for r in conn.execute("SELECT name, input, output FROM ah.tool_call ORDER BY id")]
        expected = _sql(conn, docs)
        ours = [st.ready(t) for t in docs]
        differ = [i for i, (a, b) in enumerate(zip(ours, expected, strict=True)) if a[0] != b[0]]
        same = conn.execute(
            "SELECT bool_and(p::tsvector = q::tsvector), count(*) FILTER (WHERE q <> '') "
            "FROM unnest(%s::text[], %s::text[]) AS u(p, q)",
            ([b for _, b in ours], [b for _, b in expected]),
        ).fetchone()
    assert len(docs) > 3000
    assert differ == []
    assert sum(a != t for (a, _), t in zip(ours, docs, strict=True)) > 1000  # most documents do get a compound line
    assert same[0] is True
    assert same[1] > 10  # and some carry CJK or symbol lexemes


def test_ready_vector_equals_search_tsv(db):
    texts = EDGE_CASES + _random_texts(300, seed=3)
    with db.connect() as conn:
        differ = conn.execute(
            "SELECT count(*) FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(t, s, y) "
            "WHERE ah.search_tsv_ready(s, y) IS DISTINCT FROM ah.search_tsv(t)",
            (texts, [st.search_text(t) for t in texts], [st.script_lexemes(t) for t in texts]),
        ).fetchone()[0]
    assert differ == 0


def test_python_documents_equal_the_sql_documents(db):
    long_output = "head " + "m" * 20000 + " tail"
    cases = [
        ("Bash", '{"command": "ls"}', "out"),
        (None, None, None),
        ("Read", "x" * 5000, long_output),
        ("Read", "i", "o" * 10240),
        ("Read", "i", "o" * 10241),
        ("Edit", "构" * 5000, "🚀" * 11000),
    ]
    with db.connect() as conn:
        sql_docs = [conn.execute("SELECT ah.tool_call_doc(%s, %s, %s)", c).fetchone()[0] for c in cases]
        msg = conn.execute("SELECT left(coalesce(%s, ''), 131072)", ("é" * 140000,)).fetchone()[0]
    assert [st.tool_call_doc(*c) for c in cases] == sql_docs
    assert st.message_doc("é" * 140000) == msg
    assert st.message_doc(None) == ""


WRONG_VECTOR = {"message": "tsv IS DISTINCT FROM ah.message_tsv(text)", "tool_call": terms_differ()}
"""Per corpus table, SQL true of a row whose stored vector is not what the SQL functions give its
text (a tool call's term-id form: `tests.term_form`)."""


def test_loader_stores_the_vectors_of_the_sql_functions_on_the_shared_corpus(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        for table, wrong in WRONG_VECTOR.items():
            total, differ = conn.execute(f"SELECT count(*), count(*) FILTER (WHERE {wrong}) FROM ah.{table}").fetchone()
            assert total > 1000, table
            assert differ == 0, table
            assert stats(conn, table) == recomputed(conn, table)


@pytest.mark.parametrize("writer_thread", [False, True], ids=["one connection", "writer thread"])
def test_loader_computes_no_search_text_in_the_server_for_new_rows(db, corpus_home, writer_thread):
    """A cold load sends ready text — analysed as each batch is encoded, in the parsing thread
    (never in the writer thread: tests/test_write_pipeline.py) — so the server runs ``ah.code_aware_text`` only for rows
    re-observed with a changed text (a handful), not once per message and tool call; the stored
    vectors are those of the SQL functions either way."""
    from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
    from agent_history.ingest.loader import Loader

    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home).items()]
    count = (
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions "
        "WHERE schemaname = 'ah' AND funcname = 'code_aware_text'"
    )

    def flush(c: psycopg.Connection) -> None:
        c.execute("SELECT pg_stat_force_next_flush()")  # done when the backend goes idle after it
        c.execute("SELECT 1")

    with db.connect(autocommit=True) as conn, db.connect(autocommit=True) as writer:
        for c in (conn, writer):
            c.execute("SET track_functions = 'all'")
        loader = Loader(conn, writer_conn=writer if writer_thread else None)
        loader.run(sources)
        for c in (conn, writer):
            flush(c)
        calls = conn.execute(count).fetchone()[0]
        # the counter is live (so the bound below can fail): one more call is counted
        conn.execute("SELECT ah.code_aware_text('fooBar')")
        flush(conn)
        assert conn.execute(count).fetchone()[0] == calls + 1
    with db.connect() as conn:
        docs = conn.execute(
            "SELECT (SELECT count(*) FROM ah.message) + (SELECT count(*) FROM ah.tool_call)"
        ).fetchone()[0]
        for table, wrong in WRONG_VECTOR.items():
            differ = conn.execute(f"SELECT count(*) FROM ah.{table} WHERE {wrong}").fetchone()[0]
            assert differ == 0, table
            assert stats(conn, table) == recomputed(conn, table)
    assert docs > 2000
    assert calls < docs / 20


@pytest.mark.parametrize("table", ["message", "tool_call"])
def test_vector_follows_the_text_when_rows_are_written_without_ready_text(corpus_rw_db, table):  # noqa: F811
    right = f"NOT ({WRONG_VECTOR[table]})"
    zebracorn = (
        "tsv @@ 'zebracorn'::tsquery"
        if table == "message"
        else "terms @> (SELECT array_agg(id) FROM ah.search_term WHERE corpus = 'tool_call' AND lexeme = 'zebracorn')"
    )
    bogus = "tsv = 'bogus'::tsvector" if table == "message" else "terms = '{1}', tf = '\\x00'"
    change = "text = text || ' zebracorn'" if table == "message" else "output = coalesce(output, '') || ' zebracorn'"
    uid = "message_uid" if table == "message" else "tool_call_uid"
    with corpus_rw_db.connect() as conn:
        row_id = conn.execute(f"SELECT max(id) FROM ah.{table}").fetchone()[0]
        conn.execute(f"UPDATE ah.{table} SET {change} WHERE id = %s", (row_id,))
        got = conn.execute(f"SELECT {zebracorn}, {right} FROM ah.{table} WHERE id = %s", (row_id,))
        assert got.fetchone() == (True, True)
        # a vector written by hand does not stick: the vector belongs to the text
        conn.execute(f"UPDATE ah.{table} SET {bogus} WHERE id = %s", (row_id,))
        assert conn.execute(f"SELECT {right} FROM ah.{table} WHERE id = %s", (row_id,)).fetchone()[0] is True
        # a row inserted by hand, without a vector, gets the SQL functions' vector
        cols = [
            r[0]
            for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
                "AND NOT attisdropped AND attname NOT IN ('id', 'tsv', 'terms', 'tf', %s) AND attgenerated = ''",
                (f"ah.{table}", uid),
            )
        ]
        new_id = conn.execute(
            f"INSERT INTO ah.{table} ({uid}, {', '.join(cols)}) SELECT {uid} || '-copy', {', '.join(cols)} "
            f"FROM ah.{table} WHERE id = %s RETURNING id",
            (row_id,),
        ).fetchone()[0]
        got = conn.execute(f"SELECT {right} FROM ah.{table} WHERE id = %s", (new_id,)).fetchone()[0]
        assert got is True
        assert stats(conn, table) == recomputed(conn, table)
