"""ParadeDB SQL for journal summaries (issue 15): the BM25 index and the query's match clauses
are what the official `sqlalchemy-paradedb` package compiles (both parsed by pglast and compared
as trees), English-stemmed, filters pushed into the top-K CTE, no raw user text in the SQL.
ParadeDB itself cannot run here."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from paradedb.sqlalchemy import indexing, search
from paradedb.sqlalchemy import tokenizer as tk
from pglast.parser import parse_sql_json
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex

from agent_history.db.bm25 import INDEXES
from agent_history.search.request import Scope, SearchRequest
from agent_history.search.summaries_bm25 import INDEX_NAME, SQL, TEXT_FIELDS, search_params
from tests.test_search_bm25_i18n import _strip
from tests.test_search_bm25_sql import colname, nodes, operators, parse

SUMMARY = sa.Table(
    "session_summary",
    sa.MetaData(),
    *(sa.Column(n, sa.Text) for n in ("id", *TEXT_FIELDS, "agent", "namespace", "analysed_at")),
    schema="ah",
)
ENGLISH = {"stemmer": "english", "ascii_folding": True}


def test_the_summary_index_is_what_sqlalchemy_paradedb_compiles_english_stemmed():
    c = SUMMARY.c
    official = sa.Index(
        "session_summary_bm25",
        indexing.ParadeDBField(c.id),
        *(indexing.ParadeDBField(c[f], tokenizer=tk.simple(options=ENGLISH)) for f in TEXT_FIELDS),
        indexing.ParadeDBField(c.agent, tokenizer=tk.literal()),
        indexing.ParadeDBField(c.namespace, tokenizer=tk.literal()),
        indexing.ParadeDBField(c.analysed_at),
        postgresql_using="bm25",
        postgresql_with={"key_field": "'id'"},
    )
    indexing.validate_paradedb_index(official)
    compiled = str(CreateIndex(official, if_not_exists=True).compile(dialect=postgresql.dialect()))

    def tree(ddl: str) -> dict:
        return _strip(json.loads(parse_sql_json(ddl))["stmts"][0]["stmt"]["IndexStmt"])

    assert INDEX_NAME in INDEXES  # built by ensure_bm25_indexes with the message and tool indexes
    assert tree(INDEXES[INDEX_NAME]) == tree(compiled)
    ours = tree(INDEXES[INDEX_NAME])
    assert ours["relation"]["relname"] == "session_summary" and ours["accessMethod"] == "bm25"


def _clauses() -> list[dict]:
    """The OR-ed match clauses of our top-K CTE, the parameter as $1, locations stripped."""
    cte = parse(SQL)["SelectStmt"]["withClause"]["ctes"][0]["CommonTableExpr"]["ctequery"]["SelectStmt"]
    match = cte["whereClause"]["BoolExpr"]["args"][0]
    out = []
    for a in match["BoolExpr"]["args"]:
        a = _strip(a)
        a["A_Expr"]["rexpr"] = {"ParamRef": {"number": 1}}
        a["A_Expr"]["lexpr"]["ColumnRef"]["fields"] = a["A_Expr"]["lexpr"]["ColumnRef"]["fields"][-1:]
        out.append(a)
    return out


def _official(field: str) -> dict:
    expr = search.match_any(SUMMARY.c[field], "x")
    sql = "SELECT 1 FROM ah.session_summary WHERE " + str(expr.compile(dialect=postgresql.dialect()))
    sql = sql.replace("ah.session_summary.", "").replace("%(param_1)s::VARCHAR", "$1")
    where = _strip(json.loads(parse_sql_json(sql))["stmts"][0]["stmt"]["SelectStmt"]["whereClause"])
    return where


def test_the_query_matches_any_term_in_each_text_field_as_the_package_compiles_it():
    assert _clauses() == [_official(f) for f in TEXT_FIELDS]


def test_filters_sit_in_the_top_k_cte_ordered_by_score_then_id():
    tree = parse(SQL)
    cte = tree["SelectStmt"]["withClause"]["ctes"][0]["CommonTableExpr"]
    assert (cte["ctename"], cte["ctematerialized"]) == ("top", "CTEMaterializeAlways")
    inner = cte["ctequery"]["SelectStmt"]
    ops = operators(inner)
    assert {("|||", f"ss.{f}") for f in TEXT_FIELDS} <= set(ops)
    assert {(">=", "ss.analysed_at"), ("<", "ss.analysed_at")} <= set(ops)
    any_filters = [e for e in nodes(inner, "A_Expr") if e["kind"] == "AEXPR_OP_ANY"]
    assert sorted(colname(e["lexpr"]) if "ColumnRef" in e["lexpr"] else "coalesce" for e in any_filters) == [
        "coalesce",
        "ss.agent",
    ]
    order = inner["sortClause"]
    assert order[0]["SortBy"]["sortby_dir"] == "SORTBY_DESC"
    assert order[0]["SortBy"]["node"]["FuncCall"]["funcname"][1]["String"]["sval"] == "score"
    assert colname(order[1]["SortBy"]["node"]) == "ss.id" and "limitCount" in inner
    assert "@@@" not in SQL


def test_parameters_carry_the_analysed_terms_and_the_filters():
    req = SearchRequest(
        "What decisions were made about the cache?",
        agents=("claude",),
        namespaces=("claude-local",),
        since=datetime(2026, 1, 1, tzinfo=UTC),
        project="/work/app/",
        limit=5,
        scope=Scope.SUMMARIES,
    )
    params = search_params(req)
    assert params["q"] == "decisions made cache"  # stop words and punctuation gone
    assert (params["agents"], params["namespaces"], params["project"], params["limit"]) == (
        ["claude"],
        ["claude-local"],
        "/work/app",
        5,
    )
    assert search_params(SearchRequest("the of and", scope=Scope.SUMMARIES)) is None


@pytest.mark.parametrize(
    ("query", "q"),
    [
        ("a'b\\c", "a'b\\c"),
        ("x); DROP TABLE ah.session_summary; --", "x DROP TABLE ah.session_summary"),
        ("foo:bar^2 AND (baz)", "foo:bar^2 baz"),
    ],
)
def test_hostile_queries_stay_parameters(query, q):
    # the statement is a constant: the text only ever travels as the %(q)s parameter, which the
    # ||| operator tokenizes as plain text (no query-syntax parsing, unlike @@@)
    assert search_params(SearchRequest(query, scope=Scope.SUMMARIES))["q"] == q
    assert SQL.count("%(q)s") == len(TEXT_FIELDS) + 1  # four match clauses and the headline
    assert "DROP" not in SQL and "@@@" not in SQL
