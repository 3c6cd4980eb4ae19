"""Typed rows the parsers emit and the loader writes: one frozen dataclass per `ah` table.

Every row is keyed by **content identity**: the natural key is derived from the transcript
(a response id, a tool-use id, a record uuid), never from a surrogate id, so reading the same
record again — from a resumed session's copy, an archive, or a re-parse — merges into the same
row. Each column declares its merge policy (`model.policy.Merge`) in its field metadata; the
pure fold (`model.merge`) and the SQL merge (`db.tables.merges`) both read it from here.

Conventions:
- ``agent`` is the harness (`claude`, `codex`, `pi`); keys are unique per agent.
- Sessions are ``(agent, session_uid, agent_id)``; ``agent_id`` is '' for a main thread and the
  sub-agent id (e.g. Claude's ``agent-<id>.jsonl`` id) for a sub-agent transcript.
- Event rows name their session by ``session_uid`` + ``agent_id``; the loader resolves it to
  ``session.id`` on merge.
- ``byte_offset`` / ``line_number`` (0-based bytes, 1-based lines) locate the record the row came
  from in its source file; the loader adds ``source_id``.
- NULL means unknown, never zero: token counts, costs, durations and exit codes stay ``None``
  when the transcript does not say.
- Timestamps are timezone-aware ``datetime`` in UTC.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from agent_history.model.policy import Merge


def col(policy: Merge, default: Any = None) -> Any:
    """A dataclass field carrying its merge policy."""
    return field(default=default, metadata={"merge": policy})


def key() -> Any:
    """A natural-key column (required, never updated)."""
    return field(metadata={"merge": Merge.KEY})


class Row:
    """Base of all row types: table name, natural key and per-column policies."""

    TABLE: ClassVar[str]
    PER_SOURCE: ClassVar[bool] = False
    """True for rows whose key is only unique within one source file (the loader adds source_id)."""

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """Column names in declaration order."""
        return _columns(cls)

    @classmethod
    def policies(cls) -> dict[str, Merge]:
        """Column name → merge policy."""
        return _policies(cls)

    @classmethod
    def key_columns(cls) -> tuple[str, ...]:
        """The natural key's columns."""
        return _key_columns(cls)

    def natural_key(self) -> tuple:
        """This row's natural key values."""
        return _key_getter(type(self))(self)

    def values(self) -> tuple:
        """All column values in `columns()` order."""
        return _value_getter(type(self))(self)


# Per-class caches: these run for every row the loader writes.
@functools.cache
def _columns(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


@functools.cache
def _policies(cls: type) -> dict[str, Merge]:
    return {f.name: f.metadata["merge"] for f in dataclasses.fields(cls)}


@functools.cache
def _key_columns(cls: type) -> tuple[str, ...]:
    return tuple(n for n, p in _policies(cls).items() if p is Merge.KEY)


def _getter(names: tuple[str, ...]):
    get = operator.attrgetter(*names)
    return get if len(names) > 1 else (lambda row: (get(row),))


@functools.cache
def _key_getter(cls: type):
    return _getter(_key_columns(cls))


@functools.cache
def _value_getter(cls: type):
    return _getter(_columns(cls))


@dataclass(frozen=True, slots=True)
class SessionRow(Row):
    """One conversation thread: a main session or a sub-agent transcript."""

    TABLE: ClassVar[str] = "session"
    agent: str = key()
    session_uid: str = key()
    agent_id: str = key()
    is_subagent: bool | None = col(Merge.OR)
    parent_session_uid: str | None = col(Merge.LATEST)
    """The session that spawned this one (sub-agent, fork)."""
    parent_agent_id: str | None = col(Merge.LATEST)
    spawn_uid: str | None = col(Merge.LATEST)
    """The `subagent_spawn.spawn_uid` (usually the tool-call id) that started this session."""
    forked_from_uid: str | None = col(Merge.LATEST)
    subagent_type: str | None = col(Merge.LATEST)
    cwd: str | None = col(Merge.KEEP_FIRST)
    git_branch: str | None = col(Merge.LATEST)
    cli_version: str | None = col(Merge.LATEST)
    model: str | None = col(Merge.LATEST)
    custom_title: str | None = col(Merge.LATEST)
    ai_title: str | None = col(Merge.LATEST)
    first_prompt: str | None = col(Merge.KEEP_FIRST)
    started_at: datetime | None = col(Merge.MIN)
    ended_at: datetime | None = col(Merge.MAX)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)
    source_type: str = col(Merge.LATEST, "session")
    """`session` (a transcript) or `memory` (a Markdown memory file indexed as one document)."""


@dataclass(frozen=True, slots=True)
class TurnRow(Row):
    """One turn: from a prompt (or turn-start event) until the agent is idle again."""

    TABLE: ClassVar[str] = "turn"
    agent: str = key()
    turn_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    model: str | None = col(Merge.LATEST)
    started_at: datetime | None = col(Merge.MIN)
    ended_at: datetime | None = col(Merge.MAX)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)


@dataclass(frozen=True, slots=True)
class MessageRow(Row):
    """One piece of text in the conversation, classified (see `model.classes`)."""

    TABLE: ClassVar[str] = "message"
    agent: str = key()
    message_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    turn_uid: str | None = col(Merge.KEEP_FIRST)
    parent_uid: str | None = col(Merge.KEEP_FIRST)
    role: str | None = col(Merge.KEEP_FIRST)
    """user | assistant | system | tool | developer."""
    message_class: str | None = col(Merge.KEEP_FIRST)
    text: str | None = col(Merge.LATEST)
    ts: datetime | None = col(Merge.MIN)
    model: str | None = col(Merge.LATEST)
    on_active_branch: bool | None = col(Merge.LATEST)
    """False for a pi entry on an abandoned branch; None where the format has no tree."""
    attachments: list[dict] | None = col(Merge.LATEST)
    """Metadata of non-text parts (e.g. images: media type and size in bytes), never their data."""
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)
    record_type: str | None = col(Merge.KEEP_FIRST)
    """The raw type of the record this came from, as the harness wrote it: Claude ``type``,
    Codex ``type/payload.type`` (legacy items: the item type), pi entry ``type``."""
    record_origin: str | None = col(Merge.KEEP_FIRST)
    """Who the harness says wrote the record: Claude ``origin.kind``, Codex message ``role``,
    pi ``message.role`` (``customType`` of a ``custom_message``); None when not written."""


@dataclass(frozen=True, slots=True)
class ModelCallRow(Row):
    """One billable (or failed) model call, keyed by response id; token buckets are disjoint.

    ``input_uncached + cache_read + cache_write_5m + cache_write_1h + output`` is the call's
    total; ``reasoning`` is a subset of ``output`` noted separately. All counts are tokens.
    """

    TABLE: ClassVar[str] = "model_call"
    agent: str = key()
    call_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    turn_uid: str | None = col(Merge.KEEP_FIRST)
    request_id: str | None = col(Merge.LATEST)
    model: str | None = col(Merge.LATEST)
    stop_reason: str | None = col(Merge.LATEST)
    input_uncached: int | None = col(Merge.MAX)
    cache_read: int | None = col(Merge.MAX)
    cache_write_5m: int | None = col(Merge.MAX)
    cache_write_1h: int | None = col(Merge.MAX)
    output: int | None = col(Merge.MAX)
    reasoning: int | None = col(Merge.MAX)
    is_api_error: bool | None = col(Merge.OR)
    """A `<synthetic>` / API error notice: not billable."""
    is_complete: bool | None = col(Merge.OR)
    """A final stop reason (or equivalent) was seen."""
    ts: datetime | None = col(Merge.MIN)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)
    recorded_cost_usd: float | None = col(Merge.LATEST)
    """The cost the harness itself recorded for this call (USD; pi, OpenCode), NULL when none."""
    duration_ms: int | None = col(Merge.LATEST)
    """Wall time of the call in ms, NULL when the transcript carries none."""
    duration_basis: str | None = col(Merge.LATEST)
    """What `duration_ms` measures: `recorded` (the harness's own field), `request_to_response`
    (request timestamp → response timestamp), … — named by the parser that fills it."""
    ttft_ms: int | None = col(Merge.LATEST)
    """Time to first token in ms, where recorded."""
    thinking_ms: int | None = col(Merge.LATEST)
    """Time spent thinking/reasoning in ms, where recorded."""


@dataclass(frozen=True, slots=True)
class ToolCallRow(Row):
    """One tool call paired with its result (either may arrive first, the result may be missing).

    ``outcome``: ok | error | rejected | interrupted | no_result; NULL while no result was seen.
    ``error_class`` follows docs/design.md §6 (first match wins); ``duration_ms`` in milliseconds.
    """

    TABLE: ClassVar[str] = "tool_call"
    agent: str = key()
    tool_call_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    turn_uid: str | None = col(Merge.KEEP_FIRST)
    message_uid: str | None = col(Merge.KEEP_FIRST)
    call_uid: str | None = col(Merge.KEEP_FIRST)
    name: str | None = col(Merge.LATEST)
    input: str | None = col(Merge.LATEST)
    """The call's input as JSON text (or raw text)."""
    output: str | None = col(Merge.LATEST)
    is_error: bool | None = col(Merge.OR)
    exit_code: int | None = col(Merge.LATEST)
    outcome: str | None = col(Merge.LATEST)
    error_class: str | None = col(Merge.LATEST)
    error_excerpt: str | None = col(Merge.LATEST)
    duration_ms: int | None = col(Merge.LATEST)
    started_at: datetime | None = col(Merge.MIN)
    ended_at: datetime | None = col(Merge.MAX)
    byte_offset: int | None = col(Merge.MIN)
    line_number: int | None = col(Merge.MIN)
    output_byte_offset: int | None = col(Merge.MIN)
    """Where the record carrying the *result* starts (bytes; the first one when several carry
    it, e.g. Codex ``exec_command_end`` + ``function_call_output``); None while no result was seen."""
    output_line: int | None = col(Merge.MIN)
    """That record's line number (1-based)."""


@dataclass(frozen=True, slots=True)
class SubagentSpawnRow(Row):
    """A sub-agent started by a session; linked to the child session by a post-pass."""

    TABLE: ClassVar[str] = "subagent_spawn"
    agent: str = key()
    spawn_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    tool_call_uid: str | None = col(Merge.KEEP_FIRST)
    child_session_uid: str | None = col(Merge.LATEST)
    child_agent_id: str | None = col(Merge.LATEST)
    subagent_type: str | None = col(Merge.LATEST)
    description: str | None = col(Merge.LATEST)
    brief: str | None = col(Merge.LATEST)
    """The prompt the parent agent wrote for the sub-agent."""
    ts: datetime | None = col(Merge.MIN)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)


@dataclass(frozen=True, slots=True)
class CompactionRow(Row):
    """A context compaction (automatic or manual), with token counts before/after when known."""

    TABLE: ClassVar[str] = "compaction"
    agent: str = key()
    compaction_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    trigger: str | None = col(Merge.LATEST)
    """auto | manual | None."""
    tokens_before: int | None = col(Merge.MAX)
    tokens_after: int | None = col(Merge.MAX)
    summary_message_uid: str | None = col(Merge.LATEST)
    ts: datetime | None = col(Merge.MIN)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)


@dataclass(frozen=True, slots=True)
class FileTouchRow(Row):
    """A file read/created/edited/deleted/moved by a tool call. Key: tool call + op + path
    (``touch_uid``), which ``ah.file_touch`` holds as its 16-byte digest ``touch_key``
    (`db.tables.merges.KEY_DIGESTS`): the three parts are columns of their own."""

    TABLE: ClassVar[str] = "file_touch"
    agent: str = key()
    touch_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    tool_call_uid: str | None = col(Merge.KEEP_FIRST)
    path: str = col(Merge.KEEP_FIRST, "")
    op: str = col(Merge.KEEP_FIRST, "")
    """read | create | edit | delete | move (`FILE_OPS`)."""
    ts: datetime | None = col(Merge.MIN)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)


FILE_OPS = ("read", "create", "edit", "delete", "move")
"""The operations a `FileTouchRow` records (``file_touch.op``), in the order help texts list them."""


@dataclass(frozen=True, slots=True)
class GitEventRow(Row):
    """A commit or push seen in tool output. Key: (tool call, op, sha/branch) so sightings merge."""

    TABLE: ClassVar[str] = "git_event"
    agent: str = key()
    git_event_uid: str = key()
    session_uid: str = col(Merge.KEEP_FIRST, "")
    agent_id: str = col(Merge.KEEP_FIRST, "")
    tool_call_uid: str | None = col(Merge.KEEP_FIRST)
    op: str = col(Merge.KEEP_FIRST, "")
    """commit | push."""
    sha: str | None = col(Merge.LATEST)
    """Commit sha (abbreviated as printed, 7–40 hex) — for a push, the new tip."""
    old_sha: str | None = col(Merge.LATEST)
    branch: str | None = col(Merge.LATEST)
    remote_ref: str | None = col(Merge.LATEST)
    subject: str | None = col(Merge.LATEST)
    ts: datetime | None = col(Merge.MIN)
    byte_offset: int | None = col(Merge.KEEP_FIRST)
    line_number: int | None = col(Merge.KEEP_FIRST)


@dataclass(frozen=True, slots=True)
class ParseIssueRow(Row):
    """Something in a source file that could not be read as expected; the rest is still read.

    Kinds from the parsers: blank_line, invalid_json, invalid_utf8, non_object, line_too_long,
    record_before_header, unknown_record_type, recovered_object, fused_line, bad_record; from the
    JSON decoders: lone_surrogate, too_deep, non_finite_number; from the value limits
    (`model.limits`): key_too_long, value_out_of_range, bad_value (and lone_surrogate); from the
    driver: parser_error (a record the parser failed on). The loader adds source_rewritten,
    parser_upgraded, load_error, postpass_error (a session the post-passes could not roll up),
    uid_conflict (a record reusing another session's uid with other content; the stored row kept).
    """

    TABLE: ClassVar[str] = "parse_issue"
    PER_SOURCE: ClassVar[bool] = True
    kind: str = key()
    byte_offset: int = key()
    line_number: int | None = col(Merge.KEEP_FIRST)
    detail: str | None = col(Merge.LATEST)


@dataclass(frozen=True, slots=True)
class RecordTypeRow(Row):
    """One observation of a (record type, subtype) with its sorted top-level key set."""

    TABLE: ClassVar[str] = "record_type_seen"
    PER_SOURCE: ClassVar[bool] = True
    agent: str = key()
    record_type: str = key()
    subtype: str = key()
    key_set: str = key()
    """Comma-joined sorted top-level keys."""
    known: bool = col(Merge.OR, True)
    count: int = col(Merge.SUM, 1)


ROW_TYPES: tuple[type[Row], ...] = (
    SessionRow,
    TurnRow,
    MessageRow,
    ModelCallRow,
    ToolCallRow,
    SubagentSpawnRow,
    CompactionRow,
    FileTouchRow,
    GitEventRow,
    ParseIssueRow,
    RecordTypeRow,
)
"""All row types, in the order the loader merges them (sessions first)."""


def _slot_init(cls: type[Row]) -> Any:
    """An ``__init__`` for the frozen, slotted dataclass `cls` with the generated one's parameters
    and defaults that stores each field through its slot's descriptor: the generated one calls
    ``object.__setattr__`` per field (frozen), twice the cost, and the loader builds a row for
    every record it parses (≈ 180,000 in a ×10 corpus load). Instances stay frozen (assignment
    still raises ``FrozenInstanceError``); `dataclasses.replace`, pickling and equality are
    unchanged."""
    params, body, names = [], [], {}
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            names[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        names[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        body.append(f"    _set_{f.name}(self, {f.name})")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body), names)  # noqa: S102 - built from field names
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _install_slot_inits() -> None:
    """Give every row type of `ROW_TYPES` its `_slot_init` (once, at import)."""
    for cls in ROW_TYPES:
        cls.__init__ = _slot_init(cls)  # type: ignore[method-assign]


_install_slot_inits()
