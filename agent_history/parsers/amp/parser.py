"""Amp (Sourcegraph's ampcode) threads → rows (pure). Built from the schema: no real thread file
is public (FORMATS-NEW.md §8); the shape is kenn-io/agentsview ``internal/parser/amp.go`` and its
tests at 538600744d1b, checked on the hand-written threads in fixtures/samples/amp.

``~/.local/share/amp/threads/T-<uuid>.json`` is one whole JSON document per thread, rewritten as
the thread grows: ``{v, id ("T-…"), created (epoch ms), title, messages[], env{initial{trees[
{displayName, uri}]}}, meta{traces[{name, startTime, endTime}]}}``; a message is ``{role,
messageId, content[], state{type, stopReason}, usage{model, timestamp, inputTokens,
outputTokens, cacheCreationInputTokens, cacheReadInputTokens, totalInputTokens}}`` with
Anthropic-shaped content blocks (``text``, ``thinking``, ``tool_use``, ``tool_result``).

- session = the thread (uid = the file's ``T-…`` name, else ``id``); start ``created``, end the
  last trace ``endTime``; cwd = the first tree's ``file://`` ``uri``; title ``title``;
- user text → ``human_prompt`` (a turn); assistant ``text`` → ``assistant_text``, ``thinking``
  → ``reasoning``; each assistant message is one model call keyed ``<thread>#<index>``, with
  ``usage.model``, ``usage.timestamp`` and ``state.stopReason`` (complete when ``state.type``
  is ``complete``);
- tokens (agentsview's rule): ``inputTokens`` → input_uncached, ``cacheReadInputTokens`` →
  cache_read, ``outputTokens`` → output, ``cacheCreationInputTokens`` → cache_write_5m — except
  for OpenAI-family models (``gpt-*``), where Amp reports ``inputTokens`` 0 and puts the whole
  uncached prompt in ``cacheCreationInputTokens``: that is uncached input (added to
  input_uncached), and no cache write. ``inputTokens: 0`` with a cached prompt is a real 0. A
  message without ``usage`` has NULL counts. Amp records no cost in the thread;
- ``tool_use`` blocks pair with ``tool_result`` blocks by id — canonical ``tool_use_id`` +
  ``content``, or Amp's ``toolUseID`` + ``run{status, result, error}``: ``status`` done → ok
  (``result.exitCode`` ≠ 0 or ``result.success: false`` → error), ``error`` → error
  (``error.message``), ``cancelled`` → interrupted, ``rejected-by-user`` → rejected; the output is
  the result's ``output``, ``content`` or ``diff``, else its JSON;
- touches: ``Read`` → read, ``create_file`` → create, ``edit_file`` / ``undo_edit`` /
  ``format_file`` → edit (``path``), ``Bash`` ``cmd`` → `shell.touches_from_shell`; git commits
  and pushes from ``Bash`` output; ``Task`` calls → sub-agent spawns (``prompt``,
  ``description``).
Record types counted: ``thread``, ``message/<role>``, ``content/<type>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import Any
from urllib.parse import unquote, urlparse

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
from agent_history.parsers.base import DocumentParser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.spawn import spawn_row
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "amp"
VERSION = 1
ROLES = frozenset({"user", "assistant"})
BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"})
FILE_TOOLS: dict[str, str] = {
    "Read": "read",
    "create_file": "create",
    "edit_file": "edit",
    "undo_edit": "edit",
    "format_file": "edit",
}
SHELL_TOOLS = frozenset({"Bash"})
SPAWN_TOOLS = frozenset({"Task"})
RUN_STATUS: dict[str, str] = {
    "done": "ok",
    "error": "error",
    "cancelled": "interrupted",
    "rejected-by-user": "rejected",
}


def _result_text(result: Any) -> str | None:
    """The display text of a ``run.result``: ``output`` / ``content`` / ``diff``, else JSON."""
    if result is None:
        return None
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        for key in ("output", "content", "diff"):
            value = result.get(key)
            if isinstance(value, str) and value:
                return value
        return orjson.dumps(result).decode()
    if isinstance(result, list) and all(isinstance(x, str) for x in result):
        return "\n".join(result)
    return orjson.dumps(result).decode()


def _tokens(usage: dict) -> dict[str, int | None]:
    """Model-call buckets of an Amp ``usage`` object (module docstring)."""
    if not usage:
        return {}
    model = as_str(usage.get("model")) or ""
    inp, out = as_int(usage.get("inputTokens")), as_int(usage.get("outputTokens"))
    create, read = as_int(usage.get("cacheCreationInputTokens")), as_int(usage.get("cacheReadInputTokens"))
    if model.startswith("gpt-"):
        folded = None if inp is None and create is None else (inp or 0) + (create or 0)
        return {"input_uncached": folded, "cache_read": read, "output": out}
    return {"input_uncached": inp, "cache_read": read, "cache_write_5m": create, "output": out}


class AmpParser(DocumentParser):
    """One Amp thread document (DocumentParser contract)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of the thread; undecodable input or a wrong shape → parse issues."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, "thread is not a JSON object")]
        stem = PurePath(self.ctx.path.replace("\\", "/")).stem
        sid = stem if stem.startswith("T-") else as_nonempty_str(doc.get("id"))
        if sid is None:
            return [*issues, ParseIssueRow("bad_record", 0, 1, "thread without id")]
        return [*issues, *self._thread(doc, sid)]

    def _thread(self, doc: dict, sid: str) -> list[Row]:
        rows: list[Row] = [record_type_row(AGENT, doc, "thread", None, True)]
        trees = as_list(as_dict(as_dict(doc.get("env")).get("initial")).get("trees"))
        uri = as_nonempty_str(as_dict(trees[0]).get("uri")) if trees else None
        cwd = unquote(urlparse(uri).path) if uri and uri.startswith("file://") else uri
        ends = [parse_ts(as_dict(t).get("endTime")) for t in as_list(as_dict(doc.get("meta")).get("traces"))]
        ended = max((e for e in ends if e is not None), default=None)
        turn: str | None = None
        calls: dict[str, dict] = {}
        first_prompt = model = None
        for i, msg in enumerate(as_list(doc.get("messages"))):
            pos = Pos(i, 0, i + 1)
            m = as_dict(msg)
            role = as_str(m.get("role")) or ""
            rows.append(record_type_row(AGENT, m, "message", role, role in ROLES))
            if role not in ROLES:
                rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"message role {role!r}"))
                continue
            usage = as_dict(m.get("usage"))
            ts = parse_ts(usage.get("timestamp"))
            mmodel = as_nonempty_str(usage.get("model"))
            model = mmodel or model
            texts: list[str] = []
            uid = f"{sid}#{i}"
            loc = {"byte_offset": i, "line_number": i + 1}
            for j, blk in enumerate(as_list(m.get("content"))):
                b = as_dict(blk)
                btype = as_str(b.get("type")) or ""
                rows.append(record_type_row(AGENT, b, "content", btype, btype in BLOCKS))
                if btype == "text" and as_str(b.get("text")):
                    texts.append(b["text"])
                elif btype == "thinking" and as_nonempty_str(b.get("thinking")):
                    rows.append(
                        self._msg(
                            sid, f"{uid}.{j}", turn, "assistant", classes.REASONING, b["thinking"], ts, mmodel, loc
                        )
                    )
                elif btype == "tool_use":
                    tid = as_nonempty_str(b.get("id")) or f"{uid}.{j}"
                    c = calls.setdefault(tid, {})
                    c.update(
                        name=as_nonempty_str(b.get("name")), input=b.get("input"), pos=pos, ts=ts, turn=turn, msg=uid
                    )
                elif btype == "tool_result":
                    tid = as_nonempty_str(b.get("tool_use_id")) or as_nonempty_str(b.get("toolUseID"))
                    if tid is None:
                        rows.append(ParseIssueRow("bad_record", i, i + 1, "tool_result without a tool id"))
                        continue
                    c = calls.setdefault(tid, {"pos": pos, "turn": turn, "msg": uid})
                    c.update(result=b, out_pos=pos)
                elif btype not in BLOCKS:
                    rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"content type {btype!r}"))
            text = "\n\n".join(texts)
            if role == "user" and text.strip():
                turn = uid
                first_prompt = first_prompt or text
                rows.append(TurnRow(AGENT, uid, sid, "", None, ts, ts, i, i + 1))
                rows.append(self._msg(sid, uid, turn, "user", classes.HUMAN_PROMPT, text, ts, None, loc))
            elif role == "assistant":
                if text.strip():
                    rows.append(self._msg(sid, uid, turn, "assistant", classes.ASSISTANT_TEXT, text, ts, mmodel, loc))
                state = as_dict(m.get("state"))
                rows.append(
                    ModelCallRow(
                        agent=AGENT,
                        call_uid=uid,
                        session_uid=sid,
                        agent_id="",
                        turn_uid=turn,
                        model=mmodel,
                        stop_reason=as_nonempty_str(state.get("stopReason")),
                        is_complete=True if state.get("type") == "complete" else None,
                        ts=ts,
                        **_tokens(usage),
                        **loc,
                    )
                )
                for c in calls.values():
                    if c.get("msg") == uid and "call" not in c:
                        c["call"] = uid
        rows += self._tools(sid, calls, cwd)
        rows.insert(
            1,
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                cwd=cwd,
                model=model,
                ai_title=as_nonempty_str(doc.get("title")),
                first_prompt=first_prompt,
                started_at=parse_ts(doc.get("created")),
                ended_at=ended,
                byte_offset=0,
                line_number=1,
            ),
        )
        return rows

    @staticmethod
    def _msg(sid, uid, turn, role, mclass, text, ts, model, loc) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=sid,
            agent_id="",
            turn_uid=turn,
            role=role,
            message_class=mclass,
            text=text,
            ts=ts,
            model=model,
            **loc,
        )

    @staticmethod
    def _tools(sid: str, calls: dict[str, dict], cwd: str | None) -> list[Row]:
        rows: list[Row] = []
        for tid, c in calls.items():
            name, inp, pos = c.get("name"), as_dict(c.get("input")), c["pos"]
            result = c.get("result")
            output = outcome = exit_code = None
            is_error: bool | None = None
            if result is not None:
                run = as_dict(result.get("run"))
                if run:
                    outcome = RUN_STATUS.get(as_str(run.get("status")) or "", "ok")
                    res = run.get("result")
                    output = _result_text(res)
                    exit_code = as_int(as_dict(res).get("exitCode"))
                    if outcome == "ok" and (as_dict(res).get("success") is False or exit_code not in (None, 0)):
                        outcome = "error"
                    if output is None:
                        output = as_nonempty_str(as_dict(run.get("error")).get("message"))
                else:
                    content = result.get("content")
                    output = content if isinstance(content, str) else _result_text(content)
                    outcome = "error" if result.get("is_error") is True else "ok"
                is_error = outcome != "ok"
            error_class, excerpt = classify_error(
                output,
                is_error=is_error,
                exit_code=exit_code,
                rejected=outcome == "rejected",
                interrupted=outcome == "interrupted",
            )
            rows.append(
                ToolCallRow(
                    agent=AGENT,
                    tool_call_uid=tid,
                    session_uid=sid,
                    agent_id="",
                    turn_uid=c.get("turn"),
                    message_uid=c.get("msg"),
                    call_uid=c.get("call"),
                    name=name,
                    input=None if c.get("input") is None else orjson.dumps(c["input"]).decode(),
                    output=output,
                    is_error=is_error or None,
                    exit_code=exit_code,
                    outcome=outcome,
                    error_class=error_class,
                    error_excerpt=excerpt,
                    started_at=c.get("ts"),
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    output_byte_offset=c["out_pos"].byte_offset if "out_pos" in c else None,
                    output_line=c["out_pos"].line_number if "out_pos" in c else None,
                )
            )
            touches: list[tuple[str, str]] = []
            if name in FILE_TOOLS and as_nonempty_str(inp.get("path")):
                touches = [(FILE_TOOLS[name], inp["path"])]
            elif name in SHELL_TOOLS:
                touches = touches_from_shell(as_nonempty_str(inp.get("cmd")) or "")
            rows += file_touch_rows(
                touches, agent=AGENT, tool_call_uid=tid, session_uid=sid, agent_id="", ts=c.get("ts"), pos=pos, cwd=cwd
            )
            if name in SHELL_TOOLS and output and "out_pos" in c:
                rows += git_event_rows(
                    agent=AGENT,
                    tool_call_uid=tid,
                    session_uid=sid,
                    agent_id="",
                    output=output,
                    command=as_nonempty_str(inp.get("cmd")),
                    ts=None,
                    pos=c["out_pos"],
                )
            if name in SPAWN_TOOLS:
                rows.append(
                    spawn_row(
                        AGENT,
                        tid,
                        sid,
                        "",
                        inp,
                        byte_offset=pos.byte_offset,
                        line_number=pos.line_number,
                        ts=c.get("ts"),
                    )
                )
        return rows


PARSER = AmpParser
DOCUMENT_PARSER = AmpParser
