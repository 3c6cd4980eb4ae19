"""The pure parts of `benchmarks.term_ids` (the term-dictionary prototype): the tf byte encoding
and the translation of the search's tsquery text into intarray's ``query_int`` over term ids."""

from __future__ import annotations

import pytest

from agent_history.search.tsquery import tsquery_any, tsquery_at_least, tsquery_literal
from benchmarks.term_ids import decode_tf, encode_tf, query_int, unquote_literal


def test_tf_bytes_are_tf_minus_one_and_round_trip():
    data = encode_tf([1, 2, 3, 255, 256])
    assert data == b"\x00\x01\x02\xfe\xff"
    assert decode_tf(data) == [1, 2, 3, 255, 256]
    assert encode_tf([]) == b""


@pytest.mark.parametrize("tf", [0, 257, -1])
def test_tf_outside_a_tsvectors_range_is_refused(tf):
    with pytest.raises(ValueError, match="outside 1..256"):
        encode_tf([1, tf])


@pytest.mark.parametrize("lexeme", ["pool", "o'brien", "back\\slash", "a''b", "ts2739", "é'\\'"])
def test_unquote_undoes_tsquery_literal(lexeme):
    assert unquote_literal(tsquery_literal(lexeme)[1:-1]) == lexeme


def test_query_int_of_any_and_at_least():
    ids = {"pool": 7, "o'brien": 12, "npm": 3}
    assert query_int(tsquery_any(["pool", "o'brien"]), ids) == "7 | 12"
    assert query_int(tsquery_at_least(["pool", "o'brien", "npm"], 2), ids) == "(7 & 12) | (7 & 3) | (12 & 3)"
    assert query_int(tsquery_at_least(["pool", "o'brien", "npm"], 3), ids) == "(7 & 12 & 3)"


def test_query_int_of_a_lexeme_without_an_id_raises():
    with pytest.raises(KeyError):
        query_int(tsquery_any(["pool", "absent"]), {"pool": 7})
