"""Continue (continue.dev: the VS Code / JetBrains extension and the ``cn`` CLI): one JSON
document per session in ``~/.continue/sessions/`` plus the ``sessions.json`` index
(`parsers.continuedev`).

Sources: FORMATS-NEW.md §12 and the real sessions of two users in fixtures/samples/continue
(dimits-ts/dotfiles, DimitrijaGj/dotfiles); continuedev/continue ``core/util/paths.ts``
(``CONTINUE_GLOBAL_DIR`` replaces ``~/.continue``). Continue reads MCP servers from YAML
(``config.yaml`` ``mcpServers:``, a list; workspace ``.continue/mcpServers/*.yaml``), which
``connect`` cannot edit without losing its comments, so it writes nothing there; no per-turn
hook is documented.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Place, Signature

HARNESS = Harness(
    name="continue",
    product="Continue",
    aliases=("continue-dev", "continuedev"),
    parser="continuedev.parser",
    source_kinds=("document",),
    home=Place(("${CONTINUE_GLOBAL_DIR}", "~/.continue")),
    layout=Layout(kinds=(KindRule("sessions", r"sessions/[^/]+\.json", "document"),), globs=("sessions/*.json",)),
    signatures=(
        Signature(55, head=(r'"workspaceDirectory"\s*:', r'"sessionId"\s*:', r'"history"\s*:')),
        Signature(56, head=(r'^\[\s*\{\s*"sessionId"\s*:', r'"dateCreated"\s*:')),
    ),
    path_hint=r"(^|/)\.continue/sessions/[^/]+\.json$",
    capabilities=Capabilities(
        frozenset({"model", "timestamps", "tool_results", "reasoning", "cwd"}),
        unsampled=(
            (
                "tool_results",
                "agent-mode toolCalls / tool messages: the real sessions are chat-mode only "
                "(shape from continuedev/continue core/index.d.ts)",
            ),
        ),
    ),
    built_from="real",
    built_from_why="three real sessions and two indexes of two users (fixtures/samples/continue)",
)
