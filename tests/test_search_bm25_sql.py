"""The ParadeDB (pg_search 0.25) SQL we generate, checked by parsing it with pglast (PostgreSQL's
own parser): operators, tokenizer casts, key field, pushed-down filters, top-K ordering — and
that no raw user text reaches `@@@`. ParadeDB itself cannot run here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from pglast.parser import parse_sql_json

from agent_history.db.bm25 import INDEXES
from agent_history.search.bm25 import search_sql
from agent_history.search.query import analyze
from agent_history.search.request import HL_END, HL_START, Scope, SearchRequest


def parse(sql_text: str) -> dict:
    """Parse SQL with psycopg ``%(name)s`` placeholders (rewritten to ``$n``)."""
    names: list[str] = []

    def sub(m: re.Match) -> str:
        if m.group(1) not in names:
            names.append(m.group(1))
        return f"${names.index(m.group(1)) + 1}"

    tree = json.loads(parse_sql_json(re.sub(r"%\((\w+)\)s", sub, sql_text)))
    assert len(tree["stmts"]) == 1
    return tree["stmts"][0]["stmt"]


def nodes(tree, kind: str) -> Iterator[dict]:
    """Every node of type `kind` in a parse tree."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k == kind:
                yield v
            yield from nodes(v, kind)
    elif isinstance(tree, list):
        for v in tree:
            yield from nodes(v, kind)


def colname(node: dict) -> str:
    return ".".join(f["String"]["sval"] for f in node["ColumnRef"]["fields"])


def operators(tree) -> list[tuple[str, str]]:
    """(operator, left column) of every binary expression whose left side is a column."""
    out = []
    for e in nodes(tree, "A_Expr"):
        op = e["name"][0]["String"]["sval"]
        left = e.get("lexpr", {})
        if "ColumnRef" in left:
            out.append((op, colname(left)))
    return out


def casts(tree) -> list[tuple[str, str]]:
    """(column, type) of every ``column::type`` cast."""
    return [
        (colname(c["arg"]), ".".join(n["String"]["sval"] for n in c["typeName"]["names"]))
        for c in nodes(tree, "TypeCast")
        if "ColumnRef" in c["arg"]
    ]


def sql_of(req: SearchRequest, corpus: str = "message") -> tuple[str, dict]:
    stmt, params = search_sql(req, analyze(req.query), corpus)
    return stmt.as_string(None), params


def test_message_index_uses_source_code_text_literal_filters_and_the_id_key():
    stmt = parse(INDEXES["message_bm25"])["IndexStmt"]
    assert (stmt["relation"]["schemaname"], stmt["relation"]["relname"], stmt["accessMethod"]) == (
        "ah",
        "message",
        "bm25",
    )
    params = stmt["indexParams"]
    assert params[0]["IndexElem"]["name"] == "id"  # the key field comes first
    assert casts(params) == [
        ("text", "pdb.source_code"),
        ("text", "pdb.unicode_words"),
        ("namespace", "pdb.literal"),
        ("agent", "pdb.literal"),
        ("message_class", "pdb.literal"),
    ]
    assert [p["IndexElem"].get("name") for p in params[6:]] == ["session_id", "ts"]
    (opt,) = stmt["options"]
    assert (opt["DefElem"]["defname"], opt["DefElem"]["arg"]["String"]["sval"]) == ("key_field", "id")


def test_tool_call_index_covers_input_and_output_text():
    stmt = parse(INDEXES["tool_call_bm25"])["IndexStmt"]
    assert stmt["relation"]["relname"] == "tool_call"
    assert casts(stmt["indexParams"]) == [
        ("name", "pdb.literal"),
        ("input", "pdb.source_code"),
        ("input", "pdb.unicode_words"),
        ("output", "pdb.source_code"),
        ("output", "pdb.unicode_words"),
        ("agent", "pdb.literal"),
    ]


def test_message_query_matches_any_term_orders_by_score_and_pushes_filters_down():
    req = SearchRequest(
        "why does the pool drop connections",
        namespaces=("claude-work",),
        agents=("claude",),
        since=datetime(2025, 1, 1, tzinfo=UTC),
        limit=7,
    )
    text, params = sql_of(req)
    tree = parse(text)
    ops = operators(tree)
    assert ("|||", "d.text") in ops
    assert "@@@" not in [op for op, _ in ops] and "@@@" not in text
    assert {("=", "d.namespace"), ("=", "d.agent"), ("=", "d.message_class"), (">=", "d.ts")} <= set(ops)
    any_filters = [e for e in nodes(tree, "A_Expr") if e["kind"] == "AEXPR_OP_ANY"]
    assert sorted(colname(e["lexpr"]) for e in any_filters) == ["d.agent", "d.message_class", "d.namespace"]
    cte = tree["SelectStmt"]["withClause"]["ctes"][0]["CommonTableExpr"]
    assert (cte["ctename"], cte["ctematerialized"]) == ("top", "CTEMaterializeAlways")
    inner = cte["ctequery"]["SelectStmt"]
    order = inner["sortClause"]
    assert order[0]["SortBy"]["sortby_dir"] == "SORTBY_DESC"
    assert order[0]["SortBy"]["node"]["FuncCall"]["funcname"][1]["String"]["sval"] == "score"
    assert colname(order[1]["SortBy"]["node"]) == "d.id"
    assert "limitCount" in inner
    # the operators receive the analysed terms, never the raw question
    assert params["q"] == "pool drop connections"
    assert params["limit"] == 7 and params["f_namespaces"] == ["claude-work"]


def test_snippet_uses_pdb_snippet_with_our_markers_and_240_characters():
    text, params = sql_of(SearchRequest("ECONNRESET"))
    calls = {
        c["funcname"][-1]["String"]["sval"]: c
        for c in nodes(parse(text), "FuncCall")
        if c["funcname"][0]["String"]["sval"] == "pdb"
    }
    assert set(calls) == {"score", "snippet"}
    named = {a["NamedArgExpr"]["name"] for a in calls["snippet"]["args"] if "NamedArgExpr" in a}
    assert named == {"start_tag", "end_tag", "max_num_chars"}
    assert (params["hl_start"], params["hl_end"], params["chars"]) == (HL_START, HL_END, 240)


def test_quoted_phrases_become_or_ed_phrase_clauses():
    text, params = sql_of(SearchRequest('"connection reset by peer" pool'))
    ops = operators(parse(text))
    assert ("###", "d.text") in ops and ("|||", "d.text") in ops
    assert params["p0"] == "connection reset by peer"
    assert params["q"] == "connection reset peer pool"


def test_tool_query_matches_input_or_output_and_filters_namespace_through_the_session():
    text, _ = sql_of(SearchRequest("ECONNRESET", namespaces=("codex-local",), scope=Scope.TOOLS), "tool_call")
    tree = parse(text)
    ops = operators(tree)
    assert {("|||", "d.input"), ("|||", "d.output")} <= set(ops)
    assert ("=", "s.namespace") in ops and ("=", "d.message_class") not in ops
    assert any(
        e["name"][0]["String"]["sval"] == "=" and colname(e["lexpr"]) == "d.session_id"
        for e in nodes(tree, "A_Expr")
        if "ColumnRef" in e.get("lexpr", {})
    )


@pytest.mark.parametrize("query", ["a'b\\c", "x); DROP TABLE ah.message; --", "foo:bar^2 AND (baz)"])
def test_hostile_queries_stay_parameters(query):
    text, params = sql_of(SearchRequest(query))
    parse(text)  # still one well-formed statement
    assert query not in text
    assert "DROP" not in text
