"""Pure transcript parsers: one module per harness + shared helpers. No file or database I/O.

`PARSERS` maps a harness name to its parser class; `detect_agent` guesses the harness of a
file from its path and first bytes.
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
AGENTS: tuple[str, ...] = tuple(_MODULES)


def parser_class(agent: str) -> type[Parser]:
    """The parser class for harness `agent` (claude | codex | pi). Raises KeyError if unknown."""
    module = importlib.import_module(f"agent_history.parsers.{_MODULES[agent]}")
    return module.PARSER


def source_parser(agent: str, kind: str):
    """The parser class for `agent` reading a source of `kind` (jsonl | document | database):
    the module's PARSER, DOCUMENT_PARSER or DATABASE_PARSER. Raises KeyError if there is none."""
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

    Returns claude | codex | pi, or None when nothing matches. Content wins over the path when
    the content is unambiguous (field case E09: Claude files may start with bookkeeping lines).
    """
    text = head.decode("utf-8", "replace")
    first = text.split("\n", 1)[0]
    # issue 16, part 1 (h-src): shapes of FORMATS.md §4, §5, §8 (before Claude's `sessionId` test)
    if re.search(r'"projectHash"\s*:', text) or re.search(r'"type"\s*:\s*"gemini"', text):
        return "gemini"
    if re.search(r'"chat_messages"\s*:', text) or re.search(r'"current_leaf_message_uuid"\s*:', text):
        return "claude-ai"
    if re.search(r'"(sessionID|messageID|projectID)"\s*:', text) or text.startswith("SQLite format 3\x00") and "opencode" in path:
        return "opencode"
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


__all__ = ["AGENTS", "ParseContext", "Parser", "Pos", "detect_agent", "parser_class", "source_parser"]
