"""Usage reports in ccusage's JSON shape — pure aggregation of per-call facts, no database.

`build_report(view, calls, tz, now)` groups `Call`s by period (daily/weekly/monthly), session,
loop, repo or billing block and returns ``{<view key>: [rows], "totals": {...}}`` with
ccusage 20.0.24's field names (`period`, `inputTokens` = uncached input, `outputTokens`,
`cacheCreationTokens` = 5m + 1h writes, `cacheReadTokens`, `totalTokens`, `totalCost`,
`modelsUsed`, `modelBreakdowns[{modelName, inputTokens, …, cost}]`) and our own fields beside
them (and ccusage 20's `agent` / `metadata`): `reasoningTokens` (⊂ output), `cacheCreation5mTokens`/`cacheCreation1hTokens`,
`agents`, `namespaces`, `calls`, `callsWithUnknownUsage`, `unpricedModels`, `pricedCost`,
`recordedCost` (the sum of the costs the harness itself recorded — pi does — None when none did).

NULL rules (docs/design.md §5): a token field is None when no call of the row knows that bucket (a gap
block, which has no calls, counts 0 tokens and $0 as ccusage prints it); a
cost is None when any call of the row with known usage has no list price — `unpricedModels`
names those models, `unpricedCalls` counts those calls and `pricedCost` holds the sum over the
priced calls (a lower bound). The grand total is never blanked by one unpriced model:
``totals.cost_usd`` is the priced sum and ``totals.unpriced_calls`` the calls left out.
A token field summed over known counts while some call's count is unknown is flagged
`<field>Partial` (`PARTIAL_FIELDS`; a lower bound, `≥N` in the CLI's table). A count the
transcript wrote but outside its column's range (stored NULL, `model.limits`) is usage that
happened: `callsWithOutOfRangeTokens` counts those calls and their total is flagged partial too.
A sum that adds a lower bound is one: `totalTokensPartial` and `totalCostPartial` (a block's
`costUSDPartial`) are also true when any bucket they add up (`TOTAL_PARTS`: input, output, cache
creation, cache read) is flagged — e.g. cache writes unknown for some calls (Codex records none).
Costs are USD floats (list prices); tokens are integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from decimal import Decimal

from agent_history.usage.periods import BLOCK_LENGTH, Block, blocks, period_key, projection, window_burn_rate

BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning")

VIEW_KEY = {
    "daily": "daily",
    "weekly": "weekly",
    "monthly": "monthly",
    "session": "session",  # ccusage 20.0.24 `session --json` prints a "session" array
    "blocks": "blocks",
    "loop": "loop",
    "repo": "repo",
    "project": "project",
    "branch": "branch",
    "host": "host",
    "model": "model",
    "agent": "agent",
}
"""Top-level JSON key of each view's row array."""

ATTRIBUTION: dict[str, str | None] = {
    "project": "project",
    "branch": "branch",
    "host": "host",
    "model": "model",
    "agent": "agent",
}
"""Attribution views (`usage --by KEY`) → the `Call` field grouped on: the root session's working
directory, the session's git branch (its transcript's git context), the model as written, the
harness. ``host``: the session's ``origin_host`` (migration 0024); calls indexed before hosts
were recorded are in the ``(unknown)`` row and the report says why (`HOST_UNKNOWN`)."""
UNKNOWN_KEY = "(unknown)"
"""The row of an attribution view holding the calls whose key is not recorded."""
HOST_UNKNOWN = (
    "calls of sessions indexed before the catalogue recorded origin hosts (the next index pass on their machine "
    "names them)"
)


@dataclass(frozen=True, slots=True)
class Call:
    """One model call as the report sees it. Token counts None = unknown; `cost_usd` None =
    unpriced (or unknown usage); `priced` says whether a list price was found for the model."""

    ts: datetime | None
    agent: str
    namespace: str | None
    session_uid: str
    project: str | None
    model: str | None
    input_uncached: int | None
    cache_read: int | None
    cache_write_5m: int | None
    cache_write_1h: int | None
    output: int | None
    reasoning: int | None
    cost_usd: Decimal | None
    priced: bool
    loop_id: str | None = None
    repo: str | None = None
    recorded_cost_usd: Decimal | float | None = None
    """The cost the harness itself recorded for the call (pi), USD; None when it records none."""
    n: int = 1
    """How many calls this row stands for: 1, or a pre-aggregated group (`read.usage` sums the
    calls of one session, model, loop and repo within one 15-minute UTC bucket — every zone's
    offset is a multiple of 15 minutes, so a bucket never straddles a local day)."""
    known: int | None = None
    """Of the `n` calls, how many have any known bucket (None: derive it from the buckets)."""
    unpriced: int | None = None
    """Of the `n` calls, how many have known usage but no cost (None: derive it)."""
    last_ts: datetime | None = None
    """The latest call time of a group (None: `ts`)."""
    unknown_in: tuple[bool, ...] | None = None
    """Of a group: per field of `PARTIAL_FIELDS`, whether any of its `n` calls has that count
    unknown (None: derive it from the buckets, for a single call)."""
    branch: str | None = None
    """The git branch of the call's session (None = not recorded)."""
    out_of_range: int = 0
    """Of the `n` calls, how many had a token count the transcript wrote but outside the column's
    range (`model.limits`: stored NULL with a ``value_out_of_range`` parse issue at the call's
    record) — usage that happened but is unknown, unlike a bucket the harness never records."""

    ttft_ms: int | None = None
    """Sum of the recorded times to first token of the `n` calls, ms (None: none recorded)."""
    ttft_calls: int = 0
    """How many of the `n` calls record a time to first token."""
    ttft_max_ms: int | None = None
    thinking_ms: int | None = None
    """Sum of the recorded thinking times of the `n` calls, ms (None: none recorded)."""
    thinking_calls: int = 0
    host: str | None = None
    """The machine that indexed the call's session (``session.origin_host``; None = unknown)."""

    def unknown(self, i: int) -> bool:
        """Whether the count of `PARTIAL_FIELDS[i]` is unknown for any call this row stands for."""
        if self.unknown_in is not None:
            return bool(self.unknown_in[i])
        iu, cr, w5, w1, out, rs = (getattr(self, b) for b in BUCKETS)
        total_unknown = not self.usage_known or self.out_of_range > 0
        return (iu is None, out is None, w5 is None and w1 is None, cr is None, total_unknown, rs is None)[i]

    @property
    def usage_known(self) -> bool:
        """Whether any token bucket of the call is known."""
        return any(getattr(self, b) is not None for b in BUCKETS[:5])

    @property
    def known_calls(self) -> int:
        """Calls of this row with any known bucket."""
        return self.known if self.known is not None else (self.n if self.usage_known else 0)

    @property
    def unpriced_calls(self) -> int:
        """Calls of this row with known usage and no list-price cost."""
        if self.unpriced is not None:
            return self.unpriced
        return self.n if self.usage_known and self.cost_usd is None else 0


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _add(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


PARTIAL_FIELDS = (
    "inputTokens",
    "outputTokens",
    "cacheCreationTokens",
    "cacheReadTokens",
    "totalTokens",
    "reasoningTokens",
)
"""Token fields that get a ``<field>Partial`` flag: true when the field is a sum over known counts
while some call of the row has that count unknown (a lower bound, never shown as the whole); a
field whose every count is unknown is None instead (and its flag false). A call's cache creation
is unknown when both writes are, its total when all five buckets are (`Call.usage_known`)."""


TOTAL_PARTS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
"""The fields `totalTokens` (and the cost) adds up: when one is a lower bound, so is the total."""


def _tokens(calls: Sequence[Call]) -> dict:
    s = {b: _sum(getattr(c, b) for c in calls) for b in BUCKETS}
    out = _token_sums(s)
    for i, f in enumerate(PARTIAL_FIELDS):
        out[f + "Partial"] = out[f] is not None and any(c.unknown(i) for c in calls)
    out["totalTokensPartial"] = out["totalTokens"] is not None and (out["totalTokensPartial"] or _parts_partial(out))
    return out


def _parts_partial(tokens: dict) -> bool:
    """Whether any field of `TOTAL_PARTS` of a `_tokens` result is a lower bound."""
    return any(tokens[f + "Partial"] for f in TOTAL_PARTS)


def _token_sums(s: dict) -> dict:
    return {
        "inputTokens": s["input_uncached"],
        "outputTokens": s["output"],
        "cacheCreationTokens": _add(s["cache_write_5m"], s["cache_write_1h"]),
        "cacheReadTokens": s["cache_read"],
        "totalTokens": _add(
            s["input_uncached"], s["output"], s["cache_write_5m"], s["cache_write_1h"], s["cache_read"]
        ),
        "reasoningTokens": s["reasoning"],
        "cacheCreation5mTokens": s["cache_write_5m"],
        "cacheCreation1hTokens": s["cache_write_1h"],
    }


def _cost(calls: Sequence[Call]) -> tuple[float | None, float | None, list[str]]:
    """(cost or None if any known-usage call is unpriced, cost of the priced calls, unpriced models)."""
    unpriced = sorted({c.model or "(unknown model)" for c in calls if c.unpriced_calls})
    priced = [c.cost_usd for c in calls if c.cost_usd is not None]
    priced_sum = float(sum(priced, Decimal(0))) if priced else None
    return (None if unpriced else priced_sum), priced_sum, unpriced


def _recorded(calls: Sequence[Call]) -> float | None:
    """Sum of the harness-recorded costs (None when no call has one)."""
    known = [Decimal(str(c.recorded_cost_usd)) for c in calls if c.recorded_cost_usd is not None]
    return float(sum(known, Decimal(0))) if known else None


def _timings(calls: Sequence[Call]) -> dict:
    """``timeToFirstTokenMs`` {calls, meanMs, maxMs} and ``thinkingMs`` {calls, totalMs} over the
    calls that record them (Kimi, VS Code Copilot; `harnesses` capability rows), None when none does."""
    n_ttft = sum(c.ttft_calls for c in calls)
    n_think = sum(c.thinking_calls for c in calls)
    ttft = None
    if n_ttft:
        total = sum(c.ttft_ms or 0 for c in calls)
        ttft = {"calls": n_ttft, "meanMs": total / n_ttft, "maxMs": max(c.ttft_max_ms or 0 for c in calls)}
    think = None if not n_think else {"calls": n_think, "totalMs": sum(c.thinking_ms or 0 for c in calls)}
    return {"timeToFirstTokenMs": ttft, "thinkingMs": think}


def _row(calls: Sequence[Call], breakdown: bool = True) -> dict:
    cost, priced_cost, unpriced = _cost(calls)
    models = sorted({c.model for c in calls if c.model})
    tokens = _tokens(calls)
    row = {
        **tokens,
        "totalCost": cost,
        # priced on the known counts: a lower bound when a call's count was out of range or a
        # bucket is unknown for some call (cache writes unknown: their price is missing)
        "totalCostPartial": cost is not None and (any(c.out_of_range for c in calls) or _parts_partial(tokens)),
        "modelsUsed": models,
        "calls": sum(c.n for c in calls),
        "callsWithUnknownUsage": sum(c.n - c.known_calls for c in calls),
        "callsWithOutOfRangeTokens": sum(c.out_of_range for c in calls),
        "unpricedModels": unpriced,
        "unpricedCalls": sum(c.unpriced_calls for c in calls),
        "pricedCost": priced_cost,
        "recordedCost": _recorded(calls),
        "agents": sorted({c.agent for c in calls}),
        "namespaces": sorted({c.namespace for c in calls if c.namespace}),
        **_timings(calls),
    }
    if breakdown:
        by_model: dict[str | None, list[Call]] = {}
        for c in calls:
            by_model.setdefault(c.model, []).append(c)
        row["modelBreakdowns"] = [
            {
                "modelName": m,
                **{k: v for k, v in _tokens(cs).items() if k not in ("totalTokens", "totalTokensPartial")},
                "cost": _cost(cs)[0],
            }
            for m, cs in sorted(by_model.items(), key=lambda kv: kv[0] or "")
        ]
    return row


def _group(calls: Sequence[Call], key) -> dict[str, list[Call]]:
    groups: dict[str, list[Call]] = {}
    for c in calls:
        k = key(c)
        if k is not None:
            groups.setdefault(k, []).append(c)
    return groups


def _block_row(block: Block, calls: Sequence[Call], now: datetime) -> dict:
    members = [calls[i] for i in block.indexes]
    t = _tokens(members)
    cost, priced_cost, unpriced = _cost(members)
    if block.is_gap:  # no calls at all: nothing was spent (known zeros, as ccusage prints them)
        t = {k: False if k.endswith("Partial") else 0 for k in t}
        cost = 0.0
    active = block.is_active(now)
    total = t["totalTokens"] or 0
    rate = None if block.is_gap or not active else window_burn_rate(total, cost, block, now)
    start = block.start.isoformat().replace("+00:00", "Z")
    return {
        "id": f"gap-{start}" if block.is_gap else start,
        "startTime": start,
        "endTime": block.end.isoformat().replace("+00:00", "Z"),
        "actualEndTime": block.last_ts.isoformat().replace("+00:00", "Z") if block.last_ts else None,
        "isActive": active,
        "isGap": block.is_gap,
        "entries": len(members),
        "tokenCounts": {
            "inputTokens": t["inputTokens"],
            "outputTokens": t["outputTokens"],
            "cacheCreationInputTokens": t["cacheCreationTokens"],
            "cacheReadInputTokens": t["cacheReadTokens"],
        },
        "totalTokens": t["totalTokens"],
        "totalTokensPartial": t["totalTokensPartial"],
        "costUSD": cost,
        "costUSDPartial": cost is not None and (any(c.out_of_range for c in members) or _parts_partial(t)),
        "models": sorted({c.model for c in members if c.model}),
        "burnRate": rate,
        "projection": projection(total, cost, rate, block.end, now) if active else None,
        "reasoningTokens": t["reasoningTokens"],
        "unpricedModels": unpriced,
        "pricedCost": priced_cost,
        "agents": sorted({c.agent for c in members}),
        "namespaces": sorted({c.namespace for c in members if c.namespace}),
    }


def build_report(
    view: str,
    calls: Sequence[Call],
    tz: tzinfo,
    now: datetime,
    breakdown: bool = True,
    block_length: timedelta = BLOCK_LENGTH,
) -> dict:
    """The report of `view` (`daily` | `weekly` | `monthly` | `session` | `blocks` | `loop` |
    `repo`, or an attribution view of `ATTRIBUTION`: `project` | `branch` | `host` | `model` |
    `agent`) over `calls`, periods in zone `tz`, the active block judged at aware `now`.

    Returns ``{VIEW_KEY[view]: [row, …], "totals": {…}}``; rows oldest period first (sessions
    and loops by last activity, repos by name). Calls without a timestamp are left out of the
    period and block views (and counted in ``totals.callsWithoutTime``). Raises ValueError for
    an unknown view. `block_length` sets the blocks' length (5 h; a week for the plan windows of
    `usage blocks --window week`)."""
    if view not in VIEW_KEY:
        raise ValueError(f"unknown usage view {view!r}")
    rows: list[dict] = []
    timed = [c for c in calls if c.ts is not None]
    if view == "blocks":
        if any(c.n != 1 for c in timed):
            raise ValueError("blocks need one Call per model call, not pre-aggregated groups")
        rows = [_block_row(b, timed, now) for b in blocks([c.ts for c in timed], block_length)]
        totals_calls = timed
    else:
        if view in ("daily", "weekly", "monthly"):
            groups = _group(timed, lambda c: period_key(view, c.ts, tz))
            order = sorted(groups)
            totals_calls = timed
        else:
            if view in ATTRIBUTION:
                field = ATTRIBUTION[view]
                groups = _group(calls, lambda c: (getattr(c, field) if field else None) or UNKNOWN_KEY)
            else:
                attr = {"session": "session_uid", "loop": "loop_id", "repo": "repo"}[view]
                groups = _group(calls, lambda c: getattr(c, attr))
            totals_calls = [c for cs in groups.values() for c in cs]

            def last(k):
                ts = [c.last_ts or c.ts for c in groups[k] if c.ts is not None]
                return (max(ts).isoformat() if ts else "", k)

            if view in ATTRIBUTION:  # the largest priced cost first
                order = sorted(groups, key=lambda k: (-(_cost(groups[k])[1] or 0.0), k))
            else:
                order = sorted(groups) if view == "repo" else sorted(groups, key=last)
        for k in order:
            row = {"period": k, **_row(groups[k], breakdown)}
            ts = [c.last_ts or c.ts for c in groups[k] if c.ts is not None]
            # ccusage 20's `agent` ("all" for a period, the harness for a session) and `metadata`
            single = row["agents"][0] if len(row["agents"]) == 1 else "all"
            if view in ("session", "loop", "repo", *ATTRIBUTION):
                row["lastActivity"] = max(ts).isoformat() if ts else None
                row["projects"] = sorted({c.project for c in groups[k] if c.project})
                row["agent"] = single
                row["metadata"] = {"lastActivity": row["lastActivity"]}
            else:
                row["agent"] = "all"
                row["metadata"] = {"agents": row["agents"]}
            rows.append(row)
    totals = _row(totals_calls, breakdown=False)
    totals["callsWithoutTime"] = sum(c.n for c in calls if c.ts is None)
    # the grand total one unpriced model cannot blank: the priced calls' sum (None only when no
    # call is priced) beside how many calls have no price — never a made-up 0
    totals["cost_usd"] = totals["pricedCost"]
    totals["unpriced_calls"] = totals["unpricedCalls"]
    out = {VIEW_KEY[view]: rows, "totals": totals}
    if view == "host" and any(r["period"] == UNKNOWN_KEY for r in rows):
        out["hostUnknown"] = HOST_UNKNOWN
    return out
