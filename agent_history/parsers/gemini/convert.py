"""Gemini CLI records → rows (pure), shared by the JSON-document and the JSONL parser.

Format (FORMATS.md §4, samples in ``corpus/samples/gemini``): a session is ``{sessionId,
projectHash, startTime, lastUpdated, kind?, summary?, messages: [...]}`` (≤ 0.39: one JSON
document; 0.40+: a type-less header line, one line per message, ``{"$set": {...}}`` mutation
lines). Message ``type``: ``user`` | ``gemini`` (``model`` + ``parts[]`` in older hand fixtures)
| ``info`` | ``error`` | ``warning`` | ``system``. User ``content`` is a string or ``[{text}]``;
``thoughts[]`` (``subject``/``description``, or ``summary``) become `reasoning` messages; tool
calls carry their result (``result``: a ``functionResponse`` array, a string or an object).

Token mapping (Gemini API usage metadata as the CLI records it in ``tokens``): ``input`` is the
prompt, and ``cached`` is the cached part **of** it (jsonl_v040: input 12069, cached 11502,
total 12216 = input + output); ``output`` the candidates; ``thoughts`` the thinking tokens, billed
as output but *not* inside ``output``; ``tool`` the tool-use prompt tokens, outside ``input``.
So, disjoint: ``input_uncached = input − cached + tool``, ``cache_read = cached``,
``output = output + thoughts``, ``reasoning = thoughts`` (a subset of output). Buckets the record
omits stay NULL; no cache-write bucket exists (NULL). A message with no ``tokens`` gives a model
call with NULL counts. cwd is not recorded (only the project hash), so ``cwd`` stays NULL.

Ids: Gemini message ids (``m1``, ``msg-001``) and tool-call ids are only unique inside a
session, so every uid is ``<sessionId>/<id>`` (a message without an id: ``<sessionId>/#<ordinal>``).
"""

from __future__ import annotations

import re
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
from agent_history.parsers.base import Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "gemini"

# message `type` → (role, message class); source: FORMATS.md §4 and Gemini CLI's MessageRecord
# types (user | gemini | info | error | warning); `model` and `system` occur in hand fixtures.
MESSAGE_TYPES: dict[str, tuple[str, str]] = {
    "user": ("user", classes.HUMAN_PROMPT),
    "gemini": ("assistant", classes.ASSISTANT_TEXT),
    "model": ("assistant", classes.ASSISTANT_TEXT),
    "info": ("system", classes.SYSTEM_REMINDER),
    "error": ("system", classes.SYSTEM_REMINDER),
    "warning": ("system", classes.SYSTEM_REMINDER),
    "system": ("system", classes.SYSTEM_REMINDER),
}
ASSISTANT_TYPES = frozenset({"gemini", "model"})
# `info` notices the CLI writes when the user cancels (large.json: "Request cancelled.")
_CANCELLED = re.compile(r"^\s*request cancell?ed", re.I)

# tool-call `status` → outcome (Gemini CLI ToolCallStatus; `completed` in a hand fixture)
TOOL_STATUS: dict[str, str | None] = {
    "success": "ok",
    "completed": "ok",
    "error": "error",
    "cancelled": "interrupted",
    "canceled": "interrupted",
    "running": None,
    "executing": None,
    "scheduled": None,
    "validating": None,
    "awaiting_approval": None,
}
# run_shell_command output ends with "Exit Code: N" (large.json)
_EXIT = re.compile(r"Exit Code:\s*(-?\d+)")

SESSION_KEYS = frozenset({"sessionId", "session_id", "projectHash", "startTime", "lastUpdated", "kind", "summary"})
"""Keys of a session header (document top level or JSONL line 1)."""


def session_uid_of(doc: dict, fallback: str) -> str:
    """The session id of a header/document (`sessionId`, `session_id` in one fixture), else `fallback`."""
    return as_nonempty_str(doc.get("sessionId")) or as_nonempty_str(doc.get("session_id")) or fallback


def session_row(doc: dict, session_uid: str, pos: Pos) -> SessionRow:
    """The session facts of a header/document."""
    return SessionRow(
        agent=AGENT,
        session_uid=session_uid,
        agent_id="",
        is_subagent=False,
        ai_title=as_nonempty_str(doc.get("summary")),
        started_at=parse_ts(doc.get("startTime")),
        ended_at=parse_ts(doc.get("lastUpdated")),
        byte_offset=pos.byte_offset,
        line_number=pos.line_number,
    )


def apply_set(update: Any, session_uid: str, pos: Pos) -> list[Row]:
    """A ``{"$set": {...}}`` mutation line: session fields it updates (lastUpdated, summary, …)."""
    fields = as_dict(update)
    rows: list[Row] = [
        SessionRow(
            agent=AGENT,
            session_uid=session_uid,
            agent_id="",
            ai_title=as_nonempty_str(fields.get("summary")),
            started_at=parse_ts(fields.get("startTime")),
            ended_at=parse_ts(fields.get("lastUpdated")),
        )
    ]
    unknown = sorted(k for k in fields if k not in SESSION_KEYS)
    if unknown:
        rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"$set of {unknown}"))
    return rows


def _text(value: Any) -> str | None:
    """Text of a string, ``[{text}]`` list or ``{text}`` part."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return as_str(value.get("text"))
    if isinstance(value, list):
        parts = [t for t in (_text(v) for v in value) if t]
        return "\n".join(parts) if parts else None
    return None


def _result_text(result: Any) -> str | None:
    """Tool output: ``functionResponse.response.output`` (or the response as JSON), a string, or JSON."""
    if result is None:
        return None
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        out = []
        for item in result:
            fr = as_dict(as_dict(item).get("functionResponse"))
            if fr:
                resp = fr.get("response")
                text = as_str(as_dict(resp).get("output")) if isinstance(resp, dict) else as_str(resp)
                if text is None and resp is not None:
                    text = orjson.dumps(resp).decode()
                if text is not None:
                    out.append(text)
            elif isinstance(item, str):
                out.append(item)
            elif item is not None:
                out.append(orjson.dumps(item).decode())
        return "\n".join(out) if out else None
    return orjson.dumps(result).decode()


def _tokens(tokens: Any) -> dict[str, int | None]:
    t = as_dict(tokens)
    inp, cached, out = as_int(t.get("input")), as_int(t.get("cached")), as_int(t.get("output"))
    thoughts, tool = as_int(t.get("thoughts")), as_int(t.get("tool"))
    if not t:
        return {}
    uncached = None if inp is None else inp - (cached or 0) + (tool or 0)
    output = None if out is None and thoughts is None else (out or 0) + (thoughts or 0)
    return {"input_uncached": uncached, "cache_read": cached, "output": output, "reasoning": thoughts}


def message_rows(
    msg: Any, session_uid: str, turn_uid: str | None, pos: Pos, ordinal: int | None = None
) -> tuple[list[Row], str | None]:
    """Rows of one message record → (rows, the turn uid in force after it). `ordinal` names a
    message without an id (its index in a document; default: its line number)."""
    if not isinstance(msg, dict):
        return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "message is not an object")], turn_uid
    mtype = as_str(msg.get("type")) or ""
    known = mtype in MESSAGE_TYPES
    rows: list[Row] = [record_type_row(AGENT, msg, "message", mtype, known)]
    if not known:
        rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"message type {mtype!r}"))
        return rows, turn_uid
    role, mclass = MESSAGE_TYPES[mtype]
    mid = as_nonempty_str(msg.get("id"))
    uid = f"{session_uid}/{mid}" if mid else f"{session_uid}/#{pos.line_number if ordinal is None else ordinal}"
    ts = parse_ts(msg.get("timestamp"))
    model = as_nonempty_str(msg.get("model"))
    if mtype == "user":
        turn_uid = uid
        rows.append(TurnRow(AGENT, uid, session_uid, "", None, ts, ts, pos.byte_offset, pos.line_number))
    elif turn_uid is not None:
        rows.append(TurnRow(AGENT, turn_uid, session_uid, "", model, None, ts, None, None))
    text = _text(msg.get("content"))
    if text is None and "parts" in msg:
        text = _text(msg.get("parts"))
    if mtype == "info" and text and _CANCELLED.match(text):
        mclass = classes.INTERRUPT_MARKER
    common = {"agent": AGENT, "session_uid": session_uid, "agent_id": "", "turn_uid": turn_uid, "ts": ts}
    loc = {"byte_offset": pos.byte_offset, "line_number": pos.line_number}
    for i, thought in enumerate(as_list(msg.get("thoughts"))):
        th = as_dict(thought)
        body = "\n".join(
            t
            for t in (
                as_nonempty_str(th.get("subject")),
                as_nonempty_str(th.get("description")),
                as_nonempty_str(th.get("summary")),
            )
            if t
        )
        if body:
            rows.append(
                MessageRow(
                    **common,
                    message_uid=f"{uid}#thought{i}",
                    role="assistant",
                    message_class=classes.REASONING,
                    text=body,
                    model=model,
                    **loc,
                    record_type=mtype,
                    record_origin="thought",
                )
            )
    tool_calls = as_list(msg.get("toolCalls"))
    # A reply that only calls tools (``content: ""``) is still a message: its tool calls name it
    # (field case E31: m2 → 3 messages m1, m2, m3, not 2). Its text is the recorded "" (known empty).
    if text or (tool_calls and text is not None):
        rows.append(
            MessageRow(
                **common,
                message_uid=uid,
                role=role,
                message_class=mclass,
                text=text,
                model=model,
                **loc,
                record_type=mtype,
                record_origin=None,
            )
        )
    if mtype in ASSISTANT_TYPES:
        rows.append(
            ModelCallRow(
                agent=AGENT,
                call_uid=uid,
                session_uid=session_uid,
                agent_id="",
                turn_uid=turn_uid,
                model=model,
                is_complete=True,
                ts=ts,
                **loc,
                **_tokens(msg.get("tokens")),
            )
        )
        if model:
            rows.append(SessionRow(agent=AGENT, session_uid=session_uid, agent_id="", model=model))
    for call in tool_calls:
        rows.extend(_tool_rows(call, uid, common, loc))
    return rows, turn_uid


def _tool_rows(call: Any, message_uid: str, common: dict, loc: dict) -> list[Row]:
    c = as_dict(call)
    cid = as_nonempty_str(c.get("id"))
    if not c or cid is None:
        return [ParseIssueRow("bad_record", loc["byte_offset"], loc["line_number"], "tool call without id")]
    args = c.get("args", c.get("arguments"))
    output = _result_text(c.get("result"))
    status = as_str(c.get("status")) or ""
    outcome = TOOL_STATUS.get(status, "ok" if output is not None else None)
    m = _EXIT.search(output or "") if c.get("name") == "run_shell_command" else None
    exit_code = int(m.group(1)) if m else None
    error_class, excerpt = classify_error(
        output, is_error=status == "error", exit_code=exit_code, interrupted=outcome == "interrupted"
    )
    if error_class is not None and outcome == "ok":
        outcome = "error"
    ts = parse_ts(c.get("timestamp")) or common["ts"]
    session_uid = common["session_uid"]
    return [
        ToolCallRow(
            agent=AGENT,
            tool_call_uid=f"{session_uid}/{cid}",
            session_uid=session_uid,
            agent_id="",
            turn_uid=common["turn_uid"],
            message_uid=message_uid,
            call_uid=message_uid,
            name=as_nonempty_str(c.get("name")),
            input=None if args is None else orjson.dumps(args).decode(),
            output=output,
            is_error=status == "error" or None,
            exit_code=exit_code,
            outcome=outcome,
            error_class=error_class,
            error_excerpt=excerpt,
            started_at=ts,
            ended_at=ts if outcome is not None else None,
            output_byte_offset=loc["byte_offset"] if output is not None else None,
            output_line=loc["line_number"] if output is not None else None,
            **loc,
        )
    ]
