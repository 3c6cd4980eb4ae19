"""claude.ai data-export parser: ``conversations.json`` → one session per conversation (pure).

Shape (FORMATS.md §8, samples in ``corpus/samples/claude-ai-export``): the export is an array of
conversations (one object is accepted too: the API detail shape) ``{uuid, name, summary, model,
created_at, updated_at, current_leaf_message_uuid, chat_messages: [{uuid, sender: human |
assistant, text, content[], index, created_at, parent_message_uuid, stop_reason, attachments,
files}]}``. Quirks handled:
- top-level ``text`` is ``""`` when ``content[]`` holds the text: text comes from ``content``
  ``text`` blocks, the top-level ``text`` only when there are none;
- branches: the visible conversation is the chain from ``current_leaf_message_uuid`` up through
  ``parent_message_uuid``; the root's parent is the all-zero UUID sentinel. Messages off that
  chain are kept with ``on_active_branch = False`` (as pi's abandoned branches); without a leaf
  every message is taken in ``index`` order (``on_active_branch`` NULL);
- ``thinking`` blocks (``thinking`` often ``""``, ``summaries[]``) → `reasoning` messages;
  ``tool_use`` / ``tool_result`` (paired by ``tool_use_id``; ``display_content.json_block`` is
  JSON in a string and is not needed) → tool calls;
- ``attachments`` / ``files`` → message ``attachments`` metadata (names, types, sizes; never the
  extracted content).
No usage is recorded: each assistant message is a model call with NULL token counts. No cwd/git.
Record types counted: ``conversation``, ``chat_message/<sender>``, ``content/<type>``.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from agent_history.model import classes
from agent_history.model.rows import MessageRow, ModelCallRow, ParseIssueRow, Row, SessionRow, ToolCallRow, TurnRow
from agent_history.parsers.base import DocumentParser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "claude-ai"
VERSION = 1
ROOT_SENTINEL = "00000000-0000-4000-8000-000000000000"
"""``parent_message_uuid`` of a root message (any all-zero UUID is treated the same)."""
SENDERS: dict[str, tuple[str, str]] = {
    "human": ("user", classes.HUMAN_PROMPT),
    "assistant": ("assistant", classes.ASSISTANT_TEXT),
}
# content block types (claude.ai chat message content, FORMATS.md §8)
BLOCK_TYPES = frozenset({"text", "thinking", "tool_use", "tool_result", "image", "document", "voice_note"})
_ATTACHMENT_KEYS = ("file_name", "file_type", "file_size", "file_kind", "file_uuid", "id")


def _is_root(parent: str | None) -> bool:
    return parent is None or set(parent.replace("-", "")) <= {"0"} or parent == ROOT_SENTINEL


def _branch(messages: list[dict], leaf: str | None) -> tuple[list[dict], set[str] | None]:
    """Messages in conversation order and the uuids on the active branch (None: no leaf named)."""
    ordered = sorted(messages, key=lambda m: (as_int(m.get("index")) is None, as_int(m.get("index")) or 0))
    if not leaf:
        return ordered, None
    by_uuid = {m.get("uuid"): m for m in messages if isinstance(m.get("uuid"), str)}
    active: set[str] = set()
    cur = by_uuid.get(leaf)
    while cur is not None and cur["uuid"] not in active:
        active.add(cur["uuid"])
        parent = as_str(cur.get("parent_message_uuid"))
        cur = None if _is_root(parent) else by_uuid.get(parent)
    return ordered, active


def _block_text(block: dict) -> str | None:
    if block.get("type") == "text":
        return as_str(block.get("text"))
    return None


def _result_text(block: dict) -> str | None:
    parts = []
    for c in as_list(block.get("content")):
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            parts.append(c["text"])
        elif isinstance(c, str):
            parts.append(c)
    if parts:
        return "\n".join(parts)
    if block.get("structured_content") is not None:
        return orjson.dumps(block["structured_content"]).decode()
    return None


def _attachments(msg: dict) -> list[dict] | None:
    out = []
    for key in ("attachments", "files"):
        for a in as_list(msg.get(key)):
            if isinstance(a, dict):
                meta = {
                    k: a[k]
                    for k in _ATTACHMENT_KEYS
                    if isinstance(a.get(k), str | int) and not isinstance(a.get(k), bool)
                }
                meta["kind"] = key
                out.append(meta)
    return out or None


class ClaudeAiExportParser(DocumentParser):
    """``conversations.json`` of a claude.ai data export (DocumentParser contract)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of every conversation; undecodable input or a non-object → parse issues."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        convs = doc if isinstance(doc, list) else [doc]
        rows: list[Row] = list(issues)
        self._n = 0
        self._versions = {
            c["uuid"]: str(c.get("updated_at"))
            for c in convs
            if isinstance(c, dict) and isinstance(c.get("uuid"), str) and c.get("updated_at") is not None
        }
        for conv in convs:
            if not isinstance(conv, dict):
                rows.append(
                    ParseIssueRow("non_object", self._next().byte_offset, None, "conversation is not an object")
                )
                continue
            rows.extend(self._conversation(conv))
        return rows

    def session_versions(self) -> dict[str, str] | None:
        """Conversation uuid → ``updated_at`` (incremental re-reads of a new export)."""
        return getattr(self, "_versions", None)

    def _next(self) -> Pos:
        pos = Pos(self._n, 0, self._n + 1)
        self._n += 1
        return pos

    def _conversation(self, conv: dict) -> list[Row]:
        pos = self._next()
        rows: list[Row] = [record_type_row(AGENT, conv, "conversation", None, True)]
        sid = as_nonempty_str(conv.get("uuid"))
        if sid is None:
            return rows + [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "conversation without uuid")]
        model = as_nonempty_str(conv.get("model"))
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=False,
                model=model,
                ai_title=as_nonempty_str(conv.get("name")) or as_nonempty_str(conv.get("title")),
                started_at=parse_ts(conv.get("created_at")),
                ended_at=parse_ts(conv.get("updated_at")),
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
        messages = [m for m in as_list(conv.get("chat_messages")) if isinstance(m, dict)]
        ordered, active = _branch(messages, as_nonempty_str(conv.get("current_leaf_message_uuid")))
        turn: str | None = None
        for msg in ordered:
            out, turn = self._message(msg, sid, model, turn, active)
            rows.extend(out)
        return rows

    def _message(self, msg: dict, sid: str, model: str | None, turn: str | None, active: set[str] | None):
        pos = self._next()
        sender = as_str(msg.get("sender")) or ""
        rows: list[Row] = [record_type_row(AGENT, msg, "chat_message", sender, sender in SENDERS)]
        uid = as_nonempty_str(msg.get("uuid"))
        if sender not in SENDERS or uid is None:
            detail = f"sender {sender!r}" if sender not in SENDERS else "chat message without uuid"
            kind = "unknown_record_type" if sender not in SENDERS else "bad_record"
            return rows + [ParseIssueRow(kind, pos.byte_offset, pos.line_number, detail)], turn
        role, mclass = SENDERS[sender]
        on_branch = None if active is None else uid in active
        ts = parse_ts(msg.get("created_at"))
        loc = {"byte_offset": pos.byte_offset, "line_number": pos.line_number}
        if sender == "human" and on_branch is not False:
            turn = uid
        msg_turn = uid if sender == "human" else turn
        if sender == "human":
            rows.append(TurnRow(AGENT, uid, sid, "", None, ts, ts, pos.byte_offset, pos.line_number))
        elif msg_turn is not None:
            rows.append(
                TurnRow(AGENT, msg_turn, sid, "", model, None, parse_ts(msg.get("updated_at")) or ts, None, None)
            )
        common = {
            "agent": AGENT,
            "session_uid": sid,
            "agent_id": "",
            "turn_uid": msg_turn,
            "ts": ts,
            "on_active_branch": on_branch,
            "model": model if sender == "assistant" else None,
        }
        parent = as_str(msg.get("parent_message_uuid"))
        texts: list[str] = []
        results: dict[str, dict] = {}
        uses: list[dict] = []
        for i, block in enumerate(as_list(msg.get("content"))):
            b = as_dict(block)
            btype = as_str(b.get("type")) or ""
            rows.append(record_type_row(AGENT, b, "content", btype, btype in BLOCK_TYPES))
            if btype not in BLOCK_TYPES:
                rows.append(
                    ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"content type {btype!r}")
                )
            elif btype == "text" and b.get("text"):
                texts.append(b["text"])
            elif btype == "thinking":
                body = as_nonempty_str(b.get("thinking")) or "\n".join(
                    s["summary"]
                    for s in as_list(b.get("summaries"))
                    if isinstance(s, dict) and isinstance(s.get("summary"), str)
                )
                if body:
                    rows.append(
                        MessageRow(
                            **common,
                            message_uid=f"{uid}#thinking{i}",
                            parent_uid=uid,
                            role="assistant",
                            message_class=classes.REASONING,
                            text=body,
                            **loc,
                            record_type="thinking",
                        )
                    )
            elif btype == "tool_use" and as_nonempty_str(b.get("id")):
                uses.append(b)
            elif btype == "tool_result" and as_nonempty_str(b.get("tool_use_id")):
                results[b["tool_use_id"]] = b
        text = "\n\n".join(texts) if texts else as_nonempty_str(msg.get("text"))
        attachments = _attachments(msg)
        if text or attachments:
            rows.append(
                MessageRow(
                    **common,
                    message_uid=uid,
                    parent_uid=None if _is_root(parent) else parent,
                    role=role,
                    message_class=mclass,
                    text=text,
                    attachments=attachments,
                    **loc,
                    record_type=sender,
                    record_origin=None,
                )
            )
        if sender == "assistant":
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=uid,
                    session_uid=sid,
                    agent_id="",
                    turn_uid=msg_turn,
                    model=model,
                    stop_reason=as_nonempty_str(msg.get("stop_reason")),
                    is_complete=bool(msg.get("stop_reason")) or None,
                    ts=ts,
                    **loc,
                )
            )
        for b in uses:
            rows.append(self._tool(b, results.pop(b["id"], None), sid, uid, msg_turn, loc))
        for tid, b in results.items():  # a result whose call is in another message
            rows.append(self._tool({"id": tid, "name": b.get("name")}, b, sid, uid, msg_turn, loc))
        return rows, turn

    @staticmethod
    def _tool(use: dict, result: dict | None, sid: str, uid: str, turn: str | None, loc: dict) -> Row:
        output = _result_text(result) if result is not None else None
        is_error = result.get("is_error") is True if result is not None else None
        error_class, excerpt = classify_error(output, is_error=is_error)
        outcome = None if result is None else ("error" if is_error else "ok")
        inp = use.get("input")
        return ToolCallRow(
            agent=AGENT,
            tool_call_uid=use["id"],
            session_uid=sid,
            agent_id="",
            turn_uid=turn,
            message_uid=uid,
            call_uid=uid,
            name=as_nonempty_str(use.get("name")),
            input=None if inp is None else orjson.dumps(inp).decode(),
            output=output,
            is_error=is_error or None,
            outcome=outcome,
            error_class=error_class,
            error_excerpt=excerpt,
            started_at=parse_ts(use.get("start_timestamp")),
            ended_at=parse_ts(result.get("stop_timestamp")) if result is not None else None,
            output_byte_offset=loc["byte_offset"] if result is not None else None,
            output_line=loc["line_number"] if result is not None else None,
            **loc,
        )


PARSER = ClaudeAiExportParser
DOCUMENT_PARSER = ClaudeAiExportParser
