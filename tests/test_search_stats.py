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
    """(lexeme → df, (doc_count, total_len)) as stored; the tool calls' dictionary rows at df 0
    (kept with their ids, migration 0028_term_ids) left out."""
    terms = conn.execute(
        "SELECT coalesce(jsonb_object_agg(lexeme, df), '{}'::jsonb) FROM ah.search_term WHERE corpus = %s AND df > 0",
        (corpus,),
    ).fetchone()[0]
    row = conn.execute("SELECT doc_count, total_len FROM ah.search_corpus WHERE corpus = %s", (corpus,)).fetchone()
    return terms, tuple(row)


TERM_STATS_FROM_SCRATCH = """
SELECT coalesce(jsonb_object_agg(t.lexeme, x.n), '{}'::jsonb) FROM (
    SELECT u.id, count(*) AS n FROM ah.tool_call AS d, unnest(d.terms) AS u(id) GROUP BY u.id
) AS x JOIN ah.search_term AS t ON t.id = x.id AND t.corpus = 'tool_call'
"""
"""The tool calls' df from their term ids (migration 0028_term_ids), by lexeme."""


def recomputed(conn: psycopg.Connection, corpus: str) -> tuple[dict, tuple]:
    if corpus == "tool_call":
        terms = conn.execute(TERM_STATS_FROM_SCRATCH).fetchone()[0]
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE cardinality(terms) > 0), coalesce(sum(cardinality(terms)), 0) FROM ah.tool_call"
        ).fetchone()
        return terms, tuple(row)
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
            "SELECT (SELECT length(tsv) FROM ah.message), (SELECT cardinality(terms) FROM ah.tool_call)"
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


def term_ids(conn: psycopg.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT lexeme, id FROM ah.search_term WHERE corpus = 'tool_call'").fetchall())


def test_tool_call_stats_follow_update_and_delete_and_a_lexeme_at_df_0_keeps_its_id(db):
    """Migration 0028_term_ids: a tool-call lexeme whose df falls to 0 keeps its dictionary row and
    id; when it comes back (a new row, an update of the text) the vectors hold that same id and
    the df counts it again."""
    write(
        db.dsn,
        [
            session("s1"),
            tool_call("t1", "s1", "Bash", '{"command": "npm test"}', "Error: ECONNRESET"),
            tool_call("t2", "s1", "Read", '{"file_path": "/x/pool.py"}', None),
        ],
    )
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        ids = term_ids(conn)
        assert sorted(ids.values()) == list(range(1, len(ids) + 1))  # one id each, no gap
        conn.execute("DELETE FROM ah.tool_call WHERE tool_call_uid = 't1'")
        assert stats(conn, "tool_call") == recomputed(conn, "tool_call")
        assert conn.execute(
            "SELECT df FROM ah.search_term WHERE corpus = 'tool_call' AND lexeme = 'econnreset'"
        ).fetchone() == (0,)
        assert term_ids(conn) == ids  # nothing deleted, nothing renumbered
        # the text of the other comes to hold the lexeme: its row trigger maps it to the same id
        conn.execute("UPDATE ah.tool_call SET output = 'ECONNRESET again' WHERE tool_call_uid = 't2'")
        held = conn.execute("SELECT terms FROM ah.tool_call WHERE tool_call_uid = 't2'").fetchone()[0]
        assert ids["econnreset"] in held and held == sorted(held)
        assert stats(conn, "tool_call") == recomputed(conn, "tool_call")
        assert stats(conn, "tool_call")[0]["econnreset"] == 1
    # a load bringing it back in a new row: the same id, and a new lexeme takes the next one
    write(db.dsn, [tool_call("t3", "s1", "Bash", '{"command": "curl"}', "ECONNRESET zebrafish")])
    with db.connect() as conn:
        after = term_ids(conn)
        assert after["econnreset"] == ids["econnreset"]
        assert after["zebrafish"] > max(ids.values())
        assert {k: v for k, v in after.items() if k in ids} == ids
        assert stats(conn, "tool_call") == recomputed(conn, "tool_call")
        assert stats(conn, "tool_call")[0]["econnreset"] == 2


def test_tool_call_term_frequencies_are_one_byte_each_and_256_is_byte_255(db):
    """``tf`` holds tf − 1 per term in the order of ``terms``. A lexeme occurring 300 times keeps
    255 positions in ``to_tsvector`` (PostgreSQL's analysis stops there), stored as byte 254; a
    vector may hold 256 (tsvector input's limit): byte 255, the largest. The loader's merge and the
    row trigger (a row written without terms) store the same."""
    text = " ".join(["zebra"] * 300 + ["lion"] * 2 + ["okapi"])
    write(db.dsn, [session("s1"), tool_call("t1", "s1", "Bash", None, text)])
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        ids = term_ids(conn)
        terms, tf = conn.execute("SELECT terms, tf FROM ah.tool_call WHERE tool_call_uid = 't1'").fetchone()
        by_id = dict(zip(terms, tf, strict=True))
        assert (by_id[ids["zebra"]], by_id[ids["lion"]], by_id[ids["okapi"]], by_id[ids["bash"]]) == (254, 1, 0, 0)
        sid = conn.execute("SELECT id FROM ah.session").fetchone()[0]
        conn.execute(
            "INSERT INTO ah.tool_call (session_id, source_id, tool_call_uid, agent, name, output) "
            "SELECT %s, source_id, 't2', 'claude', 'Bash', %s FROM ah.tool_call WHERE tool_call_uid = 't1'",
            (sid, text),
        )
        assert conn.execute("SELECT terms, tf FROM ah.tool_call WHERE tool_call_uid = 't2'").fetchone() == (
            terms,
            tf,
        )
        full = "'zebra':" + ",".join(str(i) for i in range(1, 257)) + " 'lion':5"
        got = conn.execute("SELECT * FROM ah.term_vector('tool_call', %s::tsvector)", (full,)).fetchone()
        assert got == (
            [ids["zebra"], ids["lion"]] if ids["zebra"] < ids["lion"] else [ids["lion"], ids["zebra"]],
            got[1],
        )
        assert dict(zip(got[0], got[1], strict=True)) == {ids["zebra"]: 255, ids["lion"]: 0}
        assert conn.execute("SELECT ah.tf_byte(256), ah.tf_byte(257), ah.tf_byte(1)").fetchone() == (
            b"\xff",
            b"\xff",
            b"\x00",
        )
