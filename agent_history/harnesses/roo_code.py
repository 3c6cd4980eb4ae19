"""Roo Code (VS Code extension ``RooVeterinaryInc.roo-cline``, stored lower-case): Cline-family
task folders under the extension's global storage (`parsers.roo_code`).

Sources: FORMATS-NEW.md §2; RooCodeInc/Roo-Code ``src/shared/globalFileNames.ts`` (file names,
``history_item.json``), ``packages/types`` (history item, UI message and API message shapes),
``src/services/mcp/McpHub.ts`` (the global MCP settings file ``settings/mcp_settings.json`` in
the extension's global storage, key ``mcpServers``); skills in ``~/.roo/skills`` (the Agent
Skills directory Roo reads). No real Roo Code task file is public: support is built from the
schema and checked on hand-written task folders. Roo Code writes no per-turn hook. The Roo CLI
keeps tasks in ``~/.vscode-mock/global-storage/tasks`` (a ``[sources]`` entry).
"""

from __future__ import annotations

from agent_history.harnesses.cline import API_HEAD, TASK_FILES, UI_HEAD
from agent_history.harnesses.spec import (
    Capabilities,
    Harness,
    KindRule,
    Layout,
    McpSpec,
    Place,
    Signature,
    vscode_family,
)

STORAGE = vscode_family("Code").joined("globalStorage", "rooveterinaryinc.roo-cline")

HARNESS = Harness(
    name="roo-code",
    product="Roo Code",
    aliases=("roo", "roo-cline"),
    parser="roo_code.parser",
    source_kinds=("document",),
    home=STORAGE,
    layout=Layout(kinds=(KindRule("tasks", TASK_FILES, "document"),), globs=("tasks/*/*.json",)),
    signatures=(
        Signature(13, head=(UI_HEAD,), path="roo-cline"),
        Signature(14, head=(API_HEAD,), path="roo-cline"),
    ),
    path_hint=r"(^|/)rooveterinaryinc\.roo-cline/tasks/",
    mcp=McpSpec(
        "roo-code",
        STORAGE.joined("settings", "mcp_settings.json"),
        "json",
        "stdio",
        ("mcpServers",),
        Place(("~/.roo/skills/agent-history/SKILL.md",)),
        "skill",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "cost",
                "model",
                "timestamps",
                "subagents",
                "compactions",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
    built_from="schema",
    built_from_why="no real Roo Code task file is public; RooCodeInc/Roo-Code packages/types, hand-written task folders",
)
