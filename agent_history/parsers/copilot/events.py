"""GitHub Copilot CLI ``events.jsonl`` (``~/.copilot/session-state/<id>/events.jsonl``) → rows.

The VS Code "copilot-agent" event log reuses this vocabulary (``session.start.producer =
"copilot-agent"`` with ``vscodeVersion``); `agent_history.parsers.copilot_vscode.agent_log`
subclasses this parser with agent ``copilot-vscode``.

Format contract (FORMATS §7, read off ``corpus/samples/copilot-cli`` and ``vscode-copilot``):

- **Envelope.** ``{type, data, id, parentId, timestamp}`` (ISO timestamps). Legacy CLI lines
  (cass fixtures) are flat: ``{session_id, cwd, type, prompt | output | result, timestamp}``
  with unix-ms timestamps and types ``user.message`` / ``assistant.message`` /
  ``userpromptsubmitted`` / ``assistantresponse``. `EVENT_TYPES` lists every known type; others
  are ``unknown_record_type`` (counted, known=False). Every record gets one RecordTypeRow.
- **Session.** uid = ``session.start.data.sessionId`` or a legacy ``session_id`` (the first one
  seen, kept in state), else the directory of an ``events.jsonl`` (its name is the session id),
  else the file name without ``.events.jsonl`` / ``.jsonl``. cwd / branch / cli version from
  ``session.start`` / ``session.resume`` ``context`` (``copilotVersion``); model from
  ``selectedModel``, ``session.model_change.newModel``, ``assistant.turn_start.model`` and each
  ``assistant.message.model`` (latest wins).
- **Keys.** Event ids are not unique in redacted files (every id is ``"[trimmed for fixture]"``),
  so messages, turns, compactions and model calls are keyed by the line: ``<session>:L<line>``
  (the file is append-only; a rewrite is purged and re-read by the loader). Tool calls are keyed
  by ``<session>:<toolCallId>`` because requests, starts and completions pair by it.
- **Messages.** ``user.message`` (``content``; legacy ``prompt``) and ``userpromptsubmitted`` →
  ``human_prompt``; ``assistant.message`` (``content``; legacy ``output``) and
  ``assistantresponse`` (``result``) → ``assistant_text`` (empty content: no message);
  ``assistant.message.reasoningText`` and ``assistant.reasoning`` → ``reasoning``;
  ``system.message`` → ``system_prompt``; ``system.notification`` → ``context_injection``;
  ``abort`` → ``interrupt_marker`` (its ``reason``).
- **Sub-agents.** ``subagent.started{toolCallId, agentName, agentDescription}`` → a
  SubagentSpawnRow ``<session>:<toolCallId>`` whose child is ``(session, agent_id=toolCallId)``;
  every event carrying ``data.parentToolCallId`` belongs to that child thread (same file).
- **Turns.** A user message opens a turn keyed by ``<session>:<interactionId>`` when it has one,
  else by its line; ``assistant.turn_start`` without an open turn opens one; ``assistant.turn_end``
  extends its end; the next user message starts the next turn.
- **Tool calls.** ``assistant.message.toolRequests[] {toolCallId, name | toolName, arguments}``,
  ``tool.execution_start {toolCallId, toolName, arguments}``, ``tool.execution_complete
  {toolCallId, success, result{content} | result (string)}`` merge into one ToolCallRow;
  outcome ok / error from ``success``; ``toolTelemetry.metrics.durationMs`` → duration.
- **Usage.** Each ``assistant.message`` with an ``outputTokens`` number is one model call
  (output only; the line is the call: ``apiCallId`` / ``requestId`` are kept as request id).
  Input and cache tokens are recorded only in ``session.shutdown.tokenDetails`` (``input``,
  ``output``, ``cache_read``, ``cache_write`` — disjoint buckets), written once when a run of
  ``copilot`` exits; a resumed session writes a second one for its second run. Each shutdown is
  one aggregate ModelCallRow ``<session>:L<line>`` (request id ``session.shutdown``) with that
  run's input/cache tokens and only the output **not already counted** from that run's
  messages (state keeps the running output sum since the last shutdown), so summing all calls
  never double counts. ``session.usage_checkpoint`` (nano-AIU / premium requests, not tokens)
  and ``subagent.completed.totalTokens`` (inside the run's totals) add no tokens.
- **Compactions.** ``session.truncation`` → CompactionRow (trigger ``auto``, tokens before/after
  = ``preTruncationTokensInMessages`` / ``postTruncationTokensInMessages``).
- Counted only: ``session.info``, ``session.error``, ``session.auto_mode_resolved``,
  ``session.usage_checkpoint``, ``hook.start``/``hook.end``, ``assistant.turn_end``,
  ``subagent.completed``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Parser, Pos, record_type_row, stamp_messages
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.timeutil import parse_ts

EVENT_TYPES: frozenset[str] = frozenset(
    {
        # FORMATS §7 (copilot-cli real-redacted and hand-written files, VS Code agent log)
        "session.start",
        "session.resume",
        "session.model_change",
        "session.info",
        "session.error",
        "session.truncation",
        "session.usage_checkpoint",
        "session.shutdown",
        "session.auto_mode_resolved",
        "user.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.message",
        "assistant.reasoning",
        "tool.execution_start",
        "tool.execution_complete",
        "subagent.started",
        "subagent.completed",
        "hook.start",
        "hook.end",
        "abort",
        "system.message",
        "system.notification",
        # legacy flat lines (cass fixtures)
        "userpromptsubmitted",
        "assistantresponse",
    }
)
"""Every event type the corpus shows (``hook.end`` is the documented pair of ``hook.start``)."""

PLAIN_MESSAGES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # type → (role, class, data/flat fields holding the text, first non-empty wins)
    "user.message": ("user", classes.HUMAN_PROMPT, ("content", "prompt")),
    "userpromptsubmitted": ("user", classes.HUMAN_PROMPT, ("prompt", "content")),
    "assistantresponse": ("assistant", classes.ASSISTANT_TEXT, ("result", "output", "content")),
    "assistant.reasoning": ("assistant", classes.REASONING, ("content",)),
    "system.message": ("system", classes.SYSTEM_PROMPT, ("content",)),
    "system.notification": ("system", classes.CONTEXT_INJECTION, ("content",)),
    "abort": ("system", classes.INTERRUPT_MARKER, ("reason",)),
}
"""Events that become exactly one message (FORMATS §7); ``assistant.message`` is handled apart."""

USER_TYPES = frozenset({"user.message", "userpromptsubmitted"})


def session_uid_from_path(path: str) -> str:
    """The session id a path implies: the directory of ``…/<id>/events.jsonl``, else the file name
    without ``.events.jsonl`` / ``.jsonl`` / ``.json``."""
    p = PurePosixPath(path.replace("\\", "/"))
    if p.name == "events.jsonl" and p.parent.name:
        return p.parent.name
    name = p.name
    for suffix in (".events.jsonl", ".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _json_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class CopilotEventsParser(Parser):
    """Copilot event log → rows (contract in the module docstring)."""

    AGENT = "copilot"
    VERSION = 1

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        st = state or {}
        self.sid: str = st.get("sid") or session_uid_from_path(ctx.path)
        self.sid_fixed: bool = bool(st.get("sid_fixed"))
        self.model: str | None = st.get("model")
        self.turn: str | None = st.get("turn")
        self.out_since: int = int(st.get("out_since") or 0)
        self.children: list[str] = list(st.get("children") or [])
        self.prompted: bool = bool(st.get("prompted"))
        self._min: datetime | None = None
        self._max: datetime | None = None

    def state(self) -> dict:
        """Session id, current model and turn, output tokens since the last shutdown, child ids."""
        return {
            "sid": self.sid,
            "sid_fixed": self.sid_fixed,
            "model": self.model,
            "turn": self.turn,
            "out_since": self.out_since,
            "children": self.children[-200:],
            "prompted": self.prompted,
        }

    # -- helpers --------------------------------------------------------------------------------
    def _uid(self, pos: Pos, suffix: str = "") -> str:
        return f"{self.sid}:L{pos.line_number}{suffix}"

    def _see(self, ts: datetime | None) -> None:
        if ts is None:
            return
        self._min = ts if self._min is None or ts < self._min else self._min
        self._max = ts if self._max is None or ts > self._max else self._max

    def _session(self, pos: Pos | None = None, **fields: Any) -> SessionRow:
        return SessionRow(
            agent=self.AGENT,
            session_uid=self.sid,
            agent_id="",
            is_subagent=False,
            byte_offset=pos.byte_offset if pos else None,
            line_number=pos.line_number if pos else None,
            **fields,
        )

    def _message(self, pos, agent_id, role, cls, text, ts, suffix="", **extra) -> MessageRow:
        return MessageRow(
            agent=self.AGENT,
            message_uid=self._uid(pos, suffix),
            session_uid=self.sid,
            agent_id=agent_id,
            turn_uid=self.turn,
            role=role,
            message_class=cls,
            text=text,
            ts=ts,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
            **extra,
        )

    # -- feed -----------------------------------------------------------------------------------
    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """One event line → rows (see the module docstring)."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, type(record).__name__)]
        rtype = as_str(record.get("type"))
        known = rtype in EVENT_TYPES
        rows: list[Row] = [record_type_row(self.AGENT, record, rtype or "", None, known)]
        if not known:
            rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, str(rtype)[:200]))
            return rows
        data = as_dict(record.get("data"))
        flat = "data" not in record  # legacy line: fields at the top level
        body = record if flat else data
        ts = parse_ts(record.get("timestamp"))
        self._see(ts)
        legacy_sid = as_nonempty_str(record.get("session_id"))
        if rtype == "session.start" and as_nonempty_str(data.get("sessionId")) and not self.sid_fixed:
            self.sid, self.sid_fixed = data["sessionId"], True
        elif legacy_sid and not self.sid_fixed:
            self.sid, self.sid_fixed = legacy_sid, True
        parent_call = as_nonempty_str(data.get("parentToolCallId"))
        agent_id = parent_call or ""
        if parent_call and parent_call not in self.children:
            self.children.append(parent_call)
            rows.append(
                SessionRow(
                    agent=self.AGENT,
                    session_uid=self.sid,
                    agent_id=parent_call,
                    is_subagent=True,
                    parent_session_uid=self.sid,
                    parent_agent_id="",
                    spawn_uid=f"{self.sid}:{parent_call}",
                    started_at=ts,
                    ended_at=ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        handler = getattr(self, "_on_" + rtype.replace(".", "_"), None)
        if handler is not None:
            rows.extend(handler(record, body, pos, ts, agent_id))
        elif rtype in PLAIN_MESSAGES:
            rows.extend(self._plain(rtype, body, pos, ts, agent_id))
        if flat and as_nonempty_str(record.get("cwd")):
            rows.append(self._session(cwd=record["cwd"]))
        return stamp_messages(rows, rtype, as_str(body.get("role")), pos.byte_offset)

    def flush(self) -> Iterable[Row]:
        """The session row with this pass's first and last timestamps and latest model."""
        rows: list[Row] = [self._session(started_at=self._min, ended_at=self._max, model=self.model)]
        self._min = self._max = None
        return rows

    # -- event handlers -------------------------------------------------------------------------
    def _context(self, data: dict, pos: Pos, ts: datetime | None) -> list[Row]:
        ctx = as_dict(data.get("context"))
        model = as_nonempty_str(data.get("selectedModel"))
        if model:
            self.model = model
        return [
            self._session(
                pos,
                cwd=as_nonempty_str(ctx.get("cwd")),
                git_branch=as_nonempty_str(ctx.get("branch")),
                cli_version=as_nonempty_str(data.get("copilotVersion")),
                model=self.model,
                started_at=ts,
                ended_at=ts,
            )
        ]

    def _on_session_start(self, record, data, pos, ts, agent_id) -> list[Row]:
        return self._context(data, pos, ts)

    def _on_session_resume(self, record, data, pos, ts, agent_id) -> list[Row]:
        return self._context(data, pos, ts)

    def _on_session_model_change(self, record, data, pos, ts, agent_id) -> list[Row]:
        self.model = as_nonempty_str(data.get("newModel")) or self.model
        return []

    def _plain(self, rtype, body, pos, ts, agent_id) -> list[Row]:
        role, cls, fields = PLAIN_MESSAGES[rtype]
        text = next((body[f] for f in fields if as_nonempty_str(body.get(f))), None)
        rows: list[Row] = []
        if rtype in USER_TYPES:
            interaction = as_nonempty_str(body.get("interactionId"))
            self.turn = f"{self.sid}:{interaction}" if interaction else self._uid(pos)
            rows.append(
                TurnRow(self.AGENT, self.turn, self.sid, agent_id, self.model, ts, ts, pos.byte_offset, pos.line_number)
            )
            if text is not None and not self.prompted and not agent_id:
                self.prompted = True
                rows.append(self._session(first_prompt=text[:200]))
        if text is None:
            return rows
        attachments = [
            {k: a[k] for k in ("type", "displayName") if k in a}
            for a in as_list(body.get("attachments"))
            if isinstance(a, dict)
        ]
        rows.append(self._message(pos, agent_id, role, cls, text, ts, attachments=attachments or None))
        return rows

    def _on_assistant_turn_start(self, record, data, pos, ts, agent_id) -> list[Row]:
        self.model = as_nonempty_str(data.get("model")) or self.model
        if self.turn is None:
            self.turn = self._uid(pos)
        return [
            TurnRow(self.AGENT, self.turn, self.sid, agent_id, self.model, ts, ts, pos.byte_offset, pos.line_number)
        ]

    def _on_assistant_turn_end(self, record, data, pos, ts, agent_id) -> list[Row]:
        if self.turn is None:
            return []
        return [TurnRow(self.AGENT, self.turn, self.sid, agent_id, ended_at=ts)]

    def _on_assistant_message(self, record, body, pos, ts, agent_id) -> list[Row]:
        model = as_nonempty_str(body.get("model"))
        if model:
            self.model = model
        rows: list[Row] = []
        uid = self._uid(pos)
        text = as_nonempty_str(body.get("content")) or as_nonempty_str(body.get("output"))
        if text is not None:
            rows.append(
                self._message(pos, agent_id, "assistant", classes.ASSISTANT_TEXT, text, ts, model=model or self.model)
            )
        reasoning = as_nonempty_str(body.get("reasoningText"))
        if reasoning is not None:
            rows.append(self._message(pos, agent_id, "assistant", classes.REASONING, reasoning, ts, "#reasoning"))
        output = as_int(body.get("outputTokens"))
        if output is not None:
            self.out_since += output
            rows.append(
                ModelCallRow(
                    agent=self.AGENT,
                    call_uid=uid,
                    session_uid=self.sid,
                    agent_id=agent_id,
                    turn_uid=self.turn,
                    request_id=as_nonempty_str(body.get("apiCallId")) or as_nonempty_str(body.get("requestId")),
                    model=model or self.model,
                    output=output,
                    ts=ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        for req in as_list(body.get("toolRequests")):
            if not isinstance(req, dict) or not as_nonempty_str(req.get("toolCallId")):
                continue
            rows.append(
                ToolCallRow(
                    agent=self.AGENT,
                    tool_call_uid=f"{self.sid}:{req['toolCallId']}",
                    session_uid=self.sid,
                    agent_id=agent_id,
                    turn_uid=self.turn,
                    message_uid=uid if text is not None else None,
                    call_uid=uid if output is not None else None,
                    name=as_nonempty_str(req.get("name")) or as_nonempty_str(req.get("toolName")),
                    input=_json_text(req.get("arguments")),
                    started_at=ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        return rows

    def _on_tool_execution_start(self, record, data, pos, ts, agent_id) -> list[Row]:
        call = as_nonempty_str(data.get("toolCallId"))
        if call is None:
            return []
        return [
            ToolCallRow(
                agent=self.AGENT,
                tool_call_uid=f"{self.sid}:{call}",
                session_uid=self.sid,
                agent_id=agent_id,
                turn_uid=self.turn,
                name=as_nonempty_str(data.get("toolName")),
                input=_json_text(data.get("arguments")),
                started_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]

    def _on_tool_execution_complete(self, record, data, pos, ts, agent_id) -> list[Row]:
        call = as_nonempty_str(data.get("toolCallId"))
        if call is None:
            return []
        result = data.get("result")
        output = as_str(as_dict(result).get("content")) if isinstance(result, dict) else _json_text(result)
        success = data.get("success")
        ok = success if isinstance(success, bool) else None
        return [
            ToolCallRow(
                agent=self.AGENT,
                tool_call_uid=f"{self.sid}:{call}",
                session_uid=self.sid,
                agent_id=agent_id,
                turn_uid=self.turn,
                output=output,
                is_error=None if ok is None else not ok,
                outcome=None if ok is None else ("ok" if ok else "error"),
                duration_ms=as_int(as_dict(as_dict(data.get("toolTelemetry")).get("metrics")).get("durationMs")),
                ended_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                output_byte_offset=pos.byte_offset,
                output_line=pos.line_number,
            )
        ]

    def _on_subagent_started(self, record, data, pos, ts, agent_id) -> list[Row]:
        call = as_nonempty_str(data.get("toolCallId"))
        if call is None:
            return []
        return [
            SubagentSpawnRow(
                agent=self.AGENT,
                spawn_uid=f"{self.sid}:{call}",
                session_uid=self.sid,
                agent_id=agent_id,
                tool_call_uid=f"{self.sid}:{call}",
                child_session_uid=self.sid,
                child_agent_id=call,
                subagent_type=as_nonempty_str(data.get("agentName")),
                description=as_nonempty_str(data.get("agentDescription")),
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]

    def _on_session_truncation(self, record, data, pos, ts, agent_id) -> list[Row]:
        return [
            CompactionRow(
                agent=self.AGENT,
                compaction_uid=self._uid(pos),
                session_uid=self.sid,
                agent_id=agent_id,
                trigger="auto",
                tokens_before=as_int(data.get("preTruncationTokensInMessages")),
                tokens_after=as_int(data.get("postTruncationTokensInMessages")),
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]

    def _on_session_shutdown(self, record, data, pos, ts, agent_id) -> list[Row]:
        details = as_dict(data.get("tokenDetails"))

        def bucket(name: str) -> int | None:
            return as_int(as_dict(details.get(name)).get("tokenCount"))

        total_out = bucket("output")
        remainder = None if total_out is None else max(0, total_out - self.out_since)
        self.out_since = 0
        model = as_nonempty_str(data.get("currentModel"))
        if model:
            self.model = model
        if not details:
            return []
        return [
            ModelCallRow(
                agent=self.AGENT,
                call_uid=self._uid(pos),
                session_uid=self.sid,
                agent_id=agent_id,
                request_id="session.shutdown",
                model=model or self.model,
                input_uncached=bucket("input"),
                cache_read=bucket("cache_read"),
                cache_write_5m=bucket("cache_write"),
                output=remainder,
                is_complete=True,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                duration_ms=as_int(data.get("totalApiDurationMs")),
                duration_basis="recorded" if as_int(data.get("totalApiDurationMs")) is not None else None,
            )
        ]


PARSER = CopilotEventsParser
