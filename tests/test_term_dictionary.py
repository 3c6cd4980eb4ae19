"""The term dictionary in the product (migration 0028_term_ids; docs/performance.md decisions 11
and 13): the search's translation of its tsquery text to term ids, the ``array_ops`` fallback of
a catalogue without intarray, and the GIN index the candidates come from."""

from __future__ import annotations

import psycopg
import pytest

from agent_history.search import tsquery
from agent_history.search.keyword import search
from agent_history.search.request import Scope, SearchRequest
from tests.corpus_db import corpus_db, corpus_rw_db  # noqa: F401 - fixtures


def test_query_int_and_array_match_of_any_and_at_least():
    ids = {"pool": 7, "o'brien": 12, "npm": 3}
    assert tsquery.query_int(tsquery.tsquery_any(["pool", "o'brien"]), ids) == "7 | 12"
    assert (
        tsquery.query_int(tsquery.tsquery_at_least(["pool", "o'brien", "npm"], 2), ids)
        == "(7 & 12) | (7 & 3) | (12 & 3)"
    )
    assert (
        tsquery.array_match(tsquery.tsquery_at_least(["pool", "npm"], 2), ids)
        == "((d.terms @> '{7}'::int4[] AND d.terms @> '{3}'::int4[]))"
    )
    assert (
        tsquery.array_match(tsquery.tsquery_any(["o'brien", "npm"]), ids)
        == "(d.terms @> '{12}'::int4[] OR d.terms @> '{3}'::int4[])"
    )
    with pytest.raises(KeyError):
        tsquery.query_int(tsquery.tsquery_any(["pool", "absent"]), {"pool": 7})


@pytest.mark.parametrize("lexeme", ["pool", "o'brien", "back\\slash", "a''b", "ts2739", "é'\\'"])
def test_unquote_undoes_tsquery_literal(lexeme):
    assert tsquery.unquote_literal(tsquery.tsquery_literal(lexeme)[1:-1]) == lexeme


QUERIES = ("npm run build", "git status", "has no exported member", "cargo test failed", "bun run test", "pyright")


def _answers(conn: psycopg.Connection) -> list[list[tuple[int, float]]]:
    return [
        [(h.id, round(h.score, 9)) for h in search(conn, SearchRequest(q, scope=Scope.TOOLS, limit=20))]
        for q in QUERIES
    ]


def test_the_catalogue_uses_intarray_and_its_gin_index(corpus_db):  # noqa: F811
    """The embedded server ships intarray: the migration installed it into ``ah``, and a
    candidate scan is a bitmap scan of ``tool_call_terms_idx`` with ``@@ query_int``."""
    with corpus_db.connect() as conn:
        assert conn.execute("SELECT value FROM ah.meta WHERE key = 'term_index'").fetchone() == ("ah",)
        assert (
            "gin__int_ops"
            in conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'tool_call_terms_idx'").fetchone()[0]
        )
        ids = dict(conn.execute("SELECT lexeme, id FROM ah.search_term WHERE corpus = 'tool_call'").fetchall())
        q = tsquery.query_int(tsquery.tsquery_at_least(["npm", "run", "build"], 2), ids)
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN SELECT id FROM ah.tool_call AS d WHERE d.terms OPERATOR(ah.@@) %s::ah.query_int", (q,)
            )
        )
        assert "tool_call_terms_idx" in plan
        n = conn.execute("SELECT count(*) FROM ah.tool_call AS d WHERE d.terms OPERATOR(ah.@@) %s::ah.query_int", (q,))
        assert n.fetchone()[0] > 50


def test_without_intarray_the_search_gives_the_same_answers_over_array_clauses(corpus_rw_db):  # noqa: F811
    """``term_index = 'array'`` (a server without the extension): the scans are `tsquery.array_match`
    clauses; the same hits and scores as through ``query_int``."""
    with corpus_rw_db.connect() as conn:
        want = _answers(conn)
        assert sum(map(len, want)) > 60
        conn.execute("UPDATE ah.meta SET value = 'array' WHERE key = 'term_index'")
        assert _answers(conn) == want
        conn.rollback()


def test_infra_actions_candidates_come_from_the_term_ids(corpus_db):  # noqa: F811
    """`read.activity.remote_candidates`: the tool calls holding a program's lexeme, through the
    dictionary — the same ones as the text recomputed says."""
    from agent_history.read.activity import remote_candidates

    with corpus_db.connect() as conn:
        got = remote_candidates(
            conn,
            ["ssh", "scp", "rsync", "sftp", "git"],
            since=None,
            until=None,
            host=None,
            namespaces=None,
            candidates=10_000,
        )
        want = conn.execute(
            "SELECT count(*) FROM ah.tool_call WHERE ah.search_tsv(ah.tool_call_doc(name, input, output)) "
            "@@ to_tsquery('ah.search', 'ssh | scp | rsync | sftp | git')"
        ).fetchone()[0]
    assert len(got) == want > 20


def test_the_migration_under_an_unfinished_bulk_pass_hands_the_pass_the_new_index(corpus_rw_db):  # noqa: F811
    """A catalogue at 0027 with a bulk pass open (its mark saving the GIN definitions, those
    indexes dropped, the statistics triggers off): 0028 records ``tool_call_terms_idx``'s
    definition in the mark instead of ``tool_call_tsv_idx``'s, builds no index and leaves the
    triggers off; the pass's end (its statements, `ingest.bulk._end` without the server settings)
    then builds it, and the statistics and answers are those of before."""
    import json

    from agent_history.db.migrate import downgrade, upgrade
    from agent_history.db.tables import search_stats
    from tests.test_search_i18n import stats_mismatches

    db = corpus_rw_db
    with db.connect() as conn:
        before = _answers(conn)
    downgrade(db.dsn, "0027_ingest")
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        with conn.transaction():
            indexes = search_stats.gin_indexes(conn)
            assert set(indexes) == {"message_tsv_idx", "tool_call_tsv_idx"}
            search_stats.write_mark(conn, "bulk_pass", json.dumps({"run_id": 7, "indexes": indexes}))
            for name in indexes:
                search_stats.drop_index(conn, name)
            search_stats.switch_stats_triggers(conn, enable=False)
    upgrade(db.dsn)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        mark = json.loads(search_stats.read_mark(conn, "bulk_pass")[0])
        assert mark["run_id"] == 7 and set(mark["indexes"]) == {"message_tsv_idx", "tool_call_terms_idx"}
        assert "gin (terms ah.gin__int_ops)" in mark["indexes"]["tool_call_terms_idx"]
        assert search_stats.gin_indexes(conn) == {}
        off = conn.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tool_call_search_stats_%' AND tgenabled = 'D'"
        ).fetchone()[0]
        assert off == 3
        with conn.transaction():  # the pass's end
            search_stats.lock_corpora(conn)
            for name, definition in mark["indexes"].items():
                search_stats.build_index(conn, name, definition)
            search_stats.switch_stats_triggers(conn, enable=True)
            search_stats.recompute_statistics(conn)
            search_stats.delete_mark(conn, "bulk_pass")
        assert set(search_stats.gin_indexes(conn)) == {"message_tsv_idx", "tool_call_terms_idx"}
        assert stats_mismatches(conn) == 0
        assert _answers(conn) == before
