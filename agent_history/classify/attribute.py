"""Attribution: each model call takes the trigger of the event physically before it.

Pure: no I/O. The SQL twin is the attribution step of ``ah.refresh_efficiency`` in
``sql/35_efficiency.sql``.

A thread's events are ordered by position in its source files — (source order, byte offset)
— never by timestamp: Codex and pi results tie at millisecond resolution and Claude
notification records can move backwards in time. Events at one position keep the order
result, message, call (a record never carries both a call and an event in the corpus).
Events whose trigger is None (assistant text, system prompts, hook output…) do not change the
agent's state and are skipped. A call right after another call is ``model``; the first call
of a thread, with nothing before it, is ``user``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

KIND_ORDER: dict[str, int] = {"result": 0, "message": 1, "call": 2}
"""Order of events sharing one position."""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing in a thread's stream.

    ``kind``: result | message | call; ``position``: (source order, byte offset);
    ``trigger``: what a result or message is (None: not a state change; ignored for calls);
    ``uid``: the model call's uid for calls (anything for the others).
    """

    kind: str
    position: tuple[int, int]
    trigger: str | None = None
    uid: str = ""


def attribute(events: Iterable[Event]) -> dict[str, str]:
    """Model call uid → trigger for one thread's events (given in any order)."""
    ordered = sorted(events, key=lambda e: (e.position, KIND_ORDER[e.kind], e.uid))
    out: dict[str, str] = {}
    previous: str | None = None  # "call" or the last event's trigger
    for event in ordered:
        if event.kind == "call":
            out[event.uid] = "user" if previous is None else "model" if previous == "call" else previous
            previous = "call"
        elif event.trigger is not None:
            previous = event.trigger
    return out
