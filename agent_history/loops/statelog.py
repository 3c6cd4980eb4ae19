"""The loop state log (docs/design.md §11): one JSON object per line, appended by a loop's root.

Name: beside the loop's closeout, ``codex/state-<YYYY-MM-DD>-loop<N>.jsonl`` for the closeout
``codex/closeout-<YYYY-MM-DD>-loop<N>.md`` (`state_log_path`). Line shape::

    {"ts": "2026-11-02T14:40:00Z", "event": "landed", "task": "task-2"}
    {"ts": "2026-11-02T14:41:00Z", "event": "parked", "task": "task-5"}
    {"ts": "2026-11-02T14:42:00Z", "event": "accepted", "lane": "docs"}
    {"ts": "2026-11-02T15:00:00Z", "event": "joined", "loop": "widgets loop3"}

``ts`` is ISO 8601 with a zone; ``event`` is one of `EVENTS`; ``landed``/``parked`` name a
``task``, ``accepted`` a ``lane``, ``joined`` (a relaunched root joining its loop) a ``loop``. A
line that is not such an object raises `StateLogError` (the collector records it and reads the
rest). Counting (`count_tasks`): per task, its last ``landed``/``parked`` line decides.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime

EVENTS: dict[str, str | None] = {"landed": "task", "parked": "task", "accepted": "lane", "joined": "loop"}
"""Event → the key it must name."""

STATE_LOG_NAME = re.compile(r"^state-(?P<date>\d{4}-\d{2}-\d{2})-loop(?P<n>\d+)\.jsonl$")
"""A state log's file name (in a ``codex/`` directory)."""

_CLOSEOUT_NAME = re.compile(r"closeout-(?P<date>\d{4}-\d{2}-\d{2})-loop(?P<n>\d+)\.md$")


class StateLogError(ValueError):
    """A state-log line that is not a valid event; the message is one line."""


@dataclass(frozen=True)
class StateLine:
    """One state-log event."""

    ts: datetime
    event: str
    task: str | None = None
    lane: str | None = None
    loop: str | None = None


def state_log_path(closeout_path: str) -> str | None:
    """The state log beside a closeout path (same directory), or None for a path that is not a
    closeout's."""
    m = _CLOSEOUT_NAME.search(closeout_path)
    if not m:
        return None
    return closeout_path[: m.start()] + f"state-{m['date']}-loop{m['n']}.jsonl"


def parse_line(text: str) -> StateLine:
    """One line → StateLine. Raises StateLogError."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StateLogError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise StateLogError("not a JSON object")
    event = data.get("event")
    if event not in EVENTS:
        raise StateLogError(f"event {event!r} is not one of {', '.join(EVENTS)}")
    try:
        ts = datetime.fromisoformat(str(data.get("ts")).replace("Z", "+00:00"))
    except ValueError as exc:
        raise StateLogError(f"ts {data.get('ts')!r} is not an ISO 8601 time") from exc
    if ts.tzinfo is None:
        raise StateLogError(f"ts {data.get('ts')!r} has no time zone")
    key = EVENTS[event]
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise StateLogError(f"a {event} line names no {key}")
    return StateLine(ts=ts, event=event, **{key: value.strip()})


def count_tasks(lines: list[StateLine]) -> tuple[int | None, int | None]:
    """(landed, parked) over `lines` in order: each task counted once, by its last landed/parked
    line; (None, None) when no line is a landed/parked one."""
    last: dict[str, str] = {}
    for line in lines:
        if line.event in ("landed", "parked") and line.task:
            last[line.task] = line.event
    if not last:
        return None, None
    values = list(last.values())
    return values.count("landed"), values.count("parked")
