"""OpenCode: ``opencode.db`` (SQLite, ≥ 1.2, read read-only by a saved cursor) and the older
per-file ``storage/`` JSON tree under ``$XDG_DATA_HOME/opencode``.

Sources: FORMATS.md §5 (session/message/part files; unix-ms times; ``session.parentID`` links
child sessions; cost and tokens on assistant messages); opencode.ai/docs ("mcp-servers": the
global ``~/.config/opencode/opencode.json``, key ``mcp``; "skills").
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, McpSpec, Place, Signature

HARNESS = Harness(
    name="opencode",
    product="OpenCode",
    parser="opencode.parser",
    source_kinds=("document", "database"),
    home=Place(("${XDG_DATA_HOME}/opencode", "~/.local/share/opencode")),
    layout=Layout(
        # files under one root are read in this order: the database, then sessions, messages, parts
        kinds=(
            KindRule("", r"opencode\.db", "database"),
            KindRule("storage/session", r"storage/session/.+\.json", "document"),
            KindRule("storage/message", r"storage/message/.+\.json", "document"),
            KindRule("storage/part", r"storage/part/.+\.json", "document"),
        ),
        globs=("opencode.db", "storage/session/**/*.json", "storage/message/**/*.json", "storage/part/**/*.json"),
    ),
    # `opencode --session <id>`, `--fork` with it (opencode.ai/docs/cli, the TUI flags)
    resume="opencode --session {uid}",
    fork="opencode --session {uid} --fork",
    signatures=(
        Signature(30, head=(r'"(sessionID|messageID|projectID)"\s*:',)),
        Signature(31, head=(r"^SQLite format 3\x00",), path="opencode"),
    ),
    path_hint=r"(^|/)opencode/(storage/|opencode\.db$)",
    mcp=McpSpec(
        "opencode",
        Place(("${XDG_CONFIG_HOME}/opencode/opencode.json", "~/.config/opencode/opencode.json")),
        "json",
        "opencode",
        ("mcp",),
        Place(
            (
                "${XDG_CONFIG_HOME}/opencode/skills/agent-history/SKILL.md",
                "~/.config/opencode/skills/agent-history/SKILL.md",
            )
        ),
        "skill",
        env_key="environment",
    ),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "tokens.reasoning",
                "cost",
                "model",
                "timestamps",
                "subagents",
                "tool_results",
                "cwd",
            }
        )
    ),
)
