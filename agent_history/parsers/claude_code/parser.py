"""Claude Code transcripts (``~/.claude/projects/<project>/…jsonl``) → rows.

Files: ``<project>/<session uuid>.jsonl`` (a main thread), sub-agent transcripts
``<project>/<session uuid>/subagents/agent-<id>.jsonl`` (newer; workflow agents one level
deeper under ``subagents/workflows/<run>/``) or ``<project>/agent-<id>.jsonl`` beside the
sessions (older). Every line is one record ``{type, …}``.

Record types (`RECORD_TYPES`; anything else → RecordTypeRow known=False + an
``unknown_record_type`` issue). Each record gets one RecordTypeRow whose subtype is the
``system`` subtype, the ``attachment`` type, the ``progress`` data type or the
``queue-operation`` operation.

- ``user`` / ``assistant``: conversation records ``{uuid, parentUuid, sessionId, timestamp,
  cwd, gitBranch, version, isSidechain, agentId?, isMeta?, message}``; ``message.content`` is a
  string or a list of blocks (text, image, document, tool_use, tool_result, thinking…).
  A known record whose ``message``/``content`` has the wrong shape → ``bad_record`` issue.
- ``system``: notices; ``compact_boundary`` (``compactMetadata {trigger, preTokens,
  postTokens?}``) → CompactionRow keyed by its uuid; ``local_command`` → command /
  command-output messages; hook notices (subtype-less with ``toolUseID``/hook text) →
  ``hook_output``; ``turn_duration`` ends the turn; the rest (``api_error``,
  ``informational``, ``stop_hook_summary``, ``microcompact_boundary``, ``away_summary``…)
  are counted only.
- ``attachment``: context injected mid-turn; ``queued_command`` → ``queued_prompt`` (what a
  person typed while the agent worked), hook results → ``hook_output``, memory/plan files →
  ``context_injection``, invoked skills → ``skill_body``; other attachment types are counted.
- ``summary`` ``{summary, leafUuid}``: a title for the conversation ending at ``leafUuid`` —
  usually another session's (old versions wrote them at the top of the next session's file).
  Emitted as MessageRow ``summary:<leafUuid>`` (class ``compaction_summary``, role system,
  ``parent_uid = leafUuid``) in the session of the file it is in, so the loader can resolve
  the leaf (message_uid = leaf uuid) to its session and set that session's ``ai_title``. When
  the leaf is one of the last `MAX_SEEN_UUIDS` records of this file, the session's ``ai_title``
  is set directly. A summary without ``leafUuid`` (hand-written drift) is keyed by its own
  ``uuid``, else by a hash of its text.
- ``custom-title`` → ``custom_title``; ``agent-name`` → ``custom_title``; ``ai-title`` →
  ``ai_title``.
- Counted only (no rows): ``file-history-snapshot``, ``file-history-delta``,
  ``queue-operation`` (its ``enqueue`` copy of a prompt is not a message: the prompt arrives
  again as a user record or a ``queued_command`` attachment — E09), ``progress`` (hook and
  sub-agent progress; sub-agent messages inside are counted from the sub-agent's own file),
  ``last-prompt``, ``permission-mode``, ``mode``, ``pr-link``, ``worktree-state``, …

Identity and keys:
- Session ``(session_uid, agent_id)``: ``session_uid`` = the record's ``sessionId`` (a
  ``#…`` suffix is dropped), else the last one seen in the file, else the file name. In a
  sub-agent transcript ``session_uid`` is the parent session (the ``<uuid>/subagents/``
  directory of the path, else ``sessionId``) and ``agent_id`` the file's ``agent-<id>`` (else
  the record's ``agentId``); ``is_subagent`` true, ``parent_session_uid`` = the parent,
  ``parent_agent_id`` ''. A sidechain record with ``agentId`` in a main file belongs to that
  sub-agent too. The sub-agent transcript does not name the parent's ``Task`` tool-use id;
  the parent's ``Task``/``Agent`` result does (``toolUseResult.agentId``), so the parent file
  emits the child's SessionRow with ``spawn_uid``, ``parent_agent_id`` and ``subagent_type``,
  and the SubagentSpawnRow's ``child_agent_id``. In the child file ``subagent_type`` comes
  from ``attributionAgent`` when present, else from the ``agent-<id>.meta.json`` sidecar the
  caller passes as ``ctx.sidecar`` (``agentType``; field case E04).
- Message uid = record ``uuid`` for the block at index 0 of ``content``, ``<uuid>:<index>``
  for later blocks (one row per text-bearing block); records without a uuid use
  ``<session_uid>/<agent_id>@<byte offset>``. A resumed session copies earlier records with
  the same uuid (and the new ``sessionId``): the copy merges into the first row, whose
  ``session_uid`` is kept (keep-first), so it is a no-op.
- Model call uid = ``message.id`` (else ``requestId``, else the record key). One response is
  written as several lines (one content block each) that repeat the usage, and streaming
  partials carry growing ``output_tokens`` (E01, E02): every line emits the call and the
  buckets merge by max, which equals the final line (checked on every corpus response).
  ``is_complete`` once a line has a non-null ``stop_reason`` (most 1.0.x lines never do).
  Buckets: ``input_tokens`` → input_uncached, ``cache_read_input_tokens`` → cache_read,
  ``cache_creation.ephemeral_5m/1h_input_tokens`` → cache_write_5m/1h (E11; if the split does
  not add up to ``cache_creation_input_tokens`` the 5m bucket takes the difference), else
  ``cache_creation_input_tokens`` → cache_write_5m with 1h NULL; ``output_tokens`` → output;
  reasoning NULL (not reported). All buckets zero on a line with no stop reason → all NULL
  (a provider-adapting proxy can send zeros it never measured; a later line of the same
  response with real counts wins by max). Per-call facts: top-level ``costUSD`` (older
  versions) → ``recorded_cost_usd``; Claude Code records no per-call duration, TTFT or
  thinking time (``durationMs`` appears only on hook attachments, ``turn_duration`` turns and
  Task results, none of which is one call), so those stay NULL. A ``<synthetic>`` model or ``isApiErrorMessage`` → is_api_error,
  no buckets, no model (E10). ``toolUseResult.totalTokens``/``usage`` of a Task is the child's
  usage, never added (E06).
- Turn uid = the uuid of the user record that opens it: a ``human_prompt``, a
  ``command_expansion``, a ``subagent_brief``, an ``agent_message`` or an async sub-agent's
  ``subagent_report`` notification. Queued prompts, tool results, meta and compaction records
  do not open turns. Assistant lines and ``turn_duration`` extend the turn's end.
- Messages (classes: `claude_code_text`): user text blocks by `classify_user_text`; assistant
  ``text`` → ``assistant_text``, ``thinking`` → ``reasoning``; tool results are not messages
  (ToolCallRow.output) except a sub-agent's answer (``subagent_report``). Images/documents
  become ``attachments`` metadata ``{type, media_type, bytes}`` on the record's first message
  (E14), never text. ``first_prompt`` = the first ``human_prompt`` (sub-agents have none).
- Tool calls, spawns, file touches and git events: `claude_code_tools`.
- Positions (issue 11): every MessageRow carries the record's raw ``type`` as ``record_type``
  and its ``origin.kind`` as ``record_origin``; a tool call's ``output_byte_offset`` /
  ``output_line`` are those of the ``user`` record holding its ``tool_result`` (server-side tool
  results inside an assistant message get none: they are part of the model call).

State (JSON, bounded): last ``sessionId`` seen, the open turn per session, unanswered tool calls
(`claude_code_tools.MAX_PENDING`), recent ``compact_boundary`` uuids and the last
`MAX_SEEN_UUIDS` record uuids (for summary leaves) — as their 8-byte digests (`uuid_digest`),
base64-packed under ``seen_digests``; a state saved before (``seen``: the uuids as JSON strings)
is read too. ``flush()`` emits nothing: every row is emitted by ``feed``, so batch boundaries
cannot change the result.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable
from typing import Any

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
from agent_history.parsers.claude_code.text import (
    blocks_of,
    classify_by_tags,
    classify_user_text,
    media_attachment,
)
from agent_history.parsers.claude_code.tools import (
    PendingCalls,
    RecordCtx,
    interrupted_rows,
    server_result_rows,
    tool_result_rows,
    tool_use_rows,
)
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str
from agent_history.parsers.common.errors import strip_ansi
from agent_history.parsers.common.timeutil import parse_ts

AGENT = "claude"

RECORD_TYPES: frozenset[str] = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "summary",
        "custom-title",
        "ai-title",
        "agent-name",
        "agent-setting",
        "last-prompt",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "progress",
        "permission-mode",
        "mode",
        "pr-link",
        "worktree-state",
        "bridge-session",
        "atis-latch",
        "fork-context-ref",
        "frame-link",
        "relocated",
        "saved_hook_context",
        "started",
        "result",
    }
)
"""Every record type Claude Code writes that this parser knows (``started``/``result`` are
workflow journal lines)."""

TURN_OPENERS: frozenset[str] = frozenset(
    {
        classes.HUMAN_PROMPT,
        classes.COMMAND_EXPANSION,
        classes.SUBAGENT_BRIEF,
        classes.AGENT_MESSAGE,
        classes.SUBAGENT_REPORT,
    }
)
"""Classes of a user record's first text that open a turn."""

ATTACHMENT_TEXT: dict[str, tuple[str, str]] = {
    "queued_command": (classes.QUEUED_PROMPT, "user"),
    "hook_success": (classes.HOOK_OUTPUT, "system"),
    "hook_non_blocking_error": (classes.HOOK_OUTPUT, "system"),
    "hook_blocking_error": (classes.HOOK_OUTPUT, "system"),
    "hook_additional_context": (classes.HOOK_OUTPUT, "system"),
    "hook_system_message": (classes.HOOK_OUTPUT, "system"),
    "hook_stopped_continuation": (classes.HOOK_OUTPUT, "system"),
    "nested_memory": (classes.CONTEXT_INJECTION, "system"),
    "plan_file_reference": (classes.CONTEXT_INJECTION, "system"),
    "invoked_skills": (classes.SKILL_BODY, "system"),
    "critical_system_reminder": (classes.SYSTEM_REMINDER, "system"),
    "total_tokens_reminder": (classes.SYSTEM_REMINDER, "system"),
}
"""Attachment types that carry text → (message class, role). Other attachments are counted only."""

MAX_SEEN_UUIDS = 256
"""Recent record uuids remembered to resolve a ``summary`` leaf in the same file (a summary
written into its own session names the latest records)."""
SEEN_DIGEST_BYTES = 8
"""Bytes kept of a remembered uuid's SHA-256 (`uuid_digest`): the state holds 256 × 8 bytes
instead of 256 36-character strings (docs/performance.md, decision 15). A leaf not among the
file's last `MAX_SEEN_UUIDS` records matches one of their digests with probability
≤ 256 / 2⁶⁴ ≈ 1.4 × 10⁻¹⁷ per summary; then the file's session also takes that summary's title
(``ai_title``, latest wins) — no row is dropped: the summary message is stored either way, and
the loader still titles the leaf's own session from it."""
MAX_BOUNDARIES = 16
"""Recent ``compact_boundary`` uuids remembered to link the summary that follows."""
MAX_TURNS = 64
"""Open turns remembered (one per session key)."""
FIRST_PROMPT_CHARS = 2000
"""``first_prompt`` is cut to this many characters."""

_SUBAGENT_PATH = re.compile(r"(?:^|/)(?P<parent>[^/]+)/subagents/(?:.*/)?agent-(?P<agent>[^/]+)\.jsonl$")
_AGENT_FILE = re.compile(r"(?:^|/)agent-(?P<agent>[^/]+)\.jsonl$")
_HOOK_NOTICE = re.compile(r"\b(?:Pre|Post)ToolUse\b|\bhook", re.IGNORECASE)


def _subtype(record: dict, rtype: str) -> str | None:
    if rtype == "system":
        return as_nonempty_str(record.get("subtype"))
    if rtype == "attachment":
        return as_nonempty_str(as_dict(record.get("attachment")).get("type"))
    if rtype == "progress":
        return as_nonempty_str(as_dict(record.get("data")).get("type"))
    if rtype == "queue-operation":
        return as_nonempty_str(record.get("operation"))
    return None


def _usage_buckets(usage: dict) -> dict[str, int | None]:
    """Claude ``usage`` → disjoint token buckets (rules in the module docstring)."""
    total_write = as_int(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    w5, w1 = total_write, None
    if isinstance(split, dict):
        s5, s1 = as_int(split.get("ephemeral_5m_input_tokens")), as_int(split.get("ephemeral_1h_input_tokens"))
        if s5 is not None or s1 is not None:
            w5, w1 = s5 or 0, s1 or 0
            if total_write is not None and w5 + w1 != total_write and total_write >= w1:
                w5 = total_write - w1
    return {
        "input_uncached": as_int(usage.get("input_tokens")),
        "cache_read": as_int(usage.get("cache_read_input_tokens")),
        "cache_write_5m": w5,
        "cache_write_1h": w1,
        "output": as_int(usage.get("output_tokens")),
    }


def uuid_digest(uid: str) -> bytes:
    """The `SEEN_DIGEST_BYTES` first bytes of the SHA-256 of `uid` (UTF-8) — what migration
    0029_touch_keys computes in SQL for a state saved before (``substr(sha256(…), 1, 8)``)."""
    return hashlib.sha256(uid.encode("utf-8", "surrogatepass")).digest()[:SEEN_DIGEST_BYTES]


def _seen_from_state(state: dict) -> list[bytes]:
    """The remembered uuids' digests of a saved state, oldest first: ``seen_digests`` (base64 of
    the digests end to end), else the ``seen`` uuids of a state saved before digests; a value
    of the wrong shape is no memory (``[]``), never an error."""
    packed = state.get("seen_digests")
    if isinstance(packed, str):
        try:
            raw = base64.b64decode(packed)
        except (binascii.Error, ValueError):
            return []
        n = SEEN_DIGEST_BYTES
        return [raw[i : i + n] for i in range(0, len(raw) - len(raw) % n, n)]
    return [uuid_digest(u) for u in as_list(state.get("seen")) if isinstance(u, str)]


def _recorded_cost(record: dict) -> float | None:
    """The top-level ``costUSD`` some Claude Code versions wrote on assistant lines (the
    ccusage fixtures in ../shared/corpus/samples/claude-code), in USD; None when absent."""
    cost = record.get("costUSD")
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost != cost or cost < 0:
        return None
    return float(cost)


class ClaudeCodeParser(Parser):
    """Parser for Claude Code JSONL transcripts (contract in the module docstring)."""

    AGENT = AGENT
    VERSION = 3
    """2: message record type/origin and tool-result positions (issue 11)."""

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        path = (ctx.path or "").replace("\\", "/")
        m = _SUBAGENT_PATH.search(path)
        a = _AGENT_FILE.search(path)
        self._path_parent: str | None = m.group("parent") if m else None
        self._path_agent: str | None = m.group("agent") if m else (a.group("agent") if a else None)
        stem = path.rsplit("/", 1)[-1]
        stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
        self._default_sid = self._path_parent or (None if self._path_agent else stem) or ""
        self._sidecar_type: str | None = as_nonempty_str((ctx.sidecar or {}).get("agentType"))
        st = state if isinstance(state, dict) else {}
        self._sid: str | None = as_nonempty_str(st.get("sid"))
        turns = as_dict(st.get("turns"))
        self._turns: dict[str, str] = {k: v for k, v in turns.items() if isinstance(v, str)}
        self._pending = PendingCalls(st.get("pending"))
        self._bounds: list[str] = [b for b in as_list(st.get("bounds")) if isinstance(b, str)]
        self._seen: dict[bytes, None] = dict.fromkeys(_seen_from_state(st))

    # -- contract ---------------------------------------------------------------------------

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows for one record; never raises (a failure becomes a ``bad_record`` issue)."""
        if not isinstance(record, dict):
            return [ParseIssueRow(kind="non_object", byte_offset=pos.byte_offset, line_number=pos.line_number)]
        raw_type = record.get("type")
        rtype = raw_type if isinstance(raw_type, str) else ("" if raw_type is None else str(raw_type))
        known = rtype in RECORD_TYPES
        rows: list[Row] = [record_type_row(AGENT, record, rtype, _subtype(record, rtype), known)]
        if not known:
            rows.append(
                ParseIssueRow(
                    kind="unknown_record_type",
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    detail=f"type={rtype!r} keys={','.join(sorted(str(k) for k in record))[:300]}",
                )
            )
            return rows
        try:
            self._dispatch(record, rtype, pos, rows)
            stamp_messages(rows, rtype, as_nonempty_str(as_dict(record.get("origin")).get("kind")), pos.byte_offset)
        except Exception as exc:  # noqa: BLE001 — contract: feed never raises
            rows.append(
                ParseIssueRow(
                    kind="bad_record",
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    detail=f"{type(exc).__name__}: {exc}"[:500],
                )
            )
        return rows

    def flush(self) -> Iterable[Row]:
        """Nothing is held back: every row was emitted by `feed`."""
        return ()

    def state(self) -> dict:
        """Last session id, open turns, unanswered calls, recent boundaries and record uuids."""
        return {
            "sid": self._sid,
            "turns": dict(self._turns),
            "pending": self._pending.dump(),
            "bounds": list(self._bounds),
            "seen_digests": base64.b64encode(b"".join(self._seen)).decode("ascii"),
        }

    # -- identity ---------------------------------------------------------------------------

    def _identity(self, record: dict) -> tuple[str, str]:
        sid = as_nonempty_str(record.get("sessionId")) or as_nonempty_str(record.get("session_id"))
        if sid is not None and "#" in sid:
            sid = sid.split("#", 1)[0] or None
        if sid is not None:
            self._sid = sid
        if self._path_agent is not None:
            return self._path_parent or sid or self._sid or self._default_sid, self._path_agent
        session_uid = sid or self._sid or self._default_sid
        agent_id = as_nonempty_str(record.get("agentId")) if record.get("isSidechain") is True else None
        return session_uid, agent_id or ""

    def _record_uid(self, record: dict, session_uid: str, agent_id: str, pos: Pos) -> str:
        return as_nonempty_str(record.get("uuid")) or f"{session_uid}/{agent_id}@{pos.byte_offset}"

    def _ctx(self, record: dict, pos: Pos, call_uid: str | None = None) -> RecordCtx:
        session_uid, agent_id = self._identity(record)
        uid = self._record_uid(record, session_uid, agent_id, pos)
        if "uuid" in record and isinstance(record.get("uuid"), str):
            self._remember(uid)
        return RecordCtx(
            session_uid=session_uid,
            agent_id=agent_id,
            turn_uid=self._turns.get(f"{session_uid}|{agent_id}"),
            ts=parse_ts(record.get("timestamp")),
            pos=pos,
            record_uid=uid,
            call_uid=call_uid,
        )

    def _remember(self, uid: str) -> None:
        digest = uuid_digest(uid)
        self._seen.pop(digest, None)
        self._seen[digest] = None
        while len(self._seen) > MAX_SEEN_UUIDS:
            del self._seen[next(iter(self._seen))]

    def _session(self, rc: RecordCtx, record: dict | None = None, **fields: Any) -> SessionRow:
        rec = record or {}
        sub = bool(rc.agent_id)
        if sub and fields.get("subagent_type") is None and rc.agent_id == self._path_agent and self._sidecar_type:
            fields["subagent_type"] = self._sidecar_type
        forked = as_dict(rec.get("forkedFrom"))
        return SessionRow(
            agent=AGENT,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            is_subagent=sub,
            parent_session_uid=rc.session_uid if sub else None,
            parent_agent_id="" if sub else None,
            forked_from_uid=as_nonempty_str(forked.get("sessionId")),
            cwd=as_nonempty_str(rec.get("cwd")),
            git_branch=as_nonempty_str(rec.get("gitBranch")),
            cli_version=as_nonempty_str(rec.get("version")),
            started_at=rc.ts,
            ended_at=rc.ts,
            byte_offset=rc.pos.byte_offset,
            line_number=rc.pos.line_number,
            **fields,
        )

    def _open_turn(self, rc: RecordCtx) -> RecordCtx:
        key = rc.session_key
        self._turns.pop(key, None)
        self._turns[key] = rc.record_uid
        while len(self._turns) > MAX_TURNS:
            del self._turns[next(iter(self._turns))]
        return RecordCtx(rc.session_uid, rc.agent_id, rc.record_uid, rc.ts, rc.pos, rc.record_uid, rc.call_uid)

    def _turn_row(self, rc: RecordCtx, model: str | None = None, start: bool = False) -> TurnRow:
        return TurnRow(
            agent=AGENT,
            turn_uid=rc.turn_uid or rc.record_uid,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            model=model,
            started_at=rc.ts if start else None,
            ended_at=rc.ts,
            byte_offset=rc.pos.byte_offset if start else None,
            line_number=rc.pos.line_number if start else None,
        )

    def _message(self, rc: RecordCtx, uid: str, role: str, cls: str, text: str | None, **fields: Any) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            turn_uid=rc.turn_uid,
            role=role,
            message_class=cls,
            text=text,
            ts=rc.ts,
            byte_offset=rc.pos.byte_offset,
            line_number=rc.pos.line_number,
            **fields,
        )

    @staticmethod
    def _bad(pos: Pos, detail: str) -> ParseIssueRow:
        return ParseIssueRow(kind="bad_record", byte_offset=pos.byte_offset, line_number=pos.line_number, detail=detail)

    # -- dispatch ---------------------------------------------------------------------------

    def _dispatch(self, record: dict, rtype: str, pos: Pos, rows: list[Row]) -> None:
        if rtype == "user":
            self._user(record, pos, rows)
        elif rtype == "assistant":
            self._assistant(record, pos, rows)
        elif rtype == "system":
            self._system(record, pos, rows)
        elif rtype == "attachment":
            self._attachment(record, pos, rows)
        elif rtype == "summary":
            self._summary(record, pos, rows)
        elif rtype in ("custom-title", "agent-name", "ai-title"):
            self._title(record, rtype, pos, rows)
        elif "sessionId" in record:
            self._identity(record)  # bookkeeping records still tell the session id

    def _user(self, record: dict, pos: Pos, rows: list[Row]) -> None:
        msg = record.get("message")
        blocks = blocks_of(msg.get("content")) if isinstance(msg, dict) else None
        if blocks is None:
            rows.append(self._bad(pos, "user record without message.content (string or list)"))
            return
        rc = self._ctx(record, pos)
        rows.append(self._session(rc, record))
        results = [(i, b) for i, b in blocks if b.get("type") == "tool_result"]
        tur = record.get("toolUseResult") if len(results) == 1 else None
        for i, block in results:
            rows.extend(tool_result_rows(block, i, rc, tur, self._pending))
        texts = [(i, b["text"]) for i, b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
        texts = [(i, t) for i, t in texts if t.strip()]
        media = [a for _, b in blocks if (a := media_attachment(b)) is not None]
        if not texts and not (media and not results):
            return
        in_subagent = bool(rc.agent_id) or record.get("isSidechain") is True
        origin = as_nonempty_str(as_dict(record.get("origin")).get("kind"))
        flags = {
            "is_meta": record.get("isMeta") is True,
            "is_compact_summary": record.get("isCompactSummary") is True,
            "beside_tool_result": bool(results),
            "origin_kind": origin,
            "in_subagent": in_subagent,
            "is_root": record.get("parentUuid") is None,
        }
        classified = [(i, t, classify_user_text(t, **flags)) for i, t in texts]
        if not classified:  # an image pasted without text is still what the person sent
            first_index = next(i for i, b in blocks if media_attachment(b) is not None)
            cls = classes.SUBAGENT_BRIEF if in_subagent and flags["is_root"] else classes.HUMAN_PROMPT
            classified = [(first_index, None, cls)]
        first_cls = classified[0][2]
        if first_cls in TURN_OPENERS and not results:
            rc = self._open_turn(rc)
            rows.append(self._turn_row(rc, start=True))
        for n, (i, text, cls) in enumerate(classified):
            uid = rc.record_uid if i == 0 else f"{rc.record_uid}:{i}"
            row = self._message(
                rc,
                uid,
                "user",
                cls,
                text,
                parent_uid=as_nonempty_str(record.get("parentUuid")),
                attachments=(media or None) if n == 0 else None,
            )
            rows.append(row)
            if cls == classes.HUMAN_PROMPT and text:
                rows.append(self._session(rc, record, first_prompt=text[:FIRST_PROMPT_CHARS]))
            elif cls == classes.INTERRUPT_MARKER:
                rows.extend(interrupted_rows(rc, self._pending))
                if rc.turn_uid is not None:
                    rows.append(self._turn_row(rc))
            elif cls == classes.COMPACTION_SUMMARY and flags["is_compact_summary"]:
                rows.append(self._compaction_link(record, rc, uid))

    def _compaction_link(self, record: dict, rc: RecordCtx, message_uid: str) -> CompactionRow:
        parent = as_nonempty_str(record.get("parentUuid")) or as_nonempty_str(record.get("logicalParentUuid"))
        boundary = parent if parent in self._bounds else rc.record_uid
        return CompactionRow(
            agent=AGENT,
            compaction_uid=boundary,
            session_uid=rc.session_uid,
            agent_id=rc.agent_id,
            summary_message_uid=message_uid,
            ts=rc.ts,
            byte_offset=rc.pos.byte_offset,
            line_number=rc.pos.line_number,
        )

    def _assistant(self, record: dict, pos: Pos, rows: list[Row]) -> None:
        msg = record.get("message")
        blocks = blocks_of(msg.get("content")) if isinstance(msg, dict) else None
        if blocks is None:
            rows.append(self._bad(pos, "assistant record without message.content (string or list)"))
            return
        assert isinstance(msg, dict)
        model = as_nonempty_str(msg.get("model"))
        synthetic = model == "<synthetic>" or record.get("isApiErrorMessage") is True
        if synthetic:
            model = None
        probe = self._identity(record)
        call_uid = (
            as_nonempty_str(msg.get("id"))
            or as_nonempty_str(record.get("requestId"))
            or self._record_uid(record, probe[0], probe[1], pos)
        )
        rc = self._ctx(record, pos, call_uid)
        sub_type = as_nonempty_str(record.get("attributionAgent")) if rc.agent_id else None
        rows.append(self._session(rc, record, model=model, subagent_type=sub_type))
        if rc.turn_uid is not None:
            rows.append(self._turn_row(rc, model=model))
        stop = as_nonempty_str(msg.get("stop_reason"))
        usage = as_dict(msg.get("usage"))
        buckets = _usage_buckets(usage) if usage and not synthetic else {}
        if stop is None and buckets and not any(buckets.values()):
            # all zero and no stop reason: a provider-adapting proxy's unmeasured zeros → unknown
            buckets = dict.fromkeys(buckets)
        rows.append(
            ModelCallRow(
                agent=AGENT,
                call_uid=call_uid,
                session_uid=rc.session_uid,
                agent_id=rc.agent_id,
                turn_uid=rc.turn_uid,
                request_id=as_nonempty_str(record.get("requestId")),
                model=model,
                stop_reason=stop,
                is_api_error=synthetic,
                is_complete=stop is not None,
                ts=rc.ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                recorded_cost_usd=_recorded_cost(record),
                **buckets,
            )
        )
        parent = as_nonempty_str(record.get("parentUuid"))
        for i, block in blocks:
            kind = block.get("type")
            uid = rc.record_uid if i == 0 else f"{rc.record_uid}:{i}"
            text_key = "text" if kind == "text" else "thinking" if kind == "thinking" else None
            text = block.get(text_key) if text_key else None
            if isinstance(text, str) and text.strip():
                cls = classes.ASSISTANT_TEXT if kind == "text" else classes.REASONING
                rows.append(self._message(rc, uid, "assistant", cls, text, model=model, parent_uid=parent))
            elif kind in ("tool_use", "server_tool_use"):
                rows.extend(tool_use_rows(block, i, rc, self._pending))
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                rows.extend(server_result_rows(block, rc))

    def _system(self, record: dict, pos: Pos, rows: list[Row]) -> None:
        rc = self._ctx(record, pos)
        rows.append(self._session(rc, record))
        subtype = as_nonempty_str(record.get("subtype"))
        content = record.get("content")
        text = content if isinstance(content, str) and content.strip() else None
        if subtype == "compact_boundary":
            meta = as_dict(record.get("compactMetadata"))
            self._bounds.append(rc.record_uid)
            del self._bounds[:-MAX_BOUNDARIES]
            trigger = as_nonempty_str(meta.get("trigger"))
            rows.append(
                CompactionRow(
                    agent=AGENT,
                    compaction_uid=rc.record_uid,
                    session_uid=rc.session_uid,
                    agent_id=rc.agent_id,
                    trigger=trigger if trigger in ("auto", "manual") else None,
                    tokens_before=as_int(meta.get("preTokens")),
                    tokens_after=as_int(meta.get("postTokens")),
                    ts=rc.ts,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        elif subtype == "turn_duration":
            if rc.turn_uid is not None:
                rows.append(self._turn_row(rc))
        elif subtype == "local_command" and text:
            cls = classify_by_tags(text) or classes.LOCAL_COMMAND_OUTPUT
            rows.append(self._message(rc, rc.record_uid, "system", cls, text))
        elif subtype is None and text and (record.get("toolUseID") is not None or _HOOK_NOTICE.search(text)):
            rows.append(self._message(rc, rc.record_uid, "system", classes.HOOK_OUTPUT, strip_ansi(text)))

    def _attachment(self, record: dict, pos: Pos, rows: list[Row]) -> None:
        att = as_dict(record.get("attachment"))
        kind = as_nonempty_str(att.get("type"))
        rc = self._ctx(record, pos)
        rows.append(self._session(rc, record))
        if kind not in ATTACHMENT_TEXT:
            return
        cls, role = ATTACHMENT_TEXT[kind]
        text = _attachment_text(kind, att)
        if not text or not text.strip():
            return
        if kind == "queued_command":
            tagged = classify_by_tags(text)
            if tagged is not None:
                cls, role = tagged, "system"
            elif as_nonempty_str(att.get("commandMode")) not in (None, "prompt"):
                cls, role = classes.CONTEXT_INJECTION, "system"
        rows.append(self._message(rc, rc.record_uid, role, cls, strip_ansi(text) if role == "system" else text))

    def _summary(self, record: dict, pos: Pos, rows: list[Row]) -> None:
        text = as_nonempty_str(record.get("summary")) or as_nonempty_str(as_dict(record.get("message")).get("content"))
        if text is None:
            rows.append(self._bad(pos, "summary record without summary text"))
            return
        leaf = as_nonempty_str(record.get("leafUuid"))
        rc = self._ctx(record, pos)
        key = (
            leaf
            or as_nonempty_str(record.get("uuid"))
            or hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
        )
        same_file = leaf is not None and uuid_digest(leaf) in self._seen
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=rc.session_uid,
                agent_id=rc.agent_id,
                is_subagent=bool(rc.agent_id),
                ai_title=text if same_file else None,
            )
        )
        rows.append(self._message(rc, f"summary:{key}", "system", classes.COMPACTION_SUMMARY, text, parent_uid=leaf))

    def _title(self, record: dict, rtype: str, pos: Pos, rows: list[Row]) -> None:
        field, column = {
            "custom-title": ("customTitle", "custom_title"),
            "agent-name": ("agentName", "custom_title"),
            "ai-title": ("aiTitle", "ai_title"),
        }[rtype]
        title = as_nonempty_str(record.get(field))
        if title is None:
            rows.append(self._bad(pos, f"{rtype} record without {field}"))
            return
        rc = self._ctx(record, pos)
        rows.append(
            SessionRow(
                agent=AGENT,
                session_uid=rc.session_uid,
                agent_id=rc.agent_id,
                is_subagent=bool(rc.agent_id),
                **{column: title},
            )
        )


def _attachment_text(kind: str, att: dict) -> str | None:
    """The text an attachment of a text-bearing type injects (see `ATTACHMENT_TEXT`)."""
    if kind == "queued_command":
        prompt = att.get("prompt")
        return prompt if isinstance(prompt, str) else None
    if kind == "hook_blocking_error":
        return as_nonempty_str(as_dict(att.get("blockingError")).get("blockingError"))
    if kind == "nested_memory":
        return as_nonempty_str(as_dict(att.get("content")).get("content"))
    if kind == "plan_file_reference":
        return as_nonempty_str(att.get("planContent"))
    if kind == "invoked_skills":
        return "\n\n".join(
            s for s in (as_nonempty_str(as_dict(x).get("content")) for x in as_list(att.get("skills"))) if s
        )
    content = att.get("content")
    if isinstance(content, list):
        return "\n".join(c for c in content if isinstance(c, str))
    parts = [
        s
        for s in (
            as_nonempty_str(content),
            as_nonempty_str(att.get("stdout")),
            as_nonempty_str(att.get("stderr")),
            as_nonempty_str(att.get("text")),
        )
        if s
    ]
    return "\n".join(parts) or None


PARSER = ClaudeCodeParser
