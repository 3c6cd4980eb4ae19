"""Pure fold of observed rows by natural key, applying each column's merge policy.

The Python twin of the loader's SQL merge: `fold(rows)` over a whole file gives the rows the
catalogue ends up with, which is what `agent-history parse` reports and what batch-independence
tests compare.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable

from agent_history.model.policy import Merge, merge_value
from agent_history.model.rows import Row


@functools.cache
def _mergeable(cls: type) -> tuple[tuple[int, str, Merge], ...]:
    """(position, column, policy) of the columns a re-observation can change."""
    return tuple(
        (i, name, policy)
        for i, (name, policy) in enumerate(cls.policies().items())
        if policy not in (Merge.KEY, Merge.NOTHING)
    )


@functools.cache
def _has_sum(cls: type) -> bool:
    return any(p is Merge.SUM for p in cls.policies().values())


def merge_pair(old: Row, new: Row) -> Row:
    """Merge a re-observation `new` into `old` (same type and natural key) → merged row."""
    if old == new and not _has_sum(type(old)):
        return old
    a_vals, b_vals = old.values(), new.values()
    changes = {}
    for i, name, policy in _mergeable(type(old)):
        a, b = a_vals[i], b_vals[i]
        if b is None or a == b and policy is not Merge.SUM:
            continue
        m = merge_value(policy, a, b)
        if m is not a:
            changes[name] = m
    return dataclasses.replace(old, **changes) if changes else old


def fold(rows: Iterable[Row]) -> dict[type[Row], dict[tuple, Row]]:
    """Fold rows by (type, natural key) in order of observation.

    Returns ``{RowType: {natural_key: merged_row}}`` with insertion order preserved. Values are
    merged in place in plain lists (the hot path of the loader) and built into rows once.
    """
    acc: dict[type[Row], dict[tuple, list]] = {}
    for row in rows:
        cls = type(row)
        table = acc.get(cls)
        if table is None:
            table = acc[cls] = {}
        k = row.natural_key()
        cur = table.get(k)
        if cur is None:
            table[k] = list(row.values())
            continue
        vals = row.values()
        for i, _name, policy in _mergeable(cls):
            b = vals[i]
            if b is None:
                continue
            a = cur[i]
            if a == b and policy is not Merge.SUM:
                continue
            cur[i] = merge_value(policy, a, b)
    return {cls: {k: cls(*v) for k, v in table.items()} for cls, table in acc.items()}
