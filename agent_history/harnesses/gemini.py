"""Gemini CLI: chat recordings under ``~/.gemini/tmp/<project hash>/chats/`` — whole JSON
documents up to 0.39, JSONL with ``$set`` mutation lines from 0.40.

Sources: FORMATS.md §4 (no cwd: only the project hash; no sub-agent or compaction records);
geminicli.com/docs (``settings.json``: ``mcpServers``, ``hooks.AfterAgent`` whose payload carries
``transcript_path``). FORMATS.md names no environment override of the home.
"""

from __future__ import annotations

from agent_history.harnesses.spec import (
    Capabilities,
    Harness,
    HookSpec,
    InstalledPlaces,
    KindRule,
    Layout,
    McpSpec,
    PermissionFile,
    Place,
    Signature,
)

_RULE_LISTS = (
    (("tools", "allowed"), "allow"),
    (("tools", "exclude"), "deny"),
    (("allowedTools",), "allow"),
    (("excludeTools",), "deny"),
)
"""(key path in a settings file, list stored as)."""

HARNESS = Harness(
    name="gemini",
    product="Gemini CLI",
    aliases=("gemini-cli",),
    parser="gemini.parser",
    source_kinds=("jsonl", "document"),
    home=Place(("~/.gemini",)),
    layout=Layout(
        kinds=(
            KindRule("tmp", r"tmp/[^/]+/chats/[^/]+\.jsonl", "jsonl"),
            KindRule("tmp", r"tmp/[^/]+/chats/[^/]+\.json", "document"),
        ),
        globs=("tmp/*/chats/*.jsonl", "tmp/*/chats/*.json"),
    ),
    signatures=(Signature(10, head=(r'"projectHash"\s*:|"type"\s*:\s*"gemini"',)),),
    # `gemini --resume <session UUID>` (geminicli.com/docs/cli/session-management); no fork flag
    resume="gemini --resume {uid}",
    path_hint=r"(^|/)\.gemini/|(^|/)tmp/[^/]+/chats/session-[^/]*\.jsonl?$",
    # permission rules: `tools.allowed` / `tools.exclude` of the user and project settings.json
    # (and the older top-level `allowedTools` / `excludeTools`), stored as allow / deny
    # (geminicli.com/docs, "configuration")
    installed=InstalledPlaces(
        permissions=(
            PermissionFile("settings.json", "user", lists=_RULE_LISTS),
            PermissionFile(".gemini/settings.json", "project", lists=_RULE_LISTS),
        ),
    ),
    hook=HookSpec("gemini", Place(("~/.gemini/settings.json",)), "groups", "AfterAgent"),
    mcp=McpSpec(
        "gemini",
        Place(("~/.gemini/settings.json",)),
        "json",
        "stdio",
        ("mcpServers",),
        Place(("~/.gemini/skills/agent-history/SKILL.md",)),
        "skill",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.output",
                "tokens.reasoning",
                "model",
                "timestamps",
                "interrupts",
                "tool_results",
                "reasoning",
            }
        )
    ),
)
