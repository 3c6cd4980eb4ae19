"""Message classes (docs/design.md §5): what kind of text a message row holds.

Search defaults to the conversational subset; ``--prompts`` limits it to what a person typed
(`HUMAN_PROMPT` and `QUEUED_PROMPT`). Parsers must never label meta records, command wrappers,
local command output, system reminders, injected context, compaction summaries or agent-written
briefs as `HUMAN_PROMPT`.
"""

from __future__ import annotations

HUMAN_PROMPT = "human_prompt"
QUEUED_PROMPT = "queued_prompt"
ASSISTANT_TEXT = "assistant_text"
SUBAGENT_BRIEF = "subagent_brief"
SUBAGENT_REPORT = "subagent_report"
COMPACTION_SUMMARY = "compaction_summary"
REASONING = "reasoning"
SYSTEM_PROMPT = "system_prompt"
SYSTEM_REMINDER = "system_reminder"
CONTEXT_INJECTION = "context_injection"
HOOK_OUTPUT = "hook_output"
COMMAND_EXPANSION = "command_expansion"
SKILL_BODY = "skill_body"
LOCAL_COMMAND_OUTPUT = "local_command_output"
AGENT_MESSAGE = "agent_message"
INTERRUPT_MARKER = "interrupt_marker"
MEMORY = "memory"
"""A Markdown memory file indexed as one document (issue 16; its session has source_type `memory`)."""

ALL: tuple[str, ...] = (
    HUMAN_PROMPT,
    QUEUED_PROMPT,
    ASSISTANT_TEXT,
    SUBAGENT_BRIEF,
    SUBAGENT_REPORT,
    COMPACTION_SUMMARY,
    REASONING,
    SYSTEM_PROMPT,
    SYSTEM_REMINDER,
    CONTEXT_INJECTION,
    HOOK_OUTPUT,
    COMMAND_EXPANSION,
    SKILL_BODY,
    LOCAL_COMMAND_OUTPUT,
    AGENT_MESSAGE,
    INTERRUPT_MARKER,
    MEMORY,
)

PROMPTS: tuple[str, ...] = (HUMAN_PROMPT, QUEUED_PROMPT)
"""What a person typed."""

CONVERSATIONAL: tuple[str, ...] = (
    HUMAN_PROMPT,
    QUEUED_PROMPT,
    ASSISTANT_TEXT,
    SUBAGENT_BRIEF,
    SUBAGENT_REPORT,
    COMPACTION_SUMMARY,
    AGENT_MESSAGE,
    MEMORY,
)
"""The default search surface."""

CLASS_GROUPS: dict[str, tuple[str, ...]] = {
    "conversational": CONVERSATIONAL,
    "prompts": PROMPTS,
    "all": ALL,
}
"""Named groups of classes a search may ask for instead of listing classes (the MCP ``classes``
argument, the web search page's "class" choice): the default surface, what a person typed,
everything."""
