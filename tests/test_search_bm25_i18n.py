"""ParadeDB SQL for every script (issue 10, defect 4), checked against what ParadeDB's official
`sqlalchemy-paradedb` package compiles for the same index and the same search expressions —
both sides parsed with pglast (PostgreSQL's parser) and compared as trees. ParadeDB itself
cannot run here."""

from __future__ import annotations

import json

import sqlalchemy as sa
from paradedb.sqlalchemy import indexing, pdb, search
from paradedb.sqlalchemy import tokenizer as tk
from pglast.parser import parse_sql_json
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex

from agent_history.db.bm25 import INDEXES
from agent_history.search.bm25 import script_clauses, search_sql
from agent_history.search.query import analyze
from agent_history.search.request import Scope, SearchRequest
from tests.test_search_bm25_sql import nodes, parse

FOLD = {"ascii_folding": True}


def _strip(tree):
    """A parse tree without source locations (two spellings of one statement compare equal)."""
    if isinstance(tree, dict):
        return {k: _strip(v) for k, v in tree.items() if k != "location"}
    if isinstance(tree, list):
        return [_strip(v) for v in tree]
    return tree


def _index_stmt(ddl: str) -> dict:
    return _strip(json.loads(parse_sql_json(ddl))["stmts"][0]["stmt"]["IndexStmt"])


def _compiled(index: sa.Index) -> str:
    return str(CreateIndex(index, if_not_exists=True).compile(dialect=postgresql.dialect()))


def _field(column, tokenizer=None):
    return indexing.ParadeDBField(column, tokenizer=tokenizer)


md = sa.MetaData()
MESSAGE = sa.Table(
    "message",
    md,
    *(sa.Column(n, sa.Text) for n in ("id", "text", "namespace", "agent", "message_class", "session_id", "ts")),
    schema="ah",
)
TOOL_CALL = sa.Table(
    "tool_call",
    md,
    *(sa.Column(n, sa.Text) for n in ("id", "name", "input", "output", "agent", "session_id", "started_at")),
    schema="ah",
)


def test_message_index_is_what_sqlalchemy_paradedb_compiles_folding_accents_with_a_unicode_words_alias():
    m = MESSAGE.c
    official = sa.Index(
        "message_bm25",
        _field(m.id),
        _field(m.text, tk.source_code(options=FOLD)),
        _field(m.text, tk.unicode_words(options={"alias": "text_words", **FOLD})),
        _field(m.namespace, tk.literal()),
        _field(m.agent, tk.literal()),
        _field(m.message_class, tk.literal()),
        _field(m.session_id),
        _field(m.ts),
        postgresql_using="bm25",
        postgresql_with={"key_field": "'id'"},
    )
    indexing.validate_paradedb_index(official)  # the package's own checks (e.g. unique aliases)
    assert _index_stmt(INDEXES["message_bm25"]) == _index_stmt(_compiled(official))


def test_tool_call_index_is_what_sqlalchemy_paradedb_compiles():
    t = TOOL_CALL.c
    official = sa.Index(
        "tool_call_bm25",
        _field(t.id),
        _field(t.name, tk.literal()),
        _field(t.input, tk.source_code(options=FOLD)),
        _field(t.input, tk.unicode_words(options={"alias": "input_words", **FOLD})),
        _field(t.output, tk.source_code(options=FOLD)),
        _field(t.output, tk.unicode_words(options={"alias": "output_words", **FOLD})),
        _field(t.agent, tk.literal()),
        _field(t.session_id),
        _field(t.started_at),
        postgresql_using="bm25",
        postgresql_with={"key_field": "'id'"},
    )
    indexing.validate_paradedb_index(official)
    assert _index_stmt(INDEXES["tool_call_bm25"]) == _index_stmt(_compiled(official))


def _where_of_top(text: str) -> dict:
    tree = parse(text)
    cte = tree["SelectStmt"]["withClause"]["ctes"][0]["CommonTableExpr"]["ctequery"]["SelectStmt"]
    return cte["whereClause"]


def _official_expr(expr) -> dict:
    """The parse tree of one compiled sqlalchemy-paradedb expression (binds as $1)."""
    compiled = str(expr.compile(dialect=postgresql.dialect()))
    sql = "SELECT 1 FROM ah.message AS d WHERE " + compiled.replace("ah.message.", "d.")
    sql = sql.replace("%(param_1)s::VARCHAR", "$1")
    tree = json.loads(parse_sql_json(sql))["stmts"][0]["stmt"]["SelectStmt"]["whereClause"]
    return _strip(tree)


def _our_clauses(text: str) -> list[dict]:
    """The OR-ed match clauses of our top-K CTE, params as $n, locations stripped."""
    where = _where_of_top(text)
    match = where["BoolExpr"]["args"][0]  # (match) AND filters
    return [_strip(a) for a in match["BoolExpr"]["args"]]


def _rhs_param(tree: dict) -> None:
    """Make the right-hand side of an operator expression a `$1` placeholder (for comparing
    shapes: ours number the parameters, the package's casts a bind to VARCHAR)."""
    tree["A_Expr"]["rexpr"] = {"ParamRef": {"number": 1}}


def test_cjk_terms_are_bigram_phrases_and_symbols_any_token_on_the_alias_as_the_package_compiles_them():
    req = SearchRequest("构建失败 🚀 deploy")
    text, params = _sql(req)
    clauses = _our_clauses(text)
    # d.text ||| q, three bigram phrases, the symbols
    assert params["q"] == "构建失败 🚀 deploy"
    assert [params[f"b{i}"] for i in range(3)] == ["构建", "建失", "失败"] and "b3" not in params
    assert params["sym"] == "🚀"
    assert len(clauses) == 5
    expected_phrase = _official_expr(search.phrase(pdb.alias(MESSAGE.c.text, "text_words"), "x"))
    expected_any = _official_expr(search.match_any(pdb.alias(MESSAGE.c.text, "text_words"), "x"))
    for c in clauses[1:4]:
        _rhs_param(c)
        assert c == expected_phrase
    _rhs_param(clauses[4])
    assert clauses[4] == expected_any
    plain = clauses[0]
    _rhs_param(plain)
    assert plain == _official_expr(search.match_any(MESSAGE.c.text, "x"))


def test_tool_calls_query_both_aliases():
    text, params = _sql(SearchRequest("日本 ✅", scope=Scope.TOOLS), "tool_call")
    aliases = sorted(
        {
            c["typeName"]["typmods"][0]["A_Const"]["sval"]["sval"]
            for c in nodes(parse(text), "TypeCast")
            if c["typeName"]["names"][-1]["String"]["sval"] == "alias"
        }
    )
    assert aliases == ["input_words", "output_words"]
    assert params["b0"] == "日本" and params["sym"] == "✅"


def test_a_latin_query_adds_no_alias_clause():
    text, params = _sql(SearchRequest("cafe deploy"))
    assert "pdb.alias" not in text and "sym" not in params and "b0" not in params


def test_script_clauses_dedupe_and_cap():
    bigrams, symbols = script_clauses(analyze("失败 失败了 ✅✅ →"))
    assert bigrams == ["失败", "败了"]
    assert symbols == "✅ →"
    many = script_clauses(analyze("一二三四五六七八九十甲乙丙丁戊己庚辛 🚀"))
    assert len(many[0]) == 16 and many[1] == ""


def _sql(req: SearchRequest, corpus: str = "message") -> tuple[str, dict]:
    stmt, params = search_sql(req, analyze(req.query), corpus)
    return stmt.as_string(None), params
