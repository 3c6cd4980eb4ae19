"""The status line (`agent-history statusline`): Claude Code's status-line JSON in, one line out.
Pure: the payload is parsed and the line rendered here; `read.statusline` fetches the figures.

Claude Code runs the configured command at each update with a JSON object on stdin
(https://docs.claude.com/en/docs/claude-code/statusline): ``session_id``, ``transcript_path``,
``cwd``, ``model`` {``id``, ``display_name``}, ``cost`` {``total_cost_usd``, …}, … Only
``session_id`` is required here; the rest is optional and type-checked when present.

The line: ``<model> | session $S | today $T | block $B, $R/h, 2h13m left`` — session and today
at list prices from the catalogue (``?`` = unknown: a call with known usage has no price; never a
made-up 0), the current 5-hour block's cost, burn rate (USD per hour, ccusage's rule) and time
left; ``no active block`` when none is open. A session without a model call in the catalogue shows
Claude Code's own cost, marked, and why: ``not indexed yet`` or ``indexed, no model calls recorded``. Text from the payload (the model name) is printed
with its controls and bidirectional overrides shown, never obeyed (`shown`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from agent_history.bidi import escape_controls, visible


class StatusLineError(ValueError):
    """The payload is not a status-line JSON object (one line, for the exit-2 error)."""


@dataclass(frozen=True, slots=True)
class StatusInput:
    """What the status line uses of Claude Code's payload."""

    session_id: str
    model: str | None
    """``model.display_name`` (else ``model.id``)."""
    harness_cost_usd: float | None
    """``cost.total_cost_usd``: Claude Code's own session cost estimate (shown when the
    catalogue has not indexed the session yet)."""


@dataclass(frozen=True, slots=True)
class StatusFigures:
    """The catalogue's figures: USD; None = unknown (unpriced) — `*_calls` count the calls seen."""

    session_cost: float | None
    session_calls: int
    today_cost: float | None
    today_calls: int
    block_cost: float | None
    block_cost_per_hour: float | None
    block_end: datetime | None
    """The end of the active 5-hour block (None = no active block)."""
    session_indexed: bool = False
    """Whether the catalogue holds the session (it may have no model call: nothing priced)."""


def parse_payload(text: str) -> StatusInput:
    """The `StatusInput` of status-line JSON `text`. Raises StatusLineError (one line) when the
    text is not a JSON object with a non-empty string ``session_id`` free of NUL characters (no
    stored uid holds one, and PostgreSQL text cannot), or a known field has the wrong type."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StatusLineError(f"status-line payload is not JSON ({exc.args[0].split(':')[0]})") from None
    if not isinstance(data, dict):
        raise StatusLineError("status-line payload is not a JSON object")
    sid = data.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        raise StatusLineError('status-line payload has no "session_id" string')
    if "\x00" in sid:
        raise StatusLineError('status-line payload: "session_id" holds a NUL character')
    model = data.get("model")
    name = None
    if isinstance(model, dict):
        name = model.get("display_name") or model.get("id")
    elif isinstance(model, str):
        name = model
    if name is not None and not isinstance(name, str):
        raise StatusLineError('status-line payload: "model" has no string name')
    cost = data.get("cost")
    harness = None
    if cost is not None:
        if not isinstance(cost, dict):
            raise StatusLineError('status-line payload: "cost" is not an object')
        value = cost.get("total_cost_usd")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise StatusLineError('status-line payload: "cost.total_cost_usd" is not a number')
        harness = None if value is None else float(value)
    return StatusInput(sid.strip(), name, harness)


def _usd(v: float | None) -> str:
    return "?" if v is None else f"${v:,.2f}"


def _left(delta: timedelta) -> str:
    minutes = max(int(delta.total_seconds() // 60), 0)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m"


def shown(text: str) -> str:
    """Payload text as the line prints it: every terminal control and bidirectional override
    shown, never obeyed (`agent_history.bidi.escape_controls`), newline and tab included (the
    status line is one line)."""
    return escape_controls(text).replace("\n", visible("\n")).replace("\t", visible("\t"))


def render_line(
    given: StatusInput, figures: StatusFigures | None, now: datetime, missing: str = "catalogue unavailable"
) -> str:
    """The one line (module docstring). `figures` None = no catalogue figures: the harness's own
    session cost is shown, marked as such, then `missing` (why: unreadable, or none yet). The
    model name is `shown`."""
    parts = [shown(given.model)] if given.model else []
    if figures is None:
        harness = "?" if given.harness_cost_usd is None else f"${given.harness_cost_usd:,.2f}"
        return " | ".join([*parts, f"session {harness} (Claude Code's)", missing])
    if figures.session_calls:
        parts.append(f"session {_usd(figures.session_cost)}")
    else:
        why = "indexed, no model calls recorded" if figures.session_indexed else "not indexed yet"
        if given.harness_cost_usd is not None:
            parts.append(f"session ${given.harness_cost_usd:,.2f} (Claude Code's; {why})")
        else:
            parts.append(f"session {why}")
    parts.append(f"today {_usd(figures.today_cost)}" if figures.today_calls else "today $0.00")
    if figures.block_end is None:
        parts.append("no active block")
    else:
        rate = "" if figures.block_cost_per_hour is None else f", {_usd(figures.block_cost_per_hour)}/h"
        parts.append(f"block {_usd(figures.block_cost)}{rate}, {_left(figures.block_end - now)} left")
    return " | ".join(parts)
