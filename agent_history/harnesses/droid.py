"""Factory Droid: one append-only JSONL per session, ``~/.factory/sessions/<cwd with / → ->/
<uuid>.jsonl`` (or directly in ``sessions/``), and ``<uuid>.settings.json`` beside it (a whole
document: the model and the session's cumulative token usage) (`parsers.droid`).

Sources: FORMATS-NEW.md §7 — issues Dicklesworthstone/coding_agent_session_search#22,
vakovalskii/codbash#206 (layout), xiufengsun/TokenTracker#89 (``FACTORY_DIR``),
junhoyeo/tokscale#135 (no usage in 0.56); docs.factory.ai "Hooks reference" (``hooks`` in
``~/.factory/settings.json``: Claude-Code-style matcher groups, every payload carries
``transcript_path``; newer releases also read ``~/.factory/hooks.json`` and then ignore the
settings' ``hooks``) and "Set Up Factory Droid Properly" (developersdigest.tech, citing the
docs: MCP servers in ``~/.factory/mcp.json``, skills in ``~/.factory/skills/``). No real session
file is public: built from that shape, checked on hand-written files.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, HookSpec, KindRule, Layout, McpSpec, Place, Signature

HARNESS = Harness(
    name="droid",
    product="Factory Droid",
    aliases=("factory", "factory-droid"),
    parser="droid.parser",
    source_kinds=("jsonl", "document"),
    home=Place(("${FACTORY_DIR}", "~/.factory")),
    layout=Layout(
        kinds=(
            KindRule("sessions", r"sessions/(.+/)?[^/]+\.settings\.json", "document"),
            KindRule("sessions", r"sessions/(.+/)?[^/]+\.jsonl", "jsonl"),
        ),
        globs=("sessions/**/*.jsonl", "sessions/**/*.settings.json"),
    ),
    signatures=(Signature(25, first=(r'^\{"type"\s*:\s*"session_start"\s*,',)),),
    path_hint=r"(^|/)\.factory/sessions/",
    hook=HookSpec("droid", Place(("${FACTORY_DIR}/settings.json", "~/.factory/settings.json")), "groups", "Stop"),
    mcp=McpSpec(
        "droid",
        Place(("${FACTORY_DIR}/mcp.json", "~/.factory/mcp.json")),
        "json",
        "stdio-typed",
        ("mcpServers",),
        Place(("${FACTORY_DIR}/skills/agent-history/SKILL.md", "~/.factory/skills/agent-history/SKILL.md")),
        "skill",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "tokens.reasoning",
                "model",
                "timestamps",
                "subagents",
                "tool_results",
                "reasoning",
                "cwd",
            }
        ),
        unsampled=(
            ("subagents", "Task tool calls: no sample has one (Droid's tool names: docs.factory.ai)"),
            ("reasoning", "thinking blocks: no sample has one"),
        ),
    ),
    built_from="schema",
    built_from_why="no real session file is public; peers' readers and issues, hand-written files",
)
