"""Spec for Claude long-context pricing (issue 19 follow-up; sql/20_pricing.sql, migration
0014_long_context): a Sonnet 4 / 4.5 call whose input (uncached + cache read + cache writes)
exceeds 200,000 tokens is charged the long-context rates for the whole call — $6 input, $22.50
output, cache read $0.60, 5m write $7.50, 1h write $12.00 per MTok — and one at exactly 200,000 the
base rates; a model without a long-context tier is unaffected; the tier starts with Sonnet 4's 1M
window (2025-08-12); the per-slot sums of `usage` keep the per-call decision.

Rows are inserted directly with SQL into one fresh migrated database (`db` fixture)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from agent_history.read.usage import price_list, usage_calls
from agent_history.usage.report import build_report

SONNET_4 = "claude-sonnet-4-20250514"
SONNET_45 = "claude-sonnet-4-5-20250929"
AT = datetime(2025, 9, 20, 12, 0, tzinfo=UTC)


def cost(conn, model, at, iu, cr, w5, w1, out) -> Decimal | None:
    return conn.execute(
        "SELECT ah.call_cost_usd(%s, %s, %s, %s, %s, %s, %s)", (model, at, iu, cr, w5, w1, out)
    ).fetchone()[0]


@pytest.fixture
def conn(db):
    with db.connect(autocommit=True) as c:
        yield c


def test_threshold_is_on_the_whole_input_and_the_premium_on_the_whole_call(conn):
    # exactly 200,000 input tokens (3 + 150,000 cache read + 49,997 5m write): base rates
    # 3×3 + 150000×0.30 + 49997×3.75 + 1000×15 = 9 + 45000 + 187488.75 + 15000 → $0.24749775
    assert cost(conn, SONNET_4, AT, 3, 150_000, 49_997, None, 1000) == Decimal("0.24749775")
    # one more input token (a 1h write): long-context rates for every bucket of the call
    # 3×6 + 150000×0.60 + 49997×7.50 + 1×12 + 1000×22.50 = 18 + 90000 + 374977.5 + 12 + 22500
    assert cost(conn, SONNET_4, AT, 3, 150_000, 49_997, 1, 1000) == Decimal("0.4875075")
    # uncached input alone: 200,000 → $0.60 + 0 output; 200,001 → 200001×6 = $1.200006
    assert cost(conn, SONNET_45, datetime(2025, 10, 1, tzinfo=UTC), 200_000, None, None, None, 0) == Decimal("0.6")
    assert cost(conn, SONNET_45, datetime(2025, 10, 1, tzinfo=UTC), 200_001, None, None, None, 0) == Decimal("1.200006")
    # output never counts towards the threshold
    assert cost(conn, SONNET_45, datetime(2025, 10, 1, tzinfo=UTC), 10, None, None, None, 500_000) == Decimal("7.50003")
    # unknown usage stays NULL, whatever the tier
    assert cost(conn, SONNET_4, AT, None, None, None, None, None) is None


def test_models_without_a_tier_and_days_before_it_are_unaffected(conn):
    # Opus 4.5 has no long-context tier: 300,000 input at $5 = $1.50, 1,000 output at $25
    assert cost(conn, "claude-opus-4-5-20251101", AT, 300_000, None, None, None, 1000) == Decimal("1.525")
    # Haiku 4.5: 250,000 cache read at $0.10
    assert cost(conn, "claude-haiku-4-5-20251001", AT, None, 250_000, None, None, None) == Decimal("0.025")
    # Sonnet 4 before its 1M window (2025-08-12): the 2025-05-14 row, which has no tier
    before = datetime(2025, 8, 11, 23, 0, tzinfo=UTC)
    assert cost(conn, SONNET_4, before, 300_000, None, None, None, None) == Decimal("0.9")
    assert cost(conn, SONNET_4, AT, 300_000, None, None, None, None) == Decimal("1.8")


def test_pricing_json_shows_the_tiers_and_usage_slots_keep_the_per_call_decision(conn):
    rows = {(p["model_pattern"], p["effective_from"]): p for p in price_list(conn)["prices"]}
    tiered = sorted(k for k, p in rows.items() if p["long_context_threshold"] is not None)
    assert tiered == [
        ("claude-sonnet-4", "2025-08-12"),
        ("claude-sonnet-4-0%", "2025-08-12"),
        ("claude-sonnet-4-20250514%", "2025-08-12"),
        ("claude-sonnet-4-5%", "2025-09-29"),
    ]
    t = rows[("claude-sonnet-4-5%", "2025-09-29")]
    assert (
        t["long_context_threshold"],
        t["long_input_per_mtok"],
        t["long_output_per_mtok"],
        t["long_cache_read_per_mtok"],
        t["long_cache_write_5m_per_mtok"],
        t["long_cache_write_1h_per_mtok"],
    ) == (200000, 6.0, 22.5, 0.6, 7.5, 12.0)
    assert t["long_context_source"] == (
        "https://docs.anthropic.com/en/docs/about-claude/pricing#long-context-pricing (retrieved 2026-12-01)"
    )
    assert rows[("claude-sonnet-4", "2025-05-14")]["long_context_threshold"] is None

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
            (sid, src, uid, SONNET_4, AT, n),
        )
    grouped = usage_calls(conn, grouped=True)
    assert [(c.n, c.cost_usd) for c in grouped] == [(2, Decimal("1.95"))]
    day = build_report("daily", grouped, UTC, AT)["daily"][0]
    assert day["totalCost"] == 1.95  # the report carries floats
    conn.execute("SELECT ah.refresh_sessions(%s::bigint[])", ([sid],))
    assert conn.execute("SELECT cost_usd FROM ah.session WHERE id = %s", (sid,)).fetchone()[0] == Decimal("1.95")
