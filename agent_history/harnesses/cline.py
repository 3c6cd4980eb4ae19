"""Cline (VS Code extension ``saoudrizwan.claude-dev``): one folder per task under the
extension's global storage, ``tasks/<task id>/`` with whole JSON documents the extension
rewrites on every change (`parsers.cline`).

Sources: FORMATS-NEW.md §1 and the real Cline 3.51.0 task folder in fixtures/samples/cline
(gmfstu/Online-Card-Architecture); cline/cline ``apps/vscode/src/core/storage/disk.ts`` (file
names), ``apps/vscode/src/hosts/vscode/vscode-to-file-migration.ts`` (tasks stay in the VS Code
global storage; settings moved to ``~/.cline/data``), ``sdk/packages/shared/src/storage/paths.ts``
(``CLINE_MCP_SETTINGS_PATH`` > ``$CLINE_DATA_DIR/settings`` > ``$CLINE_DIR/data/settings`` >
``~/.cline/data/settings/cline_mcp_settings.json``; skills in ``$CLINE_DIR/skills``, default
``~/.cline/skills``). The same extension installed in a VS Code fork (Cursor, VSCodium,
Windsurf) or a remote server keeps its tasks under that product's global storage: add such a
home as a ``[sources]`` entry (``cline-cursor = ".../Cursor/User/globalStorage/
saoudrizwan.claude-dev"``). Cline's hooks are executables named after task events
(``TaskComplete``, ``UserPromptSubmit`` …) in a directory that moved between releases
(``~/Documents/Cline/Hooks``, ``~/Documents/Cline/Rules/Hooks``) and must be enabled in its
settings; no event fires after each turn, so no after-turn hook is installed.
"""

from __future__ import annotations

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

TASK_FILES = r"tasks/[^/]+/(api_conversation_history|ui_messages|task_metadata|history_item)\.json"
"""The documents of a Cline-family task folder (Roo Code adds ``history_item.json``)."""
UI_HEAD = r'^\[\{"ts"\s*:\s*\d+\s*,\s*"type"\s*:\s*"(say|ask)"'
API_HEAD = r'^\[\{"role"\s*:\s*"(user|assistant)"\s*,\s*"content"\s*:'

HARNESS = Harness(
    name="cline",
    product="Cline",
    aliases=("claude-dev",),
    parser="cline.parser",
    source_kinds=("document",),
    home=vscode_family("Code").joined("globalStorage", "saoudrizwan.claude-dev"),
    layout=Layout(kinds=(KindRule("tasks", TASK_FILES, "document"),), globs=("tasks/*/*.json",)),
    signatures=(
        Signature(11, head=(UI_HEAD,), path="saoudrizwan.claude-dev"),
        Signature(12, head=(API_HEAD,), path="saoudrizwan.claude-dev"),
        # a task folder copied elsewhere: the UI records' conversationHistoryIndex is Cline's
        Signature(84, head=(UI_HEAD, r'"conversationHistoryIndex"\s*:')),
        Signature(85, head=(API_HEAD,)),
    ),
    path_hint=r"(^|/)saoudrizwan\.claude-dev/tasks/",
    mcp=McpSpec(
        "cline",
        Place(
            (
                "${CLINE_MCP_SETTINGS_PATH}",
                "${CLINE_DATA_DIR}/settings/cline_mcp_settings.json",
                "${CLINE_DIR}/data/settings/cline_mcp_settings.json",
                "~/.cline/data/settings/cline_mcp_settings.json",
            )
        ),
        "json",
        "stdio",
        ("mcpServers",),
        Place(("${CLINE_DIR}/skills/agent-history/SKILL.md", "~/.cline/skills/agent-history/SKILL.md")),
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
                "compactions",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
    built_from="real",
    built_from_why="a real Cline 3.51 task folder (excerpt in fixtures/samples/cline); older XML-tool tasks hand-written",
)
