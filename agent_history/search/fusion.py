"""Reciprocal-rank fusion (pure): how keyword and vector result lists become one (docs/design.md §8).

Each list contributes ``w / (K + rank)`` to every item it ranks (rank from 1; an item a list does
not rank gets nothing from it), with ``K = 60`` (Cormack, Clarke & Büttcher, SIGIR 2009). Weights:
keyword 1, vector 0.7 — lowered to 0.35 when the query has at most three words or contains an
identifier-shaped word (path, sha, ``snake_case``, ``camelCase``, error code, number), where exact
matching is what the person wants and nearest-meaning neighbours mostly add noise.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from agent_history.search.query import QueryAnalysis

RRF_K = 60
KEYWORD_WEIGHT = 1.0
VECTOR_WEIGHT = 0.7
VECTOR_WEIGHT_EXACT = 0.35
"""Vector weight for short (≤ `SHORT_QUERY_WORDS` words) or identifier-shaped queries."""
SHORT_QUERY_WORDS = 3

K = TypeVar("K", bound=Hashable)


def vector_weight(analysis: QueryAnalysis) -> float:
    """The vector list's weight for this query (see the module docstring)."""
    if analysis.word_count <= SHORT_QUERY_WORDS or analysis.identifier_shaped:
        return VECTOR_WEIGHT_EXACT
    return VECTOR_WEIGHT


def rrf(lists: Sequence[tuple[float, Sequence[K]]], k: int = RRF_K) -> list[tuple[K, float]]:
    """Fuse ranked lists given as ``(weight, keys best first)``; returns ``(key, score)`` best
    first. Ties keep the order in which keys were first seen (earlier lists first). A key
    repeated within one list counts at its first (best) rank only."""
    scores: dict[K, float] = {}
    for weight, keys in lists:
        seen: set[K] = set()
        for rank, key in enumerate(keys, 1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
