"""Spec for `usage.model_names` and `usage.prices` (pure, on the installed genai-prices data):
model names as harnesses write them resolve to one price row through the library's matching, the
raw name kept; a name nobody prices gets no row and a reason, never a price of zero; the library's
rows keep effective dates, tiers, cache rates and the provider."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from agent_history.usage.model_names import candidates, resolve
from agent_history.usage.prices import OWN_TIERS, price_rows


@pytest.fixture(scope="module")
def prices():
    rows, left_out = price_rows()
    return rows, left_out, {r.price_key for r in rows}


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("openai/gpt-5.4", "openai/gpt-5.4"),  # OpenCode / LiteLLM provider/model
        ("gpt-5.4", "openai/gpt-5.4"),
        ("gpt-5.1-codex", "openai/gpt-5.1"),  # Codex
        ("claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),  # date stamp
        ("claude-3-5-sonnet-latest", "anthropic/claude-3-5-sonnet"),  # -latest
        ("claude-sonnet-4.5", "anthropic/claude-sonnet-4-5"),  # Copilot's dotted spelling
        ("claude-sonnet-4-6@default", "anthropic/claude-sonnet-4-6"),  # Vertex
        ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("google/gemini-2.5-flash", "google/gemini-2.5-flash"),
        ("gemini-2.5-pro-preview-06-05", "google/gemini-2.5-pro"),
        ("openrouter/anthropic/claude-sonnet-4.5", "openrouter/anthropic/claude-sonnet-4.5"),
        # Bedrock ids, with and without a cross-region prefix: Bedrock's own price row
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "aws/regional.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws/regional.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        # Copilot CLI: genai-prices' copilot/gpt-4o has no token price (a subscription): the model's
        ("copilot/gpt-4o", "openai/gpt-4o"),
        ("copilot/claude-sonnet-4.5", "anthropic/claude-sonnet-4-5"),
        ("moonshot-ai/kimi-k2.7-code", "moonshotai/kimi-k2.7-code"),
    ],
)
def test_names_as_harnesses_write_them_resolve_to_one_row_keeping_the_raw_name(prices, name, key):
    _, left_out, priced = prices
    ref = resolve(name, priced, left_out=left_out)
    assert (ref.model, ref.price_key, ref.reason) == (name, key, None)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("qwen2.5-coder:7b", "a local model (an Ollama name:tag)"),
        ("ollama/llama3.1", "a local model (run on the user's machine: no list price)"),
        # not DeepSeek's API (the library would match deepseek-r1 by name)
        ("ollama.com/library/deepseek-r1:7b", "a local model (run on the user's machine: no list price)"),
        ("deepseek-coder-v2:16b", "a local model (an Ollama name:tag)"),
        ("acme-internal-proxy", "a name no price list knows (a private proxy's or a custom model name); not in genai-prices 0.2.3"),
        ("<synthetic>", "Claude Code's name for a message it wrote itself (no model was called)"),
    ],
)  # fmt: skip
def test_names_nobody_prices_get_no_row_and_a_reason(prices, name, reason):
    _, left_out, priced = prices
    ref = resolve(name, priced, left_out=left_out, library_version="0.2.3")
    assert (ref.price_key, ref.reason) == (None, reason)


def test_candidates_try_the_name_then_bedrock_then_provider_segments():
    assert list(candidates("OpenRouter/Anthropic/Claude-Sonnet-4.5")) == [
        (None, "openrouter/anthropic/claude-sonnet-4.5"),
        ("openrouter", "anthropic/claude-sonnet-4.5"),
        (None, "anthropic/claude-sonnet-4.5"),
        ("anthropic", "claude-sonnet-4.5"),
        (None, "claude-sonnet-4.5"),
    ]
    assert list(candidates("eu.anthropic.claude-haiku-4-5-20251001-v1:0"))[1:] == [
        ("aws", "eu.anthropic.claude-haiku-4-5-20251001-v1:0"),
        (None, "claude-haiku-4-5-20251001"),
    ]
    assert list(candidates("  ")) == []


def test_library_rows_keep_dates_tiers_cache_rates_and_provider(prices):
    rows, left_out, _ = prices
    by_key: dict[str, list] = {}
    for r in rows:
        by_key.setdefault(r.price_key, []).append(r)
    opus = sorted(by_key["anthropic/claude-opus-4-6"], key=lambda r: r.effective_from or date.min)
    assert [(r.effective_from, r.long_context_threshold, r.long_input_per_mtok) for r in opus] == [
        (None, 200_000, Decimal("10")),
        (date(2026, 3, 13), None, None),
    ]
    sonnet = by_key["anthropic/claude-sonnet-4-5"][0]
    assert (sonnet.provider, sonnet.cache_read_per_mtok, sonnet.cache_write_5m_per_mtok, sonnet.cache_write_1h_per_mtok) == (
        "anthropic", Decimal("0.3"), Decimal("3.75"), Decimal("6"),
    )  # fmt: skip
    # OpenAI lists no cache-write price: the library charges a write at the input rate
    gpt = by_key["openai/gpt-5.1"][0]
    assert (gpt.input_per_mtok, gpt.cache_read_per_mtok, gpt.cache_write_5m_per_mtok) == (
        Decimal("1.25"), Decimal("0.125"), Decimal("1.25"),
    )  # fmt: skip
    assert all(r.input_per_mtok is not None and r.output_per_mtok is not None for r in rows)  # never a 0 stand-in
    assert all(reason for reason in left_out.values())
    # our tier sits on the library's row from its date, citing both
    (tier,) = OWN_TIERS
    ours = [r for r in by_key[tier.price_key] if r.origin == "ours"]
    assert [(r.effective_from, r.long_context_threshold, r.input_per_mtok) for r in ours] == [
        (tier.effective_from, 200_000, Decimal("3"))
    ]
    assert tier.source in ours[0].source and ours[0].source.startswith("genai-prices ")
