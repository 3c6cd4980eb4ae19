"""Factory Droid → rows (pure). Built from the published shape (FORMATS-NEW.md §7): no real Droid
session file is public; the samples in fixtures/samples/factory-droid are a tool author's
hand-written fixtures (jazzyalex/agent-sessions).

``~/.factory/sessions/<cwd with / → ->/<uuid>.jsonl`` (or directly in ``sessions/``) is
append-only JSONL:

- ``session_start`` ``{id, title, sessionTitle, owner, version, cwd}`` → the session (uid ``id``,
  else the file name; ``sessionTitle`` → ``ai_title``, ``title`` → ``custom_title``).
- ``message`` ``{id, parentId?, timestamp (ISO), message{role, content[…]}}`` with Anthropic
  blocks: user ``text`` → ``human_prompt`` (a turn; a leading ``<system-reminder>…</system-reminder>``
  that Droid injects into the first prompt is split off as a ``system_reminder``),
  ``tool_result{tool_use_id, content, is_error}``; assistant ``text`` → ``assistant_text``,
  ``thinking`` → ``reasoning``, ``tool_use{id, name, input}``. Message uid: ``<session>/<id>``.
- Droid writes no model and no tokens into the transcript. ``<uuid>.settings.json`` beside it
  (a whole document, rewritten) holds ``{model, tokenUsage{inputTokens, outputTokens,
  cacheCreationTokens, cacheReadTokens, thinkingTokens}}`` — **cumulative per session**, so the
  usage is recorded at that level, exact: one model call ``<session>#session-usage`` carrying
  the totals (input → input_uncached, cache read/creation → cache_read / cache_write_5m, output,
  thinking → reasoning), never split into invented per-message deltas; a file without
  ``tokenUsage`` (Droid 0.56) gives no call.
- ``droid exec --output-format stream-json`` output, when such a file is indexed, has another
  shape: ``system``/``init`` ``{sessionId, model, cwd}``, ``message{role, text}``,
  ``tool_call{id, toolName, parameters}``, ``tool_result{id, isError, value}`` and
  ``completion{finalText, usage{input_tokens, output_tokens, cache_read_input_tokens,
  cache_creation_input_tokens}}`` (the run's one model-call total; epoch-ms timestamps).
Touches: `FILE_TOOLS` (``file_path`` / ``path``), ``Execute`` commands (`shell.touches_from_shell`)
and ``ApplyPatch`` patches; git events from ``Execute`` output; ``Task`` calls are sub-agent
spawns. Record types counted: ``<type>`` (``system/<subtype>``) and ``content/<block type>``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

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
from agent_history.parsers.base import DocumentParser, ParseContext, Parser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.pending import SavedFields, git_flags, git_hint
from agent_history.parsers.common.results import tool_result_rows
from agent_history.parsers.common.shell import touches_from_patch, touches_from_shell
from agent_history.parsers.common.spawn import spawn_row
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "droid"
VERSION = 1
TYPES = frozenset({"session_start", "message", "system", "tool_call", "tool_result", "completion"})
BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"})
FILE_TOOLS: dict[str, str] = {"Read": "read", "Create": "create", "Edit": "edit", "MultiEdit": "edit"}
"""Droid's file tools → touch op (path: ``file_path``, else ``path``)."""
SHELL_TOOLS = frozenset({"Execute"})
PATCH_TOOLS = frozenset({"ApplyPatch"})
SPAWN_TOOLS = frozenset({"Task"})
_REMINDER = re.compile(r"\A\s*(<system-reminder>.*?</system-reminder>)\s*", re.S)
SETTINGS_SUFFIX = ".settings.json"


def _block_text(content: Any) -> str | None:
    """Text of a ``tool_result`` content: a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    texts = [as_str(as_dict(b).get("text")) for b in as_list(content)]
    joined = "\n".join(t for t in texts if t)
    return joined if joined or not content else orjson.dumps(content).decode()


class DroidParser(SavedFields, Parser):
    """One Droid session JSONL (or a saved stream-json run). State: session uid, cwd, open
    turn, unanswered calls (`PendingCalls`)."""

    AGENT = AGENT
    VERSION = VERSION

    STATE_FIELDS = ("sid", "cwd", "turn_uid", "model")

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        self.sid: str
        self.cwd: str | None
        self.turn_uid: str | None
        self.model: str | None  # a stream-json run's, from its init line
        self.restore(state)
        self.sid = self.sid or os.path.splitext(os.path.basename(ctx.path))[0] or ctx.path

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows of one line."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "line is not a JSON object")]
        rtype = as_str(record.get("type")) or ""
        subtype = as_str(record.get("subtype")) if rtype == "system" else None
        rows: list[Row] = [record_type_row(AGENT, record, rtype, subtype, rtype in TYPES)]
        if rtype not in TYPES:
            return [*rows, ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"type {rtype!r}")]
        ts = parse_ts(record.get("timestamp"))
        if rtype == "session_start":
            self.sid = as_nonempty_str(record.get("id")) or self.sid
            self.cwd = as_nonempty_str(record.get("cwd")) or self.cwd
            rows.append(
                self._session(
                    cwd=self.cwd,
                    cli_version=None if record.get("version") is None else str(record["version"]),
                    custom_title=as_nonempty_str(record.get("title")),
                    ai_title=as_nonempty_str(record.get("sessionTitle")),
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        elif rtype == "system":  # stream-json system/init
            self.sid = as_nonempty_str(record.get("sessionId")) or self.sid
            self.cwd = as_nonempty_str(record.get("cwd")) or self.cwd
            self.model = as_nonempty_str(record.get("model")) or self.model
            rows.append(
                self._session(cwd=self.cwd, model=self.model, byte_offset=pos.byte_offset, line_number=pos.line_number)
            )
        elif rtype == "message" and isinstance(record.get("message"), dict):
            rows += self._message(record, ts, pos)
        elif rtype == "message":  # stream-json message{role, text}
            rows += self._stream_message(record, ts, pos)
        elif rtype == "tool_call":
            rows += self._use(
                as_nonempty_str(record.get("id")), record.get("toolName"), record.get("parameters"), None, ts, pos
            )
        elif rtype == "tool_result":
            value = record.get("value")
            rows += self._answer(
                as_nonempty_str(record.get("id")), _block_text(value), record.get("isError") is True, ts, pos
            )
        else:
            rows += self._completion(record, ts, pos)
        if ts is not None:
            rows.append(self._session(started_at=ts, ended_at=ts))
        return rows

    def _session(self, **fields) -> SessionRow:
        return SessionRow(agent=AGENT, session_uid=self.sid, agent_id="", is_subagent=False, **fields)

    def _msg(self, uid, role, mclass, text, ts, pos, rtype) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid,
            agent_id="",
            turn_uid=self.turn_uid,
            role=role,
            message_class=mclass,
            text=text,
            ts=ts,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
            record_type=rtype,
        )

    def _prompt(self, uid: str, text: str, ts, pos: Pos, rtype: str) -> list[Row]:
        rows: list[Row] = []
        m = _REMINDER.match(text)
        if m:
            rows.append(self._msg(f"{uid}#reminder", "user", classes.SYSTEM_REMINDER, m.group(1), ts, pos, rtype))
            text = text[m.end() :]
        if text.strip():
            self.turn_uid = uid
            rows.append(TurnRow(AGENT, uid, self.sid, "", None, ts, ts, pos.byte_offset, pos.line_number))
            rows.append(self._msg(uid, "user", classes.HUMAN_PROMPT, text, ts, pos, rtype))
            rows.append(self._session(first_prompt=text))
        return rows

    def _message(self, record: dict, ts, pos: Pos) -> list[Row]:
        msg = record["message"]
        role = as_str(msg.get("role")) or ""
        uid = f"{self.sid}/{as_nonempty_str(record.get('id')) or f'@{pos.byte_offset}'}"
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content)
        rows: list[Row] = []
        texts: list[str] = []
        for i, block in enumerate(blocks):
            b = as_dict(block)
            btype = as_str(b.get("type")) or ""
            rows.append(record_type_row(AGENT, b, "content", btype, btype in BLOCKS))
            if btype not in BLOCKS:
                rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"block {btype!r}"))
            elif btype == "text" and as_str(b.get("text")):
                texts.append(b["text"])
            elif btype == "thinking" and as_nonempty_str(b.get("thinking")):
                rows.append(self._msg(f"{uid}#{i}", "assistant", classes.REASONING, b["thinking"], ts, pos, "message"))
            elif btype == "tool_use":
                rows += self._use(
                    as_nonempty_str(b.get("id")) or f"{uid}#{i}", b.get("name"), b.get("input"), uid, ts, pos
                )
            elif btype == "tool_result":
                rows += self._answer(
                    as_nonempty_str(b.get("tool_use_id")),
                    _block_text(b.get("content")),
                    b.get("is_error") is True,
                    ts,
                    pos,
                )
        text = "\n\n".join(texts)
        if role == "user" and text.strip():
            rows += self._prompt(uid, text, ts, pos, "message")
        elif role == "assistant" and text.strip():
            rows.append(self._msg(uid, "assistant", classes.ASSISTANT_TEXT, text, ts, pos, "message"))
        return rows

    def _stream_message(self, record: dict, ts, pos: Pos) -> list[Row]:
        uid = f"{self.sid}/{as_nonempty_str(record.get('id')) or f'@{pos.byte_offset}'}"
        text = as_str(record.get("text")) or ""
        if record.get("role") == "user":
            return self._prompt(uid, text, ts, pos, "message")
        if text.strip():
            return [self._msg(uid, "assistant", classes.ASSISTANT_TEXT, text, ts, pos, "message")]
        return []

    def _use(self, call_id: str | None, name: Any, tool_input: Any, msg_uid: str | None, ts, pos: Pos) -> list[Row]:
        if call_id is None:
            return [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "tool call without id")]
        tid = f"{self.sid}/{call_id}"
        name = as_nonempty_str(name)
        args = as_dict(tool_input)
        command = as_nonempty_str(args.get("command")) if name in SHELL_TOOLS else None
        self.pending.add(tid, name, git_flags(command))
        rows: list[Row] = [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id="",
                turn_uid=self.turn_uid,
                message_uid=msg_uid,
                name=name,
                input=None if tool_input is None else orjson.dumps(tool_input).decode(),
                started_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]
        touches: list[tuple[str, str]] = []
        path = as_nonempty_str(args.get("file_path")) or as_nonempty_str(args.get("path"))
        if name in FILE_TOOLS and path:
            touches = [(FILE_TOOLS[name], path)]
        elif command:
            touches = touches_from_shell(command)
        elif name in PATCH_TOOLS:
            touches = touches_from_patch(as_nonempty_str(args.get("patch")) or as_nonempty_str(args.get("input")) or "")
        rows += file_touch_rows(
            touches, agent=AGENT, tool_call_uid=tid, session_uid=self.sid, agent_id="", ts=ts, pos=pos, cwd=self.cwd
        )
        if name in SPAWN_TOOLS:
            rows.append(
                spawn_row(
                    AGENT,
                    tid,
                    self.sid,
                    "",
                    args,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    ts=ts,
                    subagent_type=as_nonempty_str(args.get("subagent_type")),
                )
            )
        return rows

    def _answer(self, call_id: str | None, output: str | None, is_error: bool, ts, pos: Pos) -> list[Row]:
        if call_id is None:
            return [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "tool result without a call id")]
        tid = f"{self.sid}/{call_id}"
        name, flags = self.pending.pop(tid)
        return tool_result_rows(
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id="",
            name=name,
            output=output,
            is_error=is_error,
            ts=ts,
            pos=pos,
            shell=name in SHELL_TOOLS,
            git_command=git_hint(flags),
        )

    def _completion(self, record: dict, ts, pos: Pos) -> list[Row]:
        usage = as_dict(record.get("usage"))
        uid = f"{self.sid}/{as_nonempty_str(record.get('id')) or f'@{pos.byte_offset}'}"
        rows: list[Row] = []
        final = as_str(record.get("finalText"))
        if final and final.strip():
            rows.append(self._msg(uid, "assistant", classes.ASSISTANT_TEXT, final, ts, pos, "completion"))
        rows.append(
            ModelCallRow(
                agent=AGENT,
                call_uid=uid,
                session_uid=self.sid,
                agent_id="",
                turn_uid=self.turn_uid,
                model=self.model,
                input_uncached=as_int(usage.get("input_tokens")),
                cache_read=as_int(usage.get("cache_read_input_tokens")),
                cache_write_5m=as_int(usage.get("cache_creation_input_tokens")),
                output=as_int(usage.get("output_tokens")),
                is_complete=True,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
        return rows


class DroidSettingsParser(DocumentParser):
    """``<uuid>.settings.json``: the session's model and cumulative token usage (module docstring)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """The session's model and its one usage row; not a JSON object → one parse issue."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, "settings document is not a JSON object")]
        name = os.path.basename(self.ctx.path)
        sid = name[: -len(SETTINGS_SUFFIX)] if name.endswith(SETTINGS_SUFFIX) else os.path.splitext(name)[0]
        model = as_nonempty_str(doc.get("model"))
        rows: list[Row] = [
            *issues,
            record_type_row(AGENT, doc, "settings", None, True),
            SessionRow(agent=AGENT, session_uid=sid, agent_id="", model=model),
        ]
        usage = doc.get("tokenUsage")
        if isinstance(usage, dict):
            u = usage
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=f"{sid}#session-usage",
                    session_uid=sid,
                    agent_id="",
                    model=model,
                    input_uncached=as_int(u.get("inputTokens")),
                    cache_read=as_int(u.get("cacheReadTokens")),
                    cache_write_5m=as_int(u.get("cacheCreationTokens")),
                    output=as_int(u.get("outputTokens")),
                    reasoning=as_int(u.get("thinkingTokens")),
                    byte_offset=0,
                    line_number=1,
                )
            )
        return rows


PARSER = DroidParser
DOCUMENT_PARSER = DroidSettingsParser
