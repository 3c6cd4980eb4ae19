"""Plan windows (issue 31): the 5-hour block and the 7-day week of each agent against its
``[plans]`` limits — a named plan's token limit is the highest past window (ccusage's
`--token-limit max`), explicit limits win, config mistakes are errors; exact figures on crafted
timestamps with the clock injected (no timed test)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from agent_history.usage.plans import PlanConfig, PlanError, parse_plans, plan_status, window_status
from agent_history.usage.report import Call

AGENTS = ("claude", "codex", "pi")
NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def call(ts: datetime, tokens: int, cost: str | None, agent: str = "claude") -> Call:
    return Call(
        ts, agent, f"{agent}-local", "s1", "/p", "m", tokens, None, None, None, 0, None,
        None if cost is None else Decimal(cost), cost is not None,
    )  # fmt: skip


def d(day: int, hour: int, minute: int = 0, month: int = 3) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


CALLS = [
    call(d(20, 12, month=2), 5000, "0.50"),  # a week of its own (more than 7 days before the next call)
    call(d(2, 9, 10), 1000, "0.10"),  # block 03-02 09:00-14:00: 4,000 tokens
    call(d(2, 10, 10), 3000, "0.30"),
    call(d(3, 8, 30), 6000, "0.60"),  # block 03-03 08:00-13:00: 6,000 tokens — the highest past block
    call(d(7, 10, 15), 1200, "0.30"),  # the active block 03-07 10:00-15:00
    call(d(7, 11, 15), 1800, "0.60"),
]


def test_a_named_plan_takes_the_highest_past_block_as_its_token_limit():
    s = window_status(CALLS, "block", NOW, PlanConfig("claude", "max20"))
    assert (s["active"], s["startTime"], s["endTime"], s["timeLeftMinutes"]) == (
        True,
        "2026-03-07T10:00:00Z",
        "2026-03-07T15:00:00Z",
        180,
    )
    assert (s["calls"], s["totalTokens"], s["costUSD"]) == (2, 3000, pytest.approx(0.90))
    # 3,000 tokens over the 60 minutes between the first and last call; $0.90 per hour
    assert s["burnRate"] == {"tokensPerMinute": 50.0, "costPerHour": pytest.approx(0.90)}
    assert s["projection"]["totalTokens"] == 12000 and s["projection"]["remainingMinutes"] == 180
    assert s["projection"]["totalCost"] == pytest.approx(3.60)
    assert s["limit"]["tokens"] == 6000 and s["limit"]["costUSD"] is None
    assert s["limit"]["tokensBasis"] == (
        "Claude Max 20× publishes no token limit: the highest past block of this agent (6,000 tokens; "
        "ccusage's `--token-limit max` rule)"
    )
    assert s["limit"]["costBasis"] == "Claude Max 20× publishes no cost limit"
    assert s["percentUsed"] == {"tokens": 50.0, "cost": None}
    assert s["projectedPercent"] == {"tokens": 200.0, "cost": None} and s["status"] == "exceeds"


def test_the_week_window_and_its_highest_past_week():
    s = window_status(CALLS, "week", NOW, PlanConfig("claude", "max20"))
    # 03-02 09:10 opens 03-02 09:00 → 03-09 09:00; the 02-20 call was a week of its own (5,000 tokens)
    assert (s["startTime"], s["endTime"], s["timeLeftMinutes"], s["lengthHours"]) == (
        "2026-03-02T09:00:00Z",
        "2026-03-09T09:00:00Z",
        2700,
        168.0,
    )
    assert (s["calls"], s["totalTokens"], s["costUSD"]) == (5, 13000, pytest.approx(1.90))
    # the week's rate is over its elapsed part, not first → last call: 13,000 tokens and $1.90 over
    # the 7,380 minutes from its start (03-02 09:00) to now (03-07 12:00); 2,700 minutes left
    assert s["burnRate"] == {"tokensPerMinute": pytest.approx(13000 / 7380), "costPerHour": pytest.approx(1.90 / 123)}
    assert s["projection"]["totalTokens"] == 17756  # 13,000 × (10,080 / 7,380): this week's pace so far
    assert s["projection"]["totalCost"] == pytest.approx(1.90 * 10080 / 7380)
    assert s["limit"]["tokens"] == 5000 and s["percentUsed"]["tokens"] == 260.0
    assert s["projectedPercent"]["tokens"] == pytest.approx(355.12) and s["status"] == "exceeds"


def test_a_stale_burst_no_longer_projects_a_heavy_week():
    """One burst of 70,000 tokens in ten minutes on the week's first morning, nothing since: the
    first → last call rule gave 7,000 tokens a minute and projected 40,390,000 tokens for the
    week; over the elapsed window it is 70,000 × 7 / 3 at 3 of 7 days."""
    burst = [call(d(2, 9, 0), 35000, "3.50"), call(d(2, 9, 10), 35000, "3.50")]
    s = window_status(burst, "week", d(5, 9, 0), PlanConfig("claude", "max20"))
    assert s["active"] and (s["startTime"], s["timeLeftMinutes"]) == ("2026-03-02T09:00:00Z", 5760)
    assert s["burnRate"] == {"tokensPerMinute": pytest.approx(70000 / 4320), "costPerHour": pytest.approx(7 / 72)}
    assert s["projection"] == {"totalTokens": 163333, "totalCost": pytest.approx(7 * 7 / 3), "remainingMinutes": 5760}
    # the 5-hour block keeps ccusage's rule: the burst's own span
    block = window_status(burst, "block", d(2, 9, 30), None)
    assert block["burnRate"] == {"tokensPerMinute": 7000.0, "costPerHour": pytest.approx(42.0)}


def test_explicit_limits_win_and_give_the_cost_share():
    config = parse_plans({"claude": {"plan": "max20", "block_tokens": 15000, "block_cost_usd": 4}}, AGENTS)["claude"]
    s = window_status(CALLS, "block", NOW, config)
    assert s["limit"] == {"tokens": 15000, "costUSD": 4, "tokensBasis": "configured", "costBasis": "configured"}
    assert s["percentUsed"] == {"tokens": 20.0, "cost": pytest.approx(22.5)}
    # projected 12,000 of 15,000 tokens (80 %: not above the warning share), $3.60 of $4 (90 %): a warning
    assert s["projectedPercent"]["tokens"] == 80.0 and s["projectedPercent"]["cost"] == pytest.approx(90.0)
    assert s["status"] == "warning"
    week = window_status(CALLS, "week", NOW, config)  # no explicit week limit: the plan's rule
    assert week["limit"]["tokens"] == 5000 and week["limit"]["costUSD"] is None


def test_no_active_window_and_no_past_window():
    s = window_status(CALLS, "block", d(7, 16, 0), PlanConfig("claude", "pro"))  # after 15:00
    assert not s["active"] and s["startTime"] is None and s["totalTokens"] == 0 and s["status"] is None
    first = window_status(CALLS[4:], "block", NOW, PlanConfig("claude", "pro"))
    assert first["limit"]["tokens"] is None and first["status"] is None
    assert first["limit"]["tokensBasis"] == (
        "Claude Pro publishes no token limit and no past block exists to take the highest of"
    )


def test_an_unpriced_call_makes_the_window_cost_unknown_never_zero():
    calls = [*CALLS[:4], call(d(7, 10, 15), 1200, None), CALLS[5]]
    s = window_status(calls, "block", NOW, None)
    assert s["costUSD"] is None and s["pricedCost"] == pytest.approx(0.60) and s["unpricedCalls"] == 1
    assert s["burnRate"]["costPerHour"] is None and s["projection"]["totalCost"] is None
    assert s["limit"]["tokensBasis"] == "no plan configured"


def test_plan_status_lists_configured_agents_and_agents_with_an_active_window():
    calls = [*CALLS, call(d(7, 11, 0), 700, "0.07", agent="codex"), call(d(1, 11, 0, month=1), 9, "0", agent="pi")]
    plans = parse_plans({"claude": "max5", "pi": {"week_tokens": 100}}, AGENTS)
    snap = plan_status(calls, NOW, plans)
    assert snap["now"] == "2026-03-07T12:00:00Z"
    assert [(a["agent"], a["plan"], a["planName"]) for a in snap["agents"]] == [
        ("claude", "max5", "Claude Max 5×"),
        ("codex", None, None),  # no plan, but an active block
        ("pi", None, None),  # limits only; its last call is months old: no active window
    ]
    pi = snap["agents"][2]
    assert not pi["week"]["active"] and pi["week"]["limit"]["tokens"] == 100
    assert snap["agents"][1]["block"]["totalTokens"] == 700
    only = plan_status(calls, NOW, plans, agents=("codex",))
    assert [a["agent"] for a in only["agents"]] == ["codex"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"claude": "max30"}, "config plans.claude: unknown plan 'max30' (known: pro, max5, max20, plus, chatgpt-pro"),
        ({"claude": {"block_tokens": -5}}, "config plans.claude.block_tokens must be a finite number > 0, not -5"),
        ({"claude": {"week_cost_usd": 0}}, "config plans.claude.week_cost_usd must be a finite number > 0, not 0"),
        ({"claude": {"block_tokens": 1.5}}, "config plans.claude.block_tokens must be a whole number of tokens"),
        ({"claude": {"block_tokens": True}}, "config plans.claude.block_tokens must be a whole number of tokens"),
        ({"claude": {"block_token": 5}}, "config plans.claude: unknown key 'block_token'"),
        ({"claude": {}}, "config plans.claude: names neither a plan nor a limit"),
        ({"claude": 20}, "config plans.claude must be a plan name or a table of limits, not 20"),
        ({"klaude": "pro"}, "config plans.klaude: unknown agent (known: claude, codex, pi)"),
    ],
)
def test_a_plan_config_mistake_is_an_error(table, message):
    with pytest.raises(PlanError) as err:
        parse_plans(table, AGENTS)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)
