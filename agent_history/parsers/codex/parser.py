"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``) → rows.

Format contract (read from the corpus: CLI 0.4x–0.15x, legacy pre-0.4 files, field cases
E19–E26):

- **Records.** Current rollouts are ``{timestamp, type, payload}`` with ``type`` one of
  ``session_meta``, ``turn_context``, ``response_item``, ``event_msg``, ``compacted``
  (`TOP_TYPES`); ``response_item`` / ``event_msg`` carry ``payload.type`` (`RESPONSE_ITEMS`,
  `EVENT_TYPES`). Legacy files start with a bare header ``{id, timestamp, instructions, git}``,
  then unwrapped response items (``{"type": "message", …}``) and ``{"record_type": "state"}``
  lines; they are read as ``legacy_header`` / ``legacy_item`` / ``legacy_state`` records.
  Every record gets one RecordTypeRow (type, payload type, key set of the *payload* — where
  format drift shows); any other type is unknown (RecordTypeRow known=False + an
  ``unknown_record_type`` issue). A known record with the wrong shape is a ``bad_record``
  issue. ``feed`` never raises.
- **Timestamps.** A record without its own ``timestamp`` (every item of a legacy file) dates its
  point-in-time rows (`INHERITS_TS`: message, model call, spawn, compaction, file touch, git
  event) by the last timestamp seen before it in the file — in a legacy file the header's — so
  search shows when the session ran instead of ``-``. Intervals (tool-call start/end, turns) and
  the session's bounds use only records' own timestamps: an inherited one would invent a zero
  duration.
- **Session.** uid = the first ``session_meta.payload.id`` (legacy: header ``id``); before it
  (or without one) the id in the file name ``rollout-<ts>-<id>.jsonl`` (one
  ``record_before_header`` issue). cwd, ``git.branch``, ``cli_version`` from the meta (cwd of
  legacy files: the ``<cwd>`` of their ``<environment_context>``; relative paths of file
  touches are joined to it); model =
  latest ``turn_context.model`` (also ``token_count.info.model`` when present); first prompt =
  first ``human_prompt`` (Codex has no custom titles except ``thread_name_updated``);
  started/ended = min/max record timestamps. ``agent_id`` is always '' (a sub-agent thread has
  its own id). ``source`` is a string (``cli``, ``exec``, ``vscode``…) or an object:
  ``{"subagent": {"thread_spawn": {"parent_thread_id", "agent_role"…}}}`` (E25),
  ``{"subagent": "review"}``; a sub-agent (also ``thread_source == "subagent"``) has
  ``is_subagent`` and ``parent_session_uid``; ``forked_from_id`` sets ``forked_from_uid``
  (and the parent). ``instructions`` / ``base_instructions.text`` are read type-tolerantly but
  not stored (AGENTS.md reaches the history as a context message anyway).
- **Replay.** A forked or sub-agent thread starts with a copy of the parent's history; those
  records produce RecordTypeRows only (they still update the model and the token baseline).
  Rule: records after the thread's own ``session_meta`` are numbered from 0; with
  ``subagent_history_start_ordinal`` = N in the meta (top level or in
  ``source.subagent.thread_spawn``), records numbered < N are replay. Without it, a thread with
  ``forked_from_id`` — or any record stream containing a second ``session_meta`` with another
  id (the parent's, copied) — replays the *burst written at fork time*: the run of records
  whose timestamps follow the previous one by at most `BURST_GAP_MS` (records without a
  timestamp continue the run). A sub-agent without a fork marker has no replay (E25: its
  records are its own).
- **Dual representation.** The same text is written as ``response_item`` (``message`` /
  ``reasoning``) and as ``event_msg`` (``user_message`` / ``agent_message`` /
  ``agent_reasoning`` / ``agent_reasoning_raw_content``), in either order, sometimes only one
  of them (E22: prompts only as response items). Both map to one MessageRow: uid =
  ``<session>:<kind>:<sha256 of the text without whitespace>[:16]:<n>`` where kind is
  user | assistant | developer | system | reasoning | reasoning_raw and n counts earlier
  occurrences of that (kind, text) *in the same representation* — so the k-th copy in each
  representation merges with the k-th in the other (E23: 2 messages, not 4), and a prompt typed
  twice stays two messages (if one copy of a repeated text lacks its second representation,
  the copies pair up in order: max(items, events) rows). Counters live in state (capped at
  `MAX_OCCURRENCES` keys, oldest evicted; a text repeated after eviction merges with its
  first copy). Assistant messages become one row per text block (Codex emits one
  ``agent_message`` per block), reasoning one row per summary / content item; user messages
  one row. ``encrypted_content`` is never stored.
- **Message classes.** user-role text starting with a wrapper in `USER_TEXT_CLASSES`
  (``<environment_context>``, ``# AGENTS.md instructions``, ``<user_instructions>``,
  ``<user_shell_command>``, ``<turn_aborted>``, the compaction-summary preamble …) gets that
  class; ``developer`` / ``system`` roles → ``system_prompt``; other user text →
  ``human_prompt``, or ``subagent_brief`` in a sub-agent thread (the parent wrote it).
  Assistant text → ``assistant_text``; reasoning summaries/content → ``reasoning``;
  ``response_item/agent_message`` (inter-agent) → ``agent_message``.
- **Model calls.** ``event_msg/token_count`` repeats cumulative ``info.total_token_usage``
  (E19): a call is counted only when the total differs from the previous one, using
  ``last_token_usage`` (or the difference of totals when it is missing). uid =
  ``<session>:usage:<in>/<cached>/<out>/<reasoning>/<total>`` of the cumulative snapshot —
  content identity, stable across batches. ``cached_input_tokens`` ⊂ ``input_tokens`` and
  ``reasoning_output_tokens`` ⊂ ``output_tokens`` (E20): input_uncached = input − cached,
  cache_read = cached, output = output, reasoning = reasoning; cache writes are NULL (OpenAI
  reports none). A token_count without totals is keyed by its byte offset. Per-call facts
  (issue 19): a rollout records no cost and no per-call duration, TTFT or thinking time —
  ``task_complete.duration_ms`` / ``time_to_first_token_ms`` (newest rollouts) measure a whole
  turn of possibly several calls — so recorded_cost_usd, duration_ms, duration_basis, ttft_ms
  and thinking_ms stay NULL.
- **Turns.** ``task_started`` / ``turn_context`` with a ``turn_id`` open turn
  ``<session>:turn:<turn_id>``; ``task_complete`` / ``turn_aborted`` close it. Files without
  turn ids: each new human prompt (or sub-agent brief) opens ``<session>:turn:<prompt uid
  suffix>`` — the second representation of the same prompt does not. ``turn_context`` is
  written per model request in 0.5x, so it never opens a turn without an id.
- **Tool calls** (uid ``<session>:<call_id>``): ``function_call`` / ``custom_tool_call`` /
  ``local_shell_call`` pair with ``function_call_output`` / ``custom_tool_call_output`` by
  ``call_id``; ``exec_command_*``, ``patch_apply_*``, ``mcp_tool_call_*``, ``web_search_end``,
  ``collab_agent_spawn_*`` events merge into the same row. Structured exit codes win over
  output text (E26). Rows, file touches, git events and spawns: `codex_calls`; argument and
  output shapes: `codex_tools`.
- **Positions** (issue 11): every MessageRow carries ``record_type`` = ``<type>/<payload.type>``
  (legacy items: ``legacy_item/<type>``) and ``record_origin`` = the item's ``role`` when it has
  one; a tool call's ``output_byte_offset`` / ``output_line`` are those of the first record
  carrying its result (``exec_command_end``, ``function_call_output``, ``mcp_tool_call_end``,
  ``patch_apply_end``). A call's ``token_count`` is written before the items of its response,
  so the results before it are what triggered it.
- **Compactions.** ``compacted`` (with ``message`` = summary) and ``event_msg/context_compacted``
  describe one compaction: uid = ``<session>:compaction:<n>`` with n counted per
  representation like messages; the summary becomes a ``compaction_summary`` message;
  tokens_before = the context size of the last counted call.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    FileTouchRow,
    GitEventRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    Row,
    SessionRow,
    SubagentSpawnRow,
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Parser, Pos, record_type_row, stamp_messages
from agent_history.parsers.codex.calls import ToolCallRows
from agent_history.parsers.codex.format import (
    Usage,
    attachment,
    block_texts,
    history_start,
    parse_usage,
    session_uid_from_path,
    short_sha,
    source_info,
    usage_minus,
    user_text,
)
from agent_history.parsers.common.coerce import as_nonempty_str, as_strict_int
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "codex"

TOP_TYPES: frozenset[str] = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
"""Wrapped rollout record types (``RolloutItem``)."""

RESPONSE_ITEMS: frozenset[str] = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call", "image_generation_call",
    "ghost_snapshot", "compaction", "compaction_summary", "agent_message",
})  # fmt: skip
"""``response_item.payload.type`` values (and legacy unwrapped item types)."""

EVENT_TYPES: frozenset[str] = frozenset({
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "token_count", "task_started", "task_complete", "turn_aborted",
    "context_compacted", "thread_rolled_back", "thread_name_updated", "thread_goal_updated",
    "entered_review_mode", "exited_review_mode", "undo_started", "undo_completed", "exec_command_begin",
    "exec_command_end", "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end",
    "web_search_begin", "web_search_end", "view_image_tool_call", "collab_agent_spawn_begin",
    "collab_agent_spawn_end", "collab_agent_interaction_begin", "collab_agent_interaction_end",
    "collab_waiting_begin", "collab_waiting_end", "collab_close_begin", "collab_close_end", "plan_update",
    "turn_diff", "error", "warning", "stream_error", "background_event", "session_configured",
    "deprecation_notice",
})  # fmt: skip
"""``event_msg.payload.type`` values Codex persists (and a few it may persist)."""

SUMMARY_PREAMBLE = "Another language model started to solve this problem and produced a summary"

USER_TEXT_CLASSES: tuple[tuple[str, str], ...] = (
    ("<environment_context>", classes.CONTEXT_INJECTION),
    ("<user_instructions>", classes.CONTEXT_INJECTION),
    ("# AGENTS.md instructions for", classes.CONTEXT_INJECTION),
    ("<INSTRUCTIONS>", classes.CONTEXT_INJECTION),
    ("<permissions instructions>", classes.SYSTEM_PROMPT),
    ("<developer_instructions>", classes.SYSTEM_PROMPT),
    ("<collaboration_mode>", classes.SYSTEM_PROMPT),
    ("<user_shell_command>", classes.LOCAL_COMMAND_OUTPUT),
    ("<turn_aborted>", classes.INTERRUPT_MARKER),
    ("<subagent_notification>", classes.AGENT_MESSAGE),
    ("<skill>", classes.SKILL_BODY),
    (SUMMARY_PREAMBLE, classes.COMPACTION_SUMMARY),
)
"""User-role text → class by leading wrapper (after leading whitespace); first match wins."""

TURN_OPENERS: frozenset[str] = frozenset({classes.HUMAN_PROMPT, classes.SUBAGENT_BRIEF})
"""Message classes that start a turn in files without turn ids."""

INHERITS_TS: tuple[type[Row], ...] = (
    MessageRow,
    ModelCallRow,
    SubagentSpawnRow,
    CompactionRow,
    FileTouchRow,
    GitEventRow,
)
"""Point-in-time rows that take the last seen timestamp when their record has none (legacy
items: ../shared/corpus/home/.codex/sessions/2025/09/10/, corpus/samples/codex ``*legacy*``)."""

BURST_GAP_MS = 20
"""Fork-time burst: consecutive records at most this far apart (ms) are the copied history."""
MAX_OCCURRENCES = 4000
"""Cap on (kind, text) occurrence counters kept in state; the oldest are evicted."""

ITEM, EVENT = 0, 1
"""The two representations of one message: response item (incl. legacy items), event."""

_WS = re.compile(r"\s+")
_ENV_CWD = re.compile(r"<environment_context>.*?<cwd>([^<\n]+)</cwd>", re.DOTALL)


def _ms(ts: datetime | None) -> int | None:
    return None if ts is None else int(ts.timestamp() * 1000)


def _iso(ts: datetime | None) -> str | None:
    return None if ts is None else ts.isoformat()


def _sha(text: str) -> str:
    return short_sha(text)


class CodexParser(ToolCallRows, Parser):
    """Parser for one Codex rollout file (see the module docstring for the format contract)."""

    AGENT = AGENT
    VERSION = 2
    """2: message record type/origin and tool-result positions (issue 11); records without a
    timestamp date their point-in-time rows by the last one seen."""

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        s = state if isinstance(state, dict) else {}
        self.sid: str | None = as_nonempty_str(s.get("sid"))
        self.meta_seen = bool(s.get("meta"))
        self.is_sub = bool(s.get("sub"))
        self.model: str | None = as_nonempty_str(s.get("model"))
        self.cwd: str | None = as_nonempty_str(s.get("cwd"))
        self.t0: datetime | None = parse_ts(s.get("t0"))
        self.t1: datetime | None = parse_ts(s.get("t1"))
        self.last_ts: datetime | None = parse_ts(s.get("lt"))
        self.record_dated = True
        """Whether the record being fed has its own timestamp (set by `_feed`)."""
        self.first_prompt_done = bool(s.get("fp"))
        tot = s.get("tot")
        self.prev_total: list | None = list(tot) if isinstance(tot, list) else None
        self.ctx_tokens: int | None = as_strict_int(s.get("ctx"))
        turn = s.get("turn")
        self.turn: dict | None = dict(turn) if isinstance(turn, dict) else None
        occ, calls = s.get("occ"), s.get("calls")
        self.occ: dict[str, list[int]] = {
            k: list(v) for k, v in (occ.items() if isinstance(occ, dict) else ()) if isinstance(v, list) and len(v) == 2
        }
        self.calls: dict[str, dict] = {
            k: dict(v) for k, v in (calls.items() if isinstance(calls, dict) else ()) if isinstance(v, dict)
        }
        cmp_ = s.get("cmp")
        self.cmp: list[int] = list(cmp_) if isinstance(cmp_, list) and len(cmp_) == 2 else [0, 0]
        self.ordinal: int = as_strict_int(s.get("ord")) or 0
        self.replay_until: int | None = as_strict_int(s.get("rpu"))
        self.burst = bool(s.get("burst"))
        self.burst_ms: int | None = as_strict_int(s.get("bms"))
        self.seen = as_strict_int(s.get("n")) or 0
        self.header_issue = bool(s.get("hi"))

    # -- contract -------------------------------------------------------------------------

    def state(self) -> dict:
        """Bounded resume state: ids, counters and small scalars (a copy; see the module docstring)."""
        return {
            "sid": self.sid,
            "meta": self.meta_seen,
            "sub": self.is_sub,
            "model": self.model,
            "cwd": self.cwd,
            "t0": _iso(self.t0),
            "t1": _iso(self.t1),
            "lt": _iso(self.last_ts),
            "fp": self.first_prompt_done,
            "tot": self.prev_total,
            "ctx": self.ctx_tokens,
            "turn": dict(self.turn) if self.turn else None,
            "occ": {k: list(v) for k, v in self.occ.items()},
            "calls": {k: dict(v) for k, v in self.calls.items()},
            "cmp": list(self.cmp),
            "ord": self.ordinal,
            "rpu": self.replay_until,
            "burst": self.burst,
            "bms": self.burst_ms,
            "n": self.seen,
            "hi": self.header_issue,
        }

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """One decoded record → rows (RecordTypeRow always; issues instead of exceptions)."""
        rows: list[Row] = []
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "record is not an object")]
        self.record_dated = True
        try:
            self._feed(record, pos, rows)
        except Exception as exc:  # noqa: BLE001 — contract: feed never raises
            rows.append(self._issue("bad_record", pos, f"{type(exc).__name__}: {exc}"))
        if not self.record_dated and self.last_ts is not None:  # see "Timestamps" above
            rows = [
                dataclasses.replace(r, ts=self.last_ts) if isinstance(r, INHERITS_TS) and r.ts is None else r  # type: ignore[attr-defined,call-arg]
                for r in rows
            ]
        return rows

    def flush(self) -> Iterable[Row]:
        """Session time bounds and model, and the open turn's end so far (safe to re-emit)."""
        if self.seen == 0 or self.sid is None:
            return []
        rows: list[Row] = [
            SessionRow(
                agent=AGENT, session_uid=self.sid, agent_id="", started_at=self.t0, ended_at=self.t1, model=self.model
            )
        ]
        if self.turn is not None and not self.turn.get("c"):
            rows.append(self._turn_row(self.turn, parse_ts(self.turn.get("l"))))
        return rows

    # -- dispatch ---------------------------------------------------------------------------

    def _issue(self, kind: str, pos: Pos, detail: str) -> ParseIssueRow:
        return ParseIssueRow(kind=kind, byte_offset=pos.byte_offset, line_number=pos.line_number, detail=detail[:500])

    def _feed(self, record: dict, pos: Pos, rows: list[Row]) -> None:
        form, rtype, subtype, body, known = self._classify(record)
        rows.append(record_type_row(AGENT, body if isinstance(body, dict) else record, rtype, subtype, known))
        if not known:
            rows.append(self._issue("unknown_record_type", pos, f"{rtype}/{subtype}" if subtype else rtype))
            return
        self.seen += 1
        ts = parse_ts(record.get("timestamp"))
        if ts is not None:
            self.t0 = ts if self.t0 is None or ts < self.t0 else self.t0
            self.t1 = ts if self.t1 is None or ts > self.t1 else self.t1
            self.last_ts = ts
        self.record_dated = ts is not None
        if rtype == "legacy_state":
            return
        if form == "wrapped" and not isinstance(body, dict):
            rows.append(self._issue("bad_record", pos, f"{rtype}: payload is not an object"))
            return
        if rtype in ("session_meta", "legacy_header"):
            self._session_meta(body, ts, pos, rows)
            return
        replay = self._in_replay(ts)
        if self.sid is None:
            self._fallback_session(pos, rows)
        if rtype == "turn_context":
            self._turn_context(body, ts, pos, rows, replay)
        elif rtype == "compacted":
            if not replay:
                self._compaction(ITEM, body.get("message"), ts, pos, rows)
        elif rtype == "event_msg":
            self._event(subtype, body, ts, pos, rows, replay)
        elif not replay:  # response_item / legacy_item
            self._item(subtype, body, ts, pos, rows)
        if not replay and self.turn is not None and not self.turn.get("c") and ts is not None:
            self.turn["l"] = _iso(ts)
        role = body.get("role") if isinstance(body, dict) else None
        stamp_messages(
            rows, f"{rtype}/{subtype}" if subtype else rtype, role if isinstance(role, str) else None, pos.byte_offset
        )

    @staticmethod
    def _classify(record: dict) -> tuple[str, str, str, Any, bool]:
        """→ (form, record type, subtype, body, known); body is the payload or legacy item."""
        t = record.get("type")
        if isinstance(t, str) and "payload" in record:
            payload = record["payload"]
            if t in ("response_item", "event_msg"):
                sub = payload.get("type") if isinstance(payload, dict) else None
                allowed = RESPONSE_ITEMS if t == "response_item" else EVENT_TYPES
                sub_s = sub if isinstance(sub, str) else ""
                return "wrapped", t, sub_s, payload, (sub_s in allowed) or not isinstance(payload, dict)
            return "wrapped", t, "", payload, t in TOP_TYPES
        if "record_type" in record:
            rt = record["record_type"]
            return "legacy", "legacy_state", str(rt), None, rt == "state"
        if isinstance(t, str):
            return "legacy", "legacy_item", t, record, t in RESPONSE_ITEMS
        if t is None and isinstance(record.get("id"), str) and "timestamp" in record and "role" not in record:
            return "legacy", "legacy_header", "", record, True
        return "unknown", str(t) if t is not None else "untyped", "", None, False

    # -- session, replay, turns -------------------------------------------------------------

    def _fallback_session(self, pos: Pos, rows: list[Row]) -> None:
        self.sid = session_uid_from_path(self.ctx.path)
        rows.append(
            SessionRow(
                agent=AGENT, session_uid=self.sid, agent_id="", byte_offset=pos.byte_offset, line_number=pos.line_number
            )
        )
        if not self.header_issue:
            self.header_issue = True
            rows.append(
                self._issue("record_before_header", pos, "record before session_meta; session id from file name")
            )

    def _session_meta(self, meta: dict, ts: datetime | None, pos: Pos, rows: list[Row]) -> None:
        mid = as_nonempty_str(meta.get("id"))
        if self.meta_seen:
            replay = self._in_replay(ts)
            if mid is not None and mid != self.sid and self.replay_until is None:
                self.burst, self.burst_ms = True, _ms(ts)  # the parent's meta, copied by a fork
            elif not replay and mid == self.sid:
                self._meta_update(meta, rows)
            return
        self.meta_seen = True
        self.ordinal = 0
        if self.sid is None or mid is not None:
            self.sid = mid or session_uid_from_path(self.ctx.path)
        is_sub, parent, stype = source_info(meta)
        forked = as_nonempty_str(meta.get("forked_from_id"))
        self.is_sub = is_sub
        self.replay_until = history_start(meta)
        if self.replay_until is None and forked is not None:
            self.burst, self.burst_ms = True, _ms(ts)
        git = meta.get("git")
        self.cwd = as_nonempty_str(meta.get("cwd")) or self.cwd
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=self.sid,
                agent_id="",
                is_subagent=is_sub,
                parent_session_uid=parent or forked,
                forked_from_uid=forked,
                subagent_type=stype,
                cwd=self.cwd,
                git_branch=as_nonempty_str(git.get("branch")) if isinstance(git, dict) else None,
                cli_version=as_nonempty_str(meta.get("cli_version")),
                model=as_nonempty_str(meta.get("model")),
                started_at=parse_ts(meta.get("timestamp")) or ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )

    def _meta_update(self, meta: dict, rows: list[Row]) -> None:
        """A later ``session_meta`` of the same thread (a resumed session): newer version fields."""
        git = meta.get("git")
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=self.sid or "",
                agent_id="",
                git_branch=as_nonempty_str(git.get("branch")) if isinstance(git, dict) else None,
                cli_version=as_nonempty_str(meta.get("cli_version")),
            )
        )

    def _in_replay(self, ts: datetime | None) -> bool:
        """Advance the record ordinal and the fork burst; True if this record is copied history."""
        ordinal = self.ordinal
        self.ordinal += 1
        if self.replay_until is not None:
            return ordinal < self.replay_until
        if self.burst:
            ms = _ms(ts)
            if ms is None:
                return True
            if self.burst_ms is not None and 0 <= ms - self.burst_ms <= BURST_GAP_MS:
                self.burst_ms = ms
                return True
            self.burst, self.burst_ms = False, None
        return False

    def _turn_row(self, turn: dict, ended: datetime | None) -> TurnRow:
        return TurnRow(
            agent=AGENT,
            turn_uid=turn["u"],
            session_uid=self.sid or "",
            agent_id="",
            model=self.model,
            ended_at=ended,
        )

    def _open_turn(self, uid: str, explicit: bool, ts: datetime | None, pos: Pos, rows: list[Row]) -> None:
        if self.turn is not None and self.turn.get("u") == uid:
            return
        self._close_turn(None, rows)
        self.turn = {"u": uid, "x": explicit, "p": None, "c": False, "l": _iso(ts)}
        rows.append(
            TurnRow(
                agent=AGENT,
                turn_uid=uid,
                session_uid=self.sid or "",
                agent_id="",
                model=self.model,
                started_at=ts,
                ended_at=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )

    def _close_turn(self, ts: datetime | None, rows: list[Row]) -> None:
        turn = self.turn
        if turn is None or turn.get("c"):
            return
        turn["c"] = True
        rows.append(self._turn_row(turn, ts or parse_ts(turn.get("l"))))

    def _prompt_turn(self, muid: str, ts: datetime | None, pos: Pos, rows: list[Row]) -> None:
        """A human prompt / brief arrived: attach it to the open explicit turn or open a turn."""
        turn = self.turn
        if turn is not None and turn.get("p") == muid:
            return
        if turn is not None and not turn.get("c") and turn.get("x"):
            if turn.get("p") is None:
                turn["p"] = muid
            return
        self._open_turn(f"{self.sid}:turn:{muid[len(self.sid or '') + 1 :]}", False, ts, pos, rows)
        if self.turn is not None:
            self.turn["p"] = muid

    @property
    def _turn_uid(self) -> str | None:
        return self.turn.get("u") if self.turn else None

    def _turn_context(self, p: dict, ts: datetime | None, pos: Pos, rows: list[Row], replay: bool) -> None:
        model, cwd = as_nonempty_str(p.get("model")), as_nonempty_str(p.get("cwd"))
        changed = model is not None and model != self.model
        if model is not None:
            self.model = model
        first_cwd = cwd is not None and self.cwd is None
        self.cwd = cwd or self.cwd
        if replay:
            return
        if changed or first_cwd:
            rows.append(SessionRow(agent=AGENT, session_uid=self.sid or "", agent_id="", model=model, cwd=cwd))
        turn_id = as_nonempty_str(p.get("turn_id"))
        if turn_id is not None:
            self._open_turn(f"{self.sid}:turn:{turn_id}", True, ts, pos, rows)
        if changed and self.turn is not None and not self.turn.get("c"):
            rows.append(self._turn_row(self.turn, ts))

    # -- messages ---------------------------------------------------------------------------

    def _occurrence(self, key: str, rep: int) -> int:
        counts = self.occ.pop(key, None)
        if not isinstance(counts, list) or len(counts) != 2:
            counts = [0, 0]
        n = as_strict_int(counts[rep]) or 0
        counts[rep] = n + 1
        self.occ[key] = counts
        while len(self.occ) > MAX_OCCURRENCES:
            self.occ.pop(next(iter(self.occ)))
        return n

    def _message(
        self,
        rows: list[Row],
        rep: int,
        kind: str,
        role: str,
        cls: str,
        text: str,
        ts: datetime | None,
        pos: Pos,
        attachments: list[dict] | None = None,
    ) -> str:
        h = _sha(_WS.sub("", text))
        n = self._occurrence(f"{kind}:{h}", rep)
        uid = f"{self.sid}:{kind}:{h}:{n}"
        if cls in TURN_OPENERS:
            self._prompt_turn(uid, ts, pos, rows)
        rows.append(
            MessageRow(
                agent=AGENT,
                message_uid=uid,
                session_uid=self.sid or "",
                agent_id="",
                turn_uid=self._turn_uid,
                role=role,
                message_class=cls,
                text=text,
                ts=ts,
                model=self.model if role == "assistant" else None,
                attachments=attachments or None,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )
        if cls == classes.HUMAN_PROMPT and not self.first_prompt_done and text.strip():
            self.first_prompt_done = True
            rows.append(SessionRow(agent=AGENT, session_uid=self.sid or "", agent_id="", first_prompt=text))
        return uid

    def _user_class(self, text: str) -> str:
        head = text.lstrip()
        for prefix, cls in USER_TEXT_CLASSES:
            if head.startswith(prefix):
                return cls
        return classes.SUBAGENT_BRIEF if self.is_sub else classes.HUMAN_PROMPT

    def _user_message(self, rep: int, text: str | None, atts: list[dict], ts, pos, rows) -> None:
        if text is None and not atts:
            return
        text = text or ""
        if not text.strip() and not atts:
            return
        cls = self._user_class(text)
        if cls == classes.CONTEXT_INJECTION and self.cwd is None:
            m = _ENV_CWD.search(text)
            if m:  # legacy files name the cwd only in <environment_context>
                self.cwd = m.group(1).strip()
                rows.append(SessionRow(agent=AGENT, session_uid=self.sid or "", agent_id="", cwd=self.cwd))
        self._message(rows, rep, "user", "user", cls, text, ts, pos, atts)

    def _item_message(self, p: dict, ts, pos, rows) -> None:
        role = p.get("role")
        if role == "assistant":
            for text in block_texts(p.get("content")):
                if text.strip():
                    self._message(rows, ITEM, "assistant", "assistant", classes.ASSISTANT_TEXT, text, ts, pos)
            return
        text, atts = user_text(p.get("content"))
        if role == "user":
            self._user_message(ITEM, text, atts, ts, pos, rows)
        elif role in ("developer", "system"):
            if text and text.strip():
                self._message(rows, ITEM, role, role, classes.SYSTEM_PROMPT, text, ts, pos)
        else:
            rows.append(self._issue("bad_record", pos, f"message with role {role!r}"))

    def _reasoning(self, p: dict, ts, pos, rows) -> None:
        for field, kind in (("summary", "reasoning"), ("content", "reasoning_raw")):
            items = p.get(field)
            for item in items if isinstance(items, list) else ():
                text = item.get("text") if isinstance(item, dict) else item if isinstance(item, str) else None
                if isinstance(text, str) and text.strip():
                    self._message(rows, ITEM, kind, "assistant", classes.REASONING, text, ts, pos)

    # -- compactions ------------------------------------------------------------------------

    def _compaction(self, rep: int, summary: Any, ts, pos, rows) -> None:
        n = self.cmp[rep] if isinstance(self.cmp[rep], int) else 0
        self.cmp[rep] = n + 1
        cuid = f"{self.sid}:compaction:{n}"
        muid = None
        if isinstance(summary, str) and summary.strip():
            muid = f"{cuid}:summary"
            rows.append(
                MessageRow(
                    agent=AGENT,
                    message_uid=muid,
                    session_uid=self.sid or "",
                    agent_id="",
                    turn_uid=self._turn_uid,
                    role="user",
                    message_class=classes.COMPACTION_SUMMARY,
                    text=summary,
                    ts=ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        rows.append(
            CompactionRow(
                agent=AGENT,
                compaction_uid=cuid,
                session_uid=self.sid or "",
                agent_id="",
                tokens_before=self.ctx_tokens,
                summary_message_uid=muid,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )

    # -- model calls ------------------------------------------------------------------------

    def _token_count(self, p: dict, ts, pos, rows, replay: bool) -> None:
        info = p.get("info")
        if info is None:
            return  # rate-limit snapshot only
        if not isinstance(info, dict):
            rows.append(self._issue("bad_record", pos, "token_count.info is not an object"))
            return
        total, last = parse_usage(info.get("total_token_usage")), parse_usage(info.get("last_token_usage"))
        if total is None and last is None:
            rows.append(self._issue("bad_record", pos, "token_count.info without total/last_token_usage"))
            return
        if total is not None:
            sig = list(total)
            if sig == self.prev_total:
                return  # a repeated cumulative snapshot (E19)
            prev = Usage(*self.prev_total) if isinstance(self.prev_total, list) and len(self.prev_total) == 5 else None
            self.prev_total = sig
            if last is None:
                last = usage_minus(total, prev)
            uid = f"{self.sid}:usage:" + "/".join("-" if x is None else str(x) for x in sig)
        else:
            uid = f"{self.sid}:usage@{pos.byte_offset}"
        model = as_nonempty_str(info.get("model"))
        if last.total is not None:
            self.ctx_tokens = last.total
        elif last.input is not None:
            self.ctx_tokens = last.input + (last.output or 0)
        if replay:
            return
        uncached = None
        if last.input is not None:
            uncached = max(last.input - (last.cached or 0), 0)
        rows.append(
            ModelCallRow(
                agent=AGENT,
                call_uid=uid,
                session_uid=self.sid or "",
                agent_id="",
                turn_uid=self._turn_uid,
                model=model or self.model,
                input_uncached=uncached,
                cache_read=last.cached,
                output=last.output,
                reasoning=last.reasoning,
                is_api_error=False,
                is_complete=True,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
            )
        )

    # -- response items ---------------------------------------------------------------------

    def _item(self, subtype: str, p: dict, ts, pos, rows) -> None:
        if subtype == "message":
            self._item_message(p, ts, pos, rows)
        elif subtype == "reasoning":
            self._reasoning(p, ts, pos, rows)
        elif subtype == "agent_message":
            content = p.get("content")
            text = content if isinstance(content, str) else "\n".join(block_texts(content))
            if text.strip():
                self._message(rows, ITEM, "agent", "user", classes.AGENT_MESSAGE, text, ts, pos)
        elif subtype in ("function_call", "custom_tool_call", "local_shell_call"):
            self._tool_call(subtype, p, ts, pos, rows)
        elif subtype in ("function_call_output", "custom_tool_call_output"):
            self._tool_output(p, ts, pos, rows)
        elif subtype == "web_search_call":
            self._web_search(p, ts, pos, rows)
        elif subtype == "image_generation_call":
            self._image_generation(p, ts, pos, rows)
        # ghost_snapshot, compaction, compaction_summary: nothing to index

    # -- events -----------------------------------------------------------------------------

    def _event(self, subtype: str, p: dict, ts, pos, rows, replay: bool) -> None:
        if subtype == "token_count":
            self._token_count(p, ts, pos, rows, replay)
            return
        if replay:
            return
        if subtype == "user_message":
            msg = p.get("message")
            images, local = p.get("images"), p.get("local_images")
            atts = [a for a in map(attachment, images if isinstance(images, list) else ()) if a]
            for path in local if isinstance(local, list) else ():
                if isinstance(path, str):
                    atts.append({"type": "image", "path": path})
            self._user_message(EVENT, msg if isinstance(msg, str) else None, atts, ts, pos, rows)
        elif subtype == "agent_message":
            msg = p.get("message")
            if isinstance(msg, str) and msg.strip():
                self._message(rows, EVENT, "assistant", "assistant", classes.ASSISTANT_TEXT, msg, ts, pos)
        elif subtype in ("agent_reasoning", "agent_reasoning_raw_content"):
            text = p.get("text")
            if isinstance(text, str) and text.strip():
                kind = "reasoning" if subtype == "agent_reasoning" else "reasoning_raw"
                self._message(rows, EVENT, kind, "assistant", classes.REASONING, text, ts, pos)
        elif subtype in ("task_started", "task_complete", "turn_aborted"):
            turn_id = as_nonempty_str(p.get("turn_id"))
            if subtype == "task_started":
                if turn_id is not None:
                    self._open_turn(f"{self.sid}:turn:{turn_id}", True, ts, pos, rows)
                else:
                    self._close_turn(ts, rows)
            else:
                self._close_turn(ts, rows)
        elif subtype == "context_compacted":
            self._compaction(EVENT, None, ts, pos, rows)
        elif subtype == "thread_name_updated":
            name = as_nonempty_str(p.get("thread_name")) or as_nonempty_str(p.get("name"))
            if name:
                rows.append(SessionRow(agent=AGENT, session_uid=self.sid or "", agent_id="", custom_title=name))
        else:
            self._tool_event(subtype, p, ts, pos, rows)


PARSER = CodexParser
