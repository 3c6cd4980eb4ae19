"""Every model name in the project's fixtures, the shared corpus, its samples and the field cases is
priced or named unpriced with a reason (issue 31). The walk reads every JSON value under a
model-ish key (`MODEL_KEYS`) of every JSON / JSONL file — wider than what the parsers take, so a
new sample cannot slip a model past — and resolves it as the catalogue does
(`usage.model_names.resolve` over genai-prices' installed data). A name without a price passes
only with a specific reason: a local model or Claude Code's ``<synthetic>`` (the module's own
reasons), or a row of `EXPLAINED` saying what that name is. The catch-all "a name no price list
knows" is not an explanation: a public model missing from the price data fails here."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from agent_history.usage.model_names import local_reason, resolve
from agent_history.usage.prices import installed_version, price_rows

ROOT = Path(__file__).resolve().parents[1]
MODEL_KEYS = {"model", "modelid", "model_id", "modelname", "model_name", "modelslug", "model_slug"}
"""Keys (lower-cased) whose string value is taken as a model name."""

EXPLAINED: dict[str, str] = {
    "pi-fixture-model": "the made-up model of the pi fixture project and fixtures/loops (a test name)",
    "synthetic-model": "a made-up name in synthetic test sessions (claude-code-log's Codex rollout, a Cline sample)",
    "coder-model": "Qwen Code's alias for whatever its endpoint serves (the sample ran against a mock endpoint)",
    "droid-model": "a placeholder in Factory Droid's schema-drift sample",
    "deepseek-coder-v2": "a local model: Continue's Ollama provider names it without the :tag",
    "gmini-pro": "a misspelt name in agent-sessions' Gemini schema-drift fixture (no such model exists)",
    "claude-sonnet-3.5": "a reversed spelling in copilot-token-usage's test data (Anthropic's name is claude-3-5-sonnet)",
    "haiku": "a Task tool's model alias in a tool call's input (Claude Code resolves it; no model call carries it)",
}
"""Unpriced names with what they are: test data's made-up or misspelt names, aliases, local models."""


def _objects(text: str):
    """The JSON of a document, or every object of every line (two fused on one line too)."""
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for line in text.splitlines():
        line, i = line.strip(), 0
        while i < len(line):
            try:
                obj, i = decoder.raw_decode(line, i)
            except ValueError:
                break
            yield obj
            while i < len(line) and line[i].isspace():
                i += 1


def _names(value, out: set[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k.lower() in MODEL_KEYS and isinstance(v, str) and v.strip():
                out.add(v)
            _names(v, out)
    elif isinstance(value, list):
        for v in value:
            _names(v, out)


@pytest.fixture(scope="module")
def models(shared_dir) -> dict[str, set[str]]:
    """Model name → the files naming it, over fixtures/, the corpus home, its samples and the field cases."""
    roots = [ROOT / "fixtures", shared_dir / "corpus" / "home", shared_dir / "corpus" / "samples", shared_dir / "field"]
    found: dict[str, set[str]] = defaultdict(set)
    for root in roots:
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix not in (".json", ".jsonl", ".extra"):
                continue
            names: set[str] = set()
            for obj in _objects(path.read_text(encoding="utf-8", errors="replace")):
                _names(obj, names)
            for n in names:
                found[n].add(str(path))
    return found


def test_the_walk_finds_the_models_of_every_kind_of_input(models):
    # one name from each place: the corpus (Claude, Codex), a sample (Gemini), a field case, fixtures/
    for name in ("claude-sonnet-4-20250514", "gpt-5.1-codex", "gemini-2.5-pro", "claude-opus-4-5", "coder-model"):
        assert name in models, name
    assert len(models) >= 50


def test_every_model_is_priced_or_named_unpriced_with_a_reason(models):
    rows, left_out = price_rows()
    priced = {r.price_key for r in rows}
    unexplained = []
    for name in sorted(models):
        ref = resolve(name, priced, left_out=left_out, library_version=installed_version())
        if ref.price_key is not None or local_reason(name) is not None or name in EXPLAINED:
            continue
        unexplained.append(f"{name!r} ({ref.reason}) in {sorted(models[name])[0]}")
    assert unexplained == [], "unpriced models without a reason (price them or add them to EXPLAINED):\n" + "\n".join(
        unexplained
    )


def test_every_explanation_is_still_needed(models):
    rows, left_out = price_rows()
    priced = {r.price_key for r in rows}
    stale = [n for n in EXPLAINED if n not in models or resolve(n, priced, left_out=left_out).price_key is not None]
    assert stale == [], f"EXPLAINED names no input holds any more, or that are priced now: {stale}"
