"""Pure transcript parsers: one module per harness + shared helpers. No file or database I/O.

`parser_class` / `source_parser` give a harness's parser class for each source kind (JSONL,
whole document, database); `detect_agent` guesses the harness of a file from its path and first
bytes.
"""

from __future__ import annotations

import importlib
import re

from agent_history.parsers.base import ParseContext, Parser, Pos

_MODULES = {"claude": "claude_code.parser", "codex": "codex.parser", "pi": "pi.parser"}
# issue 16, part 1 (h-src): Gemini CLI (JSON documents + JSONL), OpenCode (storage JSON, export
# documents, SQLite db), claude.ai data export. Their modules also export DOCUMENT_PARSER /
# DATABASE_PARSER (see `source_parser`).
_MODULES.update({"gemini": "gemini.parser", "opencode": "opencode.parser", "claude-ai": "claude_ai.parser"})
# -- issue 16: Cursor, GitHub Copilot CLI, VS Code Copilot Chat (JSONL parsers) --------------------
_MODULES.update({"cursor": "cursor.parser", "copilot": "copilot.events", "copilot-vscode": "copilot_vscode.agent_log"})
AGENTS: tuple[str, ...] = tuple(_MODULES)

DOCUMENT_MODULES: dict[str, str] = {
    # document kind (discovery rule name) → module whose PARSER is a `DocumentParser`
    "copilot-legacy": "copilot.legacy",
    "copilot-vscode-chat": "copilot_vscode.chat_sessions",
}
"""Whole-document parsers by kind; memories (kind ``memory``) use `document_parser_class`."""


def document_parser_class(kind: str, agent: str) -> type:
    """The `DocumentParser` class for document `kind` (a `DOCUMENT_MODULES` key, or ``memory``
    for a Markdown memory of harness `agent`). Raises KeyError if unknown."""
    if kind == "memory":
        from agent_history.parsers.memory.parser import for_agent

        return for_agent(agent)
    module = importlib.import_module(f"agent_history.parsers.{DOCUMENT_MODULES[kind]}")
    return module.PARSER


def parser_class(agent: str) -> type[Parser]:
    """The JSONL parser class for harness `agent` (an `AGENTS` name). Raises KeyError if unknown."""
    module = importlib.import_module(f"agent_history.parsers.{_MODULES[agent]}")
    return module.PARSER


def source_parser(agent: str, kind: str, doc_kind: str | None = None):
    """The parser class for `agent` reading a source of `kind` (jsonl | document | database):
    the module's PARSER, DOCUMENT_PARSER or DATABASE_PARSER; a document with a `doc_kind` (a
    parser other than the agent's own: Copilot legacy JSON, VS Code chat sessions, memories) gets
    `document_parser_class(doc_kind, agent)`. Raises KeyError if there is none."""
    if kind == "document" and doc_kind:
        return document_parser_class(doc_kind, agent)
    module = importlib.import_module(f"agent_history.parsers.{_MODULES[agent]}")
    name = {"jsonl": "PARSER", "document": "DOCUMENT_PARSER", "database": "DATABASE_PARSER"}[kind]
    if not hasattr(module, name):
        raise KeyError(f"{agent} has no {kind} parser")
    return getattr(module, name)


_PATH_HINTS = (
    (re.compile(r"(^|/)\.claude/|(^|/)projects/[^/]+/"), "claude"),
    (re.compile(r"(^|/)\.codex/|(^|/)rollout-[^/]*\.jsonl$"), "codex"),
    (re.compile(r"(^|/)\.pi/|(^|/)agent/sessions/"), "pi"),
    # issue 16, part 1 (h-src): FORMATS.md §4, §5, §8 locations
    (re.compile(r"(^|/)\.gemini/|(^|/)tmp/[^/]+/chats/session-[^/]*\.jsonl?$"), "gemini"),
    (re.compile(r"(^|/)opencode/(storage/|opencode\.db$)"), "opencode"),
    (re.compile(r"(^|/)conversations\.json$"), "claude-ai"),
)


def detect_agent(path: str, head: bytes) -> str | None:
    """Guess the harness of a transcript from its path, then from its first lines' shapes.

    Returns an `AGENTS` name, or None when nothing matches. Content wins over the path when
    the content is unambiguous (field case E09: Claude files may start with bookkeeping lines).
    """
    text = head.decode("utf-8", "replace")
    first = text.split("\n", 1)[0]
    # issue 16, part 1 (h-src): shapes of FORMATS.md §4, §5, §8 (before Claude's `sessionId` test)
    if re.search(r'"projectHash"\s*:', text) or re.search(r'"type"\s*:\s*"gemini"', text):
        return "gemini"
    if re.search(r'"chat_messages"\s*:', text) or re.search(r'"current_leaf_message_uuid"\s*:', text):
        return "claude-ai"
    if (
        re.search(r'"(sessionID|messageID|projectID)"\s*:', text)
        or text.startswith("SQLite format 3\x00")
        and "opencode" in path
    ):
        return "opencode"
    found = _detect_16(text, first)
    if found:
        return found
    if (
        re.match(r'\{"id"\s*:', first)
        and '"timestamp"' in first
        and '"type"' not in first
        and re.search(r'^\{"(type|record_type)"\s*:\s*"(message|reasoning|function_call|state)"', text, re.M | re.I)
    ):
        return "codex"  # legacy Codex rollout: bare header, then unwrapped items (0.3x–0.4x)
    if re.search(r'"type"\s*:\s*"(session_meta|response_item|event_msg|turn_context)"', text) or re.search(
        r'"record_type"\s*:\s*"state"', text
    ):
        return "codex"
    if re.search(r'"type"\s*:\s*"session"', text) and re.search(
        r'"type"\s*:\s*"(message|model_change|thinking_level_change)"', text + '"type":"message"'
    ):
        if not re.search(r'"sessionId"\s*:', text):
            return "pi"
    if re.search(r'"(sessionId|parentUuid|leafUuid)"\s*:', text) or re.search(
        r'"type"\s*:\s*"(file-history-snapshot|summary|queue-operation)"', text
    ):
        return "claude"
    if re.search(r'^\{"type"\s*:\s*"(user|assistant)"\s*,.*"message"\s*:\s*\{', text, re.M):
        return "claude"  # minimal Claude Code records (no sessionId), e.g. hand-trimmed files
    for pattern, agent in _PATH_HINTS:
        if pattern.search(path):
            return agent
    return None


_COPILOT_EVENT = re.compile(
    r'"type"\s*:\s*"(session\.start|session\.resume|user\.message|assistant\.message|assistant\.turn_start'
    r'|userpromptsubmitted|assistantresponse)"'
)
_CURSOR_LINE = re.compile(r'^\{"role"\s*:\s*"(user|assistant)"\s*,\s*"message"\s*:')


def _detect_16(text: str, first: str) -> str | None:
    """Copilot event logs (``copilot``; ``copilot-vscode`` when written by VS Code) and Cursor
    transcripts (a top-level ``role`` + ``message`` line), FORMATS §6–§7."""
    if _COPILOT_EVENT.search(first):
        return "copilot-vscode" if '"vscodeVersion"' in first else "copilot"
    if _CURSOR_LINE.match(first):
        return "cursor"
    return None


__all__ = [
    "AGENTS",
    "ParseContext",
    "Parser",
    "Pos",
    "detect_agent",
    "document_parser_class",
    "parser_class",
    "source_parser",
]
