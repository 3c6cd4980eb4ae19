"""pi tool calls, results, user ``!commands``, file touches, git events and sub-agent spawns.

The tool half of the pi parser (`agent_history.parsers.pi.parser` holds the format contract).

- A ``toolCall`` block ``{id, name, arguments}`` in an assistant message → ToolCallRow keyed
  by the call id (input = ``arguments`` as JSON text, started_at = the message's timestamp).
  A ``toolResult`` message ``{toolCallId, toolName, content, isError, details}`` fills output,
  is_error, outcome (``ok`` | ``error`` | ``interrupted``), error class and excerpt.
- pi's ``bash`` tool reports failure as text: ``…\\n\\nCommand exited with code N`` (exit code N),
  ``Command aborted`` (interrupted), ``Command timed out after N seconds`` (timeout). A success
  carries no exit code (pi also reports a signal-killed command as success), so exit_code
  stays NULL there.
- Calls in an assistant message whose stop reason is not ``toolUse`` are never executed
  (corpus: ``error``/``aborted`` messages with toolCall blocks and no result): outcome
  ``interrupted`` for ``aborted``, ``no_result`` otherwise, no file touches. Calls of a
  ``toolUse`` message still without a result when the turn ends or the next prompt arrives
  get ``no_result``. The ids of unanswered calls live in the parser state (bounded).
- File touches at the call: ``read`` → read, ``write`` → create (pi's write creates or
  overwrites; the transcript does not say which), ``edit`` → edit, path from ``path`` (or
  ``file_path``); ``bash`` → `shell.touches_from_shell`. pi runs tools in the session cwd
  (``path-utils.ts``), so relative paths are joined to the header's ``cwd`` (normalised);
  absolute, ``~`` and ``$`` paths are kept as written.
- Git events: `gitout.git_sightings` over a ``bash`` result (the command is kept in state
  while the call is pending, only when it mentions git, at most `GIT_HINT_CHARS`).
- A user ``!command`` (``bashExecution`` message: command, output, exitCode, cancelled) →
  ToolCallRow ``<entry key>#bash`` named ``user_bash`` with its touches and git events.
- Sub-agents: the ``subagent`` extension tool (``{agent, task}`` | ``{tasks: [...]}`` |
  ``{chain: [...]}``) → one SubagentSpawnRow per task (spawn uid = call id, or
  ``<call id>#<i>`` for parallel/chain items) + a ``subagent_brief`` message each; its result
  text is the ``subagent_report``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from agent_history.model import classes
from agent_history.model.rows import FileTouchRow, GitEventRow, ParseIssueRow, Row, SubagentSpawnRow, ToolCallRow
from agent_history.parsers.common.coerce import as_int, as_str
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.touches import file_touch_rows
from agent_history.parsers.pi.context import EntryCtx, PiState

AGENT = "pi"

FILE_TOOL_OPS: dict[str, str] = {"read": "read", "write": "create", "edit": "edit"}
"""pi's built-in file tools → file_touch op."""

SHELL_TOOLS: frozenset[str] = frozenset({"bash"})
SUBAGENT_TOOLS: frozenset[str] = frozenset({"subagent"})
"""Tool names whose calls spawn sub-agents (the pi ``subagent`` extension)."""

MAX_PENDING = 256
"""Cap on unanswered tool-call ids kept in state."""
GIT_HINT_CHARS = 1000
"""Longest command kept in state for git-output parsing."""

_EXIT_FOOTER = re.compile(r"Command exited with code (-?\d+)\s*$")
_TIMEOUT_FOOTER = re.compile(r"Command timed out after [\d.]+ seconds\s*$")
_ABORT_FOOTER = re.compile(r"Command aborted\s*$")


# ---------------------------------------------------------------------- small typed accessors


def json_text(value: Any) -> str | None:
    """A tool input as JSON text (None when absent)."""
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, default=str, ensure_ascii=False)


def _image_meta(block: dict) -> dict:
    data = block.get("data")
    size = None
    if isinstance(data, str):
        pad = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
        size = len(data) * 3 // 4 - pad
    return {"type": "image", "media_type": as_str(block.get("mimeType")), "bytes": size}


def content_parts(content: Any) -> tuple[str | None, list[dict] | None]:
    """pi message content (a string or a list of text/image blocks) → (text, attachments).

    Text blocks are joined by newlines; images become metadata (media type, decoded size in
    bytes), never text. Returns None for a part that is absent.
    """
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        return None, None
    texts: list[str] = []
    attachments: list[dict] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "image":
            attachments.append(_image_meta(block))
    return ("\n".join(texts) if texts else None), (attachments or None)


def session_uid_from_path(path: str | None) -> str:
    """The session id in a pi file name ``<ISO ts>_<id>.jsonl`` (else the file's stem)."""
    name = (path or "").replace("\\", "/").rsplit("/", 1)[-1]
    if name.endswith(".jsonl"):
        name = name[: -len(".jsonl")]
    return name.rsplit("_", 1)[-1] or name


# ---------------------------------------------------------------------- tool calls


def _path_arg(args: Any) -> str | None:
    if not isinstance(args, dict):
        return None
    return as_str(args.get("path")) or as_str(args.get("file_path"))


def _touches(p: PiState, ctx: EntryCtx, tool_call_uid: str, pairs: list[tuple[str, str]]) -> list[FileTouchRow]:
    """Touches of one call; relative paths joined to the session cwd (module docstring)."""
    return file_touch_rows(
        pairs,
        agent=AGENT,
        tool_call_uid=tool_call_uid,
        session_uid=p._sid(),
        agent_id="",
        ts=ctx.ts,
        pos=ctx.pos,
        cwd=p.cwd,
    )


def _git_events(
    p: PiState, ctx: EntryCtx, tool_call_uid: str, output: str | None, command: str | None
) -> list[GitEventRow]:
    return git_event_rows(
        agent=AGENT,
        tool_call_uid=tool_call_uid,
        session_uid=p._sid(),
        agent_id="",
        output=output,
        command=command,
        ts=ctx.ts,
        pos=ctx.pos,
    )


def _spawn_items(call_id: str, args: Any) -> list[tuple[str, str | None, str]]:
    """(spawn uid, agent name, task) for each sub-agent a ``subagent`` call starts."""
    if not isinstance(args, dict):
        return []
    task = as_str(args.get("task"))
    if task:
        return [(call_id, as_str(args.get("agent")), task)]
    items = args.get("tasks") if isinstance(args.get("tasks"), list) else args.get("chain")
    out = []
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict) and as_str(item.get("task")):
                out.append((f"{call_id}#{i}", as_str(item.get("agent")), item["task"]))
    return out


def _spawn_rows(p: PiState, ctx: EntryCtx, call_id: str, args: Any) -> list[Row]:
    rows: list[Row] = []
    for spawn_uid, agent, task in _spawn_items(call_id, args):
        rows.append(
            SubagentSpawnRow(
                agent=AGENT,
                spawn_uid=spawn_uid,
                session_uid=p._sid(),
                agent_id="",
                tool_call_uid=call_id,
                subagent_type=agent,
                brief=task,
                ts=ctx.ts,
                byte_offset=ctx.pos.byte_offset,
                line_number=ctx.pos.line_number,
            )
        )
        rows.append(p._message_row(ctx, f"#brief:{spawn_uid}", "assistant", classes.SUBAGENT_BRIEF, task))
    return rows


def _remember_pending(p: PiState, call_id: str, name: str | None, args: Any) -> None:
    hint = None
    if name in SHELL_TOOLS and isinstance(args, dict):
        command = as_str(args.get("command"))
        if command and "git" in command:
            hint = command[:GIT_HINT_CHARS]
    p.pending[call_id] = hint
    while len(p.pending) > MAX_PENDING:
        del p.pending[next(iter(p.pending))]


def tool_call_rows(
    p: PiState, blocks: list[dict], ctx: EntryCtx, message_uid: str | None, call_uid: str | None, stop: str | None
) -> list[Row]:
    """Rows for the ``toolCall`` blocks of one assistant message (calls, touches, spawns)."""
    executed = stop is None or stop == "toolUse"
    rows: list[Row] = []
    for i, block in enumerate(blocks):
        if block.get("type") != "toolCall":
            continue
        call_id = as_str(block.get("id"))
        if not call_id:
            call_id = f"{ctx.key}#call{i}"
            rows.append(ParseIssueRow("bad_record", ctx.pos.byte_offset, ctx.pos.line_number, "toolCall without id"))
        name = as_str(block.get("name"))
        args = block.get("arguments")
        outcome = error_class = None
        if not executed:
            outcome = "interrupted" if stop == "aborted" else "no_result"
            error_class = "interrupted" if stop == "aborted" else None
        rows.append(
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=call_id,
                session_uid=p._sid(),
                agent_id="",
                turn_uid=p.entry_turn,
                message_uid=message_uid,
                call_uid=call_uid,
                name=name,
                input=json_text(args),
                outcome=outcome,
                error_class=error_class,
                started_at=ctx.ts,
                byte_offset=ctx.pos.byte_offset,
                line_number=ctx.pos.line_number,
            )
        )
        if not executed:
            continue
        _remember_pending(p, call_id, name, args)
        lname = (name or "").lower()
        if lname in FILE_TOOL_OPS:
            path = _path_arg(args)
            if path:
                rows.extend(_touches(p, ctx, call_id, [(FILE_TOOL_OPS[lname], path)]))
        elif lname in SHELL_TOOLS and isinstance(args, dict) and as_str(args.get("command")):
            rows.extend(_touches(p, ctx, call_id, touches_from_shell(args["command"])))
        elif lname in SUBAGENT_TOOLS:
            rows.extend(_spawn_rows(p, ctx, call_id, args))
    return rows


def close_pending(p: PiState, ctx: EntryCtx, outcome: str) -> list[Row]:
    """Mark every still-unanswered call ``outcome`` (the turn ended or a new prompt came)."""
    rows: list[Row] = [
        ToolCallRow(agent=AGENT, tool_call_uid=call_id, session_uid=p._sid(), agent_id="", outcome=outcome)
        for call_id in p.pending
    ]
    p.pending.clear()
    return rows


def tool_result_rows(p: PiState, msg: dict, ctx: EntryCtx) -> tuple[list[Row], str | None]:
    """Rows for one ``toolResult`` message → (rows, sub-agent report text or None)."""
    call_id = as_str(msg.get("toolCallId"))
    if not call_id:
        return [
            ParseIssueRow("bad_record", ctx.pos.byte_offset, ctx.pos.line_number, "toolResult without toolCallId")
        ], None
    name = as_str(msg.get("toolName"))
    output, _ = content_parts(msg.get("content"))
    raw_error = msg.get("isError")
    is_error = raw_error if isinstance(raw_error, bool) else None
    command = p.pending.pop(call_id, None)
    exit_code = None
    interrupted = timed_out = False
    if (name or "").lower() in SHELL_TOOLS and is_error and output:
        tail = output[-300:]
        m = _EXIT_FOOTER.search(tail)
        exit_code = int(m.group(1)) if m else None
        interrupted = _ABORT_FOOTER.search(tail) is not None
        timed_out = _TIMEOUT_FOOTER.search(tail) is not None
    error_class, excerpt = classify_error(
        output, is_error=is_error, exit_code=exit_code, interrupted=interrupted, timed_out=timed_out
    )
    if is_error is None:
        outcome = None
    elif not is_error:
        outcome = "ok"
    else:
        outcome = "interrupted" if interrupted else "error"
    rows: list[Row] = [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=call_id,
            session_uid=p._sid(),
            agent_id="",
            turn_uid=p.entry_turn,
            name=name,
            output=output,
            is_error=is_error,
            exit_code=exit_code,
            outcome=outcome,
            error_class=error_class,
            error_excerpt=excerpt,
            ended_at=ctx.ts,
            byte_offset=ctx.pos.byte_offset,
            line_number=ctx.pos.line_number,
            output_byte_offset=ctx.pos.byte_offset,
            output_line=ctx.pos.line_number,
        )
    ]
    if (name or "").lower() in SHELL_TOOLS:
        rows.extend(_git_events(p, ctx, call_id, output, command))
    report = output if (name or "").lower() in SUBAGENT_TOOLS and output else None
    return rows, report


# ---------------------------------------------------------------------- user !commands


def bash_execution_text(msg: dict) -> str | None:
    """The searchable text of a user ``!command`` (as pi renders it for the model)."""
    command = as_str(msg.get("command"))
    if command is None:
        return None
    output = as_str(msg.get("output"))
    text = f"Ran `{command}`\n" + (f"```\n{output}\n```" if output else "(no output)")
    exit_code = as_int(msg.get("exitCode"))
    if msg.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif exit_code not in (None, 0):
        text += f"\n\nCommand exited with code {exit_code}"
    return text


def bash_execution_rows(p: PiState, msg: dict, ctx: EntryCtx) -> list[Row]:
    """A user ``!command`` → a ``user_bash`` ToolCallRow + its file touches and git events."""
    command = as_str(msg.get("command"))
    if command is None:
        return [ParseIssueRow("bad_record", ctx.pos.byte_offset, ctx.pos.line_number, "bashExecution without command")]
    uid = f"{ctx.key}#bash"
    output = as_str(msg.get("output"))
    exit_code = as_int(msg.get("exitCode"))
    cancelled = msg.get("cancelled") is True
    is_error = cancelled or exit_code not in (None, 0)
    error_class, excerpt = classify_error(output, is_error=is_error, exit_code=exit_code, interrupted=cancelled)
    outcome = "interrupted" if cancelled else "error" if is_error else "ok"
    rows: list[Row] = [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=uid,
            session_uid=p._sid(),
            agent_id="",
            turn_uid=p.entry_turn,
            message_uid=ctx.key,
            name="user_bash",
            input=json_text({"command": command}),
            output=output,
            is_error=is_error,
            exit_code=exit_code,
            outcome=outcome,
            error_class=error_class,
            error_excerpt=excerpt,
            started_at=ctx.ts,
            ended_at=ctx.ts,
            byte_offset=ctx.pos.byte_offset,
            line_number=ctx.pos.line_number,
        )
    ]
    rows.extend(_touches(p, ctx, uid, touches_from_shell(command)))
    rows.extend(_git_events(p, ctx, uid, output, command))
    return rows
