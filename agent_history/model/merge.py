"""Pure fold of observed rows by natural key, applying each column's merge policy.

The Python twin of the loader's SQL merge: `fold(rows)` over a whole file gives the rows the
catalogue ends up with, which is what `agent-history parse` reports and what batch-independence
tests compare.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from agent_history.model.policy import merge_value
from agent_history.model.rows import Row


def merge_pair(old: Row, new: Row) -> Row:
    """Merge a re-observation `new` into `old` (same type and natural key) → merged row."""
    changes = {}
    for name, policy in type(old).policies().items():
        a, b = getattr(old, name), getattr(new, name)
        m = merge_value(policy, a, b)
        if m is not a:
            changes[name] = m
    return dataclasses.replace(old, **changes) if changes else old


def fold(rows: Iterable[Row]) -> dict[type[Row], dict[tuple, Row]]:
    """Fold rows by (type, natural key) in order of observation.

    Returns ``{RowType: {natural_key: merged_row}}`` with insertion order preserved.
    """
    out: dict[type[Row], dict[tuple, Row]] = {}
    for row in rows:
        table = out.setdefault(type(row), {})
        k = row.natural_key()
        prev = table.get(k)
        table[k] = row if prev is None else merge_pair(prev, row)
    return out
