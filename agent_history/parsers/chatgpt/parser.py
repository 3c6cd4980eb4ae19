"""ChatGPT data export → one session per conversation (pure).

Format (FORMATS-NEW.md §15; a real conversation in fixtures/samples/chatgpt-export; content
types from kenn-io/agentsview ``internal/parser/chatgpt.go`` at 538600744d1b): the export's
``conversations.json`` is a JSON array of conversations (newer exports shard it as
``conversations-NNN.json``; one object is accepted too): ``{id | conversation_id, title,
create_time, update_time (float epoch seconds), default_model_slug, current_node, mapping{<node
id>: {id, parent, children[], message | null}}}``; a message is ``{id, author{role, name},
create_time, content{content_type, parts[] | text | thoughts[] | …}, status, end_turn,
recipient, metadata{model_slug, is_visually_hidden_from_conversation, finish_details, …}}``.

- the mapping is a **tree**: a regenerated answer or an edited prompt is a sibling. Nodes are
  read parents first (depth-first from the roots, children in order); the visible conversation
  is the path from ``current_node`` up the ``parent`` links — messages off it are kept with
  ``on_active_branch = False`` (as claude.ai's and pi's branches), and start no turn;
- visible ``user`` text → ``human_prompt`` (a turn); ``assistant`` ``text`` /
  ``multimodal_text`` → ``assistant_text`` and one model call without usage (the export has no
  token counts and no cost), model ``metadata.model_slug``; ``thoughts`` → one ``reasoning``
  message per thought; ``reasoning_recap`` ("Thought for 5s") is a label, not text;
- nodes hidden from the conversation (``is_visually_hidden_from_conversation``: the system
  prompt, the model's context) give no message, except ``user_editable_context`` (the user's
  custom instructions) and ``model_editable_context`` (memory) → ``context_injection``; an
  assistant placeholder with empty text gives no message and no model call;
- tool use: an assistant message addressed to a tool (``recipient`` not ``all``: ``python``,
  ``web.run``, ``dalle.text2im`` …, usually ``code`` content) is a tool call keyed by its node
  id; the next ``tool`` message below it (``execution_output``, ``tether_browsing_display``,
  ``tether_quote``, ``system_error`` (an error), text) is its result; a tool message with no
  call above it is a call of its own;
- image parts (``image_asset_pointer``) → attachment metadata (size, width, height);
- times are ``create_time`` (float seconds; NULL on some system nodes).
``session_versions`` stamps each conversation with its ``update_time``, so a new export is
re-read only for the conversations that changed. Record types counted: ``conversation``,
``message/<role>``, ``content/<content_type>``.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_history.model import classes
from agent_history.model.rows import (
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    Row,
    SessionRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import DocumentParser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "chatgpt"
VERSION = 1
ROLES = frozenset({"system", "user", "assistant", "tool"})
CONTENT_TYPES = frozenset(
    {
        "text",
        "multimodal_text",
        "code",
        "execution_output",
        "thoughts",
        "reasoning_recap",
        "tether_quote",
        "tether_browsing_display",
        "system_error",
        "user_editable_context",
        "model_editable_context",
        "computer_output",
        "super_widget",
    }
)
CONTEXT_TYPES = frozenset({"user_editable_context", "model_editable_context"})


def _text(content: dict) -> tuple[str, list[dict]]:
    """(text, attachment metadata) of a message ``content``."""
    ctype = as_str(content.get("content_type")) or ""
    if ctype in ("text", "multimodal_text"):
        texts, attachments = [], []
        for part in as_list(content.get("parts")):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                meta = {k: part[k] for k in ("size_bytes", "width", "height") if as_int(part.get(k)) is not None}
                attachments.append({"kind": as_str(part.get("content_type")) or "part", **meta})
        return "\n".join(t for t in texts if t), attachments
    if ctype == "user_editable_context":
        parts = [as_str(content.get(k)) for k in ("user_profile", "user_instructions")]
        return "\n\n".join(p for p in parts if p), []
    if ctype == "model_editable_context":
        return as_str(content.get("model_set_context")) or "", []
    if ctype == "tether_browsing_display":
        return as_str(content.get("result")) or as_str(content.get("summary")) or "", []
    if ctype == "tether_quote":
        parts = [as_str(content.get(k)) for k in ("title", "url", "text")]
        return "\n".join(p for p in parts if p), []
    return as_str(content.get("text")) or "", []


def _order(mapping: dict) -> list[str]:
    """Node ids parents first: depth-first from the roots, children in order; nodes no root
    reaches (a broken parent link) after them, in mapping order."""
    roots = [k for k, n in mapping.items() if as_str(as_dict(n).get("parent")) not in mapping]
    out: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        nid = stack.pop()
        if nid in seen or nid not in mapping:
            continue
        seen.add(nid)
        out.append(nid)
        children = [c for c in as_list(as_dict(mapping[nid]).get("children")) if isinstance(c, str)]
        stack.extend(reversed(children))
    out += [k for k in mapping if k not in seen]
    return out


class ChatgptExportParser(DocumentParser):
    """``conversations.json`` (or a shard) of a ChatGPT data export (DocumentParser contract)."""

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
        self._versions: dict[str, str] = {}
        for conv in convs:
            if not isinstance(conv, dict):
                pos = self._next()
                rows.append(
                    ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "conversation is not an object")
                )
                continue
            rows.extend(self._conversation(conv))
        return rows

    def session_versions(self) -> dict[str, str] | None:
        """Conversation id → ``update_time`` (incremental re-reads of a new export)."""
        return getattr(self, "_versions", None)

    def _next(self) -> Pos:
        pos = Pos(self._n, 0, self._n + 1)
        self._n += 1
        return pos

    def _conversation(self, conv: dict) -> list[Row]:
        pos = self._next()
        rows: list[Row] = [record_type_row(AGENT, conv, "conversation", None, True)]
        sid = as_nonempty_str(conv.get("conversation_id")) or as_nonempty_str(conv.get("id"))
        mapping = as_dict(conv.get("mapping"))
        if sid is None:
            return rows + [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "conversation without id")]
        if conv.get("update_time") is not None:
            self._versions[sid] = str(conv.get("update_time"))
        default_model = as_nonempty_str(conv.get("default_model_slug"))
        active: set[str] = set()
        cur = as_nonempty_str(conv.get("current_node"))
        while cur is not None and cur in mapping and cur not in active:
            active.add(cur)
            cur = as_nonempty_str(as_dict(mapping[cur]).get("parent"))
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                model=default_model,
                ai_title=as_nonempty_str(conv.get("title")),
                started_at=parse_ts(conv.get("create_time")),
                ended_at=parse_ts(conv.get("update_time")),
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
        turn: str | None = None
        open_calls: dict[str, dict] = {}  # node id of a call → its state (parent chain lookup)
        call_of: dict[str, str] = {}  # node id → the pending call at or above it
        parent_of = {k: as_nonempty_str(as_dict(n).get("parent")) for k, n in mapping.items()}
        for nid in _order(mapping):
            node = as_dict(mapping[nid])
            msg = node.get("message")
            if not isinstance(msg, dict):
                call_of[nid] = call_of.get(parent_of.get(nid) or "", "")
                continue
            npos = self._next()
            loc = {"byte_offset": npos.byte_offset, "line_number": npos.line_number}
            author = as_dict(msg.get("author"))
            role = as_str(author.get("role")) or ""
            content = as_dict(msg.get("content"))
            ctype = as_str(content.get("content_type")) or ""
            rows.append(record_type_row(AGENT, msg, "message", role, role in ROLES))
            rows.append(record_type_row(AGENT, content, "content", ctype, ctype in CONTENT_TYPES))
            if role not in ROLES or ctype not in CONTENT_TYPES:
                what = f"role {role!r}" if role not in ROLES else f"content type {ctype!r}"
                rows.append(ParseIssueRow("unknown_record_type", npos.byte_offset, npos.line_number, what))
                continue
            meta = as_dict(msg.get("metadata"))
            on_branch = nid in active if active else None
            ts = parse_ts(msg.get("create_time"))
            model = as_nonempty_str(meta.get("model_slug"))
            uid = as_nonempty_str(msg.get("id")) or nid
            text, attachments = _text(content)
            hidden = meta.get("is_visually_hidden_from_conversation") is True
            call_of[nid] = call_of.get(parent_of.get(nid) or "", "")
            common = {
                "agent": AGENT,
                "session_uid": sid,
                "agent_id": "",
                "ts": ts,
                "on_active_branch": on_branch,
                **loc,
                "record_type": role,
                "record_origin": ctype,
            }
            if ctype in CONTEXT_TYPES:
                if text.strip():
                    rows.append(
                        MessageRow(
                            **common,
                            message_uid=uid,
                            turn_uid=turn,
                            role=role,
                            message_class=classes.CONTEXT_INJECTION,
                            text=text,
                        )
                    )
                continue
            if hidden or role == "system":
                continue
            recipient = as_str(msg.get("recipient")) or "all"
            if role == "user":
                if not (text.strip() or attachments):
                    continue
                if on_branch is not False:
                    turn = uid
                rows.append(TurnRow(AGENT, uid, sid, "", None, ts, ts, npos.byte_offset, npos.line_number))
                rows.append(
                    MessageRow(
                        **common,
                        message_uid=uid,
                        turn_uid=uid,
                        role="user",
                        message_class=classes.HUMAN_PROMPT,
                        text=text or None,
                        attachments=attachments or None,
                    )
                )
            elif role == "assistant" and ctype == "thoughts":
                for k, th in enumerate(as_list(content.get("thoughts"))):
                    t = as_dict(th)
                    body = as_nonempty_str(t.get("content")) or as_nonempty_str(t.get("summary"))
                    if body:
                        rows.append(
                            MessageRow(
                                **common,
                                message_uid=f"{uid}#{k}",
                                turn_uid=turn,
                                role="assistant",
                                message_class=classes.REASONING,
                                text=body,
                                model=model,
                            )
                        )
            elif role == "assistant" and ctype != "reasoning_recap":
                if not text.strip() and not attachments:
                    continue  # an empty placeholder before the real answer
                finish = as_dict(meta.get("finish_details"))
                rows.append(
                    ModelCallRow(
                        agent=AGENT,
                        call_uid=uid,
                        session_uid=sid,
                        agent_id="",
                        turn_uid=turn,
                        request_id=as_nonempty_str(meta.get("request_id")),
                        model=model or default_model,
                        stop_reason=as_nonempty_str(finish.get("type")),
                        is_complete=True if msg.get("status") == "finished_successfully" else None,
                        ts=ts,
                        **loc,
                    )
                )
                if recipient != "all":
                    open_calls[uid] = {"name": recipient, "input": text, "pos": npos, "ts": ts, "turn": turn}
                    call_of[nid] = uid
                else:
                    rows.append(
                        MessageRow(
                            **common,
                            message_uid=uid,
                            turn_uid=turn,
                            role="assistant",
                            message_class=classes.ASSISTANT_TEXT,
                            text=text or None,
                            model=model or default_model,
                            attachments=attachments or None,
                        )
                    )
            elif role == "tool":
                target = call_of.get(nid) or ""
                call = open_calls.get(target)
                if call is None or "output" in call:
                    target = uid
                    call = open_calls.setdefault(
                        uid, {"name": as_nonempty_str(author.get("name")), "pos": npos, "ts": ts, "turn": turn}
                    )
                call.update(output=text, out_pos=npos, out_ts=ts, error=ctype == "system_error")
                call_of[nid] = ""
        for cid, c in open_calls.items():
            output = c.get("output")
            is_error = None if output is None else bool(c.get("error"))
            error_class, excerpt = classify_error(output, is_error=is_error)
            pos_, out = c["pos"], c.get("out_pos")
            rows.append(
                ToolCallRow(
                    agent=AGENT,
                    tool_call_uid=cid,
                    session_uid=sid,
                    agent_id="",
                    turn_uid=c.get("turn"),
                    message_uid=cid,
                    call_uid=cid if "input" in c else None,
                    name=c.get("name"),
                    input=c.get("input"),
                    output=output,
                    is_error=is_error or None,
                    outcome=None if output is None else ("error" if is_error else "ok"),
                    error_class=error_class,
                    error_excerpt=excerpt,
                    started_at=c.get("ts"),
                    ended_at=c.get("out_ts"),
                    byte_offset=pos_.byte_offset,
                    line_number=pos_.line_number,
                    output_byte_offset=out.byte_offset if out else None,
                    output_line=out.line_number if out else None,
                )
            )
        return rows


PARSER = ChatgptExportParser
DOCUMENT_PARSER = ChatgptExportParser
