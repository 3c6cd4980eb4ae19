"""The journal's export view as data, and validation of its rows (pure: no I/O).

The journal exports one row per analysed conversation through the view
:data:`VIEW` with the columns :data:`COLUMNS` (issue 15). Every row of a batch is validated
before anything is written: one bad row refuses the whole batch (:class:`BatchRefused`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

#: The view a journal exports (issue 15).
VIEW = "ah_export_session_summary"

#: Its columns, in this order (issue 15). All must exist; extra columns are ignored.
COLUMNS: tuple[str, ...] = (
    "journal_conversation_id",
    "agent",
    "session_uid",
    "agent_id",
    "namespace",
    "revision_id",
    "analysed_at",
    "model",
    "title",
    "objective",
    "narrative",
    "outcomes",
    "unfinished",
    "classification",
    "project",
    "topics_json",
    "app_instance_id",
)

#: Columns that must be non-empty in every row (the conversation key, the session natural key,
#: the timestamp that orders revisions, the instance the row came from).
REQUIRED: tuple[str, ...] = ("journal_conversation_id", "agent", "session_uid", "analysed_at", "app_instance_id")

#: Columns read into typed fields of :class:`Summary` (the rest of :data:`COLUMNS` is text).
TYPED: tuple[str, ...] = (*REQUIRED, "agent_id", "topics_json")

#: Text columns copied as they are (NULL stays NULL: unknown), in :data:`COLUMNS` order.
TEXT_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if c not in TYPED)


class BatchRefused(Exception):
    """A row of the batch is invalid; nothing of the batch may be written.

    ``reason`` is a short machine-readable word (``bad_timestamp``, ``missing_value``,
    ``bad_topics``, ``duplicate_conversation``); ``str(exc)`` is one line for people.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Summary:
    """One validated journal row. ``analysed_at`` is timezone-aware; ``agent_id`` is '' for a
    main thread; ``topics`` keeps the journal's order."""

    conversation_id: str
    agent: str
    session_uid: str
    agent_id: str
    analysed_at: datetime
    app_instance_id: str
    text: dict[str, str | None]
    topics: tuple[str, ...]


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO-8601 timestamp (or a datetime) with a timezone, or None when it has none or does
    not parse. SQLite gives text; PostgreSQL gives a datetime for timestamptz columns."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else None
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return ts if ts.tzinfo is not None else None


def _blank(value: Any) -> bool:
    """NULL, or a string of nothing but white space."""
    return value is None or (isinstance(value, str) and not value.strip())


def _topics(value: Any, conversation_id: str) -> tuple[str, ...]:
    """topics_json: NULL/empty (no topics) or a JSON array of strings; blanks are dropped."""
    if _blank(value):
        return ()
    parsed = value
    if isinstance(value, (str, bytes)):
        try:
            parsed = json.loads(value)
        except ValueError:
            raise BatchRefused("bad_topics", f"conversation {conversation_id}: topics_json is not JSON") from None
    if not isinstance(parsed, list) or not all(isinstance(t, str) for t in parsed):
        raise BatchRefused("bad_topics", f"conversation {conversation_id}: topics_json is not a list of strings")
    return tuple(t.strip() for t in parsed if t.strip())


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def validate(rows: Iterable[Sequence[Any]], names: Sequence[str]) -> list[Summary]:
    """Validate raw rows (tuples in the order of ``names``) into Summaries.

    Raises BatchRefused on the first invalid row: a required value missing, an ``analysed_at``
    without a timezone or unparsable, bad ``topics_json``, or a conversation id given twice.
    """
    index = {n: i for i, n in enumerate(names)}
    out: list[Summary] = []
    seen: set[str] = set()
    for raw in rows:

        def get(col: str, raw: Sequence[Any] = raw) -> Any:
            return raw[index[col]]

        conversation = _text(get("journal_conversation_id"))
        for col in REQUIRED:
            if _blank(get(col)):
                raise BatchRefused("missing_value", f"conversation {conversation or '?'}: {col} is empty")
        assert conversation is not None
        if conversation in seen:
            raise BatchRefused("duplicate_conversation", f"conversation {conversation} appears twice in the view")
        seen.add(conversation)
        analysed = parse_timestamp(get("analysed_at"))
        if analysed is None:
            raise BatchRefused(
                "bad_timestamp",
                f"conversation {conversation}: analysed_at {get('analysed_at')!r} is not an ISO-8601 "
                "timestamp with a timezone",
            )
        out.append(
            Summary(
                conversation_id=conversation,
                agent=str(get("agent")),
                session_uid=str(get("session_uid")),
                agent_id=_text(get("agent_id")) or "",
                analysed_at=analysed.astimezone(UTC),
                app_instance_id=str(get("app_instance_id")),
                text={c: _text(get(c)) for c in TEXT_COLUMNS},
                topics=_topics(get("topics_json"), conversation),
            )
        )
    return out
