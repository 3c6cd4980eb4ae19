"""Search for every script (issue 10, defect 4) on the FTS fallback, against the real corpus:
emoji and symbols are tokens, accents fold, CJK text is found by its bigrams — and a query with
nothing searchable says so. Reproductions first: before migration 0004 ``🚀`` found nothing
(12 messages of the corpus contain it), ``Francais`` did not find ``Français``, ``日本`` did not
find ``日本語`` and ``构建失败`` did not find ``为什么构建失败了``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.db.migrate import downgrade, upgrade
from agent_history.model import classes
from agent_history.search.keyword import search
from agent_history.search.request import HL_END, HL_START, Scope, SearchRequest
from tests.corpus_db import cli_environment, corpus_db, corpus_rw_db  # noqa: F401 - fixtures
from tests.mcp_client import call, server_env

REPO = Path(__file__).resolve().parents[1]
ROCKET_MESSAGES = 12
"""Messages of ../shared/corpus/home whose text contains 🚀 (all conversational: 11 replies of
0fae0449…/9e953218… and one prompt of 982581eb…)."""


def docs(conn: psycopg.Connection, hits) -> list[str]:
    """The searched text of each hit (message text, or tool name + input + output)."""
    out = []
    for h in hits:
        if h.kind == "message":
            out.append(conn.execute("SELECT text FROM ah.message WHERE id = %s", (h.id,)).fetchone()[0])
        else:
            row = conn.execute("SELECT name, input, output FROM ah.tool_call WHERE id = %s", (h.id,)).fetchone()
            out.append("\n".join(x or "" for x in row))
    return out


def contains_count(conn: psycopg.Connection, table: str, needle: str) -> int:
    column = "text" if table == "message" else "concat_ws(E'\\n', name, input, output)"
    return conn.execute(f"SELECT count(*) FROM ah.{table} WHERE strpos({column}, %s) > 0", (needle,)).fetchone()[0]


def test_an_emoji_is_a_token_every_message_holding_it_is_found_and_highlighted(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        assert contains_count(conn, "message", "🚀") == ROCKET_MESSAGES
        hits = search(conn, SearchRequest("🚀", limit=50))
        texts = docs(conn, hits)
    assert len(hits) == ROCKET_MESSAGES
    assert all("🚀" in t for t in texts)
    assert {h.session_uid for h in hits} == {
        "0fae0449-64d3-4788-8622-d3a47d82c14b",
        "9e953218-585f-4692-89df-9e0747a31c68",
        "982581eb-41b9-46da-86c1-ac34168117a8",
    }
    shown = [h for h in hits if "🚀" in h.plain_snippet()]
    assert shown and all(f"{HL_START}🚀{HL_END}" in h.snippet for h in shown)


def test_symbols_mixed_with_words_match_both(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        checks = contains_count(conn, "message", "✅")
        hits = search(conn, SearchRequest("✅", limit=100, classes=classes.ALL))
        both = search(conn, SearchRequest("✅ passing", limit=5))
        texts = docs(conn, both)
    assert checks == 34 and len(hits) == checks  # one of them is reasoning: all classes
    assert all("✅" in t and "pass" in t.lower() for t in texts)


@pytest.mark.parametrize("query", ["Francais", "Français", "FRANÇAIS"])
def test_accents_fold_both_ways(corpus_db, query):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        hits = search(conn, SearchRequest(query, scope=Scope.TOOLS, limit=50))
        texts = docs(conn, hits)
        expected = contains_count(conn, "tool_call", "Français")
    assert expected == 2 and len(hits) == expected
    assert all("Français" in t for t in texts)
    # the snippet is placed on the folded match and highlights it (ts_headline folds as well)
    assert all(f"{HL_START}Français{HL_END}" in h.snippet for h in hits)


def test_cjk_text_is_found_by_a_part_of_a_run(corpus_db):  # noqa: F811
    # The corpus' tool outputs list language names: "[日本語](/ja/docs/…)", "[中文 (简体)](/zh-CN/…)".
    with psycopg.connect(corpus_db.dsn) as conn:
        expected = contains_count(conn, "tool_call", "日本語")
        part = search(conn, SearchRequest("日本", scope=Scope.TOOLS, limit=50))
        whole = search(conn, SearchRequest("日本語", scope=Scope.TOOLS, limit=50))
        texts = docs(conn, part)
    assert expected == 7
    assert len(part) == expected and {h.id for h in whole} == {h.id for h in part}
    assert all("日本語" in t for t in texts)


def test_a_cjk_word_inside_a_sentence_is_found_by_its_bigrams_before_a_partial_match(db):
    from tests.catalogue_rows import message, session, write

    write(
        db.dsn,
        [
            session("s-cjk"),
            message("m1", "s-cjk", "为什么构建失败了？", offset=0),
            message("m2", "s-cjk", "构建成功", offset=100),
            message("m3", "s-cjk", "使用Python运行测试", offset=200),
            message("m4", "s-cjk", "the build failed", offset=300),
        ],
    )
    with db.connect() as conn:

        def texts(q: str) -> list[str]:
            return docs(conn, search(conn, SearchRequest(q)))

        assert texts("构建失败")[0] == "为什么构建失败了？"  # all three bigrams
        assert texts("构建失败")[1:] == ["构建成功"]  # shares 构建 only
        assert texts("python") == ["使用Python运行测试"]  # CJK next to Latin letters
        assert texts("运行") == ["使用Python运行测试"]
        hit = search(conn, SearchRequest("构建失败"))[0]
        assert f"{HL_START}构建失败{HL_END}" in hit.snippet


def test_term_statistics_stay_consistent_through_writes_of_every_script(db):
    from tests.catalogue_rows import message, session, write

    write(db.dsn, [session("s1"), message("m1", "s1", "deploy 🚀 café 为什么构建失败了", offset=0)])
    # the loader's merge updates the row: the UPDATE trigger swaps the old lexemes for the new
    write(db.dsn, [session("s1"), message("m1", "s1", "deploy ✅ naïve 日本語", offset=0)])
    with db.connect() as conn:
        assert stats_mismatches(conn) == 0
        terms = dict(conn.execute("SELECT lexeme, df FROM ah.search_term WHERE corpus = 'message'").fetchall())
    assert terms.get("✅") == 1 and terms.get("本語") == 1 and terms.get("naiv") == 1
    assert "🚀" not in terms and "构建" not in terms and "cafe" not in terms


TOOL_CALL_STATS = {
    "tsv": (
        "SELECT 'tool_call', l, count(*) FROM ah.tool_call, unnest(tsvector_to_array(tsv)) AS l GROUP BY l",
        "SELECT 'tool_call', count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.tool_call",
    ),
    "terms": (
        "SELECT 'tool_call', s.lexeme, count(*) FROM ah.tool_call AS d CROSS JOIN LATERAL unnest(d.terms) AS u(id) "
        "JOIN ah.search_term AS s ON s.id = u.id GROUP BY s.lexeme",
        "SELECT 'tool_call', count(*) FILTER (WHERE cardinality(terms) > 0), coalesce(sum(cardinality(terms)), 0) "
        "FROM ah.tool_call",
    ),
}
"""The tool calls' df and corpus figures recomputed from their vectors: before migration 0028 from
``tsv``, after it from the term ids (``terms``; dictionary rows at df 0 are kept, not counted)."""


def stats_mismatches(conn: psycopg.Connection) -> int:
    """Rows where the maintained term statistics differ from a recomputation over the vectors (at
    any revision: the tool calls' vector column decides how, `TOOL_CALL_STATS`)."""
    column = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'ah.tool_call'::regclass AND attname IN ('tsv', 'terms') "
        "AND NOT attisdropped"
    ).fetchone()[0]
    terms, corpus = TOOL_CALL_STATS[column]
    return conn.execute(
        """
        WITH fresh AS (
            SELECT 'message' AS corpus, l AS lexeme, count(*) AS df FROM ah.message, unnest(tsvector_to_array(tsv)) AS l GROUP BY l
            UNION ALL
            {terms}
        ), diff AS (
            (SELECT corpus, lexeme, df FROM fresh EXCEPT SELECT corpus, lexeme, df FROM ah.search_term WHERE df > 0)
            UNION ALL
            (SELECT corpus, lexeme, df FROM ah.search_term WHERE df > 0 EXCEPT SELECT corpus, lexeme, df FROM fresh)
        ), corpus AS (
            SELECT 'message' AS corpus, count(*) FILTER (WHERE length(tsv) > 0) AS n, coalesce(sum(length(tsv)), 0) AS len FROM ah.message
            UNION ALL
            {corpus}
        )
        SELECT (SELECT count(*) FROM diff)
             + (SELECT count(*) FROM corpus AS c LEFT JOIN ah.search_corpus AS s USING (corpus)
                WHERE s.doc_count IS DISTINCT FROM c.n OR s.total_len IS DISTINCT FROM c.len)
        """.replace("{terms}", terms).replace("{corpus}", corpus)
    ).fetchone()[0]


def test_migration_regenerates_vectors_and_statistics_of_an_existing_catalogue(corpus_rw_db):  # noqa: F811
    db = corpus_rw_db  # the corpus indexed at head, a copy of its own
    downgrade(db.dsn, "0003_embeddings")  # the catalogue as it was before this revision
    with db.connect() as conn:
        assert stats_mismatches(conn) == 0
        assert conn.execute("SELECT count(*) FROM ah.search_term WHERE lexeme = '🚀'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM ah.message WHERE tsv @@ '''cafe'''::tsquery").fetchone()[0] == 0
    upgrade(db.dsn)
    with db.connect() as conn:
        assert stats_mismatches(conn) == 0
        df = conn.execute("SELECT df FROM ah.search_term WHERE corpus = 'message' AND lexeme = '🚀'").fetchone()[0]
        assert df == ROCKET_MESSAGES
        assert len(search(conn, SearchRequest("🚀", limit=50))) == ROCKET_MESSAGES


def test_symbol_blocks_left_out_are_not_tokens_and_modifiers_do_not_split_an_emoji(db):
    with db.connect() as conn:

        def lexemes(text: str) -> list[str]:
            return conn.execute("SELECT tsvector_to_array(ah.search_tsv(%s))", (text,)).fetchone()[0]

        assert lexemes("─── │ ░░█ ⠙") == []  # box drawing, blocks, braille: layout
        assert lexemes("👍🏽 ✔️") == ["✔", "👍"]  # skin tone and variation selector dropped
        assert lexemes("€5 → x") == ["5", "x", "€", "→"]


def _cli_env(database, tmp_path: Path) -> dict[str, str]:
    return cli_environment(tmp_path, database.dsn, home=tmp_path)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "search", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("", "the query is empty: nothing to search for"),
        ("the of and", "the query has no searchable terms: stop words (the, of, and) and punctuation are not indexed"),
        ('"to be or not"', "the query has no searchable terms: stop words (to, be, or, not) and punctuation"),
        ("!!! ... ?", "the query has no searchable terms: punctuation is not indexed"),
    ],
)
def test_cli_says_why_a_query_without_searchable_terms_finds_nothing(corpus_db, tmp_path, query, note):  # noqa: F811
    env = _cli_env(corpus_db, tmp_path)
    out = cli(env, query)
    assert out.returncode == 1, out.stderr  # found nothing: exit 1 (README, exit codes)
    assert note in out.stdout and "no matches" in out.stdout
    data = json.loads(cli(env, query, "--json").stdout)
    assert data["hits"] == [] and note in data["note"]


def test_a_real_miss_is_still_a_plain_no_match(corpus_db, tmp_path):  # noqa: F811
    out = cli(_cli_env(corpus_db, tmp_path), "xyzzyplughfrobnicate")
    assert out.returncode == 1 and out.stdout.strip() == "no matches"


def test_mcp_search_says_why_a_stop_word_query_finds_nothing(corpus_db, tmp_path):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, tmp_path)
    data = call(env, "search", {"query": "what is it?", "mode": "keyword"}).data
    assert data["hits"] == []
    assert data["note"] == (
        "the query has no searchable terms: stop words (what, is, it) and punctuation are not indexed"
    )
    rocket = call(env, "search", {"query": "🚀", "mode": "keyword", "limit": 20}).data
    assert len(rocket["hits"]) == ROCKET_MESSAGES and "note" not in rocket


@pytest.mark.parametrize("limit", ["0", "-5", "1001"])
def test_cli_limit_out_of_range_is_a_one_line_usage_error(corpus_db, tmp_path, limit):  # noqa: F811
    out = cli(_cli_env(corpus_db, tmp_path), "build", "--limit", limit)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [f"error: --limit must be between 1 and 1000 (got {limit})"]
    assert out.stdout == ""


def test_search_session_takes_the_same_prefix_as_session(db, tmp_path):
    from tests.catalogue_rows import message, session, write

    uids = ["abcdef01-1111-4000-8000-000000000001", "abcdef02-2222-4000-8000-000000000002", "abcxyz03-3333"]
    rows = [session(u) for u in uids]
    rows += [message(f"m{i}", u, "the tokenizer splits words", offset=i * 100) for i, u in enumerate(uids)]
    write(db.dsn, rows)
    env = _cli_env(db, tmp_path)

    def found(prefix: str) -> list[str]:
        out = cli(env, "tokenizer", "--session", prefix, "--json")
        assert out.returncode in (0, 1), out.stderr  # 1: found nothing
        assert (out.returncode == 0) == bool(json.loads(out.stdout)["hits"])
        return [h["session_uid"] for h in json.loads(out.stdout)["hits"]]

    assert found("abcxyz") == [uids[2]]  # 6 characters, unique (before: 8 were needed)
    assert found("abcdef01") == [uids[0]]
    short = cli(env, "tokenizer", "--session", "abcde", "--json")  # shorter than 6: a usage error
    assert (short.returncode, short.stdout) == (2, "")
    assert short.stderr == "error: --session: give a session uid or a prefix of at least 6 characters (got 'abcde')\n"
    sess = subprocess.run(
        [sys.executable, "-m", "agent_history", "session", "abcdef", "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    srch = cli(env, "tokenizer", "--session", "abcdef")
    # a prefix naming two sessions: the same message and exit code as `session`
    assert sess.returncode == srch.returncode == 2  # a usage error: give a longer prefix (cli.options._ambiguous)
    assert sess.stderr == srch.stderr
    assert srch.stderr.strip() == f"error: 'abcdef' matches 2 sessions: {uids[0]}, {uids[1]}"
