"""Kimi Code CLI (the TypeScript ``kimi`` of 2026) → rows (pure). Format: FORMATS-NEW.md §9;
samples in fixtures/samples/kimi (real journals, long values clipped by their author).

Layout: ``~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/`` holds ``state.json`` (whole
document, rewritten: title, work dir, agents) and ``agents/<agent>/wire.jsonl``, one append-only
journal per agent: ``main`` is the session's own thread (``agent_id`` ''), every other
directory (``agent-0``, …) a sub-agent of the same session (``agent_id`` = the directory name,
``is_subagent``; its parent agent comes from ``state.json``, else the main thread). The session
uid is the session directory without its ``session_`` prefix. A journal read outside that
layout is a session of its own (uid = the file name).

Journal lines are ``{type, …payload, time (epoch ms)[, agentId]}``; line 1 ``{type: "metadata",
protocol_version, created_at}``. What gives rows:

- ``turn.prompt`` ``{input[{type: text, text}], origin{kind, name}}`` — starts a turn: origin
  ``user`` → ``human_prompt``, ``system_trigger``/``subagent`` → ``subagent_brief``, other
  triggers → ``context_injection``. ``turn.steer`` (typed while the agent works) →
  ``queued_prompt``. ``turn.cancel`` / ``turn.ended`` end the turn. ``context.append_message``
  repeats those inputs into the model context: no rows (assistant output is never one).
- ``context.append_loop_event`` wraps the agent loop: ``content.part`` (``think`` →
  ``reasoning``, ``text`` → ``assistant_text``, keyed by the part ``uuid``); ``tool.call``
  ``{toolCallId, name, args}`` and ``tool.result`` ``{toolCallId, result{output, isError,
  note}}`` (tool-call uid ``<session>:<agent>/<toolCallId>``: ids such as ``Glob_0`` repeat
  across agents); ``step.end`` — one model call per step, keyed by the step ``uuid``:
  ``usage{inputOther → input_uncached, inputCacheRead → cache_read, inputCacheCreation →
  cache_write_5m, output → output}`` (no reasoning bucket: NULL), ``finishReason``,
  ``messageId``, ``llmFirstTokenLatencyMs`` (ttft) + ``llmStreamDurationMs``.
- ``usage.record`` repeats each step's usage with ``usageScope: "turn"`` — not counted again;
  a compaction request has no step, so its ``usage.record`` (``usageScope: "session"``) is its
  own model call (keyed by the line's position).
- ``llm.request`` names the concrete model (``model``; ``modelAlias`` is the profile's alias)
  for the calls that follow (kept in the state); retries repeat it with ``attempt``.
- ``full_compaction.begin {source}`` + ``context.apply_compaction {summary, tokensBefore,
  tokensAfter}`` → a compaction and its ``compaction_summary`` message.
- ``permission.record_approval_result`` with a refusing decision marks the call ``rejected``.
- ``config.update {cwd}`` / ``profile.bind {environmentDisclosure.cwd}`` → the session cwd.
Everything else in `TYPES` is bookkeeping. Touches: `FILE_TOOLS` (``path``) and ``Bash``
commands (``args.cwd`` or the session cwd); git events from ``Bash`` output; ``Agent`` calls are
sub-agent spawns (``prompt``, ``description``). Record types counted: ``<type>`` and
``context.append_loop_event/<event type>``.
"""

from __future__ import annotations

import re
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
from agent_history.parsers.base import DocumentParser, ParseContext, Parser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.pending import SavedFields, git_flags, git_hint
from agent_history.parsers.common.results import tool_result_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.spawn import spawn_row
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "kimi"
VERSION = 1
MAIN_AGENT = "main"

TYPES = frozenset(
    {
        "metadata",
        "config.update",
        "tools.set_active_tools",
        "turn.prompt",
        "turn.steer",
        "turn.cancel",
        "turn.ended",
        "context.append_message",
        "context.append_loop_event",
        "context.apply_compaction",
        "llm.tools_snapshot",
        "llm.request",
        "usage.record",
        "full_compaction.begin",
        "full_compaction.complete",
        "permission.set_mode",
        "permission.record_approval_result",
        "profile.bind",
        "plugin.session_start",
        "runtime.set_binding",
        "token_counting.measured",
        "token_counting.turn_recorded",
    }
)
"""Journal line types (FORMATS-NEW.md §9, the samples)."""
LOOP_EVENTS = frozenset({"step.begin", "step.end", "content.part", "tool.call", "tool.result"})
PART_CLASSES: dict[str, tuple[str, str]] = {
    "think": ("think", classes.REASONING),
    "text": ("text", classes.ASSISTANT_TEXT),
}
"""``content.part`` type → (the part's text key, message class)."""
FILE_TOOLS: dict[str, str] = {"Read": "read", "ReadMediaFile": "read", "Write": "create", "Edit": "edit"}
SHELL_TOOLS = frozenset({"Bash"})
SPAWN_TOOLS = frozenset({"Agent"})
REFUSED = frozenset({"rejected", "denied", "declined", "refused"})
"""``permission.record_approval_result`` decisions that refuse the call."""
_SESSION_DIR = re.compile(r"^session_")


def _where(path: str) -> tuple[str, str]:
    """(session uid, agent id) of a journal at `path` (module docstring)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if len(parts) >= 4 and parts[-3] == "agents":
        agent = parts[-2]
        return _SESSION_DIR.sub("", parts[-4]) or parts[-4], "" if agent == MAIN_AGENT else agent
    return PurePosixPath(parts[-1]).stem if parts else path, ""


def _text(items: Any) -> str:
    return "\n".join(t for t in (as_str(as_dict(i).get("text")) for i in as_list(items)) if t)


class KimiParser(SavedFields, Parser):
    """One agent journal (``wire.jsonl``). State: open turn, current model, session cwd, the
    pending compaction trigger, unanswered calls (`PendingCalls`)."""

    AGENT = AGENT
    VERSION = VERSION

    STATE_FIELDS = ("turn_uid", "model", "cwd", "trigger")

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        self.sid, self.aid = _where(ctx.path)
        self.key = f"{self.sid}:{self.aid or MAIN_AGENT}"
        self.turn_uid: str | None
        self.model: str | None
        self.cwd: str | None
        self.trigger: str | None
        self.restore(state)

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows of one journal line."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "line is not a JSON object")]
        rtype = as_str(record.get("type")) or ""
        event = as_dict(record.get("event")) if rtype == "context.append_loop_event" else {}
        etype = as_str(event.get("type")) if rtype == "context.append_loop_event" else None
        known = rtype in TYPES and (etype is None or etype in LOOP_EVENTS)
        seen = event if etype is not None else record
        rows: list[Row] = [record_type_row(AGENT, seen, rtype, etype, known)]
        if not known:
            what = f"loop event {etype!r}" if rtype in TYPES else f"record type {rtype!r}"
            return [*rows, ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, what)]
        ts = parse_ts(record.get("time"))
        handler = _HANDLERS.get(etype or rtype)
        if handler is not None:
            rows += handler(self, record, event, ts, pos)
        if ts is not None and rtype != "metadata":
            rows.append(
                self._session(started_at=ts, ended_at=ts, byte_offset=pos.byte_offset, line_number=pos.line_number)
            )
        return rows

    # -- helpers -----------------------------------------------------------------------------
    def _session(self, **fields) -> SessionRow:
        sub = {"is_subagent": bool(self.aid)}
        if self.aid:
            sub["parent_session_uid"] = self.sid
        return SessionRow(agent=AGENT, session_uid=self.sid, agent_id=self.aid, **sub, **fields)

    def _msg(self, uid, role, mclass, text, ts, pos, rtype, origin=None, model=None) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid,
            agent_id=self.aid,
            turn_uid=self.turn_uid,
            role=role,
            message_class=mclass,
            text=text,
            ts=ts,
            model=model,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
            record_type=rtype,
            record_origin=origin,
        )

    def _tool_uid(self, call_id: Any) -> str | None:
        cid = as_nonempty_str(call_id)
        return None if cid is None else f"{self.key}/{cid}"

    # -- lines -------------------------------------------------------------------------------
    def _metadata(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        started = parse_ts(record.get("created_at"))
        return [self._session(started_at=started, ended_at=started, byte_offset=pos.byte_offset, line_number=1)]

    def _config(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        cwd = as_nonempty_str(record.get("cwd"))
        if record.get("type") == "profile.bind":
            cwd = as_nonempty_str(as_dict(record.get("environmentDisclosure")).get("cwd"))
        if cwd is None:
            return []
        self.cwd = cwd
        return [self._session(cwd=cwd)]

    def _prompt(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        uid = f"{self.key}@{pos.byte_offset}"
        text = _text(record.get("input"))
        origin = as_dict(record.get("origin"))
        kind, name = as_str(origin.get("kind")), as_str(origin.get("name"))
        if record.get("type") == "turn.steer":
            mclass = classes.QUEUED_PROMPT
        else:
            self.turn_uid = uid
            mclass = {"user": classes.HUMAN_PROMPT}.get(kind or "", classes.CONTEXT_INJECTION)
            if kind == "system_trigger" and name == "subagent":
                mclass = classes.SUBAGENT_BRIEF
        rows: list[Row] = []
        if record.get("type") == "turn.prompt":
            rows.append(TurnRow(AGENT, uid, self.sid, self.aid, None, ts, ts, pos.byte_offset, pos.line_number))
        if text.strip():
            role = "user"
            rows.append(self._msg(uid, role, mclass, text, ts, pos, record["type"], kind))
            if mclass == classes.HUMAN_PROMPT:
                rows.append(self._session(first_prompt=text))
        return rows

    def _turn_end(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        if self.turn_uid is None:
            return []
        row = TurnRow(AGENT, self.turn_uid, self.sid, self.aid, None, None, ts, None, None)
        self.turn_uid = None
        return [row]

    def _request(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        self.model = as_nonempty_str(record.get("model")) or as_nonempty_str(record.get("modelAlias")) or self.model
        return [self._session(model=self.model)] if self.model else []

    def _part(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        part = as_dict(event.get("part"))
        ptype = as_str(part.get("type")) or ""
        if ptype not in PART_CLASSES:
            return [ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"content part {ptype!r}")]
        key, mclass = PART_CLASSES[ptype]
        text = as_str(part.get(key))
        if not text or not text.strip():
            return []
        uid = as_nonempty_str(event.get("uuid")) or f"{self.key}@{pos.byte_offset}"
        return [self._msg(uid, "assistant", mclass, text, ts, pos, f"content.part/{ptype}", model=self.model)]

    def _call(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        tid = self._tool_uid(event.get("toolCallId")) or f"{self.key}@{pos.byte_offset}"
        name = as_nonempty_str(event.get("name"))
        args = as_dict(event.get("args"))
        command = as_nonempty_str(args.get("command")) if name in SHELL_TOOLS else None
        flags = self.pending.pop(tid)[1]  # a refusal recorded before the call keeps its flag
        self.pending.add(tid, name, git_flags(command) + ("r" if "r" in flags else ""))
        step = as_nonempty_str(event.get("stepUuid"))
        rows: list[Row] = [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id=self.aid,
                turn_uid=self.turn_uid,
                call_uid=step,
                name=name,
                input=None if event.get("args") is None else orjson.dumps(event["args"]).decode(),
                started_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]
        touches: list[tuple[str, str]] = []
        if name in FILE_TOOLS and as_nonempty_str(args.get("path")):
            touches = [(FILE_TOOLS[name], args["path"])]
        elif command:
            touches = touches_from_shell(command)
        rows += file_touch_rows(
            touches,
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id=self.aid,
            ts=ts,
            pos=pos,
            cwd=as_nonempty_str(args.get("cwd")) or self.cwd,
        )
        if name in SPAWN_TOOLS:
            rows.append(
                spawn_row(
                    AGENT,
                    tid,
                    self.sid,
                    self.aid,
                    args,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    ts=ts,
                    subagent_type=as_nonempty_str(args.get("subagent_type")) or as_nonempty_str(args.get("profile")),
                )
            )
        return rows

    def _result(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        tid = self._tool_uid(event.get("toolCallId"))
        if tid is None:
            return [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "tool.result without toolCallId")]
        name, flags = self.pending.pop(tid)
        result = event.get("result")
        res = as_dict(result)
        output = as_str(res.get("output")) if res else as_str(result)
        if output is None and result is not None:
            output = orjson.dumps(result).decode()
        return tool_result_rows(
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=self.sid,
            agent_id=self.aid,
            name=name,
            output=output,
            is_error=res.get("isError") is True,
            rejected="r" in flags,
            ts=ts,
            pos=pos,
            shell=name in SHELL_TOOLS,
            git_command=git_hint(flags),
        )

    def _approval(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        tid = self._tool_uid(record.get("toolCallId"))
        decision = as_str(as_dict(record.get("result")).get("decision")) or ""
        if tid is None or decision.lower() not in REFUSED:
            return []
        name, flags = self.pending.pop(tid)
        self.pending.add(tid, name or as_nonempty_str(record.get("toolName")), flags + "r")
        error_class, excerpt = classify_error(None, is_error=True, rejected=True)
        return [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=self.sid,
                agent_id=self.aid,
                name=as_nonempty_str(record.get("toolName")),
                is_error=True,
                outcome="rejected",
                error_class=error_class,
                error_excerpt=excerpt,
            )
        ]

    def _step_end(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        uid = as_nonempty_str(event.get("uuid")) or f"{self.key}@{pos.byte_offset}"
        ttft, stream = as_int(event.get("llmFirstTokenLatencyMs")), as_int(event.get("llmStreamDurationMs"))
        finish = as_nonempty_str(event.get("finishReason"))
        return [
            self._model_call(
                uid,
                as_dict(event.get("usage")),
                ts,
                pos,
                request_id=as_nonempty_str(event.get("messageId")),
                stop_reason=finish,
                is_complete=True if finish else None,
                ttft_ms=ttft,
                duration_ms=None if ttft is None or stream is None else ttft + stream,
                duration_basis=None if ttft is None or stream is None else "first_token_plus_stream",
            )
        ]

    def _usage_record(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        if record.get("usageScope") != "session":
            return []  # a step's usage again (its step.end counts it)
        model = self.model or as_nonempty_str(record.get("model"))
        usage = as_dict(record.get("usage"))
        return [self._model_call(f"{self.key}@{pos.byte_offset}", usage, ts, pos, model=model, is_complete=True)]

    def _model_call(self, uid: str, usage: dict, ts, pos: Pos, model: str | None = None, **extra) -> ModelCallRow:
        return ModelCallRow(
            agent=AGENT,
            call_uid=uid,
            session_uid=self.sid,
            agent_id=self.aid,
            turn_uid=self.turn_uid,
            model=model or self.model,
            input_uncached=as_int(usage.get("inputOther")),
            cache_read=as_int(usage.get("inputCacheRead")),
            cache_write_5m=as_int(usage.get("inputCacheCreation")),
            output=as_int(usage.get("output")),
            ts=ts,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
            **extra,
        )

    def _compaction_begin(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        self.trigger = as_nonempty_str(record.get("source"))
        return []

    def _compaction(self, record: dict, event: dict, ts, pos: Pos) -> list[Row]:
        uid = f"{self.key}@{pos.byte_offset}"
        trigger = {"manual": "manual", "auto": "auto", "automatic": "auto"}.get(self.trigger or "")
        self.trigger = None
        summary = as_nonempty_str(record.get("summary"))
        rows: list[Row] = [
            CompactionRow(
                agent=AGENT,
                compaction_uid=uid,
                session_uid=self.sid,
                agent_id=self.aid,
                trigger=trigger,
                tokens_before=as_int(record.get("tokensBefore")),
                tokens_after=as_int(record.get("tokensAfter")),
                summary_message_uid=uid if summary else None,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]
        if summary:
            rows.append(self._msg(uid, "assistant", classes.COMPACTION_SUMMARY, summary, ts, pos, record["type"]))
        return rows


_HANDLERS = {
    "metadata": KimiParser._metadata,
    "config.update": KimiParser._config,
    "profile.bind": KimiParser._config,
    "turn.prompt": KimiParser._prompt,
    "turn.steer": KimiParser._prompt,
    "turn.cancel": KimiParser._turn_end,
    "turn.ended": KimiParser._turn_end,
    "llm.request": KimiParser._request,
    "content.part": KimiParser._part,
    "tool.call": KimiParser._call,
    "tool.result": KimiParser._result,
    "step.end": KimiParser._step_end,
    "usage.record": KimiParser._usage_record,
    "permission.record_approval_result": KimiParser._approval,
    "full_compaction.begin": KimiParser._compaction_begin,
    "context.apply_compaction": KimiParser._compaction,
}
"""Line type (or loop event type) → handler; the other `TYPES` give no rows."""


class KimiStateParser(DocumentParser):
    """A session's ``state.json`` (rewritten whole): ``{createdAt, updatedAt, title,
    isCustomTitle, workDir, agents{<id>{type main|sub, parentAgentId}}}`` → the session's title
    (``custom_title`` when ``isCustomTitle``, else ``ai_title``), times, cwd, and each sub-agent's
    parent. FORMATS-NEW.md §9 (agent-sessions' matrix); no real state.json is public."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Session rows of the document; not a JSON object → one parse issue."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, "state.json is not a JSON object")]
        parts = PurePosixPath(self.ctx.path.replace("\\", "/")).parts
        sid = _SESSION_DIR.sub("", parts[-2]) if len(parts) >= 2 else "state"
        title = as_nonempty_str(doc.get("title"))
        custom = doc.get("isCustomTitle") is True
        rows: list[Row] = [
            *issues,
            record_type_row(AGENT, doc, "state", None, True),
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=False,
                cwd=as_nonempty_str(doc.get("workDir")),
                custom_title=title if custom else None,
                ai_title=None if custom else title,
                started_at=parse_ts(doc.get("createdAt")),
                ended_at=parse_ts(doc.get("updatedAt")),
            ),
        ]
        for agent_id, info in as_dict(doc.get("agents")).items():
            a = as_dict(info)
            if agent_id == MAIN_AGENT or a.get("type") == "main":
                continue
            parent = as_nonempty_str(a.get("parentAgentId"))
            rows.append(
                SessionRow(
                    agent=AGENT,
                    session_uid=sid,
                    agent_id=agent_id,
                    is_subagent=True,
                    parent_session_uid=sid,
                    parent_agent_id=None if parent in (None, MAIN_AGENT) else parent,
                    cwd=as_nonempty_str(doc.get("workDir")),
                )
            )
        return rows


PARSER = KimiParser
DOCUMENT_PARSER = KimiStateParser
