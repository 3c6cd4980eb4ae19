"""Pure search helpers: query analysis, time bounds, tsquery quoting, snippets, path patterns."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from agent_history.read.touched import path_regex
from agent_history.search.query import FILLER_WEIGHT, TermKind, analyze, classify
from agent_history.search.request import HL_END, HL_START, SearchHit, parse_when
from agent_history.search.tsquery import tsquery_at_least, tsquery_literal


def terms(q: str) -> list[tuple[str, str, float]]:
    return [(t.text, t.kind.value, t.weight) for t in analyze(q).terms]


def test_question_drops_stop_words_and_keeps_content_words():
    a = analyze("why did the build fail")
    assert terms("why did the build fail") == [("build", "word", 1.0), ("fail", "word", 1.0)]
    assert (a.is_question, a.identifier_shaped, a.word_count) == (True, False, 5)


def test_filler_words_in_a_question_are_kept_with_a_low_weight():
    assert terms("what did we talk about regarding the cache ttl?") == [
        ("talk", "word", 1.0),
        ("regarding", "word", 1.0),
        ("cache", "word", 1.0),
        ("ttl", "word", 1.0),
    ]
    assert terms("do you remember the cache ttl") == [
        ("remember", "word", FILLER_WEIGHT),
        ("cache", "word", 1.0),
        ("ttl", "word", 1.0),
    ]


def test_quoted_phrases_are_kept_and_their_words_join_the_terms():
    a = analyze('"connection reset by peer" in pool')
    assert a.phrases == ("connection reset by peer",)
    assert [t.text for t in a.terms] == ["connection", "reset", "peer", "pool"]


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("src/db/pool.py", TermKind.PATH),
        ("pool.py", TermKind.PATH),
        ("3f2a9c1", TermKind.SHA),
        ("snake_case", TermKind.IDENTIFIER),
        ("useEffect", TermKind.IDENTIFIER),
        ("HTTPServer", TermKind.IDENTIFIER),
        ("--dry-run", TermKind.IDENTIFIER),
        ("os.path.join", TermKind.IDENTIFIER),
        ("Foo::bar", TermKind.IDENTIFIER),
        ("ECONNRESET", TermKind.ERROR),
        ("TypeError", TermKind.ERROR),
        ("TS2739", TermKind.ERROR),
        ("ERR_CONNECTION_REFUSED", TermKind.ERROR),
        ("404", TermKind.NUMBER),
        ("cache", TermKind.WORD),
    ],
)
def test_classify_recognises_identifier_shapes(token, kind):
    assert classify(token) is kind


def test_identifiers_are_never_dropped_and_edge_punctuation_is_trimmed():
    assert terms("is useEffect() in (src/app.tsx)?") == [
        ("useEffect", "identifier", 1.0),
        ("src/app.tsx", "path", 1.0),
    ]
    assert analyze("useEffect").identifier_shaped


def test_a_query_of_stop_words_is_empty():
    assert analyze("what is the").is_empty
    assert analyze('"" ?? ...').is_empty


def test_duplicate_terms_are_kept_once():
    assert terms("Build build BUILD") == [("build", "word", 1.0)]


NOW = datetime(2025, 6, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "end", "expected"),
    [
        ("7d", False, datetime(2025, 6, 3, 12, 0, tzinfo=UTC)),
        ("12h", False, datetime(2025, 6, 10, 0, 0, tzinfo=UTC)),
        ("30m", False, datetime(2025, 6, 10, 11, 30, tzinfo=UTC)),
        ("2w", False, datetime(2025, 5, 27, 12, 0, tzinfo=UTC)),
        ("2025-06-01", False, datetime(2025, 6, 1, tzinfo=UTC)),
        ("2025-06-01", True, datetime(2025, 6, 2, tzinfo=UTC)),
        ("2025-06-01T08:30:00Z", False, datetime(2025, 6, 1, 8, 30, tzinfo=UTC)),
        ("2025-06-01T08:30:00", False, datetime(2025, 6, 1, 8, 30, tzinfo=UTC)),
    ],
)
def test_parse_when_accepts_relative_and_iso_bounds(value, end, expected):
    assert parse_when(value, now=NOW, end_of_day=end) == expected


def test_parse_when_rejects_garbage_with_one_line():
    with pytest.raises(ValueError, match="not a time: 'yesterday'"):
        parse_when("yesterday", now=NOW)


@pytest.mark.parametrize("value", ["1000000d", "1000000000h", "99999999999999999999w", "36526d", "52596001m"])
def test_a_relative_time_beyond_100_years_names_the_option_and_the_range(value):
    # issue 10: `sessions --since 1000000d` raised OverflowError: date value out of range
    with pytest.raises(ValueError) as err:
        parse_when(value, now=NOW, option="--since")
    assert str(err.value) == (
        f"--since {value} is out of range: a relative time reaches back at most 100 years (36525d, 876600h or 5217w)"
    )


def test_a_relative_time_of_exactly_100_years_is_accepted():
    assert parse_when("36525d", now=NOW) == datetime(1925, 6, 10, 12, 0, tzinfo=UTC)
    assert parse_when("876600h", now=NOW) == parse_when("36525d", now=NOW)


@pytest.mark.parametrize(
    ("value", "end"),
    [("9999-12-31", False), ("9999-12-31", True), ("0001-01-01", False), ("0001-01-01T00:00:00+05:00", False)],
)
def test_a_date_at_the_edge_of_the_calendar_names_the_option_and_the_range(value, end):
    # issue 10: the end of 9999-12-31 (and 0001-01-01 in UTC) overflowed datetime
    with pytest.raises(ValueError) as err:
        parse_when(value, now=NOW, end_of_day=end, option="--until")
    assert str(err.value) == f"--until {value} is out of range: dates and timestamps go from 0001-01-02 to 9999-12-30"


def test_the_last_accepted_date_ends_at_the_start_of_the_next_day():
    assert parse_when("9999-12-30", now=NOW, end_of_day=True) == datetime(9999, 12, 31, tzinfo=UTC)
    assert parse_when("0001-01-02", now=NOW) == datetime(1, 1, 2, tzinfo=UTC)


def test_garbage_names_the_option_too():
    with pytest.raises(ValueError) as err:
        parse_when("2025-13-01", now=NOW, option="since")
    assert str(err.value) == "since: not a time: '2025-13-01' (use 7d, 12h, 30m, 2w, YYYY-MM-DD or an ISO timestamp)"


def test_tsquery_literals_quote_anything():
    assert tsquery_literal("it's") == "'it''s'"
    assert tsquery_literal("back\\slash") == "'back\\\\slash'"
    assert tsquery_at_least(["a", "b", "c"], 2) == "('a' & 'b') | ('a' & 'c') | ('b' & 'c')"
    assert tsquery_at_least(["a", "b"], 1) == "'a' | 'b'"


def test_hit_snippet_markers_become_plain_text_and_spans():
    hit = SearchHit(
        "message",
        1,
        1.0,
        "s",
        "",
        "claude",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        snippet=f"the {HL_START}build{HL_END} {HL_START}failed{HL_END} again",
    )
    assert hit.plain_snippet() == "the build failed again"
    assert hit.highlights() == [(4, 9), (10, 16)]
    assert hit.as_dict()["highlights"] == [[4, 9], [10, 16]]


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("src/db/pool.py", ["/x/src/db/pool.py", "src/db/pool.py"], ["/x/src/db/pool.pyc", "/x/mysrc/db/pool.py"]),
        ("/x/src", ["/x/src", "/x/src/a.py"], ["/x/srcs/a.py", "/y/x/src/a.py"]),
        ("*.css", ["/a/b/site.css", "site.css"], ["/a/b/site.css.map", "/a/b/site.scss"]),
        ("src/*.py", ["/p/src/a.py"], ["/p/src/sub/a.py"]),
        ("src/**/*.ts", ["/p/src/a.ts", "/p/src/x/y/a.ts"], ["/p/lib/a.ts"]),
        ("/p/**/test_?.py", ["/p/t/test_a.py"], ["/p/t/test_ab.py", "/q/p/t/test_a.py"]),
        ("[ab].md", ["/d/a.md", "/d/b.md"], ["/d/c.md"]),
    ],
)
def test_path_patterns_match_at_directory_boundaries(pattern, matches, misses):
    rx = re.compile(path_regex(pattern))
    assert [p for p in matches if rx.search(p)] == matches
    assert [p for p in misses if rx.search(p)] == []


def test_mark_terms_highlights_parts_of_compound_tokens_only_when_nothing_is_marked():
    from agent_history.search.request import mark_terms

    assert mark_terms("see src/db/pool.py now", ["pool", "db"]) == f"see src/db/{HL_START}pool{HL_END}.py now"
    marked = f"{HL_START}x{HL_END} pool"
    assert mark_terms(marked, ["pool"]) == marked
    assert mark_terms("Pool.PY", ["pool.py", "pool"]) == f"{HL_START}Pool.PY{HL_END}"
