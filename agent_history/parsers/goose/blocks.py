"""What Goose's legacy session files and its ``sessions.db`` share (pure): the content block
types of a message's ``content`` (``content_json`` in the database) and the tool rules.
Format: FORMATS-NEW.md §5."""

from __future__ import annotations

from typing import Any

import orjson

from agent_history.parsers.common.coerce import as_dict, as_list, as_str

AGENT = "goose"
VERSION = 1
ROLES = frozenset({"user", "assistant"})
BLOCKS = frozenset(
    {
        "text",
        "thinking",
        "redactedThinking",
        "toolRequest",
        "toolResponse",
        "image",
        "legacy",
        # sessions.db content (crates/goose/src/conversation/message.rs ``MessageContent``)
        "frontendToolRequest",
        "toolConfirmationRequest",
        "actionRequired",
        "systemNotification",
    }
)
"""Content block types read: the legacy files' and the database's; confirmations, requests for
action, notifications and images are counted, not turned into rows."""
EDITOR_OPS: dict[str, str] = {
    "view": "read",
    "write": "create",
    "str_replace": "edit",
    "insert": "edit",
    "undo_edit": "edit",
}
"""``text_editor`` ``command`` → touch op."""
SHELL_TOOLS = frozenset({"shell", "bash"})


def base_name(name: str | None) -> str:
    """A tool name without its ``<extension>__`` prefix."""
    return (name or "").rsplit("__", 1)[-1]


def block_type(block: dict) -> str:
    """A block's ``type``; the untyped Nov-2024 blocks are ``legacy``."""
    t = as_str(block.get("type"))
    return t if t is not None else "legacy"


def result_text(value: Any) -> str | None:
    """Tool output: text items (``{type: text, text}`` or Nov-2024 ``{"Text": {text}}``), else JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    texts = []
    for item in as_list(value):
        i = as_dict(item)
        text = as_str(i.get("text")) if "text" in i else as_str(as_dict(i.get("Text")).get("text"))
        if text is not None:
            texts.append(text)
    return "\n".join(texts) if texts else orjson.dumps(value).decode()
