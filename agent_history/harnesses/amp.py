"""Amp (ampcode.com, Sourcegraph): one JSON document per thread, ``T-<uuid>.json``, under
``~/.local/share/amp/threads`` (`parsers.amp`).

Sources: FORMATS-NEW.md §8 (kenn-io/agentsview ``internal/parser/amp.go``, ``types.go`` at
538600744d1b; Amp keeps that path on macOS too); the Amp manual ("Configuration":
``~/.config/amp/settings.json``, key ``amp.mcpServers``; "AGENTS.md": the user-level
``~/.config/amp/AGENTS.md``). No real thread file is public: built from the schema, checked on
hand-written threads. Amp has no per-turn hook.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, McpSpec, Place, Signature

HARNESS = Harness(
    name="amp",
    product="Amp",
    aliases=("ampcode",),
    parser="amp.parser",
    source_kinds=("document",),
    home=Place(("~/.local/share/amp",)),
    layout=Layout(kinds=(KindRule("threads", r"threads/T-[^/]+\.json", "document"),), globs=("threads/T-*.json",)),
    signatures=(Signature(57, head=(r'"id"\s*:\s*"T-[0-9a-fA-F-]+"', r'"messages"\s*:')),),
    path_hint=r"(^|/)amp/threads/T-[^/]+\.json$",
    mcp=McpSpec(
        "amp",
        Place(("~/.config/amp/settings.json",)),
        "json",
        "stdio",
        ("amp.mcpServers",),
        Place(("~/.config/amp/AGENTS.md",)),
        "section",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "model",
                "timestamps",
                "subagents",
                "interrupts",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
    built_from="schema",
    built_from_why="no real thread file is public; kenn-io/agentsview's reader and tests, hand-written threads",
)
