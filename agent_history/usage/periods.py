"""Period keys and Claude-style 5-hour billing blocks — pure time math, no database.

Period keys (the ``period`` values of `usage daily|weekly|monthly`, as ccusage 20.0.24 prints
them): a call's timestamp is converted to the report's time zone, then

- daily   → ``YYYY-MM-DD`` (the local calendar day),
- weekly  → ``YYYY-MM-DD`` of the Monday that starts the local week (ccusage's `weekly --json`
  over the shared corpus keys 2025-06-14, a Saturday, as 2025-06-09; its per-agent `ccusage
  claude weekly` starts weeks on Sunday unless given ``--start-of-week monday``: docs/usage.md),
- monthly → ``YYYY-MM``.

Billing blocks follow ccusage's block rule (ccusage `identifySessionBlocks`, 5-hour session
duration, Anthropic's rolling 5-hour usage window): calls sorted by time; a block starts at the
first call's time floored to the UTC hour and ends 5 h later; the next call opens a new block
when it falls more than 5 h after the block's start or more than 5 h after the previous call. A
gap of more than 5 h between two calls is reported as a gap block from the previous call + 5 h
to the next call. A block is active when `now` lies in it (start ≤ now < end) and within 5 h of
its last call. Burn rate = tokens (and cost) of the block over the minutes between its first and last
call; NULL when that span is zero (a window longer than a block — the plan week — takes it over
the elapsed window instead: `window_burn_rate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

VIEWS = ("daily", "weekly", "monthly", "session", "blocks")
"""The report views of `agent-history usage`."""

BLOCK_LENGTH = timedelta(hours=5)
"""Length of a billing block (ccusage's default session duration; Anthropic's 5-hour window)."""


def period_key(view: str, ts: datetime, tz: tzinfo) -> str:
    """The period a call at aware `ts` falls in for `view` (`daily` | `weekly` | `monthly`), in
    zone `tz`. Raises ValueError for another view or a naive timestamp."""
    if ts.tzinfo is None:
        raise ValueError("period_key needs an aware timestamp")
    day: date = ts.astimezone(tz).date()
    if view == "daily":
        return day.isoformat()
    if view == "weekly":
        return (day - timedelta(days=day.weekday())).isoformat()
    if view == "monthly":
        return f"{day.year:04d}-{day.month:02d}"
    raise ValueError(f"no period key for view {view!r}")


@dataclass(frozen=True, slots=True)
class Block:
    """One billing block: `indexes` are positions (into the sequence given to `blocks`) of its
    calls, in time order. A gap block has no calls; its `start`/`end` bound the idle time."""

    start: datetime
    end: datetime
    indexes: tuple[int, ...]
    first_ts: datetime | None
    last_ts: datetime | None
    is_gap: bool = False

    def is_active(self, now: datetime) -> bool:
        """Whether the block is open at `now`: started, not ended, less than its length (5 h for
        a billing block) after its last call."""
        if self.is_gap or self.last_ts is None:
            return False
        return self.start <= now < self.end and now - self.last_ts < self.end - self.start


def _floor_hour(ts: datetime) -> datetime:
    return ts.replace(minute=0, second=0, microsecond=0)


def blocks(times: Sequence[datetime], length: timedelta = BLOCK_LENGTH) -> list[Block]:
    """The billing blocks (and gap blocks) of calls at aware UTC timestamps `times` (any order),
    by the rule in the module docstring, oldest first. `length` replaces the 5 hours (the plan
    windows' week, `usage.plans.WINDOWS`)."""
    order = sorted(range(len(times)), key=lambda i: times[i])
    out: list[Block] = []
    start: datetime | None = None
    members: list[int] = []

    def close() -> None:
        first, last = times[members[0]], times[members[-1]]
        out.append(Block(start, start + length, tuple(members), first, last))

    for i in order:
        ts = times[i]
        if start is not None:
            last = times[members[-1]]
            if ts - start > length or ts - last > length:
                close()
                if ts - last > length:
                    out.append(Block(last + length, ts, (), None, None, is_gap=True))
                start, members = None, []
        if start is None:
            start = _floor_hour(ts)
        members.append(i)
    if start is not None:
        close()
    return out


def burn_rate(tokens: int, cost_usd, first: datetime, last: datetime) -> dict | None:
    """``{"tokensPerMinute", "costPerHour"}`` over the span first→last (ccusage's burn rate), or
    None when the span is zero. `cost_usd` None (unpriced) gives ``costPerHour`` None."""
    minutes = (last - first).total_seconds() / 60
    if minutes <= 0:
        return None
    return {
        "tokensPerMinute": tokens / minutes,
        "costPerHour": None if cost_usd is None else float(cost_usd) / minutes * 60,
    }


ELAPSED_RATE_OVER = BLOCK_LENGTH
"""Windows longer than this (the plan week, `usage.plans.WINDOWS`) take their burn rate over the
elapsed window (`window_burn_rate`); the 5-hour block keeps ccusage's first → last call rule."""


def window_burn_rate(tokens: int, cost_usd, block: Block, now: datetime) -> dict | None:
    """The burn rate of the active window `block` at aware `now`, ``{"tokensPerMinute",
    "costPerHour"}`` or None when the span is zero:

    - a 5-hour block (length ≤ `ELAPSED_RATE_OVER`): ccusage's rule, the block's tokens over the
      minutes between its first and last call (`burn_rate`; ccusage `calculateBurnRate`);
    - a longer window (the week): its tokens over the elapsed part of the window, its start →
      `now` (capped at its end). A week holds nights and days off: a rate over the calls' own
      span (first → last, or the last hour of activity) is the pace while working, and projecting
      it over the remaining days counts every idle hour as a working one; a burst long past
      projected a heavy week. The elapsed window holds the idle time the rest of the week will
      hold too, so the projection is "this week's pace so far" (docs/usage.md, "Plan windows")."""
    if block.end - block.start <= ELAPSED_RATE_OVER:
        return burn_rate(tokens, cost_usd, block.first_ts, block.last_ts)
    return burn_rate(tokens, cost_usd, block.start, min(now, block.end))


def projection(tokens: int, cost_usd, rate: dict | None, end: datetime, now: datetime) -> dict | None:
    """What the active block reaches at its `end` if the burn `rate` holds from `now`:
    ``{"totalTokens", "totalCost", "remainingMinutes"}``; None without a rate."""
    if rate is None:
        return None
    remaining = max((end - now).total_seconds() / 60, 0.0)
    cost = (
        None
        if cost_usd is None or rate["costPerHour"] is None
        else float(cost_usd) + rate["costPerHour"] * remaining / 60
    )
    return {
        "totalTokens": round(tokens + rate["tokensPerMinute"] * remaining),
        "totalCost": cost,
        "remainingMinutes": round(remaining),
    }
