"""Plan windows and plan limits — pure: config values and `Call`s in, a status dict out.

Windows (`WINDOWS`): the 5-hour block (ccusage's block rule, `usage.periods.blocks`) and the
week, the same rule with a 7-day length — a window starts at its first call floored to the UTC
hour, lasts 7 days, and the next call after its end (or more than 7 days after the previous
call) opens the next one. Anthropic states that Claude's weekly limits reset seven days after a
window opens but writes no window start into a transcript, so this is our estimate of it.

Limits, per agent (config ``[plans]``)::

    [plans]
    claude = "max20"                   # a named plan (`NAMED_PLANS`)
    [plans.codex]                      # or a table: explicit limits per window, with or without a plan
    plan = "pro"
    block_tokens = 2_000_000           # tokens per 5-hour block (input + output + cache writes + reads)
    block_cost_usd = 40.0              # list-price USD per 5-hour block
    week_tokens = 60_000_000
    week_cost_usd = 900.0

Anthropic (and OpenAI) publish no token or cost figures for Pro / Max / Plus plans, so a named
plan's token limit is ccusage's rule for ``ccusage blocks --token-limit max``: the highest
``totalTokens`` of a *past* window of that length (not a gap, not the active one), over every
call of the agent the catalogue holds (ccusage `src/commands/blocks.ts`, "Calculate max tokens
from ALL blocks before applying filters", and `parseTokenLimit`: ``max`` = that maximum, none when
it is 0). A named plan sets no cost limit. An explicit limit wins over the derived one. Every
limit carries its `basis` so the output says where the number came from. The status of a window
against its limit is ccusage's `tokenLimitStatus` rule: ``exceeds`` when the projection passes
the limit, ``warning`` above `WARNING_SHARE` of it, else ``ok``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from agent_history.usage.periods import BLOCK_LENGTH, blocks, projection, window_burn_rate
from agent_history.usage.report import Call

WINDOWS: dict[str, timedelta] = {"block": BLOCK_LENGTH, "week": timedelta(days=7)}
"""Plan window kinds and their lengths."""

NAMED_PLANS: dict[str, str] = {
    "pro": "Claude Pro",
    "max5": "Claude Max 5×",
    "max20": "Claude Max 20×",
    "plus": "ChatGPT Plus",
    "chatgpt-pro": "ChatGPT Pro",
}
"""Plan names a config may give → the plan they name. None of them has published limits."""

LIMIT_KEYS: dict[str, tuple[str, str]] = {
    "block_tokens": ("block", "tokens"),
    "block_cost_usd": ("block", "cost"),
    "week_tokens": ("week", "tokens"),
    "week_cost_usd": ("week", "cost"),
}
"""Explicit limit keys of a ``[plans.<agent>]`` table → (window, unit: tokens | cost in USD)."""

PLAN_KEYS = ("plan", *LIMIT_KEYS)
"""The keys a ``[plans.<agent>]`` table may hold."""

WARNING_SHARE = 0.8
"""ccusage's BLOCKS_WARNING_THRESHOLD: a projection above 80 % of the limit is a warning."""

HIGHEST_PAST = "the highest past {window} of this agent ({tokens:,} tokens; ccusage's `--token-limit max` rule)"


class PlanError(ValueError):
    """A ``[plans]`` config mistake, as one line: unknown plan or agent, a limit that is not a
    positive number, an unknown key."""


@dataclass(frozen=True, slots=True)
class PlanConfig:
    """One agent's plan: `plan` a key of `NAMED_PLANS` (None = limits only) and the explicit
    limits, ``{(window, "tokens" | "cost"): value}`` (tokens, USD)."""

    agent: str
    plan: str | None = None
    limits: dict[tuple[str, str], float | int] = field(default_factory=dict)


def _limit(agent: str, key: str, value) -> float | int:
    unit = LIMIT_KEYS[key][1]
    ok = not isinstance(value, bool) and (
        isinstance(value, int) if unit == "tokens" else isinstance(value, int | float)
    )
    if not ok:
        kind = "a whole number of tokens" if unit == "tokens" else "a number of USD"
        raise PlanError(f"config plans.{agent}.{key} must be {kind}, not {value!r}")
    if not (math.isfinite(value) and value > 0):  # 1e400 reads as inf, nan as nan: no limit either
        raise PlanError(f"config plans.{agent}.{key} must be a finite number > 0, not {value!r}")
    return value


def _plan_name(agent: str, value) -> str:
    if not isinstance(value, str) or value.lower() not in NAMED_PLANS:
        known = ", ".join(NAMED_PLANS)
        raise PlanError(f"config plans.{agent}: unknown plan {value!r} (known: {known}; or explicit limits)")
    return value.lower()


def parse_plans(table: dict, agents: Iterable[str]) -> dict[str, PlanConfig]:
    """The ``[plans]`` table of the config file → ``{agent: PlanConfig}``. `agents` are the
    harness names a key may be. Raises PlanError (one line) for an unknown agent, an unknown
    plan name, an unknown key, a limit that is not a positive number (tokens: an integer), or a
    table with neither a plan nor a limit."""
    known_agents = set(agents)
    out: dict[str, PlanConfig] = {}
    for agent, value in table.items():
        if agent not in known_agents:
            raise PlanError(f"config plans.{agent}: unknown agent (known: {', '.join(sorted(known_agents))})")
        if isinstance(value, str):
            out[agent] = PlanConfig(agent, _plan_name(agent, value))
            continue
        if not isinstance(value, dict):
            raise PlanError(f"config plans.{agent} must be a plan name or a table of limits, not {value!r}")
        unknown = [k for k in value if k not in PLAN_KEYS]
        if unknown:
            raise PlanError(f"config plans.{agent}: unknown key {unknown[0]!r} (known: {', '.join(PLAN_KEYS)})")
        if not value:
            raise PlanError(f"config plans.{agent}: names neither a plan nor a limit")
        plan = _plan_name(agent, value["plan"]) if "plan" in value else None
        limits = {LIMIT_KEYS[k]: _limit(agent, k, v) for k, v in value.items() if k in LIMIT_KEYS}
        out[agent] = PlanConfig(agent, plan, limits)
    return out


def _iso(ts: datetime | None) -> str | None:
    return None if ts is None else ts.isoformat().replace("+00:00", "Z")


def _tokens(c: Call) -> int:
    return sum(
        getattr(c, b) or 0 for b in ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output")
    )


def _limits(config: PlanConfig | None, window: str, highest: int | None) -> dict:
    """``{"tokens", "costUSD", "tokensBasis", "costBasis"}`` of `window` for an agent's `config`."""
    out: dict = {"tokens": None, "costUSD": None, "tokensBasis": None, "costBasis": None}
    if config is None:
        out["tokensBasis"] = out["costBasis"] = "no plan configured"
        return out
    for unit, key in (("tokens", "tokens"), ("cost", "costUSD")):
        value = config.limits.get((window, unit))
        if value is not None:
            out[key] = value
            out[f"{unit}Basis"] = "configured"
    name = NAMED_PLANS.get(config.plan or "")
    if out["tokens"] is None:
        if name is None:
            out["tokensBasis"] = "no limit configured"
        elif highest:
            out["tokens"] = highest
            out["tokensBasis"] = f"{name} publishes no token limit: " + HIGHEST_PAST.format(
                window=window, tokens=highest
            )
        else:
            out["tokensBasis"] = f"{name} publishes no token limit and no past {window} exists to take the highest of"
    if out["costUSD"] is None:
        out["costBasis"] = "no limit configured" if name is None else f"{name} publishes no cost limit"
    return out


def _share(value: float | int | None, limit: float | int | None) -> float | None:
    return None if value is None or not limit else float(value) / float(limit) * 100


def window_status(calls: Sequence[Call], window: str, now: datetime, config: PlanConfig | None) -> dict:
    """The status of one agent's `window` (a key of `WINDOWS`) at aware `now` over its `calls`
    (one `Call` per model call, any order; calls without a time are left out)::

        {"window", "lengthHours", "active": bool, "startTime", "endTime" (ISO, None when no window
         is active), "timeLeftMinutes", "calls", "totalTokens", "totalTokensPartial", "costUSD"
         (None when a call with known usage is unpriced), "pricedCost", "unpricedCalls",
         "burnRate" {tokensPerMinute, costPerHour} | None, "projection" {totalTokens, totalCost,
         remainingMinutes} | None, "limit" {tokens, costUSD, tokensBasis, costBasis},
         "percentUsed" {tokens, cost} (% of the limit now), "projectedPercent" {tokens, cost},
         "status": "ok" | "warning" | "exceeds" | None (no limit)}

    Burn rate and projection are ccusage's for the block; the week's rate is over its elapsed part
    (`usage.periods.window_burn_rate`). Raises ValueError for an unknown
    window or a pre-aggregated `Call` (n ≠ 1)."""
    if window not in WINDOWS:
        raise ValueError(f"unknown plan window {window!r} ({', '.join(WINDOWS)})")
    timed = [c for c in calls if c.ts is not None]
    if any(c.n != 1 for c in timed):
        raise ValueError("plan windows need one Call per model call, not pre-aggregated groups")
    found = blocks([c.ts for c in timed], WINDOWS[window])
    past = [sum(_tokens(timed[i]) for i in b.indexes) for b in found if not b.is_gap and not b.is_active(now)]
    active = next((b for b in found if b.is_active(now)), None)
    limit = _limits(config, window, max(past) if past else None)
    out: dict = {
        "window": window,
        "lengthHours": WINDOWS[window] / timedelta(hours=1),
        "active": active is not None,
        "startTime": None,
        "endTime": None,
        "timeLeftMinutes": None,
        "calls": 0,
        "totalTokens": 0,
        "totalTokensPartial": False,
        "costUSD": 0.0,
        "pricedCost": None,
        "unpricedCalls": 0,
        "burnRate": None,
        "projection": None,
        "limit": limit,
        "percentUsed": {"tokens": None, "cost": None},
        "projectedPercent": {"tokens": None, "cost": None},
        "status": None,
    }
    if active is None:
        return out
    members = [timed[i] for i in active.indexes]
    tokens = sum(_tokens(c) for c in members)
    priced = [c.cost_usd for c in members if c.cost_usd is not None]
    unpriced = sum(c.unpriced_calls for c in members)
    cost = None if unpriced else float(sum(priced, Decimal(0)))
    rate = window_burn_rate(tokens, cost, active, now)
    proj = projection(tokens, cost, rate, active.end, now)
    out.update(
        startTime=_iso(active.start),
        endTime=_iso(active.end),
        timeLeftMinutes=round(max((active.end - now).total_seconds(), 0) / 60),
        calls=len(members),
        totalTokens=tokens,
        totalTokensPartial=any(not c.usage_known for c in members),
        costUSD=cost,
        pricedCost=float(sum(priced, Decimal(0))) if priced else None,
        unpricedCalls=unpriced,
        burnRate=rate,
        projection=proj,
    )
    out["percentUsed"] = {"tokens": _share(tokens, limit["tokens"]), "cost": _share(cost, limit["costUSD"])}
    projected_tokens = proj["totalTokens"] if proj else tokens
    projected_cost = proj["totalCost"] if proj else cost
    out["projectedPercent"] = {
        "tokens": _share(projected_tokens, limit["tokens"]),
        "cost": _share(projected_cost, limit["costUSD"]),
    }
    shares = [s for s in out["projectedPercent"].values() if s is not None]
    if shares:
        top = max(shares)
        out["status"] = "exceeds" if top > 100 else "warning" if top > WARNING_SHARE * 100 else "ok"
    return out


def plan_status(calls: Sequence[Call], now: datetime, plans: dict[str, PlanConfig], agents: Iterable[str] = ()) -> dict:
    """The plan snapshot at aware `now` (`usage blocks --live --json`, the web usage page)::

        {"now": ISO, "agents": [{"agent", "plan" (a `NAMED_PLANS` key or None), "planName",
                                 "block": window_status, "week": window_status}, …]}

    One entry per agent of `agents` (when given), else per agent with a configured plan or an
    active window at `now`, by name. `calls` are one `Call` per model call over every time (the
    named plans' limits look at every past window)."""
    by_agent: dict[str, list[Call]] = {}
    for c in calls:
        by_agent.setdefault(c.agent, []).append(c)
    rows = []
    wanted = sorted(set(agents)) if agents else sorted(set(plans) | set(by_agent))
    for agent in wanted:
        config = plans.get(agent)
        windows = {w: window_status(by_agent.get(agent, []), w, now, config) for w in WINDOWS}
        if not agents and config is None and not any(s["active"] for s in windows.values()):
            continue
        rows.append(
            {
                "agent": agent,
                "plan": config.plan if config else None,
                "planName": NAMED_PLANS.get(config.plan or "") if config else None,
                **windows,
            }
        )
    return {"now": _iso(now), "agents": rows}
