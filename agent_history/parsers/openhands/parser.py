"""OpenHands (V1: the software-agent-sdk and the CLI built on it) conversations → rows (pure).
Built from the schema: the real captures are listed in fixtures/samples/openhands/PROVENANCE.md
but not committed; the shapes are OpenHands/software-agent-sdk ``openhands-sdk/openhands/sdk/
event/`` and ``conversation/state.py``, ``persistence_const.py`` @ 611629e6999a (FORMATS-NEW.md
§11), checked on the hand-written conversation in fixtures/samples/openhands.

A conversation is a directory ``conversations/<id>/`` holding ``base_state.json`` (the state
without events, rewritten on every save) and ``events/event-<NNNNN>-<event id>.json``, one
immutable JSON document per event. Each file is its own document (content hash); session uid =
the conversation directory's name, so the files of one conversation meet by key.

- ``base_state.json`` → the session: cwd ``workspace.working_dir``, model ``agent.llm.model``.
  **Usage**: ``stats.usage_to_metrics.<usage_id>.accumulated_token_usage`` are the
  conversation's running totals per LLM (``default``, ``condenser``…), the same as the last
  ``stats`` event and restored on resume; no event records a call's own usage, so each total is
  one model call ``<conversation>#usage/<usage_id>`` (model ``model_name``): litellm's
  ``prompt_tokens`` includes the cached prompt, so input_uncached = prompt − cache_read −
  cache_write, cache_read, cache_write_5m = cache_write, output = ``completion_tokens``
  (reasoning inside, as OpenAI counts it). A usage id with no token at all (a condenser that
  never ran) gives no call. ``accumulated_cost`` is recorded when above 0 (litellm reports 0 for a
  model it has no price for: 0 is not known to be free).
- ``MessageEvent{source user|agent, llm_message{content[{type: text, text}]}, llm_response_id}``:
  user → ``human_prompt`` (a turn, uid = event id); agent → ``assistant_text`` and a model call
  ``llm_response_id``.
- ``ActionEvent{thought[], reasoning_content, thinking_blocks[], action{kind, …}, tool_name,
  tool_call_id, tool_call{arguments (a JSON string)}, llm_response_id}`` → a tool call
  ``<conversation>/<tool_call_id>`` of model call ``llm_response_id`` (parallel calls of one
  response share it). ``thought`` text, with any ``<think>…</think>`` removed, is
  ``assistant_text`` (uid ``<event>#text``); reasoning is ``reasoning_content``, else the
  ``thinking_blocks``' thinking, else the removed ``<think>`` text (the real run repeats
  ``reasoning_content`` inside ``<think>``: kept once).
- ``ObservationEvent{tool_call_id, observation{content[], is_error, command, exit_code}}`` →
  the call's output (text items joined); ``AgentErrorEvent{tool_call_id, error}`` → an error
  result; ``UserRejectObservation{tool_call_id, rejection_reason}`` → rejected;
  ``ACPToolCallEvent{tool_call_id, title, tool_kind, raw_input, raw_output, is_error}`` → a
  call with its result.
- ``SystemPromptEvent{system_prompt{text}}`` → ``system_prompt``; ``Condensation{summary?,
  forgotten_event_ids}`` → a compaction (its summary a ``compaction_summary``);
  ``CondensationSummaryEvent{summary}`` → ``compaction_summary``.
- Counted only: ``ConversationStateUpdateEvent`` (the ``stats`` snapshots among them: totals are
  read from ``base_state.json``), ``CondensationRequest``, ``ConversationErrorEvent``,
  ``HookExecutionEvent``, ``LLMCompletionLogEvent``, ``PauseEvent``, ``InterruptEvent``,
  ``TokenEvent``, ``StreamingDeltaEvent``.
Times: ``timestamp`` is ``datetime.now().isoformat()`` — local wall time without a zone, read in
the indexing machine's zone (as Aider's). Touches: ``file_editor`` (``command`` view → read,
create → create, str_replace / insert / undo_edit → edit; ``path``), ``terminal`` commands; git
events from ``terminal`` output. Record types counted: ``base_state``, ``event/<kind>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
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
from agent_history.parsers.base import DocumentParser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str, note_refused
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.results import tool_result_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "openhands"
VERSION = 1
HANDLED = frozenset(
    {
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        "ACPToolCallEvent",
        "SystemPromptEvent",
        "Condensation",
        "CondensationSummaryEvent",
    }
)
COUNTED = frozenset(
    {
        "ConversationStateUpdateEvent",
        "CondensationRequest",
        "ConversationErrorEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "PauseEvent",
        "InterruptEvent",
        "TokenEvent",
        "StreamingDeltaEvent",
    }
)
EDITOR_OPS: dict[str, str] = {
    "view": "read",
    "create": "create",
    "str_replace": "edit",
    "insert": "edit",
    "undo_edit": "edit",
}
"""``file_editor`` ``command`` → touch op."""
SHELL_TOOLS = frozenset({"terminal", "bash", "execute_bash"})
_THINK = re.compile(r"<think>(.*?)</think>", re.S)
POS = Pos(0, 1, 0)


def local_ts(value: Any) -> datetime | None:
    """An event ``timestamp`` (ISO 8601; without a zone = this machine's local time) in UTC."""
    s = as_nonempty_str(value)
    if s is None:
        return None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        note_refused(value, "a timestamp")
        return None
    return dt.astimezone(UTC)


def _texts(content: Any) -> str:
    """The text items of a content list, joined."""
    return "\n".join(t for c in as_list(content) if (t := as_str(as_dict(c).get("text"))) is not None)


class OpenHandsParser(DocumentParser):
    """One file of a conversation directory (module docstring)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of ``base_state.json`` or of one event file; a file that is not a JSON object is
        one parse issue."""
        path = PurePosixPath(self.ctx.path.replace("\\", "/"))
        events = path.parent.name == "events"
        self.sid = (path.parent.parent if events else path.parent).name or self.ctx.path
        doc, issues = load_document(data)
        if not isinstance(doc, dict):
            return [*issues] or [ParseIssueRow("bad_record", 0, 1, "not a JSON object")]
        if not events:
            return self._state(doc)
        return self._event(doc)

    def _state(self, doc: dict) -> list[Row]:
        rows: list[Row] = [record_type_row(AGENT, doc, "base_state", None, True)]
        llm = as_dict(as_dict(doc.get("agent")).get("llm"))
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=self.sid,
                agent_id="",
                is_subagent=False,
                cwd=as_nonempty_str(as_dict(doc.get("workspace")).get("working_dir")),
                model=as_nonempty_str(llm.get("model")),
            )
        )
        for usage_id, metrics in as_dict(as_dict(doc.get("stats")).get("usage_to_metrics")).items():
            m = as_dict(metrics)
            u = as_dict(m.get("accumulated_token_usage"))
            prompt, done = as_int(u.get("prompt_tokens")), as_int(u.get("completion_tokens"))
            read, write = as_int(u.get("cache_read_tokens")) or 0, as_int(u.get("cache_write_tokens")) or 0
            if not prompt and not done:
                continue
            uncached = prompt - read - write if prompt is not None and prompt >= read + write else None
            cost = m.get("accumulated_cost")
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=f"{self.sid}#usage/{usage_id}",
                    session_uid=self.sid,
                    agent_id="",
                    model=as_nonempty_str(m.get("model_name")) or as_nonempty_str(u.get("model")),
                    input_uncached=uncached,
                    cache_read=read if prompt is not None else None,
                    cache_write_5m=write if prompt is not None else None,
                    output=done,
                    recorded_cost_usd=float(cost) if isinstance(cost, int | float) and cost > 0 else None,
                    byte_offset=0,
                    line_number=1,
                )
            )
        return rows

    def _event(self, ev: dict) -> list[Row]:
        kind = as_str(ev.get("kind")) or ""
        known = kind in HANDLED or kind in COUNTED
        rows: list[Row] = [record_type_row(AGENT, ev, "event", kind, known)]
        if not known:
            return [*rows, ParseIssueRow("unknown_record_type", 0, 1, f"event {kind!r}")]
        eid = as_nonempty_str(ev.get("id"))
        if eid is None:
            return [*rows, ParseIssueRow("bad_record", 0, 1, "event without id")]
        ts = local_ts(ev.get("timestamp"))
        rows.append(SessionRow(agent=AGENT, session_uid=self.sid, agent_id="", started_at=ts, ended_at=ts))
        e = _Event(self.sid, eid, ts)
        if kind == "MessageEvent":
            rows += e.message(ev)
        elif kind == "ActionEvent":
            rows += e.action(ev)
        elif kind == "ObservationEvent":
            obs = as_dict(ev.get("observation"))
            rows += e.result(ev, _texts(obs.get("content")), obs.get("is_error") is True, command=obs.get("command"))
        elif kind == "AgentErrorEvent":
            rows += e.result(ev, as_str(ev.get("error")), True)
        elif kind == "UserRejectObservation":
            rows += e.result(ev, as_str(ev.get("rejection_reason")), False, outcome="rejected")
        elif kind == "ACPToolCallEvent":
            rows += e.acp(ev)
        elif kind == "SystemPromptEvent":
            text = as_str(as_dict(ev.get("system_prompt")).get("text"))
            if text:
                rows.append(e.msg(eid, "system", classes.SYSTEM_PROMPT, text))
        elif kind in ("Condensation", "CondensationSummaryEvent"):
            summary = as_nonempty_str(ev.get("summary"))
            if summary:
                rows.append(e.msg(eid, "assistant", classes.COMPACTION_SUMMARY, summary))
            if kind == "Condensation":
                rows.append(
                    CompactionRow(
                        agent=AGENT,
                        compaction_uid=f"{self.sid}#{eid}",
                        session_uid=self.sid,
                        agent_id="",
                        summary_message_uid=eid if summary else None,
                        ts=ts,
                        byte_offset=0,
                        line_number=1,
                    )
                )
        return rows


class _Event:
    """What the rows of one event share."""

    def __init__(self, sid: str, eid: str, ts: datetime | None) -> None:
        self.sid, self.eid, self.ts = sid, eid, ts

    def msg(self, uid: str, role: str, mclass: str, text: str, turn: str | None = None) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid,
            agent_id="",
            turn_uid=turn,
            role=role,
            message_class=mclass,
            text=text,
            ts=self.ts,
            byte_offset=0,
            line_number=1,
        )

    def call(self, response: str | None) -> list[Row]:
        if response is None:
            return []
        return [
            ModelCallRow(
                agent=AGENT,
                call_uid=response,
                session_uid=self.sid,
                agent_id="",
                ts=self.ts,
                byte_offset=0,
                line_number=1,
            )
        ]

    def message(self, ev: dict) -> list[Row]:
        llm = as_dict(ev.get("llm_message"))
        text = _texts(llm.get("content"))
        if as_str(ev.get("source")) == "user":
            if not text.strip():
                return []
            return [
                TurnRow(AGENT, self.eid, self.sid, "", None, self.ts, self.ts, 0, 1),
                self.msg(self.eid, "user", classes.HUMAN_PROMPT, text, self.eid),
                SessionRow(agent=AGENT, session_uid=self.sid, agent_id="", first_prompt=text),
            ]
        rows: list[Row] = self.call(as_nonempty_str(ev.get("llm_response_id")))
        if text.strip():
            rows.append(self.msg(self.eid, "assistant", classes.ASSISTANT_TEXT, text))
        return rows

    def action(self, ev: dict) -> list[Row]:
        response = as_nonempty_str(ev.get("llm_response_id"))
        rows = self.call(response)
        thought = _texts(ev.get("thought"))
        inner = "\n".join(m.strip() for m in _THINK.findall(thought))
        visible = _THINK.sub("", thought).strip()
        blocks = "\n".join(t for b in as_list(ev.get("thinking_blocks")) if (t := as_str(as_dict(b).get("thinking"))))
        reasoning = as_nonempty_str(ev.get("reasoning_content")) or blocks or inner
        if reasoning and reasoning.strip():
            rows.append(self.msg(f"{self.eid}#reasoning", "assistant", classes.REASONING, reasoning.strip()))
        if visible:
            rows.append(self.msg(f"{self.eid}#text", "assistant", classes.ASSISTANT_TEXT, visible))
        cid = as_nonempty_str(ev.get("tool_call_id")) or self.eid
        tid = f"{self.sid}/{cid}"
        name = as_nonempty_str(ev.get("tool_name"))
        args = as_dict(ev.get("tool_call")).get("arguments")
        rows.append(
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id="",
                message_uid=response,
                call_uid=response,
                name=name,
                input=args if isinstance(args, str) else (None if args is None else orjson.dumps(args).decode()),
                started_at=self.ts,
                byte_offset=0,
                line_number=1,
            )
        )
        act = as_dict(ev.get("action"))
        command = as_nonempty_str(act.get("command"))
        touches: list[tuple[str, str]] = []
        if name == "file_editor" and command in EDITOR_OPS and as_nonempty_str(act.get("path")):
            touches = [(EDITOR_OPS[command], act["path"])]
        elif name in SHELL_TOOLS and command:
            touches = touches_from_shell(command)
        rows += file_touch_rows(
            touches, agent=AGENT, tool_call_uid=tid, session_uid=self.sid, agent_id="", ts=self.ts, pos=POS
        )
        return rows

    def result(
        self, ev: dict, output: str | None, is_error: bool, *, command: Any = None, outcome: str | None = None
    ) -> list[Row]:
        cid = as_nonempty_str(ev.get("tool_call_id"))
        if cid is None:
            return [ParseIssueRow("bad_record", 0, 1, "result without tool_call_id")]
        tid = f"{self.sid}/{cid}"
        name = as_nonempty_str(ev.get("tool_name"))
        return tool_result_rows(
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id="",
            name=name,
            output=output,
            is_error=is_error,
            outcome=outcome,
            ts=self.ts,
            pos=POS,
            shell=as_str(ev.get("tool_name")) in SHELL_TOOLS,
            git_command=as_nonempty_str(command),
        )

    def acp(self, ev: dict) -> list[Row]:
        cid = as_nonempty_str(ev.get("tool_call_id")) or self.eid
        raw_in, raw_out = ev.get("raw_input"), ev.get("raw_output")
        output = raw_out if isinstance(raw_out, str) else (None if raw_out is None else orjson.dumps(raw_out).decode())
        is_error = ev.get("is_error") is True
        error_class, excerpt = classify_error(output, is_error=is_error)
        return [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=f"{self.sid}/{cid}",
                session_uid=self.sid,
                agent_id="",
                name=as_nonempty_str(ev.get("tool_kind")) or as_nonempty_str(ev.get("title")),
                input=None if raw_in is None else orjson.dumps(raw_in).decode(),
                output=output,
                is_error=is_error or None,
                outcome=("error" if is_error else "ok") if raw_out is not None or is_error else None,
                error_class=error_class,
                error_excerpt=excerpt,
                started_at=self.ts,
                byte_offset=0,
                line_number=1,
            )
        ]


PARSER = OpenHandsParser
DOCUMENT_PARSER = OpenHandsParser
