"""Claude Code tool calls: ``tool_use`` ↔ ``tool_result`` pairing, outcomes, spawns, touches, git.

Format facts (corpus/home, samples, field cases E01, E05, E06, E18):

- A call is an assistant ``tool_use`` block ``{id, name, input}`` (``server_tool_use`` for
  server-side tools such as web search). Its result is a ``tool_result`` block
  ``{tool_use_id, content, is_error}`` in a later ``user`` record; ``content`` is a string or a
  list of text/image blocks. The record may also carry ``toolUseResult``, the tool's structured
  result: an object (Bash ``{stdout, stderr, interrupted, isImage, returnCodeInterpretation?,
  backgroundTaskId?}``, Read ``{type, file}``, Edit ``{filePath, oldString, …}``, Task
  ``{status, prompt, agentId, content, totalDurationMs, totalTokens, usage}``, Glob
  ``{filenames, durationMs}``…), a string (errors and rejections: ``"Error: …"``,
  ``"User rejected tool use"``) or a list of blocks (MCP tools) — E06. It belongs to the
  record's only ``tool_result`` block; with several blocks it is ignored.
- Pairing is by id, never by position: the call row and the result row share the key
  ``tool_call_uid = tool_use id`` and merge (either may come first; a call without a result
  keeps ``outcome`` NULL — E18 ``toolu_E18B``). A call block without an id is keyed
  ``<record uuid>:<block index>`` (it can never pair). A result without ``tool_use_id`` is a
  ``bad_record`` issue.
- Output = the result's ``content`` text; when that is empty, text derived from
  ``toolUseResult`` (Bash stdout + stderr, a string, Task/MCP text blocks, Read file content).
- Outcome: ``rejected`` when the user refused the call ("The user doesn't want to proceed with
  this tool use…", "The user doesn't want to take this action…", ``toolUseResult`` "User
  rejected tool use") — ``is_error`` true (E18 ``toolu_E18A``); ``interrupted`` when Bash's
  ``toolUseResult.interrupted`` is true or the output starts with "[Request interrupted by
  user"; ``error`` when ``is_error``; else ``ok``. An ``interrupt_marker`` in the transcript
  marks the session's still-unanswered calls ``interrupted`` (error class ``interrupted``,
  ``is_error`` left NULL); a result seen later still wins for ``outcome``.
- Exit code: ``toolUseResult.exitCode`` when an int (BashOutput), or the "Exit code N" header
  Claude Code 2.x writes at the start of a failed Bash result. Otherwise NULL — a successful
  Bash result does not say its exit code (``returnCodeInterpretation`` results exited non-zero).
- Duration: ``toolUseResult.durationMs`` / ``totalDurationMs`` when present, else NULL.
- Error class / excerpt: `errors.classify_error`.
- Sub-agent spawns: a ``Task`` / ``Agent`` call → SubagentSpawnRow keyed by the tool-use id
  (brief = ``input.prompt``, ``subagent_type``, ``description``). Its result names the child:
  ``toolUseResult.agentId`` (or "agentId: <id>" in the text); the child transcript's session is
  ``(this session_uid, agentId)``, and the result emits that SessionRow with the link the child
  file cannot give: ``spawn_uid`` = the tool-use id, ``parent_agent_id`` = this thread, and
  ``subagent_type`` (the call's, remembered with the pending call, else
  ``toolUseResult.agentType``). A completed (not ``async_launched``) result's text is the
  sub-agent's answer: a ``subagent_report`` message.
- File touches at the call, from the input: Read/NotebookRead → read; Write → create (Claude's
  Write creates or overwrites; the input does not say which); Edit/MultiEdit/NotebookEdit →
  edit; Bash/PowerShell ``command`` → `shell.touches_from_shell`.
- Git events from the output of Bash-like results (tool name known from the pending call, or a
  ``toolUseResult`` with ``stdout``) → `gitout.git_sightings`. The call records whether its
  command runs a git commit-making or push subcommand, so the result can tell gitout without
  keeping the command text in state.

Pending calls (id → session key, tool name, git flags, sub-agent type) live in the parser
state, capped at `MAX_PENDING` (oldest evicted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_history.model import classes
from agent_history.model.rows import (
    FileTouchRow,
    MessageRow,
    ParseIssueRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
)
from agent_history.parsers.base import Pos
from agent_history.parsers.claude_code.text import json_text, text_of_content
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.spawn import spawn_row
from agent_history.parsers.common.touches import file_touch_rows

__all__ = [
    "FILE_TOOL_OPS",
    "MAX_PENDING",
    "SHELL_TOOLS",
    "SPAWN_TOOLS",
    "PendingCalls",
    "RecordCtx",
    "interrupted_rows",
    "server_result_rows",
    "tool_result_rows",
    "tool_use_rows",
]

AGENT = "claude"
MAX_PENDING = 512
"""Unanswered calls remembered in the state; the oldest is forgotten first."""

SPAWN_TOOLS: frozenset[str] = frozenset({"Task", "Agent"})
"""Tools that start a sub-agent."""
SHELL_TOOLS: frozenset[str] = frozenset({"Bash", "bash", "PowerShell"})
"""Tools whose ``input.command`` runs in a shell."""
FILE_TOOL_OPS: dict[str, str] = {
    "Read": "read",
    "NotebookRead": "read",
    "Write": "create",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
}
"""File tools → file_touch op (path from ``file_path`` or ``notebook_path``)."""

_REJECTED = re.compile(r"\A\s*(?:Error: )?The user doesn't want to (?:proceed with this tool use|take this action)")
_INTERRUPTED = re.compile(r"\A\s*(?:Error: )?\[Request interrupted by user")
_EXIT_HEADER = re.compile(r"\A\s*(?:Error: )?Exit code (-?\d+)\b")
_AGENT_ID = re.compile(r"\bagentId: ([A-Za-z0-9_-]+)")
_GIT_COMMITTING = re.compile(r"\bgit\b[^|;&\n]*?\b(?:commit|cherry-pick|revert|rebase|merge|am|pull)\b")
_GIT_PUSH = re.compile(r"\bgit\b[^|;&\n]*?\bpush\b")


@dataclass(frozen=True, slots=True)
class RecordCtx:
    """What every row from one record shares: session, turn, time, position, record key."""

    session_uid: str
    agent_id: str
    turn_uid: str | None
    ts: datetime | None
    pos: Pos
    record_uid: str
    """The record's ``uuid`` (or a positional fallback key)."""
    call_uid: str | None = None
    """The model call (``message.id``) of an assistant record."""

    @property
    def session_key(self) -> str:
        """``session_uid|agent_id``: which session a pending call belongs to."""
        return f"{self.session_uid}|{self.agent_id}"


class PendingCalls:
    """Unanswered tool calls: id → [session key, tool name, git flags, sub-agent type].

    Bounded (`MAX_PENDING`, oldest evicted) and JSON-able: names and flags are short strings
    (cut to 80 characters), never command or message text.
    """

    def __init__(self, saved: Any = None) -> None:
        self.calls: dict[str, list] = {}
        for item in as_list(saved):
            if isinstance(item, list) and len(item) == 5 and isinstance(item[0], str):
                self.calls[item[0]] = list(item[1:])

    def add(self, call_id: str, session_key: str, name: str | None, git_flags: str, subagent_type: str | None) -> None:
        """Remember an unanswered call (evicting the oldest beyond `MAX_PENDING`)."""
        self.calls.pop(call_id, None)
        self.calls[call_id] = [
            session_key,
            name[:80] if name else None,
            git_flags,
            subagent_type[:80] if subagent_type else None,
        ]
        while len(self.calls) > MAX_PENDING:
            del self.calls[next(iter(self.calls))]

    def pop(self, call_id: str) -> tuple[str | None, str, str | None]:
        """Forget an answered call → (tool name, git flags, sub-agent type); (None, '', None) if unknown."""
        item = self.calls.pop(call_id, None)
        if item is None:
            return None, "", None
        return as_nonempty_str(item[1]), as_nonempty_str(item[2]) or "", as_nonempty_str(item[3])

    def pop_session(self, session_key: str) -> list[str]:
        """Forget and return the ids of every unanswered call of one session."""
        ids = [cid for cid, item in self.calls.items() if item[0] == session_key]
        for cid in ids:
            del self.calls[cid]
        return ids

    def dump(self) -> list[list]:
        """State form: ``[[id, session key, name, git flags], …]`` in insertion order."""
        return [[cid, *item] for cid, item in self.calls.items()]


def _git_flags(command: str) -> str:
    return ("c" if _GIT_COMMITTING.search(command) else "") + ("p" if _GIT_PUSH.search(command) else "")


def _git_hint(flags: str) -> str | None:
    parts = (["git commit"] if "c" in flags else []) + (["git push"] if "p" in flags else [])
    return "; ".join(parts) or None


def _touch_rows(rc: RecordCtx, call_id: str, pairs: list[tuple[str, str]]) -> list[FileTouchRow]:
    """Touches of one call, paths as written (no cwd: module docstring)."""
    return file_touch_rows(
        pairs,
        agent=AGENT,
        tool_call_uid=call_id,
        session_uid=rc.session_uid,
        agent_id=rc.agent_id,
        ts=rc.ts,
        pos=rc.pos,
    )


def tool_use_rows(block: dict, index: int, rc: RecordCtx, pending: PendingCalls) -> list[Row]:
    """Rows for one ``tool_use`` / ``server_tool_use`` block: the call, its touches, its spawn."""
    call_id = as_nonempty_str(block.get("id")) or f"{rc.record_uid}:{index}"
    name = as_nonempty_str(block.get("name"))
    raw_input = block.get("input")
    args = as_dict(raw_input)
    command = as_nonempty_str(args.get("command")) if name in SHELL_TOOLS else None
    rows: list[Row] = [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=call_id,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            turn_uid=rc.turn_uid,
            message_uid=rc.record_uid,
            call_uid=rc.call_uid,
            name=name,
            input=json_text(raw_input) if raw_input is not None else None,
            started_at=rc.ts,
            byte_offset=rc.pos.byte_offset,
            line_number=rc.pos.line_number,
        )
    ]
    sub_type = as_nonempty_str(args.get("subagent_type")) if name in SPAWN_TOOLS else None
    pending.add(call_id, rc.session_key, name, _git_flags(command) if command else "", sub_type)
    if name in FILE_TOOL_OPS:
        path = as_nonempty_str(args.get("file_path")) or as_nonempty_str(args.get("notebook_path"))
        if path:
            rows.extend(_touch_rows(rc, call_id, [(FILE_TOOL_OPS[name], path)]))
    elif command:
        rows.extend(_touch_rows(rc, call_id, touches_from_shell(command)))
    if name in SPAWN_TOOLS:
        rows.append(
            spawn_row(
                AGENT,
                call_id,
                rc.session_uid,
                rc.agent_id,
                args,
                byte_offset=rc.pos.byte_offset,
                line_number=rc.pos.line_number,
                ts=rc.ts,
                subagent_type=sub_type,
            )
        )
    return rows


def _output_from_result(tur: Any) -> str | None:
    """Text of a ``toolUseResult`` when the result block's content is empty."""
    if isinstance(tur, str):
        return tur or None
    if isinstance(tur, list):
        return text_of_content(tur)
    d = as_dict(tur)
    if "stdout" in d or "stderr" in d:
        parts = [s for s in (d.get("stdout"), d.get("stderr")) if isinstance(s, str) and s]
        return "\n".join(parts) or None
    if "content" in d:
        return text_of_content(d.get("content"))
    file_content = as_dict(d.get("file")).get("content")
    return file_content if isinstance(file_content, str) and file_content else None


def _duration_ms(tur: dict) -> int | None:
    for key in ("durationMs", "totalDurationMs"):
        value = tur.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return int(value)
    return None


def _report_text(content: Any) -> str | None:
    """A sub-agent's answer: the result's text blocks minus the "agentId: …" trailer."""
    if isinstance(content, str):
        return content or None
    parts = [
        b["text"]
        for b in as_list(content)
        if isinstance(b, dict) and isinstance(b.get("text"), str) and not b["text"].lstrip().startswith("agentId:")
    ]
    return "\n".join(p for p in parts if p) or None


def _message_uid(record_uid: str, index: int) -> str:
    return record_uid if index == 0 else f"{record_uid}:{index}"


def tool_result_rows(block: dict, index: int, rc: RecordCtx, tool_use_result: Any, pending: PendingCalls) -> list[Row]:
    """Rows for one ``tool_result`` block: the call's result half, git events, spawn child, report.

    `tool_use_result` is the record's ``toolUseResult`` when this is its only result block.
    """
    call_id = as_nonempty_str(block.get("tool_use_id"))
    if call_id is None:
        return [
            ParseIssueRow(
                kind="bad_record",
                byte_offset=rc.pos.byte_offset,
                line_number=rc.pos.line_number,
                detail="tool_result block without tool_use_id",
            )
        ]
    name, git_flags, sub_type = pending.pop(call_id)
    tur = as_dict(tool_use_result)
    content = block.get("content")
    output = text_of_content(content) or _output_from_result(tool_use_result)
    head = output or ""
    rejected = bool(_REJECTED.match(head)) or tool_use_result == "User rejected tool use"
    interrupted = tur.get("interrupted") is True or bool(_INTERRUPTED.match(head))
    is_error = rejected or block.get("is_error") is True or tur.get("is_error") is True
    exit_code = as_int(tur.get("exitCode"))
    if exit_code is None and is_error:
        m = _EXIT_HEADER.match(head)
        exit_code = int(m.group(1)) if m else None
    if rejected:
        outcome = "rejected"
    elif interrupted:
        outcome = "interrupted"
    else:
        outcome = "error" if is_error else "ok"
    error_class, excerpt = classify_error(
        output, is_error=is_error, exit_code=exit_code, rejected=rejected, interrupted=interrupted
    )
    rows: list[Row] = [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=call_id,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            turn_uid=rc.turn_uid,
            name=name,
            output=output,
            is_error=is_error,
            exit_code=exit_code,
            outcome=outcome,
            error_class=error_class,
            error_excerpt=excerpt,
            duration_ms=_duration_ms(tur),
            ended_at=rc.ts,
            byte_offset=rc.pos.byte_offset,
            line_number=rc.pos.line_number,
            output_byte_offset=rc.pos.byte_offset,
            output_line=rc.pos.line_number,
        )
    ]
    shell_like = name in SHELL_TOOLS or (name is None and ("stdout" in tur or "stderr" in tur))
    if shell_like and output and not rejected:
        rows.extend(
            git_event_rows(
                agent=AGENT,
                tool_call_uid=call_id,
                session_uid=rc.session_uid,
                agent_id=rc.agent_id,
                output=output,
                command=_git_hint(git_flags),
                ts=rc.ts,
                pos=rc.pos,
            )
        )
    spawn_like = name in SPAWN_TOOLS or (name is None and "agentId" in tur and "prompt" in tur)
    if spawn_like and not rejected:
        child = as_nonempty_str(tur.get("agentId"))
        if child is None:
            m = _AGENT_ID.search(output or "")
            child = m.group(1) if m else None
        if child is not None:
            rows.append(
                SessionRow(
                    agent=AGENT,
                    session_uid=rc.session_uid,
                    agent_id=child,
                    is_subagent=True,
                    parent_session_uid=rc.session_uid,
                    parent_agent_id=rc.agent_id,
                    spawn_uid=call_id,
                    subagent_type=sub_type or as_nonempty_str(tur.get("agentType")),
                )
            )
            rows.append(
                SubagentSpawnRow(
                    agent=AGENT,
                    spawn_uid=call_id,
                    session_uid=rc.session_uid,
                    agent_id=rc.agent_id,
                    tool_call_uid=call_id,
                    child_session_uid=rc.session_uid,
                    child_agent_id=child,
                    byte_offset=rc.pos.byte_offset,
                    line_number=rc.pos.line_number,
                )
            )
        report = _report_text(content) if tur.get("status") != "async_launched" and not is_error else None
        if report:
            rows.append(
                MessageRow(
                    agent=AGENT,
                    message_uid=_message_uid(rc.record_uid, index),
                    session_uid=rc.session_uid,
                    agent_id=rc.agent_id,
                    turn_uid=rc.turn_uid,
                    role="tool",
                    message_class=classes.SUBAGENT_REPORT,
                    text=report,
                    ts=rc.ts,
                    byte_offset=rc.pos.byte_offset,
                    line_number=rc.pos.line_number,
                )
            )
    return rows


def server_result_rows(block: dict, rc: RecordCtx) -> list[Row]:
    """A server-side tool's result block inside an assistant message (e.g. web search)."""
    call_id = as_nonempty_str(block.get("tool_use_id"))
    if call_id is None:
        return []
    content = block.get("content")
    err = as_dict(content)
    is_error = isinstance(content, dict) and str(err.get("type", "")).endswith("_error")
    if is_error:
        output = as_nonempty_str(err.get("error_code")) or json_text(content)
    else:
        lines = [
            " ".join(
                s for s in (as_nonempty_str(as_dict(item).get("title")), as_nonempty_str(as_dict(item).get("url"))) if s
            )
            for item in as_list(content)
        ]
        output = "\n".join(line for line in lines if line) or None
    error_class, excerpt = classify_error(output, is_error=is_error)
    return [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=call_id,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            turn_uid=rc.turn_uid,
            output=output,
            is_error=is_error,
            outcome="error" if is_error else "ok",
            error_class=error_class,
            error_excerpt=excerpt,
            ended_at=rc.ts,
            byte_offset=rc.pos.byte_offset,
            line_number=rc.pos.line_number,
        )
    ]


def interrupted_rows(rc: RecordCtx, pending: PendingCalls) -> list[Row]:
    """At an interrupt marker: the session's unanswered calls become ``interrupted``."""
    return [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=call_id,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            outcome="interrupted",
            error_class="interrupted",
            ended_at=rc.ts,
        )
        for call_id in pending.pop_session(rc.session_key)
    ]
