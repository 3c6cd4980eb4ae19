"""``api_conversation_history.json`` → rows: the conversation as the model saw it (pure).

The file is a JSON array of Anthropic-shaped messages ``{role, content}`` (Cline 3.5x adds
``modelInfo{modelId, providerId, mode}`` and ``metrics.tokens`` on assistant messages; Roo Code
adds ``ts`` (epoch ms) and may hold ``{type: "reasoning", summary, encrypted_content}`` items
and ``isSummary`` condensation messages). Rows (item = array index, its `Pos`):

- user text blocks are classified by `text.classify_user_text`: prompts (``<task>``,
  ``<feedback>``, ``<user_message>``, ``<answer>``; a ``[TASK RESUMPTION]`` block's
  ``<user_message>``) start a turn (uid ``<task>#<index>``); ``<environment_details>`` and the
  harness's reminders are messages of their class; tool results are not messages;
- a tool result written as text pairs **by position** with the calls of the previous assistant
  message (by name first, then the first unanswered call; a block no rule matches after a result
  header continues its output — older builds split header and output); a ``tool_result`` block
  pairs by ``tool_use_id``; a result with no call is a call of its own (``<task>#<i>.r<j>``);
- assistant ``text`` → ``assistant_text``; ``thinking`` (or a reasoning item) → ``reasoning``;
  ``tool_use`` → a tool call keyed by its id; an older message without ``tool_use`` blocks
  writes calls as XML in its text (`text.xml_tool_calls`, uid ``<task>#<i>.<j>x<k>``) and
  ``<thinking>`` spans (reasoning);
- the working directory is the first ``# Current Working Directory (…)`` (Roo: ``Workspace``) of
  an ``<environment_details>`` block; the model is ``modelInfo.modelId`` (Cline) or the last
  ``<model>`` of the environment details (Roo, Kilo);
- Roo/Kilo ``new_task`` calls are sub-agent spawns (the child task names its parent in its
  ``history_item.json``).
No model calls and no token counts come from this file: ``metrics.tokens`` folds cache writes
and cache reads into one ``cached`` number (the package docstring's token rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import orjson

from agent_history.model import classes
from agent_history.model.rows import (
    MessageRow,
    ParseIssueRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import Pos, record_type_row
from agent_history.parsers.cline import text as tx
from agent_history.parsers.cline.family import Task, block_text, json_text, summary_text
from agent_history.parsers.cline.tools import SHELL_TOOLS, SUBTASK_TOOL, text_outcome, touches
from agent_history.parsers.common.coerce import as_dict, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows

ROLES = frozenset({"user", "assistant"})
USER_BLOCKS = frozenset({"text", "image", "tool_result", "document"})
ASSISTANT_BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "image", "reasoning"})


@dataclass
class _Call:
    uid: str
    name: str | None
    inp: Any
    message_uid: str
    turn: str | None
    pos: Pos
    ts: datetime | None
    output: list[str] | None = None
    out_pos: Pos | None = None
    out_ts: datetime | None = None
    flag_error: bool | None = None
    """A ``tool_result`` block's ``is_error``; None for a result written as text."""
    skipped: bool = False


@dataclass
class _Turn:
    pos: Pos
    started: datetime | None
    ended: datetime | None
    model: str | None = None


@dataclass
class _Api:
    task: Task
    rows: list[Row] = field(default_factory=list)
    calls: dict[str, _Call] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    turns: dict[str, _Turn] = field(default_factory=dict)
    turn: str | None = None
    model: str | None = None
    session_model: str | None = None
    cwd: str | None = None
    first_prompt: str | None = None
    times: list[datetime] = field(default_factory=list)
    task_seen: bool = False

    # -- helpers ---------------------------------------------------------------------------
    def message(self, uid: str, role: str, mclass: str, text: str, pos: Pos, ts, **extra) -> None:
        self.rows.append(
            MessageRow(
                agent=self.task.agent,
                message_uid=uid,
                session_uid=self.task.sid,
                agent_id="",
                turn_uid=self.turn,
                role=role,
                message_class=mclass,
                text=text,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                **extra,
            )
        )

    def start_turn(self, i: int, pos: Pos, ts) -> None:
        uid = f"{self.task.sid}#{i}"
        if uid not in self.turns:
            self.turns[uid] = _Turn(pos, ts, ts)
        self.turn = uid

    def seen(self, ts) -> None:
        if ts is not None:
            self.times.append(ts)
            if self.turn is not None:
                t = self.turns[self.turn]
                t.ended = ts if t.ended is None else max(t.ended, ts)

    def take_call(self, tool: str | None, i: int, j: int, pos: Pos, ts) -> _Call:
        """The pending call a result answers (by name, else the first), or a call of its own."""
        for uid in self.pending:
            if self.calls[uid].name == tool:
                self.pending.remove(uid)
                return self.calls[uid]
        if self.pending:
            return self.calls[self.pending.pop(0)]
        uid = f"{self.task.sid}#{i}.r{j}"
        call = self.calls[uid] = _Call(uid, tool, None, f"{self.task.sid}#{i}", self.turn, pos, ts)
        return call

    # -- records ---------------------------------------------------------------------------
    def item(self, i: int, msg: Any) -> None:
        pos = Pos(i, 0, i + 1)
        agent = self.task.agent
        if not isinstance(msg, dict):
            self.rows.append(ParseIssueRow("non_object", i, i + 1, "API history item is not an object"))
            return
        role = as_str(msg.get("role"))
        ts = parse_ts(msg.get("ts"))
        if msg.get("type") == "reasoning" and role not in ROLES:
            self.rows.append(record_type_row(agent, msg, "reasoning", None, True))
            self.seen(ts)
            body = summary_text(msg.get("summary")) or as_nonempty_str(msg.get("text"))
            if body:
                self.message(f"{self.task.sid}#{i}", "assistant", classes.REASONING, body, pos, ts, model=self.model)
            return
        self.rows.append(record_type_row(agent, msg, "message", role or "", role in ROLES))
        if role not in ROLES:
            self.rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"role {role!r}"))
            return
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content)
        if role == "user":
            self.user(i, pos, ts, blocks, summary=msg.get("isSummary") is True)
        else:
            info = as_dict(msg.get("modelInfo"))
            model = as_nonempty_str(info.get("modelId")) or self.model
            if model:
                self.session_model = model
            self.assistant(i, pos, ts, blocks, model, summary=msg.get("isSummary") is True)

    def user(self, i: int, pos: Pos, ts, blocks: list, *, summary: bool) -> None:
        agent, sid = self.task.agent, self.task.sid
        open_call: _Call | None = None
        attachments: list[dict] = []
        prompt_at: int | None = None
        for j, blk in enumerate(blocks):
            b = as_dict(blk)
            btype = as_str(b.get("type")) or ""
            self.rows.append(record_type_row(agent, b, "content", btype, btype in USER_BLOCKS))
            if btype == "text":
                text = as_str(b.get("text")) or ""
                if summary:
                    self.seen(ts)
                    self.message(f"{sid}#{i}.{j}", "user", classes.COMPACTION_SUMMARY, text, pos, ts)
                    continue
                ut = tx.classify_user_text(text, first_block_of_task=i == 0 and j == 0)
                if ut.kind == "result" or (open_call is not None and not ut.matched):
                    if ut.kind == "result":
                        open_call = self.take_call(ut.tool, i, j, pos, ts)
                        open_call.output, open_call.out_pos, open_call.out_ts = [ut.text], pos, ts
                        open_call.skipped = ut.skipped
                    else:
                        open_call.output.append(text)  # type: ignore[union-attr]
                    if (said := tx.feedback_in(text)) is not None:  # the user's answer inside a result
                        self.start_turn(i, pos, ts)
                        prompt_at = len(self.rows) if prompt_at is None else prompt_at
                        self.seen(ts)
                        self.message(f"{sid}#{i}.{j}f", "user", classes.HUMAN_PROMPT, said, pos, ts)
                    continue
                open_call = None
                if ut.message_class == classes.CONTEXT_INJECTION:
                    self.cwd = self.cwd or tx.cwd_of(text)
                    self.model = tx.model_of(text) or self.model
                if not ut.text.strip():
                    continue
                if ut.message_class == classes.HUMAN_PROMPT:
                    self.start_turn(i, pos, ts)
                    prompt_at = len(self.rows) if prompt_at is None else prompt_at
                    self.first_prompt = self.first_prompt or ut.text
                self.seen(ts)
                self.message(f"{sid}#{i}.{j}", "user", ut.message_class or classes.CONTEXT_INJECTION, ut.text, pos, ts)
                if ut.message_class == classes.SYSTEM_REMINDER and (new := tx.resumption_prompt(text)):
                    self.start_turn(i, pos, ts)
                    self.message(f"{sid}#{i}.{j}u", "user", classes.HUMAN_PROMPT, new, pos, ts)
            elif btype == "tool_result":
                tid = as_nonempty_str(b.get("tool_use_id"))
                call = self.calls.get(tid) if tid else None
                if call is None:
                    uid = tid or f"{sid}#{i}.r{j}"
                    call = self.calls.setdefault(uid, _Call(uid, None, None, f"{sid}#{i}", self.turn, pos, ts))
                if call.uid in self.pending:
                    self.pending.remove(call.uid)
                call.output = [block_text(b.get("content")) or ""]
                call.out_pos, call.out_ts = pos, ts
                call.flag_error = b.get("is_error") is True
                open_call = None
            elif btype in ("image", "document"):
                src = as_dict(b.get("source"))
                attachments.append({"kind": btype, "media_type": as_str(src.get("media_type"))})
            elif btype not in USER_BLOCKS:
                self.rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"user content type {btype!r}"))
        if attachments and prompt_at is not None:  # images sent with the prompt: its metadata
            self.rows[prompt_at] = replace(self.rows[prompt_at], attachments=attachments)  # type: ignore[arg-type]
        elif attachments:
            self.message(f"{sid}#{i}.att", "user", classes.CONTEXT_INJECTION, None, pos, ts, attachments=attachments)  # type: ignore[arg-type]
        self.seen(ts)

    def assistant(self, i: int, pos: Pos, ts, blocks: list, model: str | None, *, summary: bool) -> None:
        agent, sid = self.task.agent, self.task.sid
        self.pending = []
        self.seen(ts)
        if self.turn is not None and model:
            self.turns[self.turn].model = model
        native = any(as_dict(b).get("type") == "tool_use" for b in blocks)
        for j, blk in enumerate(blocks):
            b = as_dict(blk)
            btype = as_str(b.get("type")) or ""
            self.rows.append(record_type_row(agent, b, "content", btype, btype in ASSISTANT_BLOCKS))
            uid = f"{sid}#{i}.{j}"
            if btype == "text":
                text = as_str(b.get("text")) or ""
                if summary:
                    self.message(uid, "assistant", classes.COMPACTION_SUMMARY, text, pos, ts, model=model)
                    continue
                calls: list[tuple[str, dict[str, str]]] = []
                if not native:
                    calls, text = tx.xml_tool_calls(text)
                spans, text = tx.split_thinking(text)
                for k, span in enumerate(spans):
                    self.message(f"{uid}t{k}", "assistant", classes.REASONING, span, pos, ts, model=model)
                if text.strip():
                    self.message(uid, "assistant", classes.ASSISTANT_TEXT, text.strip(), pos, ts, model=model)
                for k, (name, params) in enumerate(calls):
                    self.add_call(f"{uid}x{k}", name, params, i, pos, ts)
            elif btype in ("thinking", "reasoning"):
                body = (
                    as_nonempty_str(b.get("thinking"))
                    or as_nonempty_str(b.get("text"))
                    or summary_text(b.get("summary"))
                )
                if body:
                    self.message(uid, "assistant", classes.REASONING, body, pos, ts, model=model)
            elif btype == "tool_use":
                inp = b.get("input")
                if isinstance(inp, str):
                    try:
                        inp = orjson.loads(inp)
                    except orjson.JSONDecodeError:
                        pass
                self.add_call(as_nonempty_str(b.get("id")) or uid, as_nonempty_str(b.get("name")), inp, i, pos, ts)
            elif btype not in ASSISTANT_BLOCKS:
                self.rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"assistant content type {btype!r}"))

    def add_call(self, uid: str, name: str | None, inp: Any, i: int, pos: Pos, ts) -> None:
        sid = self.task.sid
        self.calls[uid] = _Call(uid, name, inp, f"{sid}#{i}", self.turn, pos, ts)
        self.pending.append(uid)
        self.rows += file_touch_rows(
            touches(name, inp),
            agent=self.task.agent,
            tool_call_uid=uid,
            session_uid=sid,
            agent_id="",
            ts=ts,
            pos=pos,
            cwd=self.cwd,
        )
        if self.task.subtasks and name == SUBTASK_TOOL:
            args = as_dict(inp)
            self.rows.append(
                SubagentSpawnRow(
                    agent=self.task.agent,
                    spawn_uid=uid,
                    session_uid=sid,
                    agent_id="",
                    tool_call_uid=uid,
                    subagent_type=as_nonempty_str(args.get("mode")),
                    brief=as_nonempty_str(args.get("message")),
                    ts=ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )

    # -- the end -----------------------------------------------------------------------------
    def finish(self) -> list[Row]:
        agent, sid = self.task.agent, self.task.sid
        for call in self.calls.values():
            parts = call.output
            if parts is not None and len(parts) > 1 and not parts[0].strip():
                parts = parts[1:]  # a header-only block, the output in the next ones (older builds)
            output = "\n".join(parts) if parts is not None else None
            if output is None:
                outcome, is_error, rejected = None, None, False
            elif call.flag_error is not None:
                outcome, is_error, rejected = ("error" if call.flag_error else "ok"), call.flag_error, False
            else:
                outcome, is_error, rejected = text_outcome(output, call.skipped)
            error_class, excerpt = classify_error(output, is_error=is_error, rejected=rejected)
            self.rows.append(
                ToolCallRow(
                    agent=agent,
                    tool_call_uid=call.uid,
                    session_uid=sid,
                    agent_id="",
                    turn_uid=call.turn,
                    message_uid=call.message_uid,
                    name=call.name,
                    input=json_text(call.inp),
                    output=output,
                    is_error=is_error or None,
                    outcome=outcome,
                    error_class=error_class,
                    error_excerpt=excerpt,
                    started_at=call.ts,
                    ended_at=call.out_ts,
                    byte_offset=call.pos.byte_offset,
                    line_number=call.pos.line_number,
                    output_byte_offset=call.out_pos.byte_offset if call.out_pos else None,
                    output_line=call.out_pos.line_number if call.out_pos else None,
                )
            )
            if call.name in SHELL_TOOLS and output and call.out_pos is not None:
                self.rows += git_event_rows(
                    agent=agent,
                    tool_call_uid=call.uid,
                    session_uid=sid,
                    agent_id="",
                    output=output,
                    command=as_nonempty_str(as_dict(call.inp).get("command")),
                    ts=call.out_ts,
                    pos=call.out_pos,
                )
        for uid, t in self.turns.items():
            self.rows.append(
                TurnRow(agent, uid, sid, "", t.model, t.started, t.ended, t.pos.byte_offset, t.pos.line_number)
            )
        self.rows.insert(
            0,
            SessionRow(
                agent=agent,
                session_uid=sid,
                agent_id="",
                cwd=self.cwd,
                model=self.session_model or self.model,
                first_prompt=self.first_prompt,
                started_at=min(self.times) if self.times else None,
                ended_at=max(self.times) if self.times else None,
                byte_offset=0,
                line_number=1,
            ),
        )
        return self.rows


def api_rows(doc: Any, task: Task) -> list[Row]:
    """Every row of one ``api_conversation_history.json`` (decoded) of `task` (module docstring).
    A document that is not an array is one ``non_object`` issue."""
    if not isinstance(doc, list):
        return [ParseIssueRow("non_object", 0, 1, "API history is not a JSON array")]
    api = _Api(task)
    for i, msg in enumerate(doc):
        api.item(i, msg)
    return api.finish()
