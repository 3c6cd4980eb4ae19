"""The telemetry `agent` label is the set of real agent names (the harness registry's `NAMES`). Pure."""

from __future__ import annotations

from agent_history.harnesses import NAMES as AGENTS
from agent_history.telemetry.docs import label_table
from agent_history.telemetry.families import LABEL_VALUES
from agent_history.telemetry.policy import LabelGuard, ModelLabels, Sample, resolve_label_values


def _guard() -> LabelGuard:
    return LabelGuard(resolve_label_values({"claude-ai-export"}, ModelLabels(("claude-opus-4-5%",))))


def test_agent_label_is_parsers_agents():
    assert LABEL_VALUES["agent"] == AGENTS
    assert "claude-ai" in AGENTS and "copilot-vscode" in AGENTS


def test_new_agents_are_admitted_and_non_agents_dropped():
    guard = _guard()
    kept = guard.admit(
        [
            Sample.of("ah_catalogue_sessions", 3, agent="claude-ai"),
            Sample.of("ah_catalogue_sessions", 2, agent="copilot-vscode"),
            Sample.of("ah_catalogue_sessions", 1, agent="claude_ai"),  # the old misspelling
            Sample.of("ah_catalogue_sessions", 1, agent="memory"),  # a source_type, not an agent
        ]
    )
    assert [dict(s.labels)["agent"] for s in kept] == ["claude-ai", "copilot-vscode"]
    assert guard.dropped == {"ah_catalogue_sessions": 2}


def test_metrics_doc_lists_the_agents():
    row = next(line for line in label_table().splitlines() if line.startswith("| agent |"))
    assert row == "| agent | " + ", ".join(f"`{a}`" for a in AGENTS) + " |"
