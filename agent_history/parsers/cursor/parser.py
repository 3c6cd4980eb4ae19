"""Cursor agent transcripts (``~/.cursor/projects/<project>/agent-transcripts/**.jsonl``) → rows.

Format contract (FORMATS §6 and quirk 17, read off ``corpus/samples/cursor``):

- **Lines.** ``{"role": "user" | "assistant", "message": {"content": [block, …]}}`` with blocks
  ``text``, ``thinking`` (``thinking``), ``tool_use`` (``name``, ``input``; **no id**) and, on
  user lines, ``tool_result`` (``tool_use_id`` that matches nothing, ``content``). One fixture
  ends with ``{"type": "turn_ended", "status": "success"}``. There is **no timestamp, id,
  session id, model or usage on any line**: timestamps stay NULL, there are no model calls (so
  token sums are NULL, never 0), and everything is keyed and ordered by line.
- **Session.** uid = the file name without ``.jsonl`` (Cursor names transcripts by composer
  id). A file under ``…/<parent>/subagents/<child>.jsonl`` is the sub-agent thread ``<child>``
  of session ``<parent>`` (the directory name: ``agent-transcripts/<id>/<id>.jsonl`` beside
  ``agent-transcripts/<id>/subagents/``). Title and model come from the loader-side sidecar
  (``ParseContext.sidecar`` = ``{"title", "model"}`` read from Cursor's ``state.vscdb``, best
  effort) when present.
- **Keys.** Message uid ``<thread>:L<line>`` (``#reasoning`` for thinking); tool call uid
  ``<thread>:L<line>#t<n>`` (n = the block's index among the line's tool_use blocks); the
  thread is the session uid, ``<session>/<child>`` for a sub-agent file (its lines must not
  collide with the parent's).
- **Messages.** A user line's text blocks → ``human_prompt``, with the ``<user_query>…</user_query>``
  wrapper removed (and the text stripped); a user line holding only ``tool_result`` blocks is
  no prompt. Assistant text → ``assistant_text``, thinking → ``reasoning``.
- **Tool results** carry ids that match no ``tool_use``, so a result is paired with the oldest
  unanswered tool call of the file, in order (state keeps the unanswered uids).
- **Turns.** A prompt opens a turn ``<session>:L<line>``; ``turn_ended`` closes it.
- **Sub-agent spawns.** A ``tool_use`` named ``Agent`` / ``Task`` → SubagentSpawnRow (brief =
  ``input.prompt``, description ``input.description``: `parsers.common.spawn`); the child file is not linked (nothing in the parent names it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from agent_history.model import classes
from agent_history.model.rows import (
    MessageRow,
    ParseIssueRow,
    Row,
    SessionRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Parser, Pos, record_type_row, stamp_messages
from agent_history.parsers.common.coerce import as_dict, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.spawn import spawn_row

AGENT = "cursor"

ROLES: frozenset[str] = frozenset({"user", "assistant"})
"""Line roles (FORMATS §6)."""
TYPES: frozenset[str] = frozenset({"turn_ended"})
"""Typed (role-less) lines (FORMATS §6: `agent-sessions…cursor__small.jsonl`)."""
SPAWN_TOOLS: frozenset[str] = frozenset({"Agent", "Task"})
"""Tool names that start a sub-agent (hand-written `cursor__subagent__parent.jsonl`)."""

_USER_QUERY = re.compile(r"^\s*<user_query>\s*(.*?)\s*</user_query>\s*$", re.S)


def unwrap_user_query(text: str) -> str:
    """`text` without Cursor's ``<user_query>…</user_query>`` wrapper (stripped)."""
    m = _USER_QUERY.match(text)
    return m.group(1) if m else text.strip()


def session_of_path(path: str) -> tuple[str, str]:
    """``(session_uid, agent_id)`` of a transcript path (agent_id '' for a main transcript)."""
    p = PurePosixPath(path.replace("\\", "/"))
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    if p.parent.name == "subagents" and p.parent.parent.name:
        return p.parent.parent.name, stem
    return stem, ""


def _block_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    parts = [as_str(b.get("text")) or "" for b in as_list(content) if isinstance(b, dict)]
    return "\n".join(parts) if parts else None


class CursorParser(Parser):
    """Cursor transcript → rows (contract in the module docstring)."""

    AGENT = AGENT
    VERSION = 1

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        st = state or {}
        self.sid, self.agent_id = session_of_path(ctx.path)
        self.key = f"{self.sid}/{self.agent_id}" if self.agent_id else self.sid
        """Key prefix: a sub-agent thread shares its parent's session uid, not its line keys."""
        self.turn: str | None = st.get("turn")
        self.pending: list[str] = list(st.get("pending") or [])
        self.prompted: bool = bool(st.get("prompted"))
        self.started: bool = bool(st.get("started"))

    def state(self) -> dict:
        """Open turn, unanswered tool-call uids (≤ 200), whether a prompt was seen."""
        return {"turn": self.turn, "pending": self.pending[-200:], "prompted": self.prompted, "started": self.started}

    def _session_row(self, pos: Pos) -> SessionRow:
        side = self.ctx.sidecar or {}
        return SessionRow(
            agent=AGENT,
            session_uid=self.sid,
            agent_id=self.agent_id,
            is_subagent=bool(self.agent_id),
            parent_session_uid=self.sid if self.agent_id else None,
            parent_agent_id="" if self.agent_id else None,
            ai_title=as_nonempty_str(side.get("title")),
            model=as_nonempty_str(side.get("model")),
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
        )

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """One transcript line → rows."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, type(record).__name__)]
        role = as_str(record.get("role"))
        rtype = as_str(record.get("type"))
        if role is not None:
            known, name = role in ROLES, "role=" + role
        else:
            known, name = rtype in TYPES, "type=" + str(rtype)
        rows: list[Row] = [record_type_row(AGENT, record, name, None, known)]
        if not known:
            rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, name[:200]))
            return rows
        if not self.started:
            self.started = True
            rows.append(self._session_row(pos))
        if rtype == "turn_ended":
            self.turn = None
            return rows
        blocks = [b for b in as_list(as_dict(record.get("message")).get("content")) if isinstance(b, dict)]
        if role == "user":
            rows.extend(self._user(blocks, pos))
        else:
            rows.extend(self._assistant(blocks, pos))
        return stamp_messages(rows, name, role, pos.byte_offset)

    def _msg(self, pos: Pos, role: str, cls: str, text: str, suffix: str = "") -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=f"{self.key}:L{pos.line_number}{suffix}",
            session_uid=self.sid,
            agent_id=self.agent_id,
            turn_uid=self.turn,
            role=role,
            message_class=cls,
            text=text,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
        )

    def _user(self, blocks: list[dict], pos: Pos) -> list[Row]:
        rows: list[Row] = []
        texts = [as_str(b.get("text")) or "" for b in blocks if b.get("type") == "text"]
        for b in blocks:
            if b.get("type") == "tool_result" and self.pending:
                uid = self.pending.pop(0)
                rows.append(
                    ToolCallRow(
                        agent=AGENT,
                        tool_call_uid=uid,
                        session_uid=self.sid,
                        agent_id=self.agent_id,
                        output=_block_text(b.get("content")),
                        output_byte_offset=pos.byte_offset,
                        output_line=pos.line_number,
                    )
                )
        if texts:
            text = unwrap_user_query("\n".join(texts))
            self.turn = f"{self.key}:L{pos.line_number}"
            rows.append(
                TurnRow(
                    AGENT, self.turn, self.sid, self.agent_id, byte_offset=pos.byte_offset, line_number=pos.line_number
                )
            )
            cls = classes.SUBAGENT_BRIEF if self.agent_id and not self.prompted else classes.HUMAN_PROMPT
            rows.append(self._msg(pos, "user", cls, text))
            if not self.prompted and not self.agent_id:
                rows.append(
                    SessionRow(agent=AGENT, session_uid=self.sid, agent_id=self.agent_id, first_prompt=text[:200])
                )
            self.prompted = True
        return rows

    def _assistant(self, blocks: list[dict], pos: Pos) -> list[Row]:
        rows: list[Row] = []
        texts = [as_str(b.get("text")) or "" for b in blocks if b.get("type") == "text"]
        thinking = [as_str(b.get("thinking")) or "" for b in blocks if b.get("type") == "thinking"]
        msg_uid = f"{self.key}:L{pos.line_number}"
        if texts:
            rows.append(self._msg(pos, "assistant", classes.ASSISTANT_TEXT, "\n".join(texts)))
        if thinking:
            rows.append(self._msg(pos, "assistant", classes.REASONING, "\n".join(thinking), "#reasoning"))
        n = 0
        for b in blocks:
            if b.get("type") != "tool_use":
                continue
            uid = f"{msg_uid}#t{n}"
            n += 1
            self.pending.append(uid)
            name = as_nonempty_str(b.get("name"))
            tool_input = b.get("input")
            rows.append(
                ToolCallRow(
                    agent=AGENT,
                    tool_call_uid=uid,
                    session_uid=self.sid,
                    agent_id=self.agent_id,
                    turn_uid=self.turn,
                    message_uid=msg_uid if texts else None,
                    name=name,
                    input=json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
                    if tool_input is not None
                    else None,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
            if name in SPAWN_TOOLS:
                rows.append(
                    spawn_row(
                        AGENT,
                        uid,
                        self.sid,
                        self.agent_id,
                        tool_input,
                        byte_offset=pos.byte_offset,
                        line_number=pos.line_number,
                    )
                )
        return rows


PARSER = CursorParser
