"""Cursor: agent-transcripts JSONL under ``~/.cursor/projects/<project>/agent-transcripts``,
with titles and models from the Cursor app's ``state.vscdb`` (read read-only as a sidecar).

Sources: FORMATS.md §6 (lines have no ids, timestamps, model or usage; sub-agents in a sibling
``subagents/`` directory); cursor.com/docs ("mcp": ``~/.cursor/mcp.json``; "agent/hooks":
``~/.cursor/hooks.json``, the ``stop`` event, whose payload from the CLI has a null
``transcript_path`` — entireio/cli#522 — so the conversation id is looked up).
"""

from __future__ import annotations

from agent_history.harnesses.spec import (
    Capabilities,
    Harness,
    HookSpec,
    Layout,
    McpSpec,
    Place,
    Signature,
    TranscriptLookup,
    vscode_family,
)

HARNESS = Harness(
    name="cursor",
    product="Cursor",
    parser="cursor.parser",
    source_kinds=("jsonl",),
    home=Place(("~/.cursor",)),
    layout=Layout(
        roots=("projects",),
        transcript=r"^projects/[^/]+/agent-transcripts/.+\.jsonl$",
        subagent=r"/subagents/",
        globs=("projects/*/agent-transcripts/**/*.jsonl",),
    ),
    # the CLI's `cursor-agent --resume [chatId]` (coder/registry#747); the transcript file is named by
    # the chat id (FORMATS.md §6)
    resume="cursor-agent --resume {uid}",
    signatures=(Signature(50, first=(r'^\{"role"\s*:\s*"(user|assistant)"\s*,\s*"message"\s*:',)),),
    hook=HookSpec(
        "cursor",
        Place(("~/.cursor/hooks.json",)),
        "flat",
        "stop",
        top=(("version", 1),),
        lookup=TranscriptLookup(
            ("conversation_id",),
            Place(("~/.cursor/projects",)),
            ("*/agent-transcripts/{id}.jsonl", "*/agent-transcripts/{id}/{id}.jsonl"),
            "stop payload has neither transcript_path nor conversation_id",
            "transcript for conversation",
        ),
    ),
    mcp=McpSpec(
        "cursor",
        Place(("~/.cursor/mcp.json",)),
        "json",
        "stdio",
        ("mcpServers",),
        Place(("~/.cursor/skills/agent-history/SKILL.md",)),
        "skill",
    ),
    app_state=vscode_family("Cursor").joined("globalStorage", "state.vscdb"),
    capabilities=Capabilities(
        frozenset({"model", "subagents", "tool_results", "reasoning"}),
        unsampled=(("model", "from the app's state.vscdb (modelConfig.modelName): no sample database"),),
    ),
)
