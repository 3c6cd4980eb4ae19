"""OpenCode records → rows (pure), shared by the storage-tree, export-document and database readers.

Shapes (FORMATS.md §5, samples in ``corpus/samples/opencode``): a *session* ``{id, parentID,
directory, title, version, time{created, updated}}``; a *message* ``{id, sessionID, role,
time{created, completed}, parentID (assistant → its user message), modelID | model{modelID},
providerID, path{cwd, root} | "cwd", cost, tokens{input, output, reasoning, cache{read, write}},
finish, error{name, data}}``; a *part* ``{id, sessionID, messageID, type, …}`` with type
``text`` | ``reasoning`` | ``tool`` ({callID, tool, state{status, input, output, metadata,
time{start, end}}}) | ``file`` | ``step-start`` | ``step-finish`` | … . Timestamps are unix ms.

Accounting: one model call per *step* of an assistant message when its ``step-finish`` parts
carry usage, else one per message. OpenCode's session processor (``packages/opencode/src/
session/processor.ts``, case ``finish-step``) writes each step's ``tokens`` and ``cost`` on its
``step-finish`` part, then sets the message's ``tokens`` to that step's (overwritten: the last
step's) and *adds* its ``cost`` (field case E34: two steps, input 2000 + 2200, message input 2200,
cost 0.0061 + 0.0062 = message cost 0.0123). So the steps are the model calls; the message's
own numbers are used only when it has no step with usage (older exports, hand fixtures), and
never summed with the steps. The first step keeps the message id as ``call_uid`` (a message read
before its steps, or with one step, is the same call), later steps are keyed by their part id.
Readers pass a message its step parts (`message_rows(steps=…)`): the export nests them, the
database reader selects them with the message row, and the storage tree (a message file does
not list its parts) reads ``storage/part/<messageID>/`` beside the message file as its sidecar.

Buckets are already disjoint (export: total
12751 = input 2 + output 55 + cache.read 12352 + cache.write 342): ``input → input_uncached``,
``cache.read → cache_read``, ``cache.write → cache_write_5m`` (OpenCode records no TTL; 5 min is
Anthropic's default), ``output + reasoning → output``, ``reasoning → reasoning``: OpenCode
stores ``output`` *without* reasoning (``Session.getUsage``: ``output: outputTokens −
reasoningTokens``), our ``reasoning`` is a subset of ``output`` (as Gemini's thoughts; E34 total
7940 = input 4200 + cache 1800 + 1800 + output 120 + reasoning 20). ``cost`` (USD number) → ``recorded_cost_usd``; the
``{input, output}`` object of one hand fixture has no stated unit → NULL. Duration is
``time.completed − time.created`` (basis ``request_to_response``) for a one-step message; the
steps of a multi-step message record no times of their own (NULL).

Sub-agents are child sessions with ``parentID``: ``is_subagent`` and ``parent_session_uid``.
The user text of a child session is the brief its parent agent wrote (the ``task`` tool's
prompt), not typed by a human: `subagent_brief`, not a prompt (field case E35: prompts 0). The
export and the database readers know the session's parent; a storage-tree part file does not
(its sidecar is its message), so there it stays `human_prompt`.
A part does not say its message's role; readers pass it (`part_rows(role=…)`) from the message
(the export nests parts in messages, the database joins them, the storage tree reads the
message file beside the part as its sidecar).
"""

from __future__ import annotations

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
from agent_history.parsers.common.coerce import as_dict, as_int, as_nonempty_str, as_str
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "opencode"

# part `type` values (OpenCode MessageV2.Part; those seen in the samples first). Types without
# a handler are known and give no rows of their own: step-start is bookkeeping, step-finish usage
# is read through its message (`message_rows(steps=…)`, module docstring); snapshot/patch are
# file snapshots.
PART_TYPES = frozenset(
    {
        "text",
        "reasoning",
        "tool",
        "file",
        "step-start",
        "step-finish",
        "snapshot",
        "patch",
        "agent",
        "subtask",
        "retry",
        "compaction",
    }
)
ROLES = frozenset({"user", "assistant"})
# tool `state.status` → outcome (OpenCode ToolState: pending | running | completed | error)
TOOL_STATUS: dict[str, str | None] = {
    "completed": "ok",
    "success": "ok",
    "error": "error",
    "pending": None,
    "running": None,
}


def _ms(value: Any) -> int | None:
    return as_int(value)


def session_rows(rec: dict, pos: Pos, record_type: str = "session") -> list[Row]:
    """Rows of a session record (storage ``session/<project>/<id>.json``, export ``info``, db row)."""
    rows: list[Row] = [record_type_row(AGENT, rec, record_type, None, True)]
    sid = as_nonempty_str(rec.get("id"))
    if sid is None:
        return rows + [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "session without id")]
    t = as_dict(rec.get("time"))
    parent = as_nonempty_str(rec.get("parentID"))
    rows.append(
        SessionRow(
            agent=AGENT,
            session_uid=sid,
            agent_id="",
            is_subagent=parent is not None,
            parent_session_uid=parent,
            cwd=as_nonempty_str(rec.get("directory")),
            cli_version=as_nonempty_str(rec.get("version")),
            ai_title=as_nonempty_str(rec.get("title")),
            started_at=parse_ts(t.get("created")),
            ended_at=parse_ts(t.get("updated")),
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
        )
    )
    return rows


def _model(rec: dict) -> str | None:
    return as_nonempty_str(rec.get("modelID")) or as_nonempty_str(as_dict(rec.get("model")).get("modelID"))


def turn_of(rec: dict) -> str | None:
    """The turn a message belongs to: a user message's own id, an assistant's ``parentID``."""
    if rec.get("role") == "user":
        return as_nonempty_str(rec.get("id"))
    return as_nonempty_str(rec.get("parentID"))


def is_step_usage(part: dict) -> bool:
    """True for a ``step-finish`` part that records its step's usage (a ``tokens`` object)."""
    return part.get("type") == "step-finish" and isinstance(part.get("tokens"), dict)


def _cost(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _with_reasoning(output: int | None, reasoning: int | None) -> int | None:
    """Our ``output`` (reasoning included) from OpenCode's ``output`` (reasoning excluded)."""
    return output if output is None or reasoning is None else output + reasoning


def message_rows(rec: dict, pos: Pos, record_type: str = "message", steps: list[dict] | None = None) -> list[Row]:
    """Rows of a message record: its turn, and for an assistant message its model calls.

    `steps`: the message's ``step-finish`` parts in order (None or empty: none known). Those
    with usage (`is_step_usage`) give one model call each; without any, the message gives one
    from its own ``tokens``/``cost`` (module docstring).
    """
    role = as_str(rec.get("role")) or ""
    rows: list[Row] = [record_type_row(AGENT, rec, record_type, role, role in ROLES)]
    mid, sid = as_nonempty_str(rec.get("id")), as_nonempty_str(rec.get("sessionID"))
    if role not in ROLES:
        return rows + [ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"role {role!r}")]
    if mid is None or sid is None:
        return rows + [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "message without id/sessionID")]
    t = as_dict(rec.get("time"))
    created, completed = parse_ts(t.get("created")), parse_ts(t.get("completed"))
    turn = turn_of(rec)
    model = _model(rec)
    loc = {"byte_offset": pos.byte_offset, "line_number": pos.line_number}
    if turn is not None:
        rows.append(
            TurnRow(
                AGENT,
                turn,
                sid,
                "",
                model,
                created,
                completed or created,
                pos.byte_offset if role == "user" else None,
                pos.line_number if role == "user" else None,
            )
        )
    path = rec.get("path")
    cwd = as_nonempty_str(path) if isinstance(path, str) else as_nonempty_str(as_dict(path).get("cwd"))
    if cwd or model:
        rows.append(
            SessionRow(agent=AGENT, session_uid=sid, agent_id="", cwd=cwd, model=model if role == "assistant" else None)
        )
    if role != "assistant":
        return rows
    err = as_dict(rec.get("error"))
    c_ms, d_ms = _ms(t.get("created")), _ms(t.get("completed"))
    duration = d_ms - c_ms if c_ms is not None and d_ms is not None and d_ms >= c_ms else None
    usage = [p for p in steps or () if is_step_usage(p)]
    if not usage:
        usage = [rec]  # the message's own tokens/cost: one call
    for i, step in enumerate(usage):
        tok = as_dict(step.get("tokens"))
        cache = as_dict(tok.get("cache"))
        last = i == len(usage) - 1
        one = len(usage) == 1
        uid = mid if i == 0 else as_nonempty_str(step.get("id")) or f"{mid}/step{i + 1}"
        reason = as_nonempty_str(step.get("reason")) if step is not rec else None
        rows.append(
            ModelCallRow(
                agent=AGENT,
                call_uid=uid,
                session_uid=sid,
                agent_id="",
                turn_uid=turn,
                model=model,
                stop_reason=reason
                or (as_nonempty_str(rec.get("finish")) or as_nonempty_str(err.get("name")) if last else None),
                input_uncached=as_int(tok.get("input")),
                cache_read=as_int(cache.get("read")),
                cache_write_5m=as_int(cache.get("write")),
                output=_with_reasoning(as_int(tok.get("output")), as_int(tok.get("reasoning"))),
                reasoning=as_int(tok.get("reasoning")),
                is_api_error=(bool(err) and err.get("name") != "MessageAbortedError" or None) if last else None,
                is_complete=True
                if step is not rec and not last
                else (bool(rec.get("finish")) or completed is not None or None),
                ts=created,
                recorded_cost_usd=_cost(step.get("cost")),
                duration_ms=duration if one else None,
                duration_basis="request_to_response" if one and c_ms is not None and d_ms is not None else None,
                **loc,
            )
        )
    return rows


def part_rows(
    rec: dict,
    pos: Pos,
    role: str | None,
    turn: str | None = None,
    record_type: str = "part",
    session: str | None = None,
    child: bool = False,
) -> list[Row]:
    """Rows of a part record; `role` (user | assistant | None when unknown), `turn` and `session`
    (for parts that do not name theirs, as in the older storage files) come from its message;
    `child`: its session has a parent (a user text part is then the parent agent's brief)."""
    ptype = as_str(rec.get("type")) or ""
    known = ptype in PART_TYPES
    rows: list[Row] = [record_type_row(AGENT, rec, record_type, ptype, known)]
    if not known:
        return rows + [ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, f"part type {ptype!r}")]
    pid, mid, sid = (as_nonempty_str(rec.get(k)) for k in ("id", "messageID", "sessionID"))
    sid = sid or session
    if pid is None or sid is None:
        if ptype in ("text", "reasoning", "tool", "file"):
            rows.append(ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "part without id/sessionID"))
        return rows
    t = as_dict(rec.get("time"))
    ts = parse_ts(t.get("start"))
    loc = {"byte_offset": pos.byte_offset, "line_number": pos.line_number}
    common = {"agent": AGENT, "session_uid": sid, "agent_id": "", "turn_uid": turn, "parent_uid": mid, "ts": ts}
    if ptype in ("text", "reasoning"):
        text = as_str(rec.get("text"))
        if role == "user":
            if rec.get("synthetic") is True:
                mclass = classes.CONTEXT_INJECTION
            else:
                mclass = classes.SUBAGENT_BRIEF if child else classes.HUMAN_PROMPT
        elif role == "assistant":
            mclass = classes.REASONING if ptype == "reasoning" else classes.ASSISTANT_TEXT
        else:
            mclass = classes.REASONING if ptype == "reasoning" else None
        if text:
            rows.append(
                MessageRow(
                    **common,
                    message_uid=pid,
                    role=role,
                    message_class=mclass,
                    text=text,
                    **loc,
                    record_type=ptype,
                    record_origin="synthetic" if rec.get("synthetic") else None,
                )
            )
    elif ptype == "file":
        meta = {k: rec[k] for k in ("filename", "mime", "url", "source") if isinstance(rec.get(k), str)}
        rows.append(
            MessageRow(
                **common,
                message_uid=pid,
                role=role,
                message_class=None,
                text=None,
                attachments=[meta],
                **loc,
                record_type=ptype,
            )
        )
    elif ptype == "tool":
        rows.append(_tool_row(rec, sid, mid, turn, loc))
    return rows


def _tool_row(rec: dict, sid: str, mid: str | None, turn: str | None, loc: dict) -> Row:
    state = as_dict(rec.get("state"))
    status = as_str(state.get("status")) or ""
    outcome = TOOL_STATUS.get(status)
    output = as_str(state.get("output"))
    if output is None and status == "error":
        output = as_str(state.get("error"))
    meta = as_dict(state.get("metadata"))
    exit_code = as_int(meta.get("exit")) if "exit" in meta else as_int(meta.get("exitCode"))
    error_class, excerpt = classify_error(output, is_error=status == "error", exit_code=exit_code)
    if error_class is not None and outcome == "ok":
        outcome = "error"
    st = as_dict(state.get("time"))
    s_ms, e_ms = as_int(st.get("start")), as_int(st.get("end"))
    inp = state.get("input")
    done = outcome is not None
    return ToolCallRow(
        agent=AGENT,
        tool_call_uid=as_nonempty_str(rec.get("callID")) or str(rec.get("id")),
        session_uid=sid,
        agent_id="",
        turn_uid=turn,
        message_uid=mid,
        call_uid=mid,
        name=as_nonempty_str(rec.get("tool")),
        input=None if inp is None else orjson.dumps(inp).decode(),
        output=output,
        is_error=status == "error" or None,
        exit_code=exit_code,
        outcome=outcome,
        error_class=error_class,
        error_excerpt=excerpt,
        duration_ms=e_ms - s_ms if s_ms is not None and e_ms is not None and e_ms >= s_ms else None,
        started_at=parse_ts(s_ms),
        ended_at=parse_ts(e_ms),
        output_byte_offset=loc["byte_offset"] if done else None,
        output_line=loc["line_number"] if done else None,
        **loc,
    )
