"""Model names as harnesses write them → one price row, by the price library's own matching.

The raw name is kept everywhere (``model_call.model``); this module only says which price row
(``<provider id>/<model id>``, `usage.prices`) prices it, or why none does. Pure: the library's
bundled data is read, nothing else.

genai-prices 0.2.3 (``DataSnapshot.find_provider_model``) matches a lower-cased name against each
model's ``match`` logic (prefix, equality, regular expression), finding the provider by the
name (``claude`` → Anthropic, ``gpt-`` → OpenAI, ``gemini`` → Google …) unless one is given, and
retries a compact date stamp in its dashed form (``gpt-5.2-20251211``). It already resolves date
stamps (``claude-sonnet-4-5-20250929``), ``-latest``, Vertex's ``@default`` / ``@20250929`` and
dotted spellings (``claude-sonnet-4.5``). What harnesses add around a name is tried here, in
order (`candidates`), each a (provider, name) pair handed to the library — first match wins:

1. the name as written, provider found by the name;
2. an Amazon Bedrock model id (``anthropic.claude-sonnet-4-5-20250929-v1:0``, with a
   cross-region prefix ``us.`` / ``eu.`` / ``global.`` …) with the ``aws`` provider (Bedrock's
   own prices), then the vendor's model without the Bedrock decorations;
3. ``provider/model`` (OpenCode, LiteLLM, OpenRouter, Aider: ``openai/gpt-5.4``,
   ``openrouter/anthropic/claude-sonnet-4.5``): when the first segment names a provider the
   library knows (by id or alias: ``bedrock`` → aws, ``vertex_ai`` → google), that provider with
   the rest; then the rest with the provider found by the name, and so on down the segments.

A local model (Ollama's ``name:tag``, ``ollama.com/…``, LM Studio) or Claude Code's
``<synthetic>`` is never looked up (`local_reason`): no price, and the reason. A library match
without token prices (``copilot/gpt-4o``) goes on to the next candidate. A name nothing prices gets
no price and a reason (`UNPRICED_REASONS`, first match wins): a name no price list knows (a
private proxy's or a custom alias). Never a price of zero.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agent_history.usage.prices import LIBRARY, OWN_PRICES, OwnPrice, model_rows

BEDROCK_VENDORS = ("anthropic", "meta", "amazon", "mistral", "cohere", "ai21", "deepseek", "openai", "qwen", "writer")
"""Vendor prefixes of Amazon Bedrock model ids (``<vendor>.<model>-v<N>:<M>``)."""

_BEDROCK = re.compile(
    r"^(?:(?P<region>[a-z]{2,6}(?:-[a-z]+)?)\.)?(?P<vendor>" + "|".join(BEDROCK_VENDORS) + r")\.(?P<model>.+?)"
    r"(?:-v\d+(?::\d+)?)?$"
)

UNPRICED_REASONS: tuple[tuple[str, str], ...] = (
    (r"^<synthetic>$", "Claude Code's name for a message it wrote itself (no model was called)"),
    (
        r"^(?:ollama(?:\.com)?|hf\.co|huggingface\.co|lmstudio(?:-community)?|lm-studio|llama\.cpp|localhost|127\.0\.0\.1)[/:.]",
        "a local model (run on the user's machine: no list price)",
    ),
    # Ollama's name:tag (not Bedrock's -v1:0 version suffix)
    (r"^(?!.*-v\d+:\d+$)[a-z0-9][\w.-]*:[a-z0-9][\w.-]*$", "a local model (an Ollama name:tag)"),
    (r".", "a name no price list knows (a private proxy's or a custom model name)"),
)
"""(regular expression on the lower-cased name, reason) for a name without a price, in order."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """How a raw model name is priced: `price_key` (None = no price) and what matched
    (`matched_as` = ``<provider id or *>:<name given to the library>``), or the `reason` there is
    no price."""

    model: str
    price_key: str | None
    matched_as: str | None
    reason: str | None


def candidates(name: str) -> Iterator[tuple[str | None, str]]:
    """The (provider id or None, name) pairs tried for `name`, in order (module docstring)."""
    low = name.strip().lower()
    if not low:
        return
    yield None, low
    m = _BEDROCK.match(low)
    if m and "/" not in low:
        yield "aws", low
        yield None, m["model"]
    if "/" in low:
        head, rest = low.split("/", 1)
        if head:
            yield head, rest
        yield from candidates(rest)


def local_reason(name: str) -> str | None:
    """The reason `name` has no price when it names a local model or no model at all (every
    `UNPRICED_REASONS` row but the last, catch-all one), else None."""
    low = name.strip().lower()
    for pattern, reason in UNPRICED_REASONS[:-1]:
        if re.search(pattern, low):
            return reason
    return None


def unpriced_reason(name: str | None, library_version: str | None = None) -> str:
    """Why `name` has no price (`UNPRICED_REASONS`); None = the transcript names no model."""
    if not name:
        return "the transcript names no model"
    low = name.strip().lower()
    for pattern, reason in UNPRICED_REASONS:
        if re.search(pattern, low):
            if reason.startswith("a name no price list knows") and library_version:
                return f"{reason}; not in {LIBRARY} {library_version}"
            return reason
    raise AssertionError("the last reason matches any name")


def resolve(
    name: str,
    priced: set[str] | frozenset[str],
    *,
    left_out: dict[str, str] | None = None,
    own: Sequence[OwnPrice] = OWN_PRICES,
    snapshot=None,
    library_version: str | None = None,
) -> ModelRef:
    """The price row of model `name` as written: the first of `candidates` the library matches
    (`snapshot`: a genai-prices ``DataSnapshot``, default the installed data), else the first own
    row whose `names` match, else no price with `unpriced_reason`. `priced` holds the price keys
    that have rows; a library model without rows is unpriced with its `left_out` reason."""
    if snapshot is None:
        from genai_prices.data_snapshot import get_snapshot

        snapshot = get_snapshot()
    local = local_reason(name)
    if local is not None:  # before the library: `ollama.com/library/deepseek-r1:7b` is not DeepSeek's API
        return ModelRef(name, None, None, local)
    owner = _owners(snapshot)
    unpriced: ModelRef | None = None
    for provider_id, ref in candidates(name):
        try:
            provider, model = snapshot.find_provider_model(ref, None, provider_id, None)
        except LookupError:
            continue
        # a provider may fall back to another's models (Vertex → Anthropic): key by the owner
        key = f"{owner.get(id(model), provider.id)}/{model.id}"
        matched = f"{provider_id or '*'}:{ref}"
        if key in priced:
            return ModelRef(name, key, matched, None)
        # a match without token prices (`copilot/gpt-4o`: a subscription's model) → try the next
        # candidate (`gpt-4o`); when none is priced, this first reason
        if unpriced is None:
            reason = (left_out or {}).get(key) or model_rows(key, key.split("/", 1)[0], model, "")[1]
            unpriced = ModelRef(name, None, matched, reason or f"{LIBRARY} has no price row for {key}")
    if unpriced is not None:
        return unpriced
    low = name.strip().lower()
    for row in own:
        if re.fullmatch(row.names, low) and row.price_key in priced:
            return ModelRef(name, row.price_key, f"ours:{low}", None)
    return ModelRef(name, None, None, unpriced_reason(name, library_version))


_OWNERS: dict[int, dict[int, str]] = {}


def _owners(snapshot) -> dict[int, str]:
    """id(model) → the id of the provider listing it, per snapshot (built once)."""
    got = _OWNERS.get(id(snapshot))
    if got is None:
        got = {id(m): p.id for p in snapshot.providers for m in p.models}
        _OWNERS.clear()
        _OWNERS[id(snapshot)] = got
    return got
