"""Codex record fields: token usage, session source, message content. Pure; never raises.

Shapes read here (see `agent_history.parsers.codex.parser` for the whole format contract):
- Token usage objects (``token_count.info.total_token_usage`` / ``last_token_usage``):
  ``input_tokens`` (includes ``cached_input_tokens``), ``output_tokens`` (includes
  ``reasoning_output_tokens``), ``total_tokens`` (absent in some versions, E20).
- ``session_meta.source``: a string (``cli``, ``exec``, ``vscode``, ``mcp``) or an object
  ``{"subagent": "review" | {"thread_spawn": {parent_thread_id, depth, agent_role…}} |
  {"other": name}}``; newer metas also say ``thread_source: "subagent"`` and ``agent_role``.
- Message content: a list of blocks ``input_text`` / ``output_text`` / ``text`` (``text``),
  ``refusal`` (``refusal``), ``input_image`` (``image_url``, usually a base64 data URL; images
  of local files are wrapped by ``<image name=…>`` / ``</image>`` text blocks), or a bare string.
- File names: ``rollout-<YYYY-MM-DDThh-mm-ss>-<session id>.jsonl``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, NamedTuple

from agent_history.parsers.common.coerce import as_nonempty_str, as_strict_int

__all__ = [
    "Usage",
    "attachment",
    "block_texts",
    "history_start",
    "parse_usage",
    "session_uid_from_path",
    "short_sha",
    "source_info",
    "usage_minus",
    "user_text",
]

_ROLLOUT_NAME = re.compile(r"rollout-\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}-(?P<id>.+)$")
_IMAGE_TAG = re.compile(r"^\s*</?image\b[^>]*>\s*$")
_DATA_URL = re.compile(r"^data:(?P<mt>[\w.+-]+/[\w.+-]+)?(?:;[^,]*)?,")


class Usage(NamedTuple):
    """One token usage object; None = the field is absent."""

    input: int | None
    cached: int | None
    output: int | None
    reasoning: int | None
    total: int | None


def parse_usage(v: Any) -> Usage | None:
    """A token usage object → `Usage` (absent or non-int fields None); None if it has none."""
    if not isinstance(v, dict):
        return None
    u = Usage(
        as_strict_int(v.get("input_tokens")),
        as_strict_int(v.get("cached_input_tokens")),
        as_strict_int(v.get("output_tokens")),
        as_strict_int(v.get("reasoning_output_tokens")),
        as_strict_int(v.get("total_tokens")),
    )
    return None if all(x is None for x in u) else u


def usage_minus(a: Usage, b: Usage | None) -> Usage:
    """Field-wise `a` − `b` (a cumulative total minus the previous one); unknown stays `a`'s."""
    if b is None:
        return a
    return Usage(*((x - y if x is not None and y is not None else x) for x, y in zip(a, b, strict=True)))


def short_sha(text: str) -> str:
    """First 16 hex digits of the SHA-256 of `text` (UTF-8): the text part of content keys."""
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def session_uid_from_path(path: str) -> str:
    """The session id in a rollout file name (``rollout-<ts>-<id>.jsonl``), else the file stem."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = name[:-6] if name.endswith(".jsonl") else name
    m = _ROLLOUT_NAME.match(stem)
    return m.group("id") if m else stem


def source_info(meta: dict) -> tuple[bool, str | None, str | None]:
    """``session_meta`` payload → (is_subagent, parent thread id, sub-agent type). Never raises."""
    source = meta.get("source")
    is_sub = meta.get("thread_source") == "subagent"
    parent, stype = None, as_nonempty_str(meta.get("agent_role"))
    if isinstance(source, dict) and "subagent" in source:
        is_sub = True
        sub = source["subagent"]
        if isinstance(sub, str):
            stype = stype or sub
        elif isinstance(sub, dict):
            spawn = sub.get("thread_spawn")
            if isinstance(spawn, dict):
                parent = as_nonempty_str(spawn.get("parent_thread_id"))
                stype = stype or as_nonempty_str(spawn.get("agent_role")) or as_nonempty_str(spawn.get("agent_type"))
            other = sub.get("other")
            if isinstance(other, str):
                stype = stype or other
    elif source == "subagent":
        is_sub = True
    return is_sub, parent, stype


def history_start(meta: dict) -> int | None:
    """``subagent_history_start_ordinal`` from a meta (top level, ``source`` or its thread_spawn)."""
    for holder in (meta, meta.get("source")):
        if not isinstance(holder, dict):
            continue
        if "subagent_history_start_ordinal" in holder:
            return as_strict_int(holder["subagent_history_start_ordinal"])
        sub = holder.get("subagent")
        spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
        if isinstance(spawn, dict) and "subagent_history_start_ordinal" in spawn:
            return as_strict_int(spawn["subagent_history_start_ordinal"])
    return None


def attachment(url: Any) -> dict | None:
    """An image URL → metadata (media type and decoded size in bytes for data URLs), never data."""
    if not isinstance(url, str):
        return None
    m = _DATA_URL.match(url)
    if m is None:
        return {"type": "image", "url": url[:300]}
    data = url[m.end() :]
    size = len(data) * 3 // 4 - data[-2:].count("=") if ";base64" in url[: m.end()] else len(data)
    return {"type": "image", "media_type": m.group("mt"), "bytes": size}


def user_text(content: Any) -> tuple[str | None, list[dict]]:
    """A user/developer message's content → (joined text, image attachments)."""
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        return None, []
    texts, atts = [], []
    for block in content:
        if not isinstance(block, dict):
            continue
        t = block.get("type")
        if t in ("input_image", "image"):
            att = attachment(block.get("image_url"))
            if att:
                atts.append(att)
        elif isinstance(block.get("text"), str) and not _IMAGE_TAG.match(block["text"]):
            texts.append(block["text"])
    return ("\n".join(texts) if texts else None), atts


def block_texts(content: Any) -> list[str]:
    """An assistant message's content → one text per block (output_text / text / refusal)."""
    if isinstance(content, str):
        return [content]
    out = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            text = block.get("text") if isinstance(block.get("text"), str) else block.get("refusal")
            if isinstance(text, str):
                out.append(text)
    return out
