"""Continue (the VS Code / JetBrains extension and ``cn``) sessions → rows (pure).

Format (FORMATS-NEW.md §12; real sessions of two users in fixtures/samples/continue; tool
messages from continuedev/continue ``core/index.d.ts`` ``ChatHistoryItem``/``ChatMessage``):
``~/.continue/sessions/<uuid>.json`` is one whole JSON document per session, rewritten on every
change: ``{sessionId, title, workspaceDirectory, history[], mode?, chatModelTitle?}``; each
history item ``{message{id?, role, content, toolCalls?, toolCallId?}, contextItems[],
editorState, promptLogs[{modelTitle, prompt, completion, completionOptions{model}}],
reasoning{startAt, endAt, text}, toolCallState(s)}``. ``sessions/sessions.json`` is the index:
``[{sessionId, title, dateCreated ("<epoch ms>" as a string), workspaceDirectory}]``.

- one session per file (uid ``sessionId``, else the file name); the index gives each listed
  session its start time and title — the only session time Continue records — and the index
  may list sessions whose file is gone (they stay sessions with no messages);
- the working directory is ``workspaceDirectory``: a path or a ``file://`` URI (decoded), ``""``
  = unknown;
- ``user`` → ``human_prompt`` (text parts joined; images as attachment metadata), starting a
  turn; ``assistant`` → ``assistant_text`` and one model call without usage (Continue records no
  token counts in a session; ``dev_data/tokens_generated.jsonl`` has counts without a session id,
  so they are not read); a leading ``<think>…</think>`` in the content (DeepSeek-R1 via Ollama,
  2024) and ``reasoning.text`` (2025, time ``reasoning.startAt``) → ``reasoning``;
  ``thinking`` messages → ``reasoning``; ``system`` → ``system_prompt``;
- the model of an assistant item: ``promptLogs[-1].completionOptions.model``, else its
  ``modelTitle``, else the session's ``chatModelTitle``;
- ``contextItems`` (files and snippets the user attached) → ``context_injection`` messages;
  ``promptLogs[].prompt`` replays the prompt and is never a message;
- agent mode: assistant ``toolCalls[{id, function{name, arguments}}]`` → tool calls; a
  ``tool`` message (``toolCallId``) or the item's ``toolCallState(s)`` (``status`` errored →
  error, canceled → rejected; ``output[].content``) → its result;
- messages carry no time (NULL), except reasoning with ``startAt``;
- titles: Continue asks the chat model for one, and a reasoning model answers with its thinking
  cut at the title's length (every title of the real user1 sample is ``<think>\nAlright, so…``):
  ``<think>…</think>`` blocks are removed from a title, and a title that is only an unclosed
  ``<think>`` is no title (NULL: the first prompt names the session instead).
Record types counted: ``session``, ``history/<role>``, ``index``, ``index_entry``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

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
from agent_history.parsers.common.coerce import as_dict, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "continue"
VERSION = 2
INDEX_NAME = "sessions.json"

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.S)


def session_title(raw: Any) -> str | None:
    """A session title without a reasoning model's ``<think>…</think>``; None when nothing else is left.

    ``"<think>x</think> Hello"`` → ``"Hello"``; ``"<think>\nAlright, so the"`` (cut off) → None.
    """
    text = as_nonempty_str(raw)
    if text is None:
        return None
    text = _THINK_BLOCK.sub("", text).strip()
    if text.startswith("<think>"):
        return None
    return text or None


ROLES: dict[str, tuple[str, str]] = {
    "user": ("user", classes.HUMAN_PROMPT),
    "assistant": ("assistant", classes.ASSISTANT_TEXT),
    "thinking": ("assistant", classes.REASONING),
    "system": ("system", classes.SYSTEM_PROMPT),
    "tool": ("tool", ""),
}
TOOL_STATUS: dict[str, tuple[str | None, bool | None]] = {
    "done": ("ok", False),
    "errored": ("error", True),
    "canceled": ("rejected", True),
    "generating": (None, None),
    "generated": (None, None),
    "calling": (None, None),
}
_THINK = re.compile(r"^\s*<think>(?P<think>.*?)</think>\s*", re.S)


def workspace_path(value: Any) -> str | None:
    """A ``workspaceDirectory`` as a path: a ``file://`` URI decoded, ``""`` → None."""
    text = as_nonempty_str(value)
    if text is None:
        return None
    if text.startswith("file://"):
        return unquote(urlparse(text).path) or None
    return text


def _text(content: Any) -> tuple[str, list[dict]]:
    """(text, attachment metadata) of a message ``content`` (a string or parts)."""
    if isinstance(content, str):
        return content, []
    texts, attachments = [], []
    for part in as_list(content):
        p = as_dict(part)
        if p.get("type") == "text" and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif p.get("type") == "imageUrl":
            attachments.append({"kind": "image"})
    return "\n".join(texts), attachments


class ContinueParser(DocumentParser):
    """One Continue session document or the ``sessions.json`` index (DocumentParser contract)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of the document; undecodable input or a wrong shape → parse issues."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        path = PurePath(self.ctx.path.replace("\\", "/"))
        if path.name == INDEX_NAME:
            return [*issues, *self._index(doc)]
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, "session is not a JSON object")]
        return [*issues, *self._session(doc, path.stem)]

    @staticmethod
    def _index(doc: Any) -> list[Row]:
        if not isinstance(doc, list):
            return [ParseIssueRow("non_object", 0, 1, "sessions.json is not a JSON array")]
        rows: list[Row] = []
        for i, entry in enumerate(doc):
            e = as_dict(entry)
            rows.append(record_type_row(AGENT, e, "index_entry", None, True))
            sid = as_nonempty_str(e.get("sessionId"))
            if sid is None:
                rows.append(ParseIssueRow("bad_record", i, i + 1, "index entry without sessionId"))
                continue
            created = e.get("dateCreated")
            created = int(created) if isinstance(created, str) and created.isdigit() else created
            rows.append(
                SessionRow(
                    agent=AGENT,
                    session_uid=sid,
                    agent_id="",
                    cwd=workspace_path(e.get("workspaceDirectory")),
                    ai_title=session_title(e.get("title")),
                    started_at=parse_ts(created),
                    byte_offset=i,
                    line_number=i + 1,
                )
            )
        return rows

    def _session(self, doc: dict, stem: str) -> list[Row]:
        sid = as_nonempty_str(doc.get("sessionId")) or stem
        session_model = as_nonempty_str(doc.get("chatModelTitle"))
        rows: list[Row] = [record_type_row(AGENT, doc, "session", None, True)]
        turn: str | None = None
        calls: dict[str, dict] = {}
        first_prompt: str | None = None
        last_model: str | None = None
        for i, item in enumerate(as_list(doc.get("history"))):
            pos = Pos(i, 0, i + 1)
            loc = {"byte_offset": i, "line_number": i + 1}
            h = as_dict(item)
            msg = as_dict(h.get("message"))
            role = as_str(msg.get("role")) or ""
            rows.append(record_type_row(AGENT, msg, "history", role, role in ROLES))
            if role not in ROLES:
                rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"message role {role!r}"))
                continue
            uid = as_nonempty_str(msg.get("id")) or f"{sid}#{i}"
            text, attachments = _text(msg.get("content"))
            common = {"agent": AGENT, "session_uid": sid, "agent_id": ""}
            if role == "user":
                turn = uid
                first_prompt = first_prompt or text or None
                rows.append(TurnRow(AGENT, uid, sid, "", None, None, None, i, i + 1))
            if role == "tool":
                tid = as_nonempty_str(msg.get("toolCallId"))
                if tid:
                    calls.setdefault(tid, {"turn": turn, "pos": pos, "msg": uid})
                    calls[tid].update(output=text, out_pos=pos)
                continue
            model = None
            if role == "assistant":
                logs = [as_dict(p) for p in as_list(h.get("promptLogs"))]
                last = logs[-1] if logs else {}
                model = (
                    as_nonempty_str(as_dict(last.get("completionOptions")).get("model"))
                    or as_nonempty_str(last.get("modelTitle"))
                    or session_model
                )
                last_model = model or last_model
                m = _THINK.match(text)
                if m is not None:
                    if m["think"].strip():
                        rows.append(
                            self._msg(
                                common,
                                f"{uid}#think",
                                turn,
                                "assistant",
                                classes.REASONING,
                                m["think"].strip(),
                                None,
                                model,
                                loc,
                            )
                        )
                    text = text[m.end() :]
                rows.append(
                    ModelCallRow(
                        agent=AGENT,
                        call_uid=uid,
                        session_uid=sid,
                        agent_id="",
                        turn_uid=turn,
                        model=model,
                        **loc,
                    )
                )
                for k, tc in enumerate(as_list(msg.get("toolCalls"))):
                    c = as_dict(tc)
                    tid = as_nonempty_str(c.get("id")) or f"{uid}:{k}"
                    fn = as_dict(c.get("function"))
                    calls.setdefault(tid, {"turn": turn, "pos": pos, "msg": uid})
                    calls[tid].update(name=as_nonempty_str(fn.get("name")), input=fn.get("arguments"), call=uid)
                for st in [as_dict(h.get("toolCallState")), *map(as_dict, as_list(h.get("toolCallStates")))]:
                    tid = as_nonempty_str(st.get("toolCallId"))
                    if not tid:
                        continue
                    calls.setdefault(tid, {"turn": turn, "pos": pos, "msg": uid})
                    out = "\n".join(
                        t for o in as_list(st.get("output")) if (t := as_str(as_dict(o).get("content"))) is not None
                    )
                    calls[tid].update(status=as_str(st.get("status")))
                    if out:
                        calls[tid].setdefault("output", out)
                        calls[tid].setdefault("out_pos", pos)
            reasoning = as_dict(h.get("reasoning"))
            if as_nonempty_str(reasoning.get("text")) and reasoning["text"].strip():
                rows.append(
                    self._msg(
                        common,
                        f"{uid}#reasoning",
                        turn,
                        "assistant",
                        classes.REASONING,
                        reasoning["text"].strip(),
                        parse_ts(reasoning.get("startAt")),
                        model,
                        loc,
                    )
                )
            mrole, mclass = ROLES[role]
            if text.strip() or attachments:
                rows.append(
                    self._msg(
                        common, uid, turn, mrole, mclass, text.strip() or None, None, model, loc, attachments or None
                    )
                )
            for k, ci in enumerate(as_list(h.get("contextItems"))):
                c = as_dict(ci)
                body = as_nonempty_str(c.get("content"))
                if body:
                    name = as_nonempty_str(c.get("name")) or as_nonempty_str(c.get("description"))
                    rows.append(
                        self._msg(
                            common,
                            f"{uid}#ctx{k}",
                            turn,
                            "user",
                            classes.CONTEXT_INJECTION,
                            f"{name}\n\n{body}" if name else body,
                            None,
                            None,
                            loc,
                        )
                    )
        rows += self._tools(sid, calls)
        rows.insert(
            1,
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                cwd=workspace_path(doc.get("workspaceDirectory")),
                model=last_model,
                ai_title=session_title(doc.get("title")),
                first_prompt=first_prompt,
                byte_offset=0,
                line_number=1,
            ),
        )
        return rows

    @staticmethod
    def _msg(common, uid, turn, role, mclass, text, ts, model, loc, attachments=None) -> MessageRow:
        return MessageRow(
            **common,
            message_uid=uid,
            turn_uid=turn,
            role=role,
            message_class=mclass,
            text=text,
            ts=ts,
            model=model,
            attachments=attachments,
            **loc,
        )

    @staticmethod
    def _tools(sid: str, calls: dict[str, dict]) -> list[Row]:
        rows: list[Row] = []
        for tid, c in calls.items():
            output = c.get("output")
            outcome, is_error = TOOL_STATUS.get(c.get("status") or "", (None, None))
            if outcome is None and output is not None:
                outcome, is_error = "ok", False
            error_class, excerpt = classify_error(output, is_error=is_error, rejected=outcome == "rejected")
            inp = c.get("input")
            pos, out_pos = c["pos"], c.get("out_pos")
            rows.append(
                ToolCallRow(
                    agent=AGENT,
                    tool_call_uid=tid,
                    session_uid=sid,
                    agent_id="",
                    turn_uid=c.get("turn"),
                    message_uid=c.get("call") or c.get("msg"),
                    call_uid=c.get("call"),
                    name=c.get("name"),
                    input=inp if isinstance(inp, str) or inp is None else orjson.dumps(inp).decode(),
                    output=output,
                    is_error=is_error or None,
                    outcome=outcome,
                    error_class=error_class,
                    error_excerpt=excerpt,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    output_byte_offset=out_pos.byte_offset if out_pos else None,
                    output_line=out_pos.line_number if out_pos else None,
                )
            )
        return rows


PARSER = ContinueParser
DOCUMENT_PARSER = ContinueParser
