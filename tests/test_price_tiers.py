"""Spec for the tier rules of the list prices loaded from genai-prices (`usage.prices`,
`db.prices`, sql/20_pricing.sql), each checked against genai-prices' own ``calc_price`` for the
same usage, model and time:

- Anthropic long context: a call whose input (uncached + cache read + cache writes) exceeds
  200,000 tokens is charged the tier's rates for the whole call; at exactly 200,000 the base rates.
- Gemini's >200K tier (the same cliff rule on Gemini 2.5 Pro, no cache-write price).
- Cache rates: reads, 5-minute and 1-hour writes at their own rates.
- An effective-date change between two calls of one model on one (local) day: each call is priced
  at its own UTC day's row, and the per-slot sums of `usage` keep each call's price.

Rows are inserted directly with SQL into one fresh migrated database (`db` fixture), whose price
table was loaded from the installed genai-prices by `db upgrade`."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from genai_prices import Usage, calc_price

from agent_history.db.prices import resolve_models
from agent_history.read.usage import price_list, usage_calls
from agent_history.usage.report import build_report

SONNET_45 = "claude-sonnet-4-5-20250929"
AT = datetime(2025, 10, 20, 12, 0, tzinfo=UTC)


def cost(conn, model, at, iu, cr, w5, w1, out) -> Decimal | None:
    resolve_models(conn, [model])
    return conn.execute(
        "SELECT ah.call_cost_usd(%s, %s, %s, %s, %s, %s, %s)", (model, at, iu, cr, w5, w1, out)
    ).fetchone()[0]


def library(model, at, iu, cr, w5, w1, out) -> Decimal:
    """genai-prices' price of the same call (its usage counts all input in ``input_tokens``)."""
    usage = Usage(
        input_tokens=iu + cr + w5 + w1,
        cache_read_tokens=cr,
        cache_write_tokens=w5 + w1,
        cache_write_1h_tokens=w1,
        output_tokens=out,
    )
    return calc_price(usage, model, genai_request_timestamp=at).total_price


@pytest.fixture
def conn(db):
    with db.connect(autocommit=True) as c:
        yield c


@pytest.mark.parametrize(
    ("iu", "cr", "w5", "w1", "out", "tier"),
    [
        (3, 150_000, 49_997, 0, 1000, False),  # exactly 200,000 input: base rates
        (3, 150_000, 49_997, 1, 1000, True),  # one more (a 1h write): the tier for every bucket
        (200_001, 0, 0, 0, 0, True),
        (10, 0, 0, 0, 500_000, False),  # output never counts towards the threshold
    ],
)
def test_anthropic_long_context_prices_the_whole_call_as_genai_prices_does(conn, iu, cr, w5, w1, out, tier):
    got = cost(conn, SONNET_45, AT, iu, cr, w5, w1, out)
    assert got == library(SONNET_45, AT, iu, cr, w5, w1, out)
    # $3 input / $15 output below the tier, $6 / $22.50 above it
    assert (
        got >= Decimal(iu) * (6 if tier else 3) / 1_000_000 + Decimal(out) * Decimal("22.5" if tier else 15) / 1_000_000
    )


def test_gemini_over_200k_tier_as_genai_prices_does(conn):
    model, at = "gemini-2.5-pro", datetime(2025, 11, 3, 9, 0, tzinfo=UTC)
    below = cost(conn, model, at, 150_000, 50_000, 0, 0, 2_000)
    above = cost(conn, model, at, 150_001, 50_000, 0, 0, 2_000)
    assert below == library(model, at, 150_000, 50_000, 0, 0, 2_000)
    assert above == library(model, at, 150_001, 50_000, 0, 0, 2_000)
    # 1.25 / 0.125 / 10 below, 2.50 / 0.25 / 15 above
    assert below == Decimal("0.21375") and above == Decimal("0.4175025")


def test_cache_read_and_write_rates_as_genai_prices_does(conn):
    # E11 on Sonnet 4.5: read ×0.1, 5-minute write ×1.25, 1-hour write ×2 of the $3 input
    got = cost(conn, SONNET_45, AT, 5, 20_000, 1_000, 2_000, 400)
    assert got == library(SONNET_45, AT, 5, 20_000, 1_000, 2_000, 400) == Decimal("0.027765")
    haiku = cost(conn, "claude-haiku-4-5-20251001", AT, 0, 250_000, 0, 0, 0)
    assert haiku == library("claude-haiku-4-5-20251001", AT, 0, 250_000, 0, 0, 0) == Decimal("0.025")


def test_an_effective_date_change_between_two_calls_on_one_local_day(conn):
    # genai-prices: Opus 4.6 has a 200K tier until 2026-03-12 and none from 2026-03-13 (UTC days).
    # 2026-03-12 in Los Angeles runs to 07:00 UTC on the 13th: one local day, two price rows.
    la = ZoneInfo("America/Los_Angeles")
    model = "claude-opus-4-6"
    first = datetime(2026, 3, 12, 10, 0, tzinfo=la)  # 17:00 UTC on the 12th
    second = datetime(2026, 3, 12, 20, 0, tzinfo=la)  # 03:00 UTC on the 13th
    old = cost(conn, model, first, 300_000, 0, 0, 0, 1_000)
    new = cost(conn, model, second, 300_000, 0, 0, 0, 1_000)
    assert old == library(model, first, 300_000, 0, 0, 0, 1_000) == Decimal("3.0375")  # 300K × $10 + 1K × $37.50
    assert new == library(model, second, 300_000, 0, 0, 0, 1_000) == Decimal("1.525")  # 300K × $5 + 1K × $25
    rows = [(p["effective_from"], p["long_context_threshold"]) for p in price_list(conn, every=True)["prices"]
            if p["price_key"] == "anthropic/claude-opus-4-6"]  # fmt: skip
    assert rows == [("2026-03-13", None), (None, 200000)] or rows == [(None, 200000), ("2026-03-13", None)]

    src = conn.execute(
        "INSERT INTO ah.source_file (path, namespace, agent) VALUES ('/h/s.jsonl', 'claude-local', 'claude') "
        "RETURNING id"
    ).fetchone()[0]
    sid = conn.execute(
        "INSERT INTO ah.session (agent, session_uid, agent_id, namespace, started_at) "
        "VALUES ('claude', 'S', '', 'claude-local', %s) RETURNING id",
        (first,),
    ).fetchone()[0]
    for uid, ts in (("c1", first), ("c2", second)):
        conn.execute(
            "INSERT INTO ah.model_call (agent, session_id, source_id, call_uid, model, ts, input_uncached, output) "
            "VALUES ('claude', %s, %s, %s, %s, %s, 300000, 1000)",
            (sid, src, uid, model, ts),
        )
    days = build_report("daily", usage_calls(conn, grouped=True), la, second)["daily"]
    assert [(d["period"], d["totalCost"]) for d in days] == [("2026-03-12", 4.5625)]
    conn.execute("SELECT ah.refresh_sessions(%s::bigint[])", ([sid],))
    assert conn.execute("SELECT cost_usd FROM ah.session WHERE id = %s", (sid,)).fetchone()[0] == Decimal("4.5625")


def test_per_slot_sums_keep_the_per_call_tier_decision(conn):
    # two calls in one 15-minute slot: 150,000 and 250,000 input. Summed first they would be one
    # 400,000-token "call"; priced per call only the second is premium: 0.45 + 1.50 = $1.95
    src = conn.execute(
        "INSERT INTO ah.source_file (path, namespace, agent) VALUES ('/h/s.jsonl', 'claude-local', 'claude') "
        "RETURNING id"
    ).fetchone()[0]
    sid = conn.execute(
        "INSERT INTO ah.session (agent, session_uid, agent_id, namespace, started_at) "
        "VALUES ('claude', 'S', '', 'claude-local', %s) RETURNING id",
        (AT,),
    ).fetchone()[0]
    for uid, n in (("c1", 150_000), ("c2", 250_000)):
        conn.execute(
            "INSERT INTO ah.model_call (agent, session_id, source_id, call_uid, model, ts, input_uncached) "
            "VALUES ('claude', %s, %s, %s, %s, %s, %s)",
            (sid, src, uid, SONNET_45, AT, n),
        )
    resolve_models(conn, [SONNET_45])
    grouped = usage_calls(conn, grouped=True)
    assert [(c.n, c.cost_usd) for c in grouped] == [(2, Decimal("1.95"))]
    assert build_report("daily", grouped, UTC, AT)["daily"][0]["totalCost"] == 1.95
