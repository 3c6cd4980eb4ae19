"""Crush (charmbracelet/crush) → rows (pure). Format: FORMATS-NEW.md §10 — the schema from
Crush's goose migrations (``internal/db/migrations/20250424200609_initial.sql`` and later ones),
the part encoding from ``internal/message/content.go``, and two real databases inspected
read-only (listed in fixtures/samples/crush/PROVENANCE.md, not committed).

Each project has ``<project>/.crush/crush.db`` (SQLite in WAL mode; the loader opens it
read-only with its ``-wal``). Tables read, in order:

- ``sessions(id, parent_session_id, title, message_count, prompt_tokens, completion_tokens,
  cost, updated_at, created_at[, summary_message_id])`` → a session (``title`` → ``ai_title``,
  cwd = the project directory holding ``.crush/``);
  a child (``parent_session_id``) is a sub-agent session whose id is the ``agent`` tool call
  that started it (Crush creates task sessions under the tool-call id), so its ``spawn_uid``
  is that call.
- ``messages(id, session_id, role user|assistant|tool, parts, model, provider, created_at,
  updated_at, finished_at[, is_summary_message])``; ``parts`` is a JSON list of
  ``{type, data}``: ``text{text}``, ``reasoning{thinking}``, ``tool_call{id, name, input (a JSON
  string), finished}``, ``tool_result{tool_call_id, name, content, metadata, is_error}``,
  ``finish{reason, time}``, ``image_url``, ``binary``. Every message, user and tool included,
  ends with a ``finish`` part. User text → ``human_prompt`` (a turn, uid = the message id);
  assistant text → ``assistant_text``, reasoning → ``reasoning``; each assistant message is one
  model call (its ``model``, stop reason = the finish reason, an ``error`` finish an API error);
  ``tool`` messages hold the results — several ``tool_result`` parts in one message when calls
  ran in parallel. The summary message of a compaction (``is_summary_message``, or the id a
  session row's ``summary_message_id`` named earlier in the pass) is a ``compaction_summary``
  and a compaction.

Decisions, from the real databases:
- **Timestamps are Unix seconds** although some schema versions' comments say milliseconds;
  a value above 1e11 is taken as ms (`timeutil.parse_ts`). The cursor column is the
  ``updated_at`` in ms (`TABLES`), as the loader's overlap window expects.
- **Tokens are not recorded per call**: ``sessions.prompt_tokens`` / ``completion_tokens`` are
  the *last request's* counters (1,192 completion tokens for 79 assistant messages in one real
  session), reset to 0 by a summary — neither per call nor a total, so every token bucket stays
  NULL. ``cost`` **accumulates** per session and a sub-agent's cost is added to its parent's:
  the session's own cost (``cost`` − its children's ``cost``, computed in the query) is the
  one exact figure, recorded as one model call ``<session>#session-usage`` with only
  ``recorded_cost_usd``.
Touches from the tool calls (`FILE_TOOLS`: ``file_path`` / ``path``; ``bash`` commands); git
events from ``bash`` results; ``agent`` calls are sub-agent spawns (``prompt``). Record types
counted: ``session``, ``message/<role>``, ``part/<type>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

import orjson

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    Row,
    SessionRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import DatabaseParser, DbTable, ParseContext, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.results import tool_result_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.spawn import spawn_row
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "crush"
VERSION = 1
ROLES = frozenset({"user", "assistant", "tool", "system"})
PARTS = frozenset({"text", "reasoning", "tool_call", "tool_result", "finish", "image_url", "binary"})
FILE_TOOLS: dict[str, str] = {"view": "read", "write": "create", "edit": "edit", "multiedit": "edit"}
"""Crush file tools → touch op (path: ``file_path``, else ``path``)."""
SHELL_TOOLS = frozenset({"bash"})
SPAWN_TOOLS = frozenset({"agent"})
_MS = "CASE WHEN {t}.updated_at > 100000000000 THEN {t}.updated_at ELSE {t}.updated_at * 1000 END"


class CrushDbParser(DatabaseParser):
    """``.crush/crush.db`` (module docstring). The instance remembers, for one pass, the summary
    message ids the sessions rows named (sessions are read before messages)."""

    AGENT = AGENT
    VERSION = VERSION
    TABLES = (
        DbTable(
            "sessions",
            "SELECT * FROM (SELECT s.*, s.rowid AS _rowid, "
            + _MS.format(t="s")
            + " AS time_updated, s.cost - coalesce((SELECT sum(c.cost) FROM sessions c "
            "WHERE c.parent_session_id = s.id), 0) AS _own_cost FROM sessions s) WHERE",
        ),
        DbTable(
            "messages",
            "SELECT * FROM (SELECT m.*, m.rowid AS _rowid, "
            + _MS.format(t="m")
            + " AS time_updated FROM messages m) WHERE",
        ),
    )

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__(ctx)
        self.summaries: set[str] = set()
        db = PurePosixPath(ctx.path.replace("\\", "/"))
        self.cwd = str(db.parent.parent) if db.parent.name == ".crush" else None
        """The project directory: ``<project>/.crush/crush.db``."""

    def rows(self, table: str, record: dict, pos: Pos) -> Iterable[Row]:
        """Rows of one row of `table` (sessions | messages)."""
        if table == "sessions":
            return self._session(record, pos)
        return self._message(record, pos)

    def _session(self, rec: dict, pos: Pos) -> list[Row]:
        sid = as_nonempty_str(rec.get("id"))
        seen = {k: v for k, v in rec.items() if not k.startswith("_") and k != "time_updated"}
        rows: list[Row] = [record_type_row(AGENT, seen, "session", None, True)]
        if sid is None:
            return [*rows, ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "session without id")]
        parent = as_nonempty_str(rec.get("parent_session_id"))
        summary = as_nonempty_str(rec.get("summary_message_id"))
        if summary:
            self.summaries.add(summary)
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=parent is not None,
                parent_session_uid=parent,
                cwd=self.cwd,
                spawn_uid=f"{parent}/{sid}" if parent else None,
                ai_title=as_nonempty_str(rec.get("title")),
                started_at=parse_ts(rec.get("created_at")),
                ended_at=parse_ts(rec.get("updated_at")),
            )
        )
        own = rec.get("_own_cost")
        if isinstance(own, int | float) and not isinstance(own, bool):
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=f"{sid}#session-usage",
                    session_uid=sid,
                    agent_id="",
                    recorded_cost_usd=round(float(own), 10),
                    ts=parse_ts(rec.get("updated_at")),
                )
            )
        return rows

    def _message(self, rec: dict, pos: Pos) -> list[Row]:
        role = as_str(rec.get("role")) or ""
        seen = {k: v for k, v in rec.items() if not k.startswith("_") and k != "time_updated"}
        rows: list[Row] = [record_type_row(AGENT, seen, "message", role, role in ROLES)]
        mid, sid = as_nonempty_str(rec.get("id")), as_nonempty_str(rec.get("session_id"))
        if role not in ROLES:
            return [*rows, ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"role {role!r}")]
        if mid is None or sid is None:
            return [
                *rows,
                ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "message without id or session"),
            ]
        raw = rec.get("parts")
        parts, issues = load_document(raw) if isinstance(raw, str | bytes) else (None, [])
        if not isinstance(parts, list):
            return [*rows, ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "parts is not a JSON list")]
        ts = parse_ts(rec.get("created_at"))
        model = as_nonempty_str(rec.get("model"))
        summary = rec.get("is_summary_message") in (1, True) or mid in self.summaries
        msg = _Message(sid, mid, role, ts, model, pos)
        texts: list[str] = []
        finish: dict = {}
        for i, part in enumerate(parts):
            p = as_dict(part)
            ptype = as_str(p.get("type")) or ""
            data = as_dict(p.get("data"))
            rows.append(record_type_row(AGENT, p, "part", ptype, ptype in PARTS))
            if ptype not in PARTS:
                rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"part {ptype!r}"))
            elif ptype == "text" and as_str(data.get("text")):
                texts.append(data["text"])
            elif ptype == "reasoning" and as_nonempty_str(data.get("thinking")):
                rows.append(msg.text_row(f"{mid}#{i}", classes.REASONING, data["thinking"]))
            elif ptype == "tool_call":
                rows += msg.call_rows(data, i)
            elif ptype == "tool_result":
                rows += msg.result_rows(data)
            elif ptype == "finish":
                finish = data
        text = "\n".join(texts)
        if role == "user" and text.strip():
            rows.append(TurnRow(AGENT, mid, sid, "", None, ts, ts, pos.byte_offset, pos.line_number))
            rows.append(msg.text_row(mid, classes.HUMAN_PROMPT, text))
            rows.append(SessionRow(agent=AGENT, session_uid=sid, agent_id="", first_prompt=text))
        elif role == "assistant":
            if text.strip():
                rows.append(msg.text_row(mid, classes.COMPACTION_SUMMARY if summary else classes.ASSISTANT_TEXT, text))
            reason = as_nonempty_str(finish.get("reason"))
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=mid,
                    session_uid=sid,
                    agent_id="",
                    model=model,
                    stop_reason=reason,
                    is_api_error=True if reason == "error" else None,
                    is_complete=True if finish else None,
                    ts=ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
            if model:
                rows.append(SessionRow(agent=AGENT, session_uid=sid, agent_id="", model=model))
            if summary:
                rows.append(
                    CompactionRow(
                        agent=AGENT,
                        compaction_uid=f"{sid}#{mid}",
                        session_uid=sid,
                        agent_id="",
                        summary_message_uid=mid,
                        ts=ts,
                        byte_offset=pos.byte_offset,
                        line_number=pos.line_number,
                    )
                )
        elif role == "system" and text.strip():
            rows.append(msg.text_row(mid, classes.SYSTEM_REMINDER, text))
        return [*rows, *issues]


class _Message:
    """What the rows of one message row share."""

    def __init__(self, sid: str, mid: str, role: str, ts, model: str | None, pos: Pos) -> None:
        self.sid, self.mid, self.role, self.ts, self.model, self.pos = sid, mid, role, ts, model, pos

    def text_row(self, uid: str, mclass: str, text: str) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid,
            agent_id="",
            role="user" if self.role == "user" else "assistant",
            message_class=mclass,
            text=text,
            ts=self.ts,
            model=self.model if self.role == "assistant" else None,
            byte_offset=self.pos.byte_offset,
            line_number=self.pos.line_number,
            record_type=f"message/{self.role}",
        )

    def call_rows(self, data: dict, index: int) -> list[Row]:
        cid = as_nonempty_str(data.get("id")) or f"{self.mid}#{index}"
        tid = f"{self.sid}/{cid}"
        name = as_nonempty_str(data.get("name"))
        raw = data.get("input")
        args: Any = None
        if isinstance(raw, str) and raw.strip():
            try:
                args = orjson.loads(raw)
            except orjson.JSONDecodeError:
                args = None
        a = as_dict(args)
        rows: list[Row] = [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id="",
                message_uid=self.mid,
                call_uid=self.mid,
                name=name,
                input=raw if isinstance(raw, str) else (None if raw is None else orjson.dumps(raw).decode()),
                started_at=self.ts,
                byte_offset=self.pos.byte_offset,
                line_number=self.pos.line_number,
            )
        ]
        touches: list[tuple[str, str]] = []
        path = as_nonempty_str(a.get("file_path")) or as_nonempty_str(a.get("path"))
        if name in FILE_TOOLS and path:
            touches = [(FILE_TOOLS[name], path)]
        elif name in SHELL_TOOLS and as_nonempty_str(a.get("command")):
            touches = touches_from_shell(a["command"])
        rows += file_touch_rows(
            touches, agent=AGENT, tool_call_uid=tid, session_uid=self.sid, agent_id="", ts=self.ts, pos=self.pos
        )
        if name in SPAWN_TOOLS:
            rows.append(
                spawn_row(
                    AGENT,
                    tid,
                    self.sid,
                    "",
                    a,
                    byte_offset=self.pos.byte_offset,
                    line_number=self.pos.line_number,
                    ts=self.ts,
                )
            )
        return rows

    def result_rows(self, data: dict) -> list[Row]:
        cid = as_nonempty_str(data.get("tool_call_id"))
        if cid is None:
            return [ParseIssueRow("bad_record", self.pos.byte_offset, self.pos.line_number, "tool_result without id")]
        tid = f"{self.sid}/{cid}"
        name = as_nonempty_str(data.get("name"))
        output = as_str(data.get("content"))
        rows: list[Row] = tool_result_rows(
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id="",
            name=name,
            output=output,
            is_error=data.get("is_error") is True,
            ts=self.ts,
            pos=self.pos,
            shell=name in SHELL_TOOLS,
        )
        return rows


PARSER = CrushDbParser
DATABASE_PARSER = CrushDbParser
