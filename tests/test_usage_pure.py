"""Pure parts of issue 19: period keys, ccusage's 5-hour block rule on synthetic timestamps, the
report's NULL rules, and the per-call facts the parsers now fill (no database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from agent_history.model.rows import ModelCallRow
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes
from agent_history.usage.periods import BLOCK_LENGTH, blocks, burn_rate, period_key
from agent_history.usage.report import Call, build_report

T = datetime(2026, 3, 7, 9, 41, 12, tzinfo=UTC)  # a Saturday


def at(**kw) -> datetime:
    return T + timedelta(**kw)


def test_period_keys_in_the_report_zone():
    late = datetime(2026, 3, 7, 23, 30, tzinfo=UTC)
    assert period_key("daily", late, UTC) == "2026-03-07"
    assert period_key("daily", late, ZoneInfo("Europe/Berlin")) == "2026-03-08"
    assert period_key("daily", late, ZoneInfo("America/Los_Angeles")) == "2026-03-07"
    assert period_key("weekly", late, UTC) == "2026-03-02"  # the Monday of that week
    assert period_key("weekly", late, ZoneInfo("Europe/Berlin")) == "2026-03-02"  # Sunday the 8th
    assert period_key("weekly", datetime(2026, 3, 9, 0, 0, tzinfo=UTC), UTC) == "2026-03-09"
    assert period_key("monthly", datetime(2026, 3, 31, 23, 0, tzinfo=UTC), ZoneInfo("Asia/Tokyo")) == "2026-04"
    with pytest.raises(ValueError):
        period_key("daily", datetime(2026, 3, 7), UTC)


def test_block_starts_at_the_hour_and_lasts_five_hours():
    times = [at(), at(hours=4, minutes=18, seconds=47)]  # 09:41:12 and 13:59:59: one block 09:00–14:00
    (b,) = blocks(times)
    assert (b.start, b.end) == (datetime(2026, 3, 7, 9, tzinfo=UTC), datetime(2026, 3, 7, 14, tzinfo=UTC))
    assert b.indexes == (0, 1) and b.last_ts == times[1]


def test_a_call_past_the_block_end_opens_a_new_block_without_a_gap():
    # 09:41 opens 09:00–14:00; 14:10 is 4h29m after the last call but past start + 5 h
    times = [at(), at(hours=4, minutes=29)]
    b1, b2 = blocks(times)
    assert not b1.is_gap and not b2.is_gap
    assert b2.start == datetime(2026, 3, 7, 14, tzinfo=UTC) and b2.indexes == (1,)


def test_exactly_five_hours_stays_in_the_block_and_more_opens_a_gap():
    start = datetime(2026, 3, 7, 9, tzinfo=UTC)
    edge = [start, start + BLOCK_LENGTH]  # 5 h after the start: not "more than 5 h"
    assert [b.indexes for b in blocks(edge)] == [(0, 1)]
    gap = [at(), at(hours=5, seconds=1)]
    b1, g, b2 = blocks(gap)
    assert g.is_gap and g.indexes == ()
    assert (g.start, g.end) == (at(hours=5), at(hours=5, seconds=1))  # last call + 5 h → next call
    assert b2.start == datetime(2026, 3, 7, 14, tzinfo=UTC)


def test_blocks_sort_calls_given_out_of_order():
    times = [at(hours=30), at(), at(minutes=5)]
    b1, g, b2 = blocks(times)
    assert b1.indexes == (1, 2) and b2.indexes == (0,) and g.is_gap


def test_active_block_and_burn_rate_against_an_injected_clock():
    (b,) = blocks([at(), at(minutes=30)])
    assert b.is_active(at(minutes=31))
    assert not b.is_active(at(hours=6))  # after the block's end
    assert not b.is_active(datetime(2026, 3, 7, 8, tzinfo=UTC))  # before it started
    rate = burn_rate(3000, Decimal("1.5"), at(), at(minutes=30))
    assert rate == {"tokensPerMinute": 100.0, "costPerHour": 3.0}
    assert burn_rate(3000, None, at(), at(minutes=30))["costPerHour"] is None
    assert burn_rate(3000, 1, at(), at()) is None


def call(ts, model="claude-sonnet-4-5", cost=Decimal("0.01"), **buckets) -> Call:
    b = {"input_uncached": 10, "cache_read": 100, "cache_write_5m": 5, "cache_write_1h": None, "output": 20}
    b.update(buckets)
    return Call(
        ts, "claude", "claude-local", "s1", "/p", model, **b, reasoning=None, cost_usd=cost, priced=cost is not None
    )


def test_report_rows_totals_and_null_rules():
    calls = [
        call(at()),
        call(at(minutes=1), model="mystery-1", cost=None),
        call(at(days=1), input_uncached=None, cache_read=None, cache_write_5m=None, output=None, cost=None),
    ]
    r = build_report("daily", calls, UTC, at(days=2))
    d1, d2 = r["daily"]
    assert d1["period"] == "2026-03-07"
    assert (d1["inputTokens"], d1["cacheCreationTokens"], d1["cacheReadTokens"], d1["totalTokens"]) == (
        20,
        10,
        200,
        270,
    )
    assert d1["totalCost"] is None and d1["unpricedModels"] == ["mystery-1"] and d1["pricedCost"] == 0.01
    costs = {m["modelName"]: m["cost"] for m in d1["modelBreakdowns"]}
    assert costs == {"claude-sonnet-4-5": 0.01, "mystery-1": None}
    # a day whose only call has unknown usage: every bucket NULL, cost unknown, not 0
    assert (d2["inputTokens"], d2["totalTokens"], d2["totalCost"], d2["callsWithUnknownUsage"]) == (None, None, None, 1)
    assert d2["unpricedModels"] == []
    assert r["totals"]["calls"] == 3 and r["totals"]["cacheCreation1hTokens"] is None
    blocks_report = build_report("blocks", calls, UTC, at(minutes=2))
    first = blocks_report["blocks"][0]
    assert first["isActive"] and first["entries"] == 2 and first["costUSD"] is None
    assert first["burnRate"] == {"tokensPerMinute": 270.0, "costPerHour": None}
    assert [b["isGap"] for b in blocks_report["blocks"]] == [False, True, False]


def _calls(agent: str, lines: list[dict]) -> list[ModelCallRow]:
    data = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    return [
        r
        for r in parse_bytes(parser_class(agent), ParseContext(path="/tmp/x.jsonl"), data)
        if isinstance(r, ModelCallRow)
    ]


def _claude(mid: str, usage: dict, stop, **extra) -> dict:
    return {
        "type": "assistant",
        "uuid": f"u-{mid}",
        "sessionId": "s-zero",
        "timestamp": "2026-03-07T09:41:12.000Z",
        "message": {
            "id": mid,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "stop_reason": stop,
            "usage": usage,
            "content": [{"type": "text", "text": "ok"}],
        },
        **extra,
    }


ZERO = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def test_claude_all_zero_usage_without_stop_reason_is_unknown():
    (c,) = _calls("claude", [_claude("m1", ZERO, None)])
    assert (c.input_uncached, c.cache_read, c.cache_write_5m, c.output) == (None, None, None, None)
    (k,) = _calls("claude", [_claude("m2", ZERO, "end_turn")])  # a stop reason: the zeros were measured
    assert (k.input_uncached, k.output) == (0, 0)
    # costUSD (older Claude Code, the ccusage fixtures) is the recorded cost
    (p,) = _calls("claude", [_claude("m3", {**ZERO, "output_tokens": 50}, None, costUSD=0.12)])
    assert p.recorded_cost_usd == 0.12 and p.output == 50


def _pi(eid: str, usage: dict, stop, ts="2025-11-20T23:33:54.572Z", created=1763681630793) -> dict:
    msg = {"role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": usage, "timestamp": created}
    if stop is not None:
        msg["stopReason"] = stop
    return {"type": "message", "id": eid, "parentId": None, "timestamp": ts, "message": msg}


def test_pi_recorded_cost_duration_and_zero_usage():
    header = {"type": "session", "version": 3, "id": "pi-s", "timestamp": "2025-11-20T23:33:50.000Z", "cwd": "/p"}
    # the real record of 2025-11-20 in corpus/home/.pi (d703a1a9…): cost.total 0.009189
    real = {
        "input": 3,
        "output": 191,
        "cacheRead": 0,
        "cacheWrite": 1684,
        "cost": {"input": 0.000009, "output": 0.002865, "cacheRead": 0, "cacheWrite": 0.006315, "total": 0.009189},
    }
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    a, b, c = _calls(
        "pi",
        [header, _pi("e1", real, "toolUse"), _pi("e2", zero, None), _pi("e3", real, "stop", created=1763682774572)],
    )
    assert (a.recorded_cost_usd, a.duration_ms, a.duration_basis) == (0.009189, 3779, "request_to_response")
    assert (b.input_uncached, b.cache_read, b.cache_write_5m, b.output) == (None, None, None, None)
    assert (c.duration_ms, c.duration_basis) == (None, None)  # message time after the entry's: no duration
    untimed = _pi("e4", real, "stop")
    del untimed["timestamp"]  # the entry time then falls back to message.timestamp: no span to measure
    (d,) = _calls("pi", [header, untimed])
    assert (d.duration_ms, d.recorded_cost_usd) == (None, 0.009189)


def test_by_loop_and_repo_group_calls_and_leave_the_rest_out():
    calls = [
        Call(
            at(),
            "claude",
            "claude-local",
            "root-1",
            "/r",
            "m",
            1,
            0,
            0,
            None,
            1,
            None,
            Decimal("0.5"),
            True,
            "loop-7",
            "repo-a",
        ),
        Call(
            at(hours=1),
            "claude",
            "claude-local",
            "lane-1",
            "/r",
            "m",
            2,
            0,
            0,
            None,
            2,
            None,
            Decimal("1"),
            True,
            "loop-7",
            "repo-a",
        ),
        Call(
            at(hours=2),
            "codex",
            "codex-local",
            "solo",
            "/s",
            "m",
            4,
            0,
            None,
            None,
            4,
            1,
            Decimal("2"),
            True,
            None,
            "repo-b",
        ),
    ]
    loops = build_report("loop", calls, UTC, at(days=1))
    assert [(r["period"], r["calls"], r["totalTokens"], r["totalCost"]) for r in loops["loop"]] == [
        ("loop-7", 2, 6, 1.5)
    ]
    assert loops["totals"]["calls"] == 2  # the call outside any loop is not in the loop report
    repos = build_report("repo", calls, UTC, at(days=1))["repo"]
    assert [(r["period"], r["calls"], r["reasoningTokens"], r["lastActivity"]) for r in repos] == [
        ("repo-a", 2, None, at(hours=1).isoformat()),
        ("repo-b", 1, 1, at(hours=2).isoformat()),
    ]


def test_ccusage_agent_and_metadata_fields_and_gap_blocks_count_zero():
    calls = [call(at()), call(at(hours=7))]
    day = build_report("daily", calls, UTC, at(days=1))["daily"][0]
    assert (day["agent"], day["metadata"]) == ("all", {"agents": ["claude"]})
    session = build_report("session", calls, UTC, at(days=1))["session"][0]
    assert (session["agent"], session["metadata"]) == ("claude", {"lastActivity": at(hours=7).isoformat()})
    _, gap, _ = build_report("blocks", calls, UTC, at(days=1))["blocks"]
    assert gap["isGap"] and (gap["totalTokens"], gap["costUSD"], gap["entries"]) == (0, 0.0, 0)
    assert gap["tokenCounts"]["cacheReadInputTokens"] == 0
