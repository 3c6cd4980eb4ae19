"""The script and symbol ranges (pure) and their twin in migration 0004: the query side and the
database must agree on what a CJK character and an indexed symbol are."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agent_history.analysis import scripts
from agent_history.search.query import TermKind, analyze
from agent_history.search.request import HL_END, HL_START, mark_terms

MIGRATION = Path(__file__).resolve().parents[1] / "migrations" / "versions" / "0004_search_i18n.py"


def _migration():
    spec = importlib.util.spec_from_file_location("m0004", MIGRATION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migration_classes_are_the_declared_ranges():
    m = _migration()
    assert m.CJK_CLASS == scripts.regex_class(scripts.CJK_RANGES)
    assert m.SYMBOL_CLASS == scripts.regex_class(scripts.SYMBOL_RANGES)


def _edges(ranges) -> list[str]:
    return [chr(cp) for lo, hi, _ in ranges for cp in (lo, hi)]


def test_the_database_indexes_exactly_the_declared_symbols(db):
    inside = _edges(scripts.SYMBOL_RANGES)
    outside = [chr(lo - 1) for lo, _, _ in scripts.SYMBOL_RANGES] + [chr(hi + 1) for _, hi, _ in scripts.SYMBOL_RANGES]
    outside = [c for c in outside if not scripts.is_symbol(c)]  # adjacent ranges
    with db.connect() as conn:
        for ch in inside:
            got = conn.execute("SELECT tsvector_to_array(ah.script_lexemes(%s))", (f"a{ch}b",)).fetchone()[0]
            assert got == [ch], hex(ord(ch))
        for ch in outside:
            got = conn.execute("SELECT tsvector_to_array(ah.script_lexemes(%s))", (f"a{ch}b",)).fetchone()[0]
            assert got == [], hex(ord(ch))


def test_the_database_bigrams_exactly_the_declared_cjk_scripts(db):
    with db.connect() as conn:
        for ch in _edges(scripts.CJK_RANGES):
            run = ch * 3
            got = conn.execute("SELECT tsvector_to_array(ah.script_lexemes(%s))", (f"x{run}y",)).fetchone()[0]
            assert got == [ch * 2], hex(ord(ch))
            assert scripts.cjk_bigrams(run) == [ch * 2, ch * 2]
        # just outside the first range: a Latin letter with diacritics is not CJK
        assert conn.execute("SELECT tsvector_to_array(ah.script_lexemes('ÀÀÀ'))").fetchone()[0] == []


def test_cjk_bigrams_follow_the_runs():
    assert scripts.cjk_bigrams("为什么构建失败了") == ["为什", "什么", "么构", "构建", "建失", "失败", "败了"]
    assert scripts.cjk_bigrams("使用Python运行 中") == ["使用", "运行", "中"]
    assert scripts.cjk_bigrams("plain text") == []


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("🚀", ["🚀"]),
        ("deploy 🚀 ✅", ["deploy", "🚀", "✅"]),
        ("→", ["→"]),
        ("构建失败", ["构建失败"]),
        ("café", ["café"]),
        ("!!! — …", []),
    ],
)
def test_symbols_and_cjk_words_are_terms(query, terms):
    a = analyze(query)
    assert [t.text for t in a.terms] == terms
    assert all(t.kind is TermKind.WORD for t in a.terms)


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("", "the query is empty: nothing to search for"),
        ("   ", "the query is empty: nothing to search for"),
        ("the of", "the query has no searchable terms: stop words (the, of) and punctuation are not indexed"),
        ("What is it?", "the query has no searchable terms: stop words (what, is, it) and punctuation are not indexed"),
        (
            "what is it that you were doing there",
            "the query has no searchable terms: stop words (what, is, it, that, you, were …) and punctuation are "
            "not indexed",
        ),
        ('"the of"', "the query has no searchable terms: stop words (the, of) and punctuation are not indexed"),
        ("?? ... !!", "the query has no searchable terms: punctuation is not indexed"),
        ("🚀", None),
        ("the pool", None),
    ],
)
def test_the_empty_note_names_the_reason(query, note):
    assert analyze(query).empty_note() == note


def test_mark_terms_marks_symbols_and_cjk_even_beside_headline_marks():
    marked = f"all tests {HL_START}pass{HL_END} ✅ and ✅"
    assert (
        mark_terms(marked, ["✅", "pass"])
        == f"all tests {HL_START}pass{HL_END} {HL_START}✅{HL_END} and {HL_START}✅{HL_END}"
    )
    assert mark_terms("为什么构建失败了", ["构建失败", "构建"]) == f"为什么{HL_START}构建失败{HL_END}了"
    # ordinary words are marked only when nothing was (the old fallback), at ≥ 3 characters
    assert mark_terms(f"{HL_START}x{HL_END} pool", ["pool"]) == f"{HL_START}x{HL_END} pool"
    assert mark_terms("src/db/pool.py", ["pool", "db"]) == f"src/db/{HL_START}pool{HL_END}.py"
