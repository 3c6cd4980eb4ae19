"""Migration 0002: code-aware text, stored tsvectors and term statistics kept current by
statement-level triggers with transition tables (through the loader's INSERT … ON CONFLICT)."""

from __future__ import annotations

import psycopg
import pytest

from tests.catalogue_rows import message, session, tool_call, write

STATS_FROM_SCRATCH = """
SELECT coalesce(jsonb_object_agg(lexeme, n), '{}'::jsonb) FROM (
    SELECT l AS lexeme, count(*) AS n FROM ah.{table} AS d, unnest(tsvector_to_array(d.tsv)) AS l GROUP BY l
) AS x
"""


def stats(conn: psycopg.Connection, corpus: str) -> tuple[dict, tuple]:
    terms = conn.execute(
        "SELECT coalesce(jsonb_object_agg(lexeme, df), '{}'::jsonb) FROM ah.search_term WHERE corpus = %s", (corpus,)
    ).fetchone()[0]
    row = conn.execute("SELECT doc_count, total_len FROM ah.search_corpus WHERE corpus = %s", (corpus,)).fetchone()
    return terms, tuple(row)


def recomputed(conn: psycopg.Connection, corpus: str) -> tuple[dict, tuple]:
    terms = conn.execute(STATS_FROM_SCRATCH.replace("{table}", corpus)).fetchone()[0]
    row = conn.execute(
        f"SELECT count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.{corpus}"
    ).fetchone()
    return terms, tuple(row)


def code_aware(conn: psycopg.Connection, text: str) -> str:
    return conn.execute("SELECT ah.code_aware_text(%s)", (text,)).fetchone()[0]


def lexemes(conn: psycopg.Connection, text: str) -> list[str]:
    return conn.execute(
        "SELECT tsvector_to_array(to_tsvector('ah.search', ah.code_aware_text(%s)))", (text,)
    ).fetchone()[0]


@pytest.mark.parametrize(
    ("text", "appended"),
    [
        ("plain words only", None),
        ("use snake_case here", "snakecase snake case"),
        ("call useEffect now", "use Effect"),
        ("an HTTPServer instance", "HTTP Server"),
        ("sha256 digest", "sha 256"),
        ("see src/db/pool.py", "pool.py src db pool py"),
        ("ERR_CONNECTION_REFUSED", "ERRCONNECTIONREFUSED ERR CONNECTION REFUSED"),
        ("commit 3f2a9c1 and 019a93b9-f380-7600-98ff-940e6b99603c v1.2.3", " "),
    ],
)
def test_code_aware_text_appends_identifier_parts_after_the_original(db, text, appended):
    with db.connect() as conn:
        out = code_aware(conn, text)
    if appended is None:
        assert out == text
    else:
        original, extra = out.split("\n", 1)
        assert original == text
        assert " ".join(extra.split()) == " ".join(appended.split())


def test_identifier_whole_token_and_parts_are_all_lexemes(db):
    with db.connect() as conn:
        assert lexemes(conn, "snake_case") == ["case", "snake", "snakecas"]
        assert lexemes(conn, "useEffect") == ["effect", "use", "useeffect"]
        assert lexemes(conn, "/src/db/pool.py") == ["/src/db/pool.py", "db", "pool", "pool.py", "py", "src"]
        assert lexemes(conn, "ECONNRESET") == ["econnreset"]
        assert lexemes(conn, "3f2a9c1") == ["3f2a9c1"]


def test_tsvector_of_a_huge_text_stays_below_the_limit(db):
    big = " ".join(f"word{i}_part{i}" for i in range(60_000))  # ~800 KB of unique compound tokens
    write(db.dsn, [session("s1"), message("m1", "s1", big), tool_call("t1", "s1", "Bash", big, big)])
    with db.connect() as conn:
        n_msg, n_tool = conn.execute(
            "SELECT (SELECT length(tsv) FROM ah.message), (SELECT length(tsv) FROM ah.tool_call)"
        ).fetchone()
    assert 0 < n_msg and 0 < n_tool


def test_stats_follow_insert_upsert_update_and_delete(db):
    write(
        db.dsn,
        [
            session("s1"),
            message("m1", "s1", "the build failed with ECONNRESET"),
            message("m2", "s1", "useEffect hook in src/app.tsx"),
        ],
    )
    with db.connect() as conn:
        assert stats(conn, "message") == recomputed(conn, "message")
        assert stats(conn, "message")[0]["build"] == 1
    # a merge that inserts one row, updates another (LATEST text) and leaves a third unchanged:
    # ON CONFLICT DO UPDATE fires the INSERT and the UPDATE statement triggers
    write(
        db.dsn,
        [
            message("m1", "s1", "the build failed with ECONNRESET"),
            message("m2", "s1", "useState hook in src/app.tsx"),
            message("m3", "s1", "another build"),
        ],
    )
    with db.connect() as conn:
        terms, corpus = stats(conn, "message")
        assert (terms, corpus) == recomputed(conn, "message")
        assert (terms["build"], terms.get("useeffect"), terms["usest"]) == (2, None, 1)
        assert corpus[0] == 3
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute("UPDATE ah.message SET text = 'nothing relevant' WHERE message_uid = 'm3'")
        conn.execute("DELETE FROM ah.message WHERE message_uid = 'm2'")
        assert stats(conn, "message") == recomputed(conn, "message")
        assert stats(conn, "message")[0].get("app.tsx") is None
        assert stats(conn, "message")[1][0] == 2


def test_tool_call_stats_cover_name_input_and_output(db):
    write(
        db.dsn,
        [
            session("s1"),
            tool_call("t1", "s1", "Bash", '{"command": "npm test"}', "Error: ECONNRESET"),
            tool_call("t2", "s1", "Read", '{"file_path": "/x/pool.py"}', None),
        ],
    )
    with db.connect() as conn:
        terms, corpus = stats(conn, "tool_call")
        assert (terms, corpus) == recomputed(conn, "tool_call")
        assert (terms["bash"], terms["econnreset"], terms["pool.py"], corpus[0]) == (1, 1, 1, 2)


def test_truncate_cascade_and_a_file_purge_reset_the_stats(db):
    write(db.dsn, [session("s1"), message("m1", "s1", "alpha beta")], path="/t/a.jsonl")
    write(db.dsn, [session("s2"), message("m2", "s2", "beta gamma")], path="/t/b.jsonl")
    from agent_history.ingest.writer import purge_source

    with psycopg.connect(db.dsn, autocommit=True) as conn:
        src = conn.execute("SELECT id FROM ah.source_file WHERE path = '/t/a.jsonl'").fetchone()[0]
        with conn.transaction():
            purge_source(conn, src)
        assert stats(conn, "message") == ({"beta": 1, "gamma": 1}, (1, 2))
        conn.execute("TRUNCATE ah.source_file CASCADE")
        assert stats(conn, "message") == ({}, (0, 0))
        assert stats(conn, "tool_call") == ({}, (0, 0))
