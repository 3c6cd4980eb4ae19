"""Merge policies: how a column behaves when the same row (same natural key) is observed again.

A row can be observed many times: Claude Code writes one API response as several lines that each
repeat the usage, resumed sessions copy earlier records into a new file, archives hold a second
copy of a transcript. The loader never decides ad hoc what wins; each column declares one policy
here and both the pure fold (`model.merge`) and the SQL merge (`db.tables.merges`) apply it.
"""

from __future__ import annotations

from enum import StrEnum


class Merge(StrEnum):
    """Per-column merge policy (docs/design.md §5)."""

    KEY = "key"
    """Part of the natural key; never updated."""
    KEEP_FIRST = "keep_first"
    """The first non-NULL value observed wins (``COALESCE(old, new)``)."""
    LATEST = "latest_non_null"
    """The latest non-NULL value wins (``COALESCE(new, old)``)."""
    MAX = "max"
    """The largest value wins; NULL is unknown, not zero (``GREATEST`` ignores NULLs)."""
    MIN = "min"
    """The smallest value wins (``LEAST`` ignores NULLs)."""
    OR = "or"
    """Boolean OR; once true, stays true. NULL OR false = false."""
    SUM = "sum"
    """Additive counter (only for per-source counters such as `record_type_seen.count`)."""
    NOTHING = "nothing"
    """Written on insert, never changed by a re-observation."""


def merge_value(policy: Merge, old, new):
    """Apply `policy` to two observed values of one column; returns the merged value.

    The Python twin of the SQL expressions in `db.tables.merges.merge_expression`.
    """
    if policy in (Merge.KEY, Merge.NOTHING):
        return old
    if policy is Merge.KEEP_FIRST:
        return old if old is not None else new
    if policy is Merge.LATEST:
        return new if new is not None else old
    if policy is Merge.MAX:
        if old is None:
            return new
        if new is None:
            return old
        return max(old, new)
    if policy is Merge.MIN:
        if old is None:
            return new
        if new is None:
            return old
        return min(old, new)
    if policy is Merge.OR:
        if old is None:
            return new
        if new is None:
            return old
        return bool(old) or bool(new)
    if policy is Merge.SUM:
        return (old or 0) + (new or 0)
    raise ValueError(f"unknown merge policy {policy!r}")
