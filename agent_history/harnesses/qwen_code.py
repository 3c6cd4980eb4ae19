"""Qwen Code (QwenLM/qwen-code, a Gemini CLI fork): one append-only JSONL chat recording per
session, ``~/.qwen/projects/<encoded cwd>/chats/<sessionId>.jsonl`` (archived ones in
``chats/archive/``) (`parsers.qwen_code`).

Sources: FORMATS-NEW.md §6 and the samples in fixtures/samples/qwen-code (a real 0.18.1 run
against a mock model, Piebald-AI/splitrail; real 0.14.3 records with trimmed values,
jazzyalex/agent-sessions); ``QWEN_HOME`` replaces ``~/.qwen`` (Qwen Code's own tests and
launcher docs), ``QWEN_RUNTIME_DIR`` moves the runtime files (projects) elsewhere (a peer
reader's discovery). Hooks: ``settings.json`` ``hooks.Stop`` — Claude-Code-style matcher groups,
a JSON payload on stdin whose common fields include ``transcript_path`` (QwenLM/qwen-code
``docs/users/features/hooks.md``); MCP servers: ``settings.json`` ``mcpServers`` (the Gemini
CLI convention); skills in ``~/.qwen/skills/``.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, HookSpec, KindRule, Layout, McpSpec, Place, Signature

SETTINGS = Place(("${QWEN_HOME}/settings.json", "~/.qwen/settings.json"))

HARNESS = Harness(
    name="qwen-code",
    product="Qwen Code",
    aliases=("qwen",),
    parser="qwen_code.parser",
    source_kinds=("jsonl",),
    home=Place(("${QWEN_RUNTIME_DIR}", "${QWEN_HOME}", "~/.qwen")),
    layout=Layout(
        kinds=(KindRule("projects", r"projects/[^/]+/chats/(archive/)?[^/]+\.jsonl", "jsonl"),),
        globs=("projects/*/chats/*.jsonl", "projects/*/chats/archive/*.jsonl"),
    ),
    signatures=(Signature(23, head=(r'"sessionId"\s*:', r'"(parts|systemPayload|usageMetadata|toolCallResult)"\s*:')),),
    path_hint=r"(^|/)\.qwen/projects/[^/]+/chats/",
    hook=HookSpec("qwen-code", SETTINGS, "groups", "Stop"),
    mcp=McpSpec(
        "qwen-code",
        SETTINGS,
        "json",
        "stdio",
        ("mcpServers",),
        Place(("${QWEN_HOME}/skills/agent-history/SKILL.md", "~/.qwen/skills/agent-history/SKILL.md")),
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
                "tool_results",
                "reasoning",
                "cwd",
                "git_branch",
            }
        ),
        unsampled=(
            (
                "reasoning",
                "parts with thought: true — the mock-model run has none, the trimmed records only "
                "thought: false (shape: FORMATS-NEW.md §6)",
            ),
        ),
    ),
    built_from="real",
    built_from_why="a real 0.18.1 run against a mock model and real 0.14.3 records (fixtures/samples/qwen-code)",
)
