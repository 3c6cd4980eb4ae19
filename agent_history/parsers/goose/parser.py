"""Goose (Block's, now aaif-goose/goose) legacy session files → rows (pure). Format:
FORMATS-NEW.md §5; samples in fixtures/samples/goose (lines pasted into a bug report and a pull
request of real sessions).

Before its SQLite store (``sessions.db``, ~v1.10: `parsers.goose.database`, this module's
``DATABASE_PARSER``), Goose kept one JSONL file per session —
``~/.local/share/goose/sessions/<name>.jsonl`` (Nov 2024: ``~/.config/goose/sessions/``) — and
**rewrote it whole after each message** (aaif-goose/goose PR #283), often leaving a torn or
doubled line (issues #2529, #1946). So a file is read as a whole document by content hash, line
by line: a line that is not JSON is a parse issue at its byte offset, the rest is kept.

- Line 1 (when it has no ``role``): metadata ``{working_dir, description, message_count,
  total_tokens, input_tokens, output_tokens, accumulated_total_tokens,
  accumulated_input_tokens, accumulated_output_tokens, schedule_id?, extension_data?}`` → the
  session's cwd and title. ``accumulated_*`` are the session's totals; ``total/input/output``
  only the last request's, and no message says its own usage: the totals are recorded at the
  level they are exact, one model call ``<session>#session-usage`` (``accumulated_input_tokens``
  → input_uncached: Goose does not split cached input out; ``accumulated_output_tokens`` →
  output), stamped with the last message's time. No model is recorded.
- Messages ``{role, created (epoch s), content[…]}``, uid ``<session>#<line index>``: ``text``
  (user → ``human_prompt``, a turn; assistant → ``assistant_text``), ``thinking`` →
  ``reasoning``, ``toolRequest{id, toolCall{status, value{name, arguments}}}``,
  ``toolResponse{id, toolResult{status, value | error}}``, ``image``, ``redactedThinking``.
  Each assistant message is one model call with NULL counts.
- Nov-2024 blocks carry no ``type``: ``{text}``, ``{tool_name, arguments}`` (no id) and
  ``{id, tool_result: "<JSON string>"}`` — an id-less call is paired with the next result by
  position and takes its id.
Touches: ``text_editor`` (``command`` view → read, write → create, str_replace / insert /
undo_edit → edit; ``path``), ``shell`` / ``bash`` commands; git events from shell output.
Extension tools are named ``<extension>__<tool>``; the rules look at the part after ``__``.
Record types counted: ``metadata``, ``message/<role>``, ``content/<type>``.
"""

from __future__ import annotations

import os
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
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows
from agent_history.parsers.common.lines import iter_records
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows
from agent_history.parsers.goose.blocks import (
    AGENT,
    BLOCKS,
    EDITOR_OPS,
    ROLES,
    SHELL_TOOLS,
    VERSION,
    base_name,
    block_type,
    result_text,
)
from agent_history.parsers.goose.database import GooseDbParser


class GooseParser(DocumentParser):
    """One legacy session file (module docstring)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Every row of the file; lines that are not JSON objects are parse issues."""
        sid = os.path.splitext(os.path.basename(self.ctx.path))[0] or self.ctx.path
        if data and not data.endswith(b"\n"):
            data += b"\n"  # a document's last line: complete, or torn (then an issue below)
        rows: list[Row] = []
        state = _Thread(sid)
        index = 0
        for pos, objs, issues in iter_records(data):
            rows.extend(issues)
            for obj in objs:
                rows += state.record(obj, index, pos)
                index += 1
        rows += state.finish()
        return rows


class _Thread:
    """The walk over one file's records: turn, pending calls, the session row."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.turn: str | None = None
        self.calls: dict[str, dict] = {}
        self.unpaired: list[str] = []  # id-less Nov-2024 calls, oldest first
        self.cwd: str | None = None
        self.session: dict = {"byte_offset": 0, "line_number": 1}
        self.usage: dict | None = None

    def record(self, obj: dict, index: int, pos: Pos) -> list[Row]:
        if index == 0 and "role" not in obj:
            return self._metadata(obj, pos)
        role = as_str(obj.get("role")) or ""
        rows: list[Row] = [record_type_row(AGENT, obj, "message", role, role in ROLES)]
        if role not in ROLES:
            return [*rows, ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"role {role!r}")]
        ts = parse_ts(obj.get("created"))
        if ts is not None:
            self.session["started_at"] = min(filter(None, (self.session.get("started_at"), ts)))
            self.session["ended_at"] = max(filter(None, (self.session.get("ended_at"), ts)))
        uid = f"{self.sid}#{index}"
        loc = {"byte_offset": pos.byte_offset, "line_number": pos.line_number}
        texts: list[str] = []
        for j, block in enumerate(as_list(obj.get("content"))):
            b = as_dict(block)
            btype = block_type(b)
            rows.append(record_type_row(AGENT, b, "content", btype, btype in BLOCKS))
            if btype not in BLOCKS:
                rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"block {btype!r}"))
            elif as_str(b.get("text")) is not None and btype in ("text", "legacy"):
                texts.append(b["text"])
            elif btype == "thinking" and as_nonempty_str(b.get("thinking")):
                rows.append(self._msg(f"{uid}.{j}", "assistant", classes.REASONING, b["thinking"], ts, loc))
            elif btype == "toolRequest":
                call = as_dict(b.get("toolCall"))
                value = as_dict(call.get("value"))
                self._call(
                    as_nonempty_str(b.get("id")) or f"{uid}.{j}",
                    value.get("name"),
                    value.get("arguments"),
                    ts,
                    pos,
                    uid,
                )
            elif btype == "toolResponse":
                res = as_dict(b.get("toolResult"))
                ok = as_str(res.get("status")) != "error"
                output = result_text(res.get("value")) if ok else result_text(res.get("error") or res.get("value"))
                self._result(as_nonempty_str(b.get("id")), output, not ok, pos)
            elif btype == "legacy" and "tool_name" in b:
                cid = f"{uid}.{j}"
                self.unpaired.append(cid)
                self._call(cid, b.get("tool_name"), b.get("arguments"), ts, pos, uid)
            elif btype == "legacy" and "tool_result" in b:
                raw = b.get("tool_result")
                try:
                    value = orjson.loads(raw) if isinstance(raw, str) else raw
                except orjson.JSONDecodeError:
                    value = raw
                self._result(as_nonempty_str(b.get("id")), result_text(value), False, pos, legacy=True)
        text = "\n".join(texts)
        if role == "user" and text.strip():
            self.turn = uid
            self.session.setdefault("first_prompt", text)
            rows.append(TurnRow(AGENT, uid, self.sid, "", None, ts, ts, pos.byte_offset, pos.line_number))
            rows.append(self._msg(uid, "user", classes.HUMAN_PROMPT, text, ts, loc))
        elif role == "assistant":
            if text.strip():
                rows.append(self._msg(uid, "assistant", classes.ASSISTANT_TEXT, text, ts, loc))
            rows.append(
                ModelCallRow(
                    agent=AGENT, call_uid=uid, session_uid=self.sid, agent_id="", turn_uid=self.turn, ts=ts, **loc
                )
            )
            if self.turn is not None:
                rows.append(TurnRow(AGENT, self.turn, self.sid, "", None, None, ts, None, None))
        return rows

    def _metadata(self, obj: dict, pos: Pos) -> list[Row]:
        self.cwd = as_nonempty_str(obj.get("working_dir"))
        self.session.update(cwd=self.cwd, ai_title=as_nonempty_str(obj.get("description")))
        rows: list[Row] = [record_type_row(AGENT, obj, "metadata", None, True)]
        inp, out = as_int(obj.get("accumulated_input_tokens")), as_int(obj.get("accumulated_output_tokens"))
        if inp is not None or out is not None:
            self.usage = {"input_uncached": inp, "output": out, "byte_offset": pos.byte_offset, "line_number": 1}
        return rows

    def _msg(self, uid, role, mclass, text, ts, loc) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid,
            agent_id="",
            turn_uid=self.turn,
            role=role,
            message_class=mclass,
            text=text,
            ts=ts,
            **loc,
        )

    def _call(self, cid: str, name: Any, args: Any, ts, pos: Pos, msg_uid: str) -> None:
        self.calls[cid] = {
            "name": as_nonempty_str(name),
            "args": args,
            "ts": ts,
            "pos": pos,
            "msg": msg_uid,
            "turn": self.turn,
        }

    def _result(self, cid: str | None, output: str | None, is_error: bool, pos: Pos, legacy: bool = False) -> None:
        if legacy and self.unpaired:
            call = self.calls.pop(self.unpaired.pop(0))
            cid = cid or f"{call['msg']}#result"
            self.calls[cid] = call
        if cid is None:
            return
        c = self.calls.setdefault(cid, {"pos": pos, "turn": self.turn})
        c.update(output=output, is_error=is_error, out_pos=pos)

    def finish(self) -> list[Row]:
        rows: list[Row] = []
        for cid, c in self.calls.items():
            tid = f"{self.sid}/{cid}"
            name, args, pos = c.get("name"), as_dict(c.get("args")), c["pos"]
            answered = "out_pos" in c
            output, is_error = c.get("output"), c.get("is_error") is True
            error_class, excerpt = classify_error(output, is_error=is_error)
            rows.append(
                ToolCallRow(
                    agent=AGENT,
                    tool_call_uid=tid,
                    session_uid=self.sid,
                    agent_id="",
                    turn_uid=c.get("turn"),
                    message_uid=c.get("msg"),
                    call_uid=c.get("msg"),
                    name=name,
                    input=None if c.get("args") is None else orjson.dumps(c["args"]).decode(),
                    output=output,
                    is_error=is_error or None,
                    outcome=("error" if is_error else "ok") if answered else None,
                    error_class=error_class,
                    error_excerpt=excerpt,
                    started_at=c.get("ts"),
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    output_byte_offset=c["out_pos"].byte_offset if answered else None,
                    output_line=c["out_pos"].line_number if answered else None,
                )
            )
            base = base_name(name)
            touches: list[tuple[str, str]] = []
            command = as_nonempty_str(args.get("command"))
            if base == "text_editor" and command in EDITOR_OPS and as_nonempty_str(args.get("path")):
                touches = [(EDITOR_OPS[command], args["path"])]
            elif base in SHELL_TOOLS and command:
                touches = touches_from_shell(command)
            rows += file_touch_rows(
                touches,
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id="",
                ts=c.get("ts"),
                pos=pos,
                cwd=self.cwd,
            )
            if base in SHELL_TOOLS and output and answered:
                rows += git_event_rows(
                    agent=AGENT,
                    tool_call_uid=tid,
                    session_uid=self.sid,
                    agent_id="",
                    output=output,
                    command=command,
                    ts=None,
                    pos=c["out_pos"],
                )
        if self.usage is not None:  # stamped with the last message: the file is rewritten with each one
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=f"{self.sid}#session-usage",
                    session_uid=self.sid,
                    agent_id="",
                    ts=self.session.get("ended_at"),
                    **self.usage,
                )
            )
        session = {k: v for k, v in self.session.items() if v is not None}
        rows.insert(0, SessionRow(agent=AGENT, session_uid=self.sid, agent_id="", is_subagent=False, **session))
        return rows


class GooseLinesParser(Parser):
    """The same reading fed line by line, for whole-file passes (``agent-history parse``): the
    loader reads Goose files as documents (`GooseParser`), so this parser is never resumed and
    keeps no state; ``flush`` gives the rows that need the whole file (calls, the session)."""

    AGENT = AGENT
    VERSION = VERSION

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        self.thread = _Thread(os.path.splitext(os.path.basename(ctx.path))[0] or ctx.path)
        self.index = 0

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows of one line."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "line is not a JSON object")]
        self.index += 1
        return self.thread.record(record, self.index - 1, pos)

    def flush(self) -> Iterable[Row]:
        """The calls and the session of the lines fed so far."""
        return self.thread.finish()


PARSER = GooseLinesParser
DOCUMENT_PARSER = GooseParser
DATABASE_PARSER = GooseDbParser
