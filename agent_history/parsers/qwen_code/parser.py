"""Qwen Code chat recordings → rows (pure). Format: FORMATS-NEW.md §6; samples in
fixtures/samples/qwen-code (a real 0.18.1 run against a mock model, and real 0.14.3 records
with their values trimmed).

``~/.qwen/projects/<encoded cwd>/chats/<sessionId>.jsonl`` is append-only JSONL, one record per
line, every line carrying the envelope ``{uuid, parentUuid, sessionId, timestamp (ISO), type,
cwd, version[, gitBranch]}``:

- ``user`` — ``message.parts[{text}]``: a prompt (``human_prompt``); it starts a turn (uid = the
  line's ``uuid``).
- ``assistant`` — one line per model request: ``model``, ``message.parts`` with ``{text}``
  (reply), ``{text, thought: true}`` (reasoning) and ``{functionCall{id, name, args}}`` (tool
  calls), ``usageMetadata``. Each line is one model call keyed by its ``uuid``.
- ``tool_result`` — ``message.parts[{functionResponse{id, name, response{output | error}}}]``
  and ``toolCallResult{callId, status success|error|cancelled, errorType}``: paired with the
  call by id (tool-call uid ``<sessionId>/<call id>``: call ids repeat across sessions).
- ``system`` with ``subtype``: ``ui_telemetry`` (``systemPayload.uiEvent``), ``slash_command``
  (``rawCommand`` → ``command_expansion``; ``outputHistoryItems`` → ``local_command_output``),
  ``attribution_snapshot`` (file-state bookkeeping, no rows).

Usage is stated twice — the assistant line's ``usageMetadata`` and the ``qwen-code.api_response``
telemetry line before it — and counted once, from the assistant line. Buckets (Gemini API usage
shape as Qwen Code converts it): ``promptTokenCount`` includes ``cachedContentTokenCount`` →
``input_uncached = prompt − cached``, ``cache_read = cached``; no cache-write bucket (NULL).
``thoughtsTokenCount`` is the reasoning part of the output. Whether ``candidatesTokenCount``
already contains it depends on the converter that built the usage: Qwen Code's OpenAI converter
(``packages/core/src/core/openaiContentGenerator/converter.ts``: ``candidatesTokenCount =
completion_tokens``, ``thoughtsTokenCount = completion_tokens_details.reasoning_tokens``) keeps
it inside, the Gemini API (auth ``gemini`` / ``vertex-ai``, as in Gemini CLI) outside. The
telemetry's ``auth_type`` (kept in the state) picks the rule, `THOUGHTS_OUTSIDE_CANDIDATES`;
without one the OpenAI rule applies (Qwen Code's default providers). An empty
``usageMetadata`` gives NULL counts. A ``qwen-code.api_error`` telemetry line is a failed call
(``is_api_error``, stop reason = its ``error_type``).

Tool outcomes: ``toolCallResult.status`` (`TOOL_STATUS`); the structured ``errorType`` picks the
error class where it says more than the text (`ERROR_TYPES`, Gemini CLI's ``ToolErrorType``
values), else `errors.classify_error`. Touches: `FILE_TOOLS` (path arguments), shell commands of
``run_shell_command`` (`shell.touches_from_shell`, relative paths joined to the session cwd);
git commits and pushes from its output; exit code from its ``Exit Code: N`` line.
Record types counted: ``<type>`` and ``system/<subtype>``.
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
from agent_history.parsers.base import ParseContext, Parser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.errors import error_excerpt
from agent_history.parsers.common.pending import SavedFields, git_flags, git_hint
from agent_history.parsers.common.results import tool_result_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "qwen-code"
VERSION = 1

TYPES = frozenset({"user", "assistant", "tool_result", "system"})
SYSTEM_SUBTYPES = frozenset({"ui_telemetry", "slash_command", "attribution_snapshot"})

THOUGHTS_OUTSIDE_CANDIDATES = frozenset({"gemini", "vertex-ai", "gemini-api-key"})
"""``auth_type`` values whose usage is the Gemini API's own: thoughts are not in candidates."""

TOOL_STATUS: dict[str, str] = {"success": "ok", "error": "error", "cancelled": "interrupted", "canceled": "interrupted"}
"""``toolCallResult.status`` → outcome."""

ERROR_TYPES: dict[str, str] = {
    "invalid_tool_params": "validation_error",
    "tool_not_registered": "validation_error",
    "edit_no_occurrence_found": "validation_error",
    "edit_expected_occurrence_mismatch": "validation_error",
    "edit_no_change": "validation_error",
    "attempt_to_create_existing_file": "validation_error",
    "path_not_in_workspace": "validation_error",
    "file_not_found": "not_found",
    "search_path_not_found": "not_found",
    "permission_denied": "permission",
}
"""``toolCallResult.errorType`` → error class, where the type is more precise than the text."""

FILE_TOOLS: dict[str, str] = {"read_file": "read", "write_file": "create", "edit": "edit", "replace": "edit"}
"""File tools → touch op; the path is ``absolute_path``, ``file_path`` or ``path``."""
PATH_KEYS = ("absolute_path", "file_path", "path")
SHELL_TOOLS = frozenset({"run_shell_command"})
_EXIT = re.compile(r"Exit Code:\s*(-?\d+)")


def _usage(usage: dict, auth_type: str | None) -> dict[str, int | None]:
    """Token buckets of one ``usageMetadata`` (module docstring)."""
    if not usage:
        return {}
    prompt, cached = as_int(usage.get("promptTokenCount")), as_int(usage.get("cachedContentTokenCount"))
    cand, thoughts = as_int(usage.get("candidatesTokenCount")), as_int(usage.get("thoughtsTokenCount"))
    output = cand
    if auth_type in THOUGHTS_OUTSIDE_CANDIDATES and thoughts:
        output = (cand or 0) + thoughts
    return {
        "input_uncached": None if prompt is None else prompt - (cached or 0),
        "cache_read": cached if prompt is not None or cached is not None else None,
        "output": output,
        "reasoning": thoughts,
    }


class QwenCodeParser(SavedFields, Parser):
    """One chat recording. State: session uid, open turn, the last telemetry ``auth_type``,
    unanswered calls (name and git flags, `PendingCalls`)."""

    AGENT = AGENT
    VERSION = VERSION

    STATE_FIELDS = ("session_uid", "turn_uid", "auth_type")

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        self.session_uid: str | None
        self.turn_uid: str | None
        self.auth_type: str | None
        self.restore(state)

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows of one line."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "line is not a JSON object")]
        rtype = as_str(record.get("type")) or ""
        subtype = as_str(record.get("subtype")) if rtype == "system" else None
        known = rtype in TYPES and (rtype != "system" or subtype in SYSTEM_SUBTYPES)
        rows: list[Row] = [record_type_row(AGENT, record, rtype, subtype, known)]
        if not known:
            what = f"system subtype {subtype!r}" if rtype == "system" else f"record type {rtype!r}"
            rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, what))
            return rows
        sid = as_nonempty_str(record.get("sessionId")) or self.session_uid or _stem(self.ctx.path)
        self.session_uid = sid
        ts = parse_ts(record.get("timestamp"))
        uid = as_nonempty_str(record.get("uuid")) or f"{sid}@{pos.byte_offset}"
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=False,
                cwd=as_nonempty_str(record.get("cwd")),
                git_branch=as_nonempty_str(record.get("gitBranch")),
                cli_version=as_nonempty_str(record.get("version")),
                model=as_nonempty_str(record.get("model")) if rtype == "assistant" else None,
                started_at=ts,
                ended_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
        if rtype == "user":
            rows += self._user(record, sid, uid, ts, pos)
        elif rtype == "assistant":
            rows += self._assistant(record, sid, uid, ts, pos)
        elif rtype == "tool_result":
            rows += self._result(record, sid, ts, pos)
        else:
            rows += self._system(record, subtype or "", sid, uid, ts, pos)
        return rows

    # -- records -----------------------------------------------------------------------------
    def _msg(self, sid, uid, role, mclass, text, ts, pos, model=None, rtype=None, origin=None) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=sid,
            agent_id="",
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

    def _user(self, record: dict, sid: str, uid: str, ts, pos: Pos) -> list[Row]:
        parts = as_list(as_dict(record.get("message")).get("parts"))
        text = "\n".join(t for t in (as_str(as_dict(p).get("text")) for p in parts) if t)
        self.turn_uid = uid
        rows: list[Row] = [TurnRow(AGENT, uid, sid, "", None, ts, ts, pos.byte_offset, pos.line_number)]
        if text.strip():
            rows.append(self._msg(sid, uid, "user", classes.HUMAN_PROMPT, text, ts, pos, rtype="user"))
            rows.append(SessionRow(agent=AGENT, session_uid=sid, agent_id="", first_prompt=text))
        return rows

    def _assistant(self, record: dict, sid: str, uid: str, ts, pos: Pos) -> list[Row]:
        model = as_nonempty_str(record.get("model"))
        rows: list[Row] = []
        texts: list[str] = []
        for i, part in enumerate(as_list(as_dict(record.get("message")).get("parts"))):
            p = as_dict(part)
            call = as_dict(p.get("functionCall"))
            if call:
                rows += self._call(call, sid, uid, i, ts, pos, as_nonempty_str(record.get("cwd")))
            elif as_str(p.get("text")):
                if p.get("thought") is True:
                    rows.append(self._msg(sid, f"{uid}#{i}", "assistant", classes.REASONING, p["text"], ts, pos, model))
                else:
                    texts.append(p["text"])
        if any(t.strip() for t in texts):
            rows.append(
                self._msg(sid, uid, "assistant", classes.ASSISTANT_TEXT, "".join(texts), ts, pos, model, "assistant")
            )
        rows.append(
            ModelCallRow(
                agent=AGENT,
                call_uid=uid,
                session_uid=sid,
                agent_id="",
                turn_uid=self.turn_uid,
                model=model,
                is_complete=True,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                **_usage(as_dict(record.get("usageMetadata")), self.auth_type),
            )
        )
        if self.turn_uid is not None:
            rows.append(TurnRow(AGENT, self.turn_uid, sid, "", model, None, ts, None, None))
        return rows

    def _call(self, call: dict, sid: str, msg_uid: str, index: int, ts, pos: Pos, cwd: str | None) -> list[Row]:
        cid = as_nonempty_str(call.get("id")) or f"{msg_uid}#{index}"
        tid = f"{sid}/{cid}"
        name = as_nonempty_str(call.get("name"))
        args = as_dict(call.get("args"))
        command = as_nonempty_str(args.get("command")) if name in SHELL_TOOLS else None
        self.pending.add(tid, name, git_flags(command))
        rows: list[Row] = [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=sid,
                agent_id="",
                turn_uid=self.turn_uid,
                message_uid=msg_uid,
                call_uid=msg_uid,
                name=name,
                input=None if call.get("args") is None else orjson.dumps(call["args"]).decode(),
                started_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        ]
        touches: list[tuple[str, str]] = []
        if name in FILE_TOOLS:
            path = next((args[k] for k in PATH_KEYS if as_nonempty_str(args.get(k))), None)
            touches = [(FILE_TOOLS[name], path)] if path else []
        elif name == "read_many_files":
            touches = [("read", p) for p in as_list(args.get("paths")) if as_nonempty_str(p)]
        elif command:
            touches = touches_from_shell(command)
        directory = as_nonempty_str(args.get("directory")) if command else None
        rows += file_touch_rows(
            touches,
            agent=AGENT,
            tool_call_uid=tid,
            session_uid=sid,
            agent_id="",
            ts=ts,
            pos=pos,
            cwd=directory or cwd,
        )
        return rows

    def _result(self, record: dict, sid: str, ts, pos: Pos) -> list[Row]:
        result = as_dict(record.get("toolCallResult"))
        rows: list[Row] = []
        for part in as_list(as_dict(record.get("message")).get("parts")):
            fr = as_dict(as_dict(part).get("functionResponse"))
            if not fr:
                continue
            cid = as_nonempty_str(fr.get("id")) or as_nonempty_str(result.get("callId"))
            if cid is None:
                rows.append(ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "tool result without id"))
                continue
            tid = f"{sid}/{cid}"
            name, flags = self.pending.pop(tid)
            name = name or as_nonempty_str(fr.get("name"))
            response = fr.get("response")
            resp = as_dict(response)
            err_text = as_nonempty_str(resp.get("error"))
            output = as_str(resp.get("output"))
            if output is None:
                output = err_text or as_nonempty_str(result.get("resultDisplay"))
            if output is None and response not in (None, {}):
                output = orjson.dumps(response).decode()
            status = as_str(result.get("status")) or ("error" if err_text else "success")
            outcome = TOOL_STATUS.get(status, "ok")
            m = _EXIT.search(output or "") if name in SHELL_TOOLS else None
            exit_code = int(m.group(1)) if m else None
            if outcome == "ok" and exit_code not in (None, 0):
                outcome = "error"
            is_error = outcome != "ok"
            etype = as_str(result.get("errorType"))
            rows += tool_result_rows(
                agent=AGENT,
                tool_call_uid=tid,
                session_uid=sid,
                agent_id="",
                name=name,
                output=output,
                is_error=is_error,
                exit_code=exit_code,
                interrupted=outcome == "interrupted",
                outcome=outcome,
                error=(ERROR_TYPES[etype], error_excerpt(output)) if is_error and etype in ERROR_TYPES else None,
                ts=ts,
                pos=pos,
                shell=name in SHELL_TOOLS,
                git_command=git_hint(flags),
            )
        return rows

    def _system(self, record: dict, subtype: str, sid: str, uid: str, ts, pos: Pos) -> list[Row]:
        payload = as_dict(record.get("systemPayload"))
        if subtype == "ui_telemetry":
            event = as_dict(payload.get("uiEvent"))
            name = as_str(event.get("event.name")) or ""
            auth = as_nonempty_str(event.get("auth_type"))
            if auth and not auth.startswith("["):
                self.auth_type = auth
            if name == "qwen-code.api_error":
                return [
                    ModelCallRow(
                        agent=AGENT,
                        call_uid=uid,
                        session_uid=sid,
                        agent_id="",
                        turn_uid=self.turn_uid,
                        request_id=as_nonempty_str(event.get("response_id")),
                        model=as_nonempty_str(event.get("model")),
                        stop_reason=as_nonempty_str(event.get("error_type")),
                        is_api_error=True,
                        ts=ts,
                        byte_offset=pos.byte_offset,
                        line_number=pos.line_number,
                    )
                ]
            return []
        if subtype == "slash_command":
            items = as_list(payload.get("outputHistoryItems"))
            if items:
                text = orjson.dumps(items).decode()
                return [self._msg(sid, uid, "system", classes.LOCAL_COMMAND_OUTPUT, text, ts, pos, rtype="system")]
            command = as_nonempty_str(payload.get("rawCommand"))
            if command:
                return [self._msg(sid, uid, "user", classes.COMMAND_EXPANSION, command, ts, pos, rtype="system")]
        return []


def _stem(path: str) -> str:
    """The session id a file names when its records do not: the file name without extension."""
    return os.path.splitext(os.path.basename(path))[0] or path


PARSER = QwenCodeParser
