"""pi coding-agent session files (badlogic/pi-mono ``packages/coding-agent``) → rows.

Files live at ``~/.pi/agent/sessions/--<cwd with / as ->--/<ISO ts>_<session id>.jsonl``.

Format contract (read from the corpus and pi's ``session-manager.ts``):

- **Header.** The first line is ``{"type":"session","id","timestamp","cwd"}``; v3 adds
  ``"version":3`` (v1 has no version), older v1 headers carry ``provider``/``modelId``/
  ``thinkingLevel``, forks carry ``parentSession`` (``branchedFrom`` in older files): the path of
  the session file they were copied from. A record before the header is a
  ``record_before_header`` issue and is still parsed (session id then comes from the file name).
- **Entries** (every later line), known types: ``message``, ``model_change``,
  ``thinking_level_change``, ``compaction``, ``branch_summary``, ``custom`` (extension state,
  not in context), ``custom_message`` (extension text injected into context), ``label``
  (bookmark), ``session_info`` (``name`` = the session's display name). ``message.role`` is
  ``user`` | ``assistant`` | ``toolResult`` | ``bashExecution`` (a user ``!command``) |
  ``custom`` (``hookMessage`` before v3, field case E28) | ``branchSummary`` |
  ``compactionSummary``. Anything else is an unknown record type (RecordTypeRow known=False +
  ``unknown_record_type`` issue). Every record gets one RecordTypeRow; the header's subtype is
  ``v<version>``, a message's subtype its role.
- **Tree.** v2+ entries have ``id`` (8 hex chars, unique only within a file) and ``parentId``.
  pi appends each entry as a child of its current leaf; branching moves the leaf back, so the
  visible transcript is the path root → leaf, not file order. The leaf is the latest
  *transcript* entry in file order (message, custom_message, branch_summary, compaction,
  model_change, thinking_level_change). Metadata entries (``session_info``, ``label``,
  ``custom``, unknown types) are nodes of the tree but never move the leaf: a
  ``session_info`` written with a stale ``parentId`` must not truncate the transcript (E29).
  v1 entries have no ids: the file is one linear chain, every message is on the active branch.
- **Active-branch rule (batch independent).** When a transcript entry arrives it becomes the
  leaf, so its messages are emitted with ``on_active_branch=True``. If its parent is not the
  previous leaf, the branch switched: walking both paths up to their meeting point, the
  entries that left the path get a correction row ``on_active_branch=False`` and entries that
  rejoined it get ``True`` (MessageRow.on_active_branch merges LATEST). Corrections are emitted
  by ``feed`` itself, so the sequence of rows is the same whatever the batch boundaries; the
  fold of all rows equals the status at the final leaf. State keeps, per entry id, only the
  parent id and the timestamp + suffixes needed to rebuild the message keys (capped at
  `MAX_NODES`, oldest evicted; a walk stops at an evicted id).
- **Keys.** An entry's key is ``<id>@<timestamp>`` (v2+: ids collide across files, the
  timestamp makes them unique while a fork's verbatim copy of an entry keeps the same key, so
  copies merge instead of double counting) or ``v1:<sha256 of the canonical record>[:32]`` for
  entries without an id. Message uid = entry key (+ ``#reasoning`` for thinking blocks,
  ``#brief:<spawn>`` for sub-agent briefs); model call uid = the assistant entry's key; tool
  call uid = pi's tool-call id (``toolu_…`` / ``call_…``); compaction uid = entry key.
- **Messages.** user → ``human_prompt`` (pi writes typed text as role user, prompt-template
  expansions included), except a message that is only a slash command (``/mode``, ``/``: old
  pi sent unknown commands as text) → ``command_expansion``; assistant text →
  ``assistant_text``; thinking → ``reasoning``; ``bashExecution`` → ``local_command_output``; ``custom``/``hookMessage``/``custom_message``
  → ``hook_output``; ``compaction`` summary and ``branch_summary`` → ``compaction_summary``.
  Tool results are not messages (they are ToolCallRow.output), except the report of a
  sub-agent tool (``subagent_report``). Images become ``attachments`` metadata, never text.
- **Model calls.** Every assistant message with a ``usage`` object is one call (pi writes an
  assistant message once, when it is complete). ``usage.input`` already excludes cache reads
  (``totalTokens = input + output + cacheRead + cacheWrite`` on every corpus record), so:
  input → input_uncached, cacheRead → cache_read, cacheWrite → cache_write_5m, output →
  output; reasoning is not reported separately (NULL). A missing field is NULL. Stop reason
  ``error``/``aborted`` with no token billed (all counts 0 or absent) → ``is_api_error``; an
  aborted call that did bill tokens stays a normal, counted call. All counts zero and no stop
  reason → every count NULL (a provider-adapting proxy can send zeros it never measured).
  Per-call facts: ``usage.cost.total`` → ``recorded_cost_usd`` (USD, pi's own pricing);
  entry ``timestamp`` − ``message.timestamp`` → ``duration_ms`` with basis
  ``request_to_response`` (NULL when negative); pi records no TTFT or thinking time.
- **Turns** (pi writes none): a user prompt opens a turn keyed by the prompt's entry key; an
  assistant message arriving while idle opens one keyed by itself (an extension-triggered run).
  ``stopReason == "toolUse"`` (or, without a stop reason, any toolCall block) keeps the turn
  busy; anything else ends it. Entries while idle (custom messages, ``!commands``,
  compactions) belong to no turn.
- **Tool calls.** Assistant ``toolCall`` blocks ``{id, name, arguments}`` pair with
  ``toolResult`` messages ``{toolCallId, toolName, content, isError, details}``. See
  `agent_history.parsers.pi.tools` for outcomes, exit codes, file touches, git events and
  sub-agent spawns.
- **Sub-agents.** pi has no built-in sub-agent; the ``subagent`` extension runs
  ``pi --mode json -p --no-session`` children, so no child session file exists. Its tool call
  becomes SubagentSpawnRow(s) (single / parallel ``tasks`` / ``chain``) + ``subagent_brief``
  messages; the result text is a ``subagent_report``. Child usage inside the result's
  ``details`` is not counted (not in the corpus). Forks (``parentSession``) set
  ``SessionRow.forked_from_uid`` (the parent's id, taken from its file name).
- **Positions** (issue 11): every MessageRow carries the entry ``type`` as ``record_type`` and
  ``message.role`` (``customType`` of a ``custom_message``) as ``record_origin``; a tool call's
  ``output_byte_offset`` / ``output_line`` are those of its ``toolResult`` entry.
- **Session.** uid = header ``id`` (v1 headers have one too), else the file name's id part;
  cwd from the header; model = latest assistant model (header ``modelId`` / ``model_change``
  only until an assistant has answered); ``custom_title`` = latest ``session_info.name``;
  ``first_prompt`` = first human prompt; started/ended = min/max entry timestamps (the header's
  included: v1 files can hold messages older than their header). One SessionRow at the header
  and one per pass from ``flush()`` with that pass's min/max/latest values (they merge).
- **State** (JSON, bounded): session id, cwd, leaf, tree nodes (id → parent id), message-key
  parts per id, the open turn and busy flag, unanswered tool-call ids (with the command of a
  git-mentioning bash call, ≤ 1000 chars, for `gitout`), whether an assistant has answered.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from datetime import datetime
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
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Parser, Pos, record_type_row, stamp_messages
from agent_history.parsers.common.coerce import as_dict, as_int, as_str
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.pi import tools as pi_tools
from agent_history.parsers.pi.context import EntryCtx
from agent_history.parsers.pi.tools import content_parts, session_uid_from_path

AGENT = "pi"

ENTRY_TYPES: frozenset[str] = frozenset(
    {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
"""Every record type pi writes (session-manager.ts ``FileEntry``)."""

MESSAGE_ROLES: frozenset[str] = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "branchSummary", "compactionSummary"}
)
"""Every ``message.role`` pi writes (``hookMessage`` is the pre-v3 name of ``custom``)."""

LEAF_TYPES: frozenset[str] = frozenset(
    {"message", "custom_message", "branch_summary", "compaction", "model_change", "thinking_level_change"}
)
"""Entry types that move the transcript leaf; the others are metadata (E29)."""

ROLE_CLASS: dict[str, tuple[str, str]] = {
    "user": ("user", classes.HUMAN_PROMPT),
    "bashExecution": ("user", classes.LOCAL_COMMAND_OUTPUT),
    "custom": ("user", classes.HOOK_OUTPUT),
    "hookMessage": ("user", classes.HOOK_OUTPUT),
    "branchSummary": ("user", classes.COMPACTION_SUMMARY),
    "compactionSummary": ("user", classes.COMPACTION_SUMMARY),
}
"""(role, message class) of the non-assistant message roles that become one MessageRow."""

API_ERROR_STOPS: frozenset[str] = frozenset({"error", "aborted"})
"""Stop reasons that make a call with no billed token an API error (not billable)."""

SLASH_COMMAND = re.compile(r"/[A-Za-z0-9_:-]*")
"""A user message that is only a slash command (``/mode``, ``/``): a command, not a prompt."""

MAX_NODES = 50_000
"""Cap on tree nodes kept in state (ids only); the oldest are evicted first."""

REASONING_SUFFIX = "#reasoning"


def _canonical(record: dict) -> bytes:
    try:
        return orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(record, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8", "replace")


def entry_key(record: dict) -> str:
    """The content-identity key of one entry: ``<id>@<timestamp>`` or ``v1:<sha>`` (see module doc)."""
    eid = as_str(record.get("id"))
    if eid:
        return f"{eid}@{as_str(record.get('timestamp')) or ''}"
    return "v1:" + hashlib.sha256(_canonical(record)).hexdigest()[:32]


def _record_ts(record: dict, message: dict | None) -> datetime | None:
    ts = parse_ts(record.get("timestamp"))
    if ts is None and message is not None:
        ts = parse_ts(message.get("timestamp"))
    return ts


REQUEST_TO_RESPONSE = "request_to_response"
"""`duration_basis` of a pi call: ``message.timestamp`` (unix ms, set when pi creates the
assistant message as the request starts streaming) → the entry ``timestamp`` (ISO, written when
the complete message is appended)."""


def _recorded_cost(usage: dict) -> float | None:
    """pi's own cost of a call: ``usage.cost.total`` in USD (pi prices it from its model table)."""
    total = as_dict(usage.get("cost")).get("total")
    if isinstance(total, bool) or not isinstance(total, (int, float)) or total != total or total < 0:
        return None
    return float(total)


def _request_to_response_ms(msg: dict, ctx: EntryCtx) -> int | None:
    """Entry timestamp − ``message.timestamp`` in ms; None when either is missing or the span is
    negative (hand-written fixtures set message times 20 minutes after the entry's)."""
    started = msg.get("timestamp")
    saved = parse_ts(ctx.raw_ts) if ctx.raw_ts else None  # the entry's own time, not the fallback
    if saved is None or isinstance(started, bool) or not isinstance(started, (int, float)):
        return None
    span = round(saved.timestamp() * 1000 - started)
    return span if span >= 0 else None


class PiParser(Parser):
    """Parser for one pi session file (see the module docstring for the format contract)."""

    AGENT = AGENT
    VERSION = 3
    """2: message record type/origin and tool-result positions (issue 11)."""

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        s = state if isinstance(state, dict) else {}
        self.session_uid: str | None = as_str(s.get("sid"))
        self.cwd: str | None = as_str(s.get("cwd"))
        self.header_seen: bool = bool(s.get("hdr"))
        self.leaf: str | None = as_str(s.get("leaf"))
        nodes = s.get("nodes")
        self.nodes: dict[str, str | None] = dict(nodes) if isinstance(nodes, dict) else {}
        msgs = s.get("msgs")
        self.msgs: dict[str, list] = dict(msgs) if isinstance(msgs, dict) else {}
        self.turn: str | None = as_str(s.get("turn"))
        self.busy: bool = bool(s.get("busy"))
        pending = s.get("pending")
        self.pending: dict[str, str | None] = dict(pending) if isinstance(pending, dict) else {}
        self.seen_assistant: bool = bool(s.get("asst"))
        self._fallback_uid = session_uid_from_path(ctx.path)
        self.entry_turn: str | None = None
        """The turn the entry being fed belongs to (None while idle)."""
        self._pass: dict[str, Any] = {}

    # ------------------------------------------------------------------ contract

    def state(self) -> dict:
        """Bounded resume state: ids, the leaf, the open turn, pending tool-call ids, flags."""
        return {
            "sid": self.session_uid,
            "cwd": self.cwd,
            "hdr": self.header_seen,
            "leaf": self.leaf,
            "nodes": dict(self.nodes),
            "msgs": {k: [v[0], list(v[1])] for k, v in self.msgs.items()},
            "turn": self.turn,
            "busy": self.busy,
            "pending": dict(self.pending),
            "asst": self.seen_assistant,
        }

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows for one decoded record; never raises (a failure becomes a ``bad_record`` issue)."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "pi record is not an object")]
        rtype = record.get("type")
        message = record.get("message") if rtype == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        known = isinstance(rtype, str) and rtype in ENTRY_TYPES
        if rtype == "message":
            known = isinstance(role, str) and role in MESSAGE_ROLES
        if rtype == "session":
            subtype = f"v{as_int(record.get('version')) or 1}"
        else:
            subtype = role if isinstance(role, str) else None
        rows: list[Row] = [
            record_type_row(AGENT, record, rtype if isinstance(rtype, str) else repr(rtype)[:80], subtype, known)
        ]
        if not known:
            detail = f"unknown pi record type {rtype!r}" + (f" role {role!r}" if rtype == "message" else "")
            rows.append(ParseIssueRow("unknown_record_type", pos.byte_offset, pos.line_number, detail[:500]))
        try:
            if rtype == "session":
                rows.extend(self._header(record, pos))
            else:
                if not self.header_seen:
                    rows.append(
                        ParseIssueRow(
                            "record_before_header", pos.byte_offset, pos.line_number, f"{rtype!r} before header"
                        )
                    )
                entry_rows = self._entry(record, rtype, message, known, pos)
                origin = role if rtype == "message" else record.get("customType")
                rows.extend(
                    stamp_messages(
                        entry_rows, str(rtype), origin if isinstance(origin, str) and origin else None, pos.byte_offset
                    )
                )
        except Exception as exc:  # noqa: BLE001 — contract: feed never raises
            rows.append(
                ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, f"{type(exc).__name__}: {exc}"[:500])
            )
        return rows

    def flush(self) -> Iterable[Row]:
        """Emit this pass's session summary (min/max timestamps, latest model and title)."""
        p, self._pass = self._pass, {}
        if not p:
            return ()
        return [
            SessionRow(
                agent=AGENT,
                session_uid=self._sid(),
                agent_id="",
                is_subagent=False,
                model=p.get("model"),
                custom_title=p.get("title"),
                first_prompt=p.get("first_prompt"),
                started_at=p.get("started"),
                ended_at=p.get("ended"),
            )
        ]

    # ------------------------------------------------------------------ header and session

    def _sid(self) -> str:
        return self.session_uid or self._fallback_uid

    def _seen_ts(self, ts: datetime | None) -> None:
        if ts is None:
            return
        p = self._pass
        if p.get("started") is None or ts < p["started"]:
            p["started"] = ts
        if p.get("ended") is None or ts > p["ended"]:
            p["ended"] = ts

    def _header(self, record: dict, pos: Pos) -> list[Row]:
        rows: list[Row] = []
        sid = as_str(record.get("id"))
        if self.header_seen and sid and sid != self.session_uid:
            rows.append(ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "second session header"))
        if not sid:
            rows.append(ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "session header without id"))
        self.header_seen = True
        self.session_uid = sid or self.session_uid
        self.cwd = as_str(record.get("cwd")) or self.cwd
        ts = parse_ts(record.get("timestamp"))
        self._seen_ts(ts)
        model = as_str(record.get("modelId"))
        if model and not self.seen_assistant:
            self._pass["model"] = model
        parent_path = as_str(record.get("parentSession")) or as_str(record.get("branchedFrom"))
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=self._sid(),
                agent_id="",
                is_subagent=False,
                forked_from_uid=session_uid_from_path(parent_path) if parent_path else None,
                cwd=self.cwd,
                started_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
        return rows

    # ------------------------------------------------------------------ entries

    def _entry(self, record: dict, rtype: Any, message: Any, known: bool, pos: Pos) -> list[Row]:
        msg = message if isinstance(message, dict) else None
        ts = _record_ts(record, msg)
        self._pass["seen"] = True
        self._seen_ts(ts)
        self.entry_turn = self.turn if self.busy else None
        key = entry_key(record)
        eid = as_str(record.get("id"))
        rows: list[Row] = []
        if eid is not None:
            parent = record.get("parentId")
            parent = parent if isinstance(parent, str) else None
            if known and rtype in LEAF_TYPES:
                rows.extend(self._advance_leaf(eid, parent))
            else:
                self._add_node(eid, parent)
        ctx = EntryCtx(key=key, eid=eid, ts=ts, pos=pos, raw_ts=as_str(record.get("timestamp")) or "")
        if rtype == "message":
            if msg is None:
                rows.append(
                    ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "message entry without message")
                )
            elif known:
                rows.extend(self._message(msg, ctx))
        elif rtype == "compaction":
            rows.extend(self._compaction(record, ctx))
        elif rtype == "branch_summary":
            text = as_str(record.get("summary"))
            if text:
                rows.append(self._message_row(ctx, "", "user", classes.COMPACTION_SUMMARY, text))
        elif rtype == "custom_message":
            text, attachments = content_parts(record.get("content"))
            if text or attachments:
                rows.append(self._message_row(ctx, "", "user", classes.HOOK_OUTPUT, text, attachments=attachments))
        elif rtype == "model_change":
            model = as_str(record.get("modelId"))
            if model and not self.seen_assistant:
                self._pass["model"] = model
        elif rtype == "session_info":
            name = as_str(record.get("name"))
            if name and name.strip():
                self._pass["title"] = name.strip()
        return rows

    def _message(self, msg: dict, ctx: EntryCtx) -> list[Row]:
        role = msg.get("role")
        if role == "assistant":
            return self._assistant(msg, ctx)
        if role == "toolResult":
            rows, report = pi_tools.tool_result_rows(self, msg, ctx)
            if report:
                rows.append(self._message_row(ctx, "", "tool", classes.SUBAGENT_REPORT, report))
            if self.entry_turn:
                rows.append(self._turn_row(ended_at=ctx.ts))
            return rows
        rows: list[Row] = []
        msg_role, cls = ROLE_CLASS[role]
        if role == "bashExecution":
            text, attachments = pi_tools.bash_execution_text(msg), None
            rows.extend(pi_tools.bash_execution_rows(self, msg, ctx))
        elif role in ("branchSummary", "compactionSummary"):
            text, attachments = as_str(msg.get("summary")), None
        else:
            text, attachments = content_parts(msg.get("content"))
        if role == "user":
            rows.extend(self._open_turn(ctx))
            if text and SLASH_COMMAND.fullmatch(text.strip()):
                cls = classes.COMMAND_EXPANSION
            elif text and "first_prompt" not in self._pass:
                self._pass["first_prompt"] = text
        if text or attachments:
            rows.append(self._message_row(ctx, "", msg_role, cls, text, attachments=attachments))
        return rows

    def _assistant(self, msg: dict, ctx: EntryCtx) -> list[Row]:
        rows: list[Row] = []
        model = as_str(msg.get("model"))
        stop = as_str(msg.get("stopReason"))
        content = msg.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        has_tool_calls = any(b.get("type") == "toolCall" for b in blocks)
        if self.turn is None or not self.busy:
            rows.extend(self._open_turn(ctx))
        self.busy = stop == "toolUse" if stop is not None else has_tool_calls
        if model:
            self.seen_assistant = True
            self._pass["model"] = model
        texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
        if isinstance(content, str):
            texts = [content]
        thinking = [b["thinking"] for b in blocks if b.get("type") == "thinking" and isinstance(b.get("thinking"), str)]
        text = "\n\n".join(t for t in texts if t.strip())
        reasoning = "\n\n".join(t for t in thinking if t.strip())
        message_uid = None
        if text:
            message_uid = ctx.key
            rows.append(self._message_row(ctx, "", "assistant", classes.ASSISTANT_TEXT, text, model=model))
        if reasoning:
            rows.append(
                self._message_row(ctx, REASONING_SUFFIX, "assistant", classes.REASONING, reasoning, model=model)
            )
        call_uid = None
        usage = msg.get("usage")
        if isinstance(usage, dict):
            call_uid = ctx.key
            rows.append(self._model_call(msg, usage, model, stop, ctx))
        rows.extend(pi_tools.tool_call_rows(self, blocks, ctx, message_uid, call_uid, stop))
        rows.append(self._turn_row(ended_at=ctx.ts, model=model))
        if not self.busy:
            rows.extend(pi_tools.close_pending(self, ctx, "no_result"))
        return rows

    def _model_call(self, msg: dict, usage: dict, model: str | None, stop: str | None, ctx: EntryCtx) -> ModelCallRow:
        counts = {name: as_int(usage.get(name)) for name in ("input", "output", "cacheRead", "cacheWrite")}
        billed = any(v for v in counts.values())
        if stop is None and not billed:
            # all zero (or absent) and no stop reason: a proxy's unmeasured zeros, not a count
            counts = dict.fromkeys(counts)
        duration = _request_to_response_ms(msg, ctx)
        return ModelCallRow(
            agent=AGENT,
            call_uid=ctx.key,
            session_uid=self._sid(),
            agent_id="",
            turn_uid=self.entry_turn,
            request_id=as_str(msg.get("responseId")),
            model=model,
            stop_reason=stop,
            input_uncached=counts["input"],
            cache_read=counts["cacheRead"],
            cache_write_5m=counts["cacheWrite"],
            cache_write_1h=None,
            output=counts["output"],
            reasoning=None,
            is_api_error=stop in API_ERROR_STOPS and not billed,
            is_complete=stop is not None,
            ts=ctx.ts,
            byte_offset=ctx.pos.byte_offset,
            line_number=ctx.pos.line_number,
            recorded_cost_usd=_recorded_cost(usage),
            duration_ms=duration,
            duration_basis=REQUEST_TO_RESPONSE if duration is not None else None,
        )

    def _compaction(self, record: dict, ctx: EntryCtx) -> list[Row]:
        rows: list[Row] = []
        summary = as_str(record.get("summary"))
        summary_uid = None
        if summary:
            summary_uid = ctx.key
            rows.append(self._message_row(ctx, "", "user", classes.COMPACTION_SUMMARY, summary))
        rows.append(
            CompactionRow(
                agent=AGENT,
                compaction_uid=ctx.key,
                session_uid=self._sid(),
                agent_id="",
                tokens_before=as_int(record.get("tokensBefore")),
                summary_message_uid=summary_uid,
                ts=ctx.ts,
                byte_offset=ctx.pos.byte_offset,
                line_number=ctx.pos.line_number,
            )
        )
        return rows

    # ------------------------------------------------------------------ rows

    def _message_row(
        self,
        ctx: EntryCtx,
        suffix: str,
        role: str,
        cls: str,
        text: str | None,
        *,
        model: str | None = None,
        attachments: list[dict] | None = None,
    ) -> MessageRow:
        """One MessageRow for entry `ctx`; registers its key suffix for active-branch corrections."""
        if ctx.eid is not None:
            entry = self.msgs.setdefault(ctx.eid, [ctx.raw_ts, []])
            if suffix not in entry[1]:
                entry[1].append(suffix)
        return MessageRow(
            agent=AGENT,
            message_uid=ctx.key + suffix,
            session_uid=self._sid(),
            agent_id="",
            turn_uid=self.entry_turn,
            role=role,
            message_class=cls,
            text=text,
            ts=ctx.ts,
            model=model,
            on_active_branch=True,
            attachments=attachments or None,
            byte_offset=ctx.pos.byte_offset,
            line_number=ctx.pos.line_number,
        )

    def _open_turn(self, ctx: EntryCtx) -> list[Row]:
        rows = list(pi_tools.close_pending(self, ctx, "no_result"))
        self.turn, self.busy, self.entry_turn = ctx.key, True, ctx.key
        rows.append(
            TurnRow(
                agent=AGENT,
                turn_uid=ctx.key,
                session_uid=self._sid(),
                agent_id="",
                started_at=ctx.ts,
                ended_at=ctx.ts,
                byte_offset=ctx.pos.byte_offset,
                line_number=ctx.pos.line_number,
            )
        )
        return rows

    def _turn_row(self, *, ended_at: datetime | None, model: str | None = None) -> TurnRow:
        return TurnRow(
            agent=AGENT,
            turn_uid=self.entry_turn or "",
            session_uid=self._sid(),
            agent_id="",
            model=model,
            ended_at=ended_at,
        )

    # ------------------------------------------------------------------ tree

    def _add_node(self, eid: str, parent: str | None) -> None:
        self.nodes[eid] = parent
        while len(self.nodes) > MAX_NODES:
            old = next(iter(self.nodes))
            del self.nodes[old]
            self.msgs.pop(old, None)

    def _corrections(self, eid: str, on_branch: bool) -> list[Row]:
        entry = self.msgs.get(eid)
        if not entry:
            return []
        raw_ts, suffixes = entry
        key = f"{eid}@{raw_ts}"
        return [
            MessageRow(
                agent=AGENT, message_uid=key + s, session_uid=self._sid(), agent_id="", on_active_branch=on_branch
            )
            for s in suffixes
        ]

    def _advance_leaf(self, eid: str, parent: str | None) -> list[Row]:
        """Make `eid` the leaf; emit on_active_branch corrections when the branch switched."""
        old_leaf = self.leaf
        self._add_node(eid, parent)
        self.leaf = eid
        if old_leaf is None or parent == old_leaf or old_leaf == eid:
            return []
        new_path: list[str] = []
        seen: set[str] = set()
        x: str | None = eid
        while x is not None and x not in seen:
            seen.add(x)
            new_path.append(x)
            x = self.nodes.get(x) if x in self.nodes else None
        rows: list[Row] = []
        y: str | None = old_leaf
        walked: set[str] = set()
        while y is not None and y not in seen and y not in walked:
            walked.add(y)
            rows.extend(self._corrections(y, False))
            y = self.nodes.get(y) if y in self.nodes else None
        meet = y if y in seen else None
        for x in new_path[1:]:
            if x == meet:
                break
            rows.extend(self._corrections(x, True))
        return rows


PARSER = PiParser
