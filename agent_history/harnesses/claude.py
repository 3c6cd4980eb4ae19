"""Claude Code (Anthropic's CLI): append-only JSONL per session under ``~/.claude/projects``.

Sources: FORMATS.md §1 (layout of main and sub-agent files, record types, usage repeated per
content-block line); code.claude.com/docs ("settings" for ``CLAUDE_CONFIG_DIR``, "hooks
reference" for ``Stop``, "mcp" for the user-scope ``~/.claude.json``); Claude Code's auto memory
(``projects/<p>/memory/*.md``). Field case E09: a file may start with bookkeeping lines, so the
content signature does not rely on the first line.
"""

from __future__ import annotations

from agent_history.harnesses.spec import (
    Capabilities,
    DocumentRule,
    Harness,
    HookSpec,
    InstalledPlaces,
    Layout,
    McpSpec,
    PermissionFile,
    Place,
    Retention,
    Signature,
)

_RULE_LISTS = ((("permissions", "allow"), "allow"), (("permissions", "deny"), "deny"), (("permissions", "ask"), "ask"))
"""(key path in a settings file, list stored as)."""

HARNESS = Harness(
    name="claude",
    product="Claude Code",
    aliases=("claude-code", "claude_code"),
    parser="claude_code.parser",
    source_kinds=("jsonl", "document"),
    home=Place(("${CLAUDE_CONFIG_DIR}", "~/.claude")),
    layout=Layout(
        # projects/<project>/<session>.jsonl (main); projects/<project>/agent-<id>.jsonl (≤ 2.0)
        # and projects/<project>/<session>/subagents/**/agent-*.jsonl (2.1+) are sub-agents
        roots=("projects",),
        subagent=r"/subagents/|/agent-[^/]*$",
        documents=(DocumentRule("memory", r"^projects/[^/]+/memory/(.+/)?[^/]+\.md$", ("projects/*/memory",)),),
        globs=("projects/**/*.jsonl", "projects/*/memory/**/*.md"),
    ),
    signatures=(
        Signature(90, head=(r'"(sessionId|parentUuid|leafUuid)"\s*:',)),
        Signature(91, head=(r'"type"\s*:\s*"(file-history-snapshot|summary|queue-operation)"',)),
        # minimal records without sessionId, e.g. hand-trimmed files
        Signature(92, head=(r'(?m)^\{"type"\s*:\s*"(user|assistant)"\s*,.*"message"\s*:\s*\{',)),
    ),
    path_hint=r"(^|/)\.claude/|(^|/)projects/[^/]+/",
    resume="claude --resume {uid}",
    fork="claude --resume {uid} --fork-session",
    # cleanupPeriodDays: "how long to locally retain chat transcripts based on last activity
    # date (default: 30 days)" (code.claude.com/docs, settings)
    retention=Retention("settings.json", "cleanupPeriodDays", 30),
    # skills: ~/.claude/skills/<name>/SKILL.md and a project's .claude/skills (code.claude.com/docs,
    # "skills"); plugins: plugins/installed_plugins.json; permission rules: `permissions.allow|deny|
    # ask` of the user, project and local settings files (code.claude.com/docs, "settings")
    installed=InstalledPlaces(
        user_skills=("skills",),
        project_skills=(".claude/skills",),
        plugins=(("plugins/installed_plugins.json", "claude-installed-plugins"),),
        permissions=(
            PermissionFile("settings.json", "user", lists=_RULE_LISTS),
            PermissionFile(".claude/settings.json", "project", lists=_RULE_LISTS),
            PermissionFile(".claude/settings.local.json", "local", lists=_RULE_LISTS),
        ),
    ),
    hook=HookSpec("claude", Place(("${CLAUDE_CONFIG_DIR}/settings.json", "~/.claude/settings.json")), "groups"),
    mcp=McpSpec(
        "claude-code",
        Place(("${CLAUDE_CONFIG_DIR}/.claude.json", "~/.claude.json")),
        "json",
        "stdio-typed",
        ("mcpServers",),
        Place(("${CLAUDE_CONFIG_DIR}/skills/agent-history/SKILL.md", "~/.claude/skills/agent-history/SKILL.md")),
        "skill",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.cache_write_1h",
                "tokens.output",
                "cost",
                "model",
                "timestamps",
                "subagents",
                "compactions",
                "interrupts",
                "tool_results",
                "reasoning",
                "cwd",
                "git_branch",
            }
        ),
        unsampled=(
            (
                "compactions",
                "system/compact_boundary and isCompactSummary occur only in the redacted harvest, "
                "not in the shared corpus (FORMATS.md, Gaps)",
            ),
            ("cost", "the top-level costUSD of older versions: the one sample carrying it has no record types"),
        ),
    ),
)
