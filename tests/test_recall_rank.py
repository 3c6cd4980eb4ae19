"""The recall ranking rules (pure: `search.rank`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_history.search import rank

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def test_product_names_resolve_to_harness_names():
    assert rank.resolve_agent("claude-code") == "claude"
    assert rank.resolve_agent("Codex") == "codex"
    assert [rank.resolve_agent(a) for a in ("cursor", "opencode", "gemini", "pi", "copilot", "copilot-vscode",
                                            "claude-ai")] == ["cursor", "opencode", "gemini", "pi", "copilot",
                                                              "copilot-vscode", "claude-ai"]  # fmt: skip
    with pytest.raises(ValueError, match=r"unknown agent 'vim' \(accepted: claude, codex, pi, gemini"):
        rank.resolve_agent("vim")


def test_normalise_recency_depth():
    assert rank.normalise([4.0, 2.0, 3.0]) == [1.0, 0.0, 0.5]
    assert rank.normalise([0.3, 0.3]) == [1.0, 1.0] and rank.normalise([]) == []
    assert rank.recency(NOW, NOW) == 1.0
    assert rank.recency(NOW - timedelta(days=73), NOW) == pytest.approx(0.8)
    assert rank.recency(NOW - timedelta(days=365), NOW) == 0.0 and rank.recency(NOW - timedelta(days=900), NOW) == 0.0
    assert rank.recency(NOW + timedelta(days=1), NOW) == 1.0 and rank.recency(None, NOW) == 0.0
    assert (rank.depth(10), rank.depth(50), rank.depth(80), rank.depth(None)) == (0.2, 1.0, 1.0, 0.0)


def test_blend_weights_and_order():
    items = [("old-best", 10.0, NOW - timedelta(days=365), 0), ("new-weaker", 6.0, NOW, 50), ("worst", 2.0, None, 1)]
    out = rank.blend(items, lambda i: i[1], lambda i: i[2], lambda i: i[3], NOW)
    scores = {i[0]: s for i, s in out}
    assert scores["old-best"] == pytest.approx(0.7)  # relevance 1, recency 0, depth 0
    assert scores["new-weaker"] == pytest.approx(0.7 * 0.5 + 0.2 + 0.1)  # 0.65
    assert scores["worst"] == pytest.approx(0.1 * 1 / 50)
    assert [i[0] for i, _ in out] == ["old-best", "new-weaker", "worst"]


def test_context_project_boost_keeps_everyone():
    items = [("a", 3.0, "/work/api"), ("b", 2.5, "/work/web/src"), ("c", 1.0, "/work/webapp")]
    out = rank.boost_project(items, lambda i: i[1], lambda i: i[2], "/work/web/")
    assert [(i[0], s) for i, s in out] == [("b", 3.75), ("a", 3.0), ("c", 1.0)]  # /work/webapp is not below


def test_diversify_puts_distinct_turns_first():
    hits = ["t1a", "t1b", "t2a", "t1c", "t3a", "t2b"]
    assert rank.diversify(hits, lambda h: h[:2]) == ["t1a", "t2a", "t3a", "t1b", "t1c", "t2b"]
