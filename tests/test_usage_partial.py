"""A token count outside its column's range is partial usage, not "not recorded" (issue 31): a
crafted Claude transcript indexed by the real loader, reported by the real CLI — the call whose
``output_tokens`` is 10^12 (stored NULL by `model.limits`, with a ``value_out_of_range`` issue)
makes its day's output and total lower bounds and is counted; a call whose transcript simply
has no cache-write field leaves the total whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.homes import cli, index

SESSION = "0a7c0de0-0000-4000-8000-000000000031"


def _call(n: int, ts: str, usage: dict, model: str = "claude-sonnet-4-5-20250929") -> dict:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/tmp/partial",
        "sessionId": SESSION,
        "version": "2.1.17",
        "gitBranch": "",
        "type": "assistant",
        "uuid": f"a-{n}",
        "timestamp": ts,
        "message": {
            "model": model,
            "id": f"msg_partial{n}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": f"reply {n}"}],
            "stop_reason": "end_turn",
            "usage": usage,
        },
    }


def _home(root: Path) -> Path:
    project = root / ".claude" / "projects" / "-tmp-partial"
    project.mkdir(parents=True)
    full = {"cache_creation_input_tokens": 0}
    lines = [
        # day 1: output out of range (10^12 > 10^9 tokens) beside a whole call
        _call(1, "2026-02-01T10:00:00.000Z", {"input_tokens": 100, "output_tokens": 10**12, "cache_read_input_tokens": 50, **full}),
        _call(2, "2026-02-01T10:05:00.000Z", {"input_tokens": 200, "output_tokens": 30, "cache_read_input_tokens": 0, **full}),
        # day 2: no cache-write field at all (not recorded), every count in range
        _call(3, "2026-02-02T09:00:00.000Z", {"input_tokens": 40, "output_tokens": 7, "cache_read_input_tokens": 3}),
        # day 3: a model no price list knows (a private proxy's name)
        _call(4, "2026-02-03T09:00:00.000Z", {"input_tokens": 5, "output_tokens": 5, **full}, model="acme-proxy-large"),
    ]  # fmt: skip
    (project / f"{SESSION}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root


def test_an_out_of_range_count_is_partial_usage_and_a_missing_one_is_not(db, cli_env, own_tmp):
    home = _home(own_tmp / "home-partial")
    assert index(db, home).files_failed == 0
    issues = json.loads(cli("issues", "--json", env=cli_env).stdout)
    text = json.dumps(issues)
    assert "value_out_of_range" in text and "model_call.output: 1000000000000" in text
    r = cli("usage", "daily", "--json", "--timezone", "UTC", env=cli_env)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    day1, day2, day3 = report["daily"]
    assert day1["period"] == "2026-02-01" and day1["calls"] == 2
    assert (day1["inputTokens"], day1["outputTokens"], day1["cacheReadTokens"], day1["totalTokens"]) == (
        300,
        30,
        50,
        380,
    )
    assert day1["outputTokensPartial"] and day1["totalTokensPartial"] and not day1["inputTokensPartial"]
    assert (day1["callsWithOutOfRangeTokens"], day1["callsWithUnknownUsage"]) == (1, 0)
    assert day1["totalCost"] is not None and day1["totalCostPartial"]
    assert day2["period"] == "2026-02-02" and day2["callsWithOutOfRangeTokens"] == 0
    assert day2["totalTokens"] == 50 and not day2["totalTokensPartial"] and not day2["totalCostPartial"]
    # one unpriced model does not blank the grand total: the priced sum (Sonnet 4.5 at $3 / $15 /
    # $0.30 per MTok: day 1 300·3 + 30·15 + 50·0.3, day 2 40·3 + 7·15 + 3·0.3 µ$) and the calls left out
    assert day3["totalCost"] is None and day3["unpricedCalls"] == 1 and day3["unpricedModels"] == ["acme-proxy-large"]
    t = report["totals"]
    assert t["totalCost"] is None and (t["unpriced_calls"], t["unpricedCalls"]) == (1, 1)
    assert t["cost_usd"] == pytest.approx((1365 + 225.9) / 1e6) == t["pricedCost"]
    table = cli("usage", "daily", "--timezone", "UTC", env={**cli_env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "≥380" in table.stdout and "≥30" in table.stdout
    total_row = next(line for line in table.stdout.splitlines() if line.startswith("total"))
    assert "≥$0.00" in total_row and "unpriced" not in total_row
    assert "1 call wrote a token count out of range (stored unknown" in table.stdout
    assert "1 call unpriced (cost unknown, never 0): acme-proxy-large; the priced calls cost $0.00" in table.stdout


def test_the_web_usage_cells_mark_the_same_day_as_a_lower_bound(db, own_tmp):
    """The web page's cells (`read.usage_cells`) count the out-of-range call as partial, as the
    CLI does, so the page shows ≥ and "1 with unknown token counts" rather than a whole total."""
    from agent_history.read.usage_cells import usage_cells
    from agent_history.web.usage import rollup

    assert index(db, _home(own_tmp / "home-partial")).files_failed == 0
    with db.connect() as conn:
        days = {t.key: t for t in rollup(usage_cells(conn), "day")}
    day1, day2 = days["2026-02-01"], days["2026-02-02"]
    assert (day1.calls, day1.tokens, day1.output_tokens, day1.partial_calls) == (2, 380, 30, 1)
    assert (day2.calls, day2.tokens, day2.partial_calls) == (1, 50, 0)


def test_unknown_cache_writes_make_the_total_and_the_cost_lower_bounds(db, cli_env, own_tmp):
    """One day, two calls: one records 1,000 cache-write tokens, the other no cache-write field.
    The cache creation is a lower bound (≥1,000), so the total tokens and the cost that add it are
    lower bounds too — the JSON's ``<field>Partial`` flags, ``≥`` in the table."""
    project = own_tmp / "home-writes" / ".claude" / "projects" / "-tmp-partial"
    project.mkdir(parents=True)
    lines = [
        _call(1, "2026-02-01T10:00:00.000Z", {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 0,
                                              "cache_creation_input_tokens": 1000}),
        _call(2, "2026-02-01T10:05:00.000Z", {"input_tokens": 40, "output_tokens": 7, "cache_read_input_tokens": 3}),
    ]  # fmt: skip
    (project / f"{SESSION}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert index(db, own_tmp / "home-writes").files_failed == 0
    r = cli("usage", "daily", "--json", "--timezone", "UTC", env=cli_env)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    (day,) = report["daily"]
    for row in (day, report["totals"]):
        assert (row["cacheCreationTokens"], row["cacheCreationTokensPartial"]) == (1000, True)
        assert (row["totalTokens"], row["totalTokensPartial"]) == (1160, True)
        # Sonnet 4.5 at $3 / $15 / $0.30 / $3.75 per MTok: 100·3 + 10·15 + 1000·3.75 + 40·3 + 7·15 + 3·0.3 µ$
        assert (row["totalCost"], row["totalCostPartial"]) == (pytest.approx(4425.9 / 1e6), True)
        assert (row["inputTokensPartial"], row["outputTokensPartial"], row["cacheReadTokensPartial"]) == (
            False,
            False,
            False,
        )
    blocks = json.loads(cli("usage", "blocks", "--json", "--now", "2026-02-01T11:00:00Z", env=cli_env).stdout)
    (block,) = blocks["blocks"]
    assert (block["totalTokens"], block["totalTokensPartial"]) == (1160, True)
    assert (block["costUSD"], block["costUSDPartial"]) == (pytest.approx(4425.9 / 1e6), True)
    table = cli("usage", "daily", "--timezone", "UTC", env={**cli_env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    day_row = next(line for line in table.stdout.splitlines() if line.startswith("2026-02-01"))
    total_row = next(line for line in table.stdout.splitlines() if line.startswith("total"))
    for line in (day_row, total_row):
        assert line.split()[1:7] == ["140", "17", "≥1,000", "3", "≥1,160", "≥$0.00"]
