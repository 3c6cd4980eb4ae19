"""The usage page's tables and charts: breakdowns (`rollup`) and the charts' JSON (`chart_payload`)
of the usage cells `read.usage_cells.usage_cells` reads (tokens and list-price cost per UTC day,
agent, model, project, branch and host; its docstring gives the rules). Pure: unknown (None) stays
unknown through every sum, never 0; cells without a day are shown in the tables, not on the
charts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from agent_history.read.usage_cells import UsageCell

BREAKDOWNS = ("day", "model", "agent", "project", "branch", "host")
"""`rollup` keys."""


@dataclass(slots=True)
class UsageTotal:
    """A row of a breakdown table (by day, model or agent)."""

    key: str
    calls: int = 0
    tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: Decimal | None = None
    unpriced_calls: int = 0
    recorded_cost_usd: Decimal | None = None
    partial_calls: int = 0
    """Calls with unknown or out-of-range token counts: tokens and cost are lower bounds (≥)."""


def _add(a, b):
    """Sum where None is unknown: unknown + x = x, unknown + unknown = unknown."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def rollup(cells: list[UsageCell], by: str) -> list[UsageTotal]:
    """Totals of `cells` by one of `BREAKDOWNS` (``day`` | ``model`` | ``agent`` | ``project`` |
    ``branch`` | ``host``): days in order (unknown day last), the others by tokens, largest first. Raises
    ValueError for another `by`."""
    if by not in BREAKDOWNS:
        raise ValueError(f"unknown breakdown {by!r} ({', '.join(BREAKDOWNS)})")
    out: dict[str, UsageTotal] = {}
    for c in cells:
        value = getattr(c, by)
        key = value.isoformat() if isinstance(value, date) else (value or "unknown")
        t = out.setdefault(key, UsageTotal(key))
        t.calls += c.calls
        t.tokens = _add(t.tokens, c.tokens)
        t.output_tokens = _add(t.output_tokens, c.output_tokens)
        t.cost_usd = _add(t.cost_usd, c.cost_usd)
        t.unpriced_calls += c.unpriced_calls
        t.recorded_cost_usd = _add(t.recorded_cost_usd, c.recorded_cost_usd)
        t.partial_calls += c.partial_calls
    rows = list(out.values())
    if by == "day":
        return sorted(rows, key=lambda t: (t.key == "unknown", t.key))
    return sorted(rows, key=lambda t: (-(t.tokens or 0), t.key))


MAX_MODEL_SERIES = 6
"""Cost-by-day chart: the costliest models get a line each, the rest are summed as "other"."""


def chart_payload(cells: list[UsageCell]) -> dict:
    """The charts' JSON (static/charts.js): ``{"days": [ISO day…], "tokens_by_agent": {agent:
    [tokens | null per day]}, "cost_by_model": {model: [USD | null per day]}}`` over the days
    that have a timestamp, every day between the first and last (gaps are null, not 0)."""
    dated = [c for c in cells if c.day is not None]
    if not dated:
        return {"days": [], "tokens_by_agent": {}, "cost_by_model": {}}
    first, last = min(c.day for c in dated), max(c.day for c in dated)
    days = [date.fromordinal(o) for o in range(first.toordinal(), last.toordinal() + 1)]
    index = {d: i for i, d in enumerate(days)}
    cost_rank = rollup([c for c in dated if c.cost_usd is not None], "model")
    by_cost = sorted(cost_rank, key=lambda t: (-(t.cost_usd or 0), t.key))
    top = {t.key for t in by_cost[:MAX_MODEL_SERIES]}
    tokens: dict[str, list] = {}
    cost: dict[str, list] = {}
    for c in dated:
        i = index[c.day]
        series = tokens.setdefault(c.agent, [None] * len(days))
        series[i] = _add(series[i], c.tokens)
        if c.cost_usd is not None:
            name = (c.model or "unknown") if (c.model or "unknown") in top else "other"
            series = cost.setdefault(name, [None] * len(days))
            series[i] = _add(series[i], c.cost_usd)
    return {
        "days": [d.isoformat() for d in days],
        "tokens_by_agent": dict(sorted(tokens.items())),
        "cost_by_model": {k: [float(v) if v is not None else None for v in vs] for k, vs in sorted(cost.items())},
    }
