"""Kimi Code CLI (Moonshot AI's TypeScript ``kimi``, 2026): per session a directory
``~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/`` with ``state.json`` (a whole
document) and one append-only journal per agent, ``agents/<agent>/wire.jsonl``
(`parsers.kimi`).

Sources: FORMATS-NEW.md §9 and the real (clipped) journals in fixtures/samples/kimi
(jazzyalex/agent-sessions); the layout from agent-sessions' ``agent-support-matrix.yml`` and
kenn-io/agentsview ``types.go``; ``KIMI_CODE_HOME`` moves the whole directory — sessions,
``mcp.json``, Kimi-specific skills in ``skills/`` (moonshotai.github.io/kimi-code "Data
locations"). The older Python ``kimi-cli`` (``~/.kimi``, ``context.jsonl`` + ``wire.jsonl``) has
no public real sample and is not read. MCP servers: ``mcp.json`` ``mcpServers``, entries with
``command``/``args``/``env`` and no ``type`` ("Model Context Protocol" page) — `connect` writes
ours there and a skill ``skills/agent-history/SKILL.md``. Hooks are ``[[hooks]]`` TOML array
tables in ``config.toml`` whose Stop payload carries ``session_id`` and ``cwd`` but no
transcript path ("Hooks" page): not installed by ``connect --hook``.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, McpSpec, Place, Signature

HARNESS = Harness(
    name="kimi",
    product="Kimi Code CLI",
    aliases=("kimi-code", "kimi-cli"),
    parser="kimi.parser",
    source_kinds=("jsonl", "document"),
    home=Place(("${KIMI_CODE_HOME}", "~/.kimi-code")),
    layout=Layout(
        kinds=(
            KindRule("sessions", r"sessions/[^/]+/[^/]+/agents/[^/]+/wire\.jsonl", "jsonl"),
            KindRule("sessions", r"sessions/[^/]+/[^/]+/state\.json", "document"),
        ),
        globs=("sessions/*/*/agents/*/wire.jsonl", "sessions/*/*/state.json"),
    ),
    signatures=(
        Signature(
            24,
            head=(
                r'"type"\s*:\s*"(turn\.(prompt|steer|cancel)|context\.append_loop_event|llm\.request|usage\.record)"',
            ),
        ),
    ),
    path_hint=r"(^|/)\.kimi-code/sessions/",
    mcp=McpSpec(
        "kimi",
        Place(("${KIMI_CODE_HOME}/mcp.json", "~/.kimi-code/mcp.json")),
        "json",
        "stdio",
        ("mcpServers",),
        Place(("${KIMI_CODE_HOME}/skills/agent-history/SKILL.md", "~/.kimi-code/skills/agent-history/SKILL.md")),
        "skill",
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
                "compactions",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
    built_from="real",
    built_from_why="three real Kimi Code journals, long values clipped by their author (fixtures/samples/kimi)",
)
