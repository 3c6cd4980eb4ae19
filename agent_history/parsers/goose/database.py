"""Goose's SQLite store ``<data>/sessions/sessions.db`` (v1.10+) → rows (pure). Format:
FORMATS-NEW.md §5; the schema verified against aaif-goose/goose
``crates/goose/src/session/session_manager.rs`` @ 9922a92e90e4 (``CURRENT_SCHEMA_VERSION`` 10:
``create_schema`` and migrations 1–10, which only *add* columns, so every column past the first
schema is read when present and NULL otherwise). Tables read, in order:

- ``sessions(id, name, description, session_type, working_dir, created_at, updated_at,
  total/input/output_tokens, accumulated_{total,input,output}_tokens, provider_name,
  model_config_json, …)`` → a session: cwd = ``working_dir``, title = ``name`` (else
  ``description``), ``session_type`` ``sub_agent`` → a sub-agent session (no parent is recorded
  in schema 10; a ``parent_session_id`` column, when a later schema has one, is read), model =
  ``model_config_json.model_name``. Times are SQLite ``CURRENT_TIMESTAMP`` text (UTC); the
  cursor is ``updated_at`` in ms, which Goose sets to ``datetime('now')`` on every message and
  counter update. Usage as in the legacy files: ``accumulated_*`` are the session's totals
  (``total/input/output`` the last request's) and no message records its own, so the totals are
  one model call ``<session>#session-usage`` (``accumulated_input_tokens`` → input_uncached,
  ``accumulated_output_tokens`` → output), stamped ``updated_at``.
- ``messages(id INTEGER AUTOINCREMENT, message_id, session_id, role, content_json,
  created_timestamp (epoch s), metadata_json)`` → the legacy message rules (`blocks`). **uid =
  ``<session>#<position>``**, the message's 1-based place among its session's rows in row-id
  order — Goose writes a conversation in order (``add_message`` appends, ``replace_conversation``
  re-inserts it whole), so this is the conversation's order, and a later row never moves an
  earlier one even when its ``created_timestamp`` is older (``get_conversation`` sorts by that
  time for display; each message keeps its own time here). It is the legacy files' uid too (line
  index, the metadata line being 0): when Goose first creates the database it imports the
  legacy files (``import_legacy``: same session id, same messages in order) and leaves them in
  place, so a session in both merges instead of counting twice. A truncated conversation's new
  messages take the freed positions (the old text is replaced).
  **Cursor = the row id**, not a time: Goose's ``replace_conversation`` (compaction,
  truncation) deletes a session's messages and inserts them again with their old
  ``created_timestamp`` but new row ids, so only the row id sees every insert; the copies
  merge by uid. Row ids are allocated inside
  Goose's ``BEGIN IMMEDIATE`` writes, so none commits behind a larger one: the cursor time is the
  row id × `ROWID_SCALE`, which keeps the loader's re-read window (2,000) inside one row.
  ``metadata_json.userVisible = false`` marks text Goose wrote for the model (a compaction
  summary, a continuation note): never a prompt — ``system_reminder``.
A tool request and its response are rows of two messages: each gives its half of the
`ToolCallRow` (merged by uid); a response's git events are read when its call, seen earlier in
the pass, was a shell tool, or when the call is unknown to the pass (gitout's own lookalike rules
then decide). Record types counted: ``session``, ``message/<role>``, ``content/<type>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from agent_history.model import classes
from agent_history.model.rows import MessageRow, ModelCallRow, ParseIssueRow, Row, SessionRow, ToolCallRow, TurnRow
from agent_history.parsers.base import DatabaseParser, DbTable, ParseContext, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.results import tool_result_rows
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

ROWID_SCALE = 1_000_000
"""Cursor time of a message = its row id × this (module docstring)."""
CALL_BLOCKS = frozenset({"toolRequest", "frontendToolRequest"})


class GooseDbParser(DatabaseParser):
    """``sessions/sessions.db`` (module docstring). The instance remembers, for one pass, the
    name of each tool call it read (responses name only the call id)."""

    AGENT = AGENT
    VERSION = VERSION
    TABLES = (
        DbTable(
            "sessions",
            "SELECT * FROM (SELECT s.*, s.rowid AS _rowid, "
            "coalesce(CAST(strftime('%s', s.updated_at) AS INTEGER), 0) * 1000 AS time_updated FROM sessions s) WHERE",
        ),
        DbTable(
            "messages",
            f"SELECT * FROM (SELECT m.*, m.rowid AS _rowid, m.rowid * {ROWID_SCALE} AS time_updated, "
            "printf('%020d', m.rowid) AS _cursor_id, row_number() OVER (PARTITION BY m.session_id "
            "ORDER BY m.id) AS _pos FROM messages m) WHERE",
            ("time_updated", "_cursor_id"),
        ),
    )

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__(ctx)
        self.names: dict[str, str | None] = {}
        self.cwds: dict[str, str] = {}

    def rows(self, table: str, record: dict, pos: Pos) -> Iterable[Row]:
        """Rows of one row of `table` (sessions | messages)."""
        if table == "sessions":
            return self._session(record, pos)
        return self._message(record, pos)

    def _session(self, rec: dict, pos: Pos) -> list[Row]:
        seen = {k: v for k, v in rec.items() if not k.startswith("_") and k != "time_updated"}
        rows: list[Row] = [record_type_row(AGENT, seen, "session", None, True)]
        sid = as_nonempty_str(rec.get("id"))
        if sid is None:
            return [*rows, ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "session without id")]
        cwd = as_nonempty_str(rec.get("working_dir"))
        if cwd:
            self.cwds[sid] = cwd
        config = rec.get("model_config_json")
        model = None
        if isinstance(config, str) and config.strip():
            parsed, _ = load_document(config)
            model = as_nonempty_str(as_dict(parsed).get("model_name"))
        updated = parse_ts(rec.get("updated_at"))
        parent = as_nonempty_str(rec.get("parent_session_id"))
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=parent is not None or rec.get("session_type") == "sub_agent",
                parent_session_uid=parent,
                cwd=cwd,
                ai_title=as_nonempty_str(rec.get("name")) or as_nonempty_str(rec.get("description")),
                model=model,
                started_at=parse_ts(rec.get("created_at")),
                ended_at=updated,
            )
        )
        inp, out = as_int(rec.get("accumulated_input_tokens")), as_int(rec.get("accumulated_output_tokens"))
        if inp is not None or out is not None:
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=f"{sid}#session-usage",
                    session_uid=sid,
                    agent_id="",
                    model=model,
                    input_uncached=inp,
                    output=out,
                    ts=updated,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        return rows

    def _message(self, rec: dict, pos: Pos) -> list[Row]:
        role = as_str(rec.get("role")) or ""
        seen = {k: v for k, v in rec.items() if not k.startswith("_") and k != "time_updated"}
        rows: list[Row] = [record_type_row(AGENT, seen, "message", role, role in ROLES)]
        if role not in ROLES:
            return [*rows, ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"role {role!r}")]
        sid = as_nonempty_str(rec.get("session_id"))
        if sid is None:
            return [*rows, ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "message without session")]
        uid = f"{sid}#{rec.get('_pos')}"
        raw = rec.get("content_json")
        content, issues = load_document(raw) if isinstance(raw, str | bytes) else (None, [])
        if not isinstance(content, list):
            return [*rows, ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "content_json is not a list")]
        meta, _ = load_document(rec["metadata_json"]) if isinstance(rec.get("metadata_json"), str) else ({}, [])
        hidden = as_dict(meta).get("userVisible") is False
        msg = _Message(self, sid, uid, role, parse_ts(rec.get("created_timestamp")), pos)
        texts: list[str] = []
        for j, block in enumerate(content):
            b = as_dict(block)
            btype = block_type(b)
            rows.append(record_type_row(AGENT, b, "content", btype, btype in BLOCKS))
            if btype not in BLOCKS:
                rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"block {btype!r}"))
            elif btype == "text" and as_str(b.get("text")) is not None:
                texts.append(b["text"])
            elif btype == "thinking" and as_nonempty_str(b.get("thinking")):
                rows.append(msg.text_row(f"{uid}.{j}", classes.REASONING, b["thinking"]))
            elif btype in CALL_BLOCKS:
                value = as_dict(as_dict(b.get("toolCall")).get("value"))
                rows += msg.call_rows(as_nonempty_str(b.get("id")) or f"{uid}.{j}", value)
            elif btype == "toolResponse":
                rows += msg.result_rows(as_nonempty_str(b.get("id")), as_dict(b.get("toolResult")))
        text = "\n".join(texts)
        if text.strip() and hidden:
            rows.append(msg.text_row(uid, classes.SYSTEM_REMINDER, text))
        elif role == "user" and text.strip():
            rows.append(TurnRow(AGENT, uid, sid, "", None, msg.ts, msg.ts, pos.byte_offset, pos.line_number))
            rows.append(msg.text_row(uid, classes.HUMAN_PROMPT, text))
            rows.append(SessionRow(agent=AGENT, session_uid=sid, agent_id="", first_prompt=text))
        elif role == "assistant" and text.strip():
            rows.append(msg.text_row(uid, classes.ASSISTANT_TEXT, text))
        if role == "assistant":
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=uid,
                    session_uid=sid,
                    agent_id="",
                    ts=msg.ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        return [*rows, *issues]


class _Message:
    """What the rows of one message row share."""

    def __init__(self, parser: GooseDbParser, sid: str, uid: str, role: str, ts, pos: Pos) -> None:
        self.parser, self.sid, self.uid, self.role, self.ts, self.pos = parser, sid, uid, role, ts, pos

    def text_row(self, uid: str, mclass: str, text: str) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid,
            agent_id="",
            role=self.role,
            message_class=mclass,
            text=text,
            ts=self.ts,
            byte_offset=self.pos.byte_offset,
            line_number=self.pos.line_number,
            record_type=f"message/{self.role}",
        )

    def call_rows(self, cid: str, value: dict) -> list[Row]:
        tid = f"{self.sid}/{cid}"
        name, args = as_nonempty_str(value.get("name")), value.get("arguments")
        self.parser.names[tid] = name
        rows: list[Row] = [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id="",
                message_uid=self.uid,
                call_uid=self.uid,
                name=name,
                input=None if args is None else orjson.dumps(args).decode(),
                started_at=self.ts,
                byte_offset=self.pos.byte_offset,
                line_number=self.pos.line_number,
            )
        ]
        a, base = as_dict(args), base_name(name)
        command = as_nonempty_str(a.get("command"))
        touches: list[tuple[str, str]] = []
        if base == "text_editor" and command in EDITOR_OPS and as_nonempty_str(a.get("path")):
            touches = [(EDITOR_OPS[command], a["path"])]
        elif base in SHELL_TOOLS and command:
            touches = touches_from_shell(command)
        rows += file_touch_rows(
            touches,
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id="",
            ts=self.ts,
            pos=self.pos,
            cwd=self.parser.cwds.get(self.sid),
        )
        return rows

    def result_rows(self, cid: str | None, res: dict) -> list[Row]:
        if cid is None:
            return [ParseIssueRow("bad_record", self.pos.byte_offset, self.pos.line_number, "toolResponse without id")]
        tid = f"{self.sid}/{cid}"
        ok = as_str(res.get("status")) != "error"
        value: Any = res.get("value") if ok else (res.get("error") or res.get("value"))
        if isinstance(value, dict) and "content" in value:  # rmcp CallToolResult {content: [...], isError}
            ok = ok and value.get("isError") is not True
            value = as_list(value.get("content"))
        output = result_text(value)
        known = tid in self.parser.names
        return tool_result_rows(
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id="",
            name=None,
            output=output,
            is_error=not ok,
            ts=self.ts,
            pos=self.pos,
            shell=not known or base_name(self.parser.names[tid]) in SHELL_TOOLS,
        )
