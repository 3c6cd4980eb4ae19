"""Reciprocal-rank fusion math and the hybrid weights (pure, docs/design.md §8)."""

from __future__ import annotations

import pytest

from agent_history.search.fusion import RRF_K, VECTOR_WEIGHT, VECTOR_WEIGHT_EXACT, rrf, vector_weight
from agent_history.search.query import analyze


def test_each_list_contributes_weight_over_60_plus_rank():
    fused = dict(rrf([(1.0, ["a", "b"]), (0.7, ["b", "c"])]))
    assert fused["a"] == pytest.approx(1.0 / 61)
    assert fused["b"] == pytest.approx(1.0 / 62 + 0.7 / 61)
    assert fused["c"] == pytest.approx(0.7 / 62)


def test_an_item_missing_from_a_list_gets_nothing_from_it():
    fused = dict(rrf([(1.0, ["a"]), (0.7, [])]))
    assert fused == {"a": pytest.approx(1.0 / (RRF_K + 1))}


def test_items_in_both_lists_outrank_items_in_one():
    order = [k for k, _ in rrf([(1.0, ["a", "b", "c"]), (0.7, ["c", "d"])])]
    assert order == ["c", "a", "b", "d"]


def test_weights_decide_between_first_places():
    assert [k for k, _ in rrf([(1.0, ["kw"]), (0.7, ["vec"])])] == ["kw", "vec"]
    assert [k for k, _ in rrf([(0.35, ["kw"]), (0.7, ["vec"])])] == ["vec", "kw"]


def test_a_key_repeated_in_one_list_counts_once_at_its_best_rank():
    assert dict(rrf([(1.0, ["a", "b", "a"])]))["a"] == pytest.approx(1.0 / 61)


def test_ties_keep_first_seen_order():
    assert [k for k, _ in rrf([(1.0, ["x"]), (1.0, ["y"])])] == ["x", "y"]


def test_empty_lists_fuse_to_nothing():
    assert rrf([]) == [] and rrf([(1.0, []), (0.7, [])]) == []


@pytest.mark.parametrize(
    ("query", "weight"),
    [
        ("memory loss between sessions", VECTOR_WEIGHT),  # four plain words
        ("when did we talk about the cache problem", VECTOR_WEIGHT),
        ("cache ttl", VECTOR_WEIGHT_EXACT),  # ≤ 3 words
        ("redis cache expiry", VECTOR_WEIGHT_EXACT),
        ("why does src/db/pool.py reset connections", VECTOR_WEIGHT_EXACT),  # path
        ("where did ECONNRESET come from today", VECTOR_WEIGHT_EXACT),  # error code
        ("the max_retries setting was changed again", VECTOR_WEIGHT_EXACT),  # snake_case
        ("who wrote getUserById in the api layer", VECTOR_WEIGHT_EXACT),  # camelCase
        ("which session made commit 3f2a9c1 on main", VECTOR_WEIGHT_EXACT),  # sha
    ],
)
def test_vector_weight_is_lowered_for_short_or_identifier_shaped_queries(query, weight):
    assert vector_weight(analyze(query)) == weight
