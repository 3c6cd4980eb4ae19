"""Migrations 0025_store and 0028_term_ids (issue 27 item 4): a tool call's stored vector holds
each lexeme's term frequency instead of its positions, as term ids (``terms``) and one byte of tf
each (``tf``); BM25 scores, phrase bonuses and search results are those of the positional vector.
Checked on every tool call of ../shared/corpus/home."""

from __future__ import annotations

import psycopg

from agent_history.db.migrate import downgrade, upgrade
from agent_history.search import fts, fts_corpus, fts_phrase
from agent_history.search.keyword import search
from agent_history.search.query import analyze
from agent_history.search.request import Scope, SearchRequest
from tests.corpus_db import corpus_db, corpus_rw_db  # noqa: F401 - fixtures
from tests.test_search_i18n import stats_mismatches

POSITIONAL = "ah.search_tsv(ah.tool_call_doc(name, input, output))"
"""The positional vector a tool call's stored vector is made from (migrations 0015, 0016)."""

STORED = """(SELECT array_agg(s.lexeme ORDER BY s.lexeme) AS lexemes,
                   array_agg(get_byte(d.tf, x.o::int - 1) + 1 ORDER BY s.lexeme) AS tfs
            FROM unnest(d.terms) WITH ORDINALITY AS x(id, o)
            JOIN ah.search_term AS s ON s.id = x.id AND s.corpus = 'tool_call')"""
"""A tool call's stored lexemes and term frequencies, in lexeme order, read through the dictionary."""

TF_MISMATCHES = f"""
SELECT count(*) FILTER (WHERE t.lexemes IS DISTINCT FROM p.lexemes OR t.tfs IS DISTINCT FROM p.tfs),
       count(*), coalesce(sum(p.repeated), 0)
FROM ah.tool_call AS d
CROSS JOIN LATERAL {STORED} AS t
CROSS JOIN LATERAL (SELECT array_agg(u.lexeme ORDER BY u.lexeme) AS lexemes,
                           array_agg(cardinality(u.positions) ORDER BY u.lexeme) AS tfs,
                           count(*) FILTER (WHERE cardinality(u.positions) > 1) AS repeated
                    FROM unnest({POSITIONAL.replace("name, input, output", "d.name, d.input, d.output")}) AS u) AS p
"""


def test_every_tool_call_vector_holds_the_lexemes_and_term_frequencies_of_its_positional_vector(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        mismatches, calls, repeated = conn.execute(TF_MISMATCHES).fetchone()
        assert mismatches == 0
        assert calls == conn.execute("SELECT count(*) FROM ah.tool_call").fetchone()[0] > 1000
        assert repeated > 10_000  # lexemes occurring more than once: their tf is the byte + 1
        # ids ascending in every vector, one tf byte per id
        assert (
            conn.execute(
                "SELECT count(*) FROM ah.tool_call WHERE cardinality(terms) <> length(tf) "
                "OR terms <> ARRAY(SELECT u FROM unnest(terms) AS u ORDER BY u)"
            ).fetchone()[0]
            == 0
        )
        # no lexeme text and no positions: the form is smaller than the term-frequency vector of
        # 0025 (ah.tf_vector) and than the positional one
        sizes = conn.execute(
            f"SELECT sum(pg_column_size(terms) + pg_column_size(tf)), sum(pg_column_size(ah.tf_vector({POSITIONAL}))), "
            f"sum(pg_column_size({POSITIONAL})) FROM ah.tool_call"
        ).fetchone()
        assert sizes[0] < sizes[1] / 2 < sizes[2] / 2
        one = conn.execute("SELECT ah.tf_vector(%s::tsvector)::text", ("'pool':4,17,90 'py':5 'it''s':2,3",))
        assert one.fetchone()[0] == "'it''s':2 'pool':3 'py'"


def test_bm25_over_the_term_ids_scores_what_bm25_over_the_positional_vector_scored(corpus_db):  # noqa: F811
    """Five lexemes of each tool call (and two absent or common ones), weighted: same rows, tf and
    scores from ah.bm25_id_terms(terms, tf, ids) as from ah.bm25_terms(positional vector), the
    positional vector recomputed from the text here (migration 0028_term_ids; before it
    ah.bm25_tf_terms over the term-frequency vector was checked the same way)."""
    with corpus_db.connect() as conn:
        got = conn.execute(
            f"""
            WITH q AS (
                SELECT d.id, d.terms, d.tf, {POSITIONAL.replace("name, input, output", "d.name, d.input, d.output")} AS pos
                FROM ah.tool_call AS d
            ), l AS (
                SELECT q.*, ARRAY(SELECT x FROM unnest(tsvector_to_array(q.pos)) AS x ORDER BY md5(x || q.id) LIMIT 5)
                            || ARRAY['qxnotalexeme', 'file'] AS lx
                FROM q
            ), i AS (
                SELECT l.*, ARRAY(SELECT s.id FROM unnest(l.lx) WITH ORDINALITY AS x(lx, o)
                                  LEFT JOIN ah.search_term AS s ON s.corpus = 'tool_call' AND s.lexeme = x.lx
                                  ORDER BY x.o) AS ids
                FROM l
            )
            SELECT count(*), count(*) FILTER (WHERE a IS DISTINCT FROM b), count(*) FILTER (WHERE b IS NOT NULL)
            FROM (
                SELECT (SELECT array_agg(row(t.lexeme, t.tf, round(t.score::numeric, 10)) ORDER BY t.lexeme)
                        FROM ah.bm25_terms(l.pos, l.lx, array_fill(1.7::float8, ARRAY[cardinality(l.lx)]), 60.0) AS t) AS a,
                       (SELECT array_agg(row(s.lexeme, t.tf, round(t.score::numeric, 10)) ORDER BY s.lexeme)
                        FROM ah.bm25_id_terms(l.terms, l.tf, l.ids, array_fill(1.7::float8, ARRAY[cardinality(l.ids)]), 60.0) AS t
                        JOIN ah.search_term AS s ON s.id = t.term) AS b
                FROM i AS l
            ) AS z
            """
        ).fetchone()
        total, differ, scored = got
        assert differ == 0
        assert total == scored > 1000


def _eager(conn: psycopg.Connection, req: SearchRequest) -> list[tuple[int, float]]:
    """The top tool calls when every document holding the phrase's words is checked (no lazy
    resolution): what the search returned when the stored vector had positions."""
    analysis = analyze(req.query)
    lexemes, stats = fts_corpus.lexemes_for(conn, "tool_call", analysis.term_texts(), analysis.term_weights())
    present = [x for x in lexemes if x.df > 0]
    scored = fts.score_candidates(conn, req, analysis, "tool_call", present, stats, decide_top=10**9)
    top = sorted(scored.items(), key=lambda kv: (-kv[1][0], -kv[0]))[: req.limit]
    return [(i, round(s, 9)) for i, (s, _) in top]


def test_the_phrase_bonus_of_tool_calls_is_checked_lazily_with_the_same_top_results(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        for q in ("npm run build", "git status", "cargo test failed", "has no exported member", "bun run test"):
            req = SearchRequest(q, scope=Scope.TOOLS, limit=10)
            hits = search(conn, req)
            assert [(h.id, round(h.score, 9)) for h in hits] == _eager(conn, req), q
        # the bonus was earned: the verbatim command outranks calls that only hold its words
        (first, *_) = search(conn, SearchRequest("git status", scope=Scope.TOOLS, limit=10))
        assert conn.execute(
            f"SELECT {POSITIONAL} @@ phraseto_tsquery('ah.search', 'git status') FROM ah.tool_call WHERE id = %s",
            (first.id,),
        ).fetchone()[0]


SEARCHES = ("npm run build", "git status", "has no exported member", "cargo test failed", "bun run test")
"""Tool-call searches whose answers must survive a downgrade and an upgrade."""


def _answers(conn: psycopg.Connection) -> list[list[tuple[int, float]]]:
    return [
        [(h.id, round(h.score, 9)) for h in search(conn, SearchRequest(q, scope=Scope.TOOLS, limit=20))]
        for q in SEARCHES
    ]


def test_downgrade_restores_positional_vectors_and_upgrade_rewrites_them(corpus_rw_db):  # noqa: F811
    """Down to 0024 (0028 puts ``tsv`` back from the text, 0025 its positions) and up again:
    0025 rewrites the vectors, 0028 maps them to term ids (numbered in lexeme order, not in the
    loader's order): the same lexemes and tf per tool call as the loader stored, the same
    statistics, and the same search answers (ids and scores) as before the round trip."""
    db = corpus_rw_db
    digest = f"SELECT md5(string_agg(t.lexemes::text || t.tfs::text, ' ' ORDER BY d.id)) FROM ah.tool_call AS d CROSS JOIN LATERAL {STORED} AS t"
    with db.connect() as conn:
        tf_digest, answers = conn.execute(digest).fetchone()[0], _answers(conn)
    assert all(answers) and sum(map(len, answers)) > 40
    downgrade(db.dsn, "0024_hosts")
    with db.connect() as conn:
        differ = conn.execute(f"SELECT count(*) FROM ah.tool_call WHERE tsv IS DISTINCT FROM {POSITIONAL}")
        assert differ.fetchone()[0] == 0
        assert conn.execute("SELECT to_regprocedure('ah.tf_vector(tsvector)')").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM ah.search_term WHERE df <= 0").fetchone()[0] == 0
        assert stats_mismatches(conn) == 0
    upgrade(db.dsn)
    with db.connect() as conn:
        assert conn.execute(TF_MISMATCHES).fetchone()[0] == 0
        assert conn.execute(digest).fetchone()[0] == tf_digest  # the same vectors as the loader stored
        assert stats_mismatches(conn) == 0
        assert _answers(conn) == answers


def test_phrase_holders_decides_as_the_full_analysis_of_every_document(corpus_db):  # noqa: F811
    """`fts_phrase.phrase_holders` (the analysis without the code-aware tail first, the full one only
    when the tail could hold a match) finds exactly the tool calls `fts_phrase.phrase_holders_full`
    finds, for phrases whose words also occur in identifier parts (``refs/heads``, ``text_value``)
    and ones whose do not (candidates: the tool calls holding every word)."""
    phrases = [
        "failed to push some refs",
        "git push origin",
        "text value",
        "npm run build",
        "no such file or directory",
    ]
    with corpus_db.connect() as conn:
        counts = []
        for phrase in phrases:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM ah.tool_call WHERE terms @> (SELECT array_agg(s.id) FROM ah.search_term AS s "
                    "WHERE s.corpus = 'tool_call' AND s.lexeme = ANY(tsvector_to_array(to_tsvector('ah.search', %s))))",
                    (phrase,),
                )
            ]
            fast, full = (
                fts_phrase.phrase_holders(conn, "tool_call", ids, phrase),
                fts_phrase.phrase_holders_full(conn, "tool_call", ids, phrase),
            )
            assert fast == full, phrase
            counts.append((phrase, len(ids), len(full)))
    assert counts == [
        ("failed to push some refs", 2, 2),
        ("git push origin", 24, 7),
        ("text value", 69, 12),
        ("npm run build", 74, 57),
        ("no such file or directory", 138, 63),
    ]


TF_VECTOR_0025 = r"""(SELECT coalesce(string_agg(
        '''' || replace(replace(u.lexeme, E'\\', E'\\\\'), '''', '''''') || ''''
        || CASE WHEN cardinality(u.positions) > 1 THEN ':' || cardinality(u.positions) ELSE '' END,
        ' '), '')::tsvector FROM unnest({v}) AS u)"""
"""``ah.tf_vector`` as migration 0025_store built it (the text of a tsvector parsed back), which
migration 0027_ingest's construction must equal."""


def test_tf_vector_is_the_vector_migration_0025_built_on_every_tool_call(corpus_db):  # noqa: F811
    """0027_ingest builds the lexemes occurring once with array_to_tsvector and parses only the
    repeated ones: the same vector, byte for byte, for every tool call of the shared corpus (what
    ``ah.tool_call_tsv`` gives a downgrade from 0028_term_ids)."""
    with corpus_db.connect() as conn:
        differ, calls, mixed = conn.execute(
            f"""
            SELECT count(*) FILTER (WHERE tsvectorsend(ah.tf_vector(p.v)) IS DISTINCT FROM
                                          tsvectorsend({TF_VECTOR_0025.format(v="p.v")})),
                   count(*),
                   count(*) FILTER (WHERE p.v::text ~ ':[0-9]+,' AND p.v::text ~ ':[0-9]+( |$)')
            FROM (SELECT {POSITIONAL.replace("name, input, output", "d.name, d.input, d.output")} AS v
                  FROM ah.tool_call AS d) AS p
            """
        ).fetchone()
        assert differ == 0
        assert calls == conn.execute("SELECT count(*) FROM ah.tool_call").fetchone()[0] > 1000
        assert mixed > 1000  # vectors holding lexemes occurring once and repeated ones both


def test_tf_vector_of_quotes_backslashes_and_empty_vectors(db):
    """Edge cases of the two halves: escaped lexemes once and repeated, only one kind, none."""
    cases = {
        "'pool':4,17,90 'py':5 'it''s':2,3": "'it''s':2 'pool':3 'py'",
        "'a\\\\b':1 'c''d':7 'e\\\\f':2,9": "'a\\\\b' 'c''d' 'e\\\\f':2",
        "'x':1 'y':2": "'x' 'y'",
        "'x':1,2 'y':3,4,5": "'x':2 'y':3",
        "'x' 'y'": "'x' 'y'",
        "": "",
    }
    with db.connect() as conn:
        for given, want in cases.items():
            got = conn.execute("SELECT ah.tf_vector(%s::tsvector)::text", (given,)).fetchone()[0]
            assert got == want, given


KEEP = {"tool_call": "ah.tool_call_keep_terms()", "message": "ah.message_keep_tsv()"}
"""The row-trigger function keeping each table's vector (migrations 0016, 0027, 0028)."""


def _keep_tsv_calls(conn: psycopg.Connection, table: str) -> int:
    """Calls of the table's `KEEP` function so far in the current transaction."""
    oid = KEEP[table]
    return conn.execute("SELECT coalesce(pg_stat_get_xact_function_calls(%s::regprocedure), 0)", (oid,)).fetchone()[0]


def test_the_keep_tsv_trigger_runs_only_for_a_row_inserted_without_its_vector(corpus_rw_db):  # noqa: F811
    """Migrations 0027_ingest and 0028_term_ids: ``WHEN (NEW.tsv IS NULL)`` (a tool call: ``NEW.terms``)
    on the insert trigger; a row that comes with its vector (the loader's merges) is stored as
    sent without calling the function, one without gets the SQL functions' vector, and an update
    of the text still recomputes it."""
    copy = {
        "tool_call": ("agent, tool_call_uid, session_id, source_id, name, input, output", "tool_call_uid"),
        "message": ("agent, message_uid, session_id, namespace, source_id, role, text", "message_uid"),
    }
    value = {
        "tool_call": f"(SELECT v.terms, v.tf FROM ah.term_vector('tool_call', {POSITIONAL}) AS v)",
        "message": "ah.message_tsv(text)",
    }
    vector = {  # (compared, columns, values given, given read as text)
        "tool_call": ("(terms, tf)", "terms, tf", "'{1}', '\\x00'", "terms::text || ' ' || tf::text", "{1} \\x00"),
        "message": ("tsv", "tsv", "'given'", "tsv::text", "'given'"),
    }
    with corpus_rw_db.connect() as conn:
        conn.execute("SET track_functions = 'all'")
        for table, (cols, uid) in copy.items():
            sel = cols.replace(uid, f"{uid} || %s")
            vec, vcols, vgiven, vastext, vtext = vector[table]
            size = "cardinality(terms)" if table == "tool_call" else "length(tsv)"
            src = conn.execute(f"SELECT min(id) FROM ah.{table} WHERE {size} > 3").fetchone()[0]
            conn.execute(
                f"INSERT INTO ah.{table} ({cols}, {vcols}) SELECT {sel}, {vgiven} FROM ah.{table} WHERE id = %s",
                ("-with", src),
            )
            assert _keep_tsv_calls(conn, table) == 0, table
            conn.execute(
                f"INSERT INTO ah.{table} ({cols}) SELECT {sel} FROM ah.{table} WHERE id = %s", ("-without", src)
            )
            assert _keep_tsv_calls(conn, table) == 1, table
            given, computed, stored = conn.execute(
                f"SELECT (SELECT {vastext} FROM ah.{table} WHERE {uid} LIKE '%%-with'), "
                f"(SELECT {vec} = {value[table]} FROM ah.{table} WHERE {uid} LIKE '%%-without'), "
                f"(SELECT {vec} FROM ah.{table} WHERE id = %s) = (SELECT {vec} FROM ah.{table} WHERE {uid} LIKE '%%-without')",
                (src,),
            ).fetchone()
            assert (given, computed, stored) == (vtext, True, True), table
            text = "input" if table == "tool_call" else "text"
            conn.execute(f"UPDATE ah.{table} SET {text} = 'replaced words' WHERE {uid} LIKE '%%-with'")
            assert _keep_tsv_calls(conn, table) == 2, table
            got = conn.execute(f"SELECT {vec} = {value[table]} FROM ah.{table} WHERE {uid} LIKE '%%-with'").fetchone()[
                0
            ]
            assert got is True, table
        conn.rollback()
