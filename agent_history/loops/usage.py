"""The `loop --usage` Markdown block (issue 12, Interfaces): pure rendering of values.

Shape (one block; a relaunch shares its closeout with the original launch, so every launch of
the closeout is listed and the block says so)::

    ### Usage: widgets loop1

    - As of 2026-05-03 17:30 UTC, from the agent-history catalogue (it lags the transcripts by one index pass).
    - Closeout: `codex/closeout-2026-05-03-loop1.md`
    - Launch 1: root claude `c1000000-…`, finished, started 2026-05-03 09:00 UTC, wall time 10m 01s, 1 lane.
    - Total: 8 model calls, list-price cost $0.0090.

    | Launch | Role | Model | Calls | Cost (USD) |
    |---:|---|---|---:|---:|
    | 1 | root | claude-sonnet-4-5-20250929 | 6 | 0.0084 |

Costs are list prices in USD, shown to 4 decimals; a row's cost is "unknown" unless every call
it covers is priced (NULL is unknown, never 0). One unpriced model does not blank the total: it
gives the priced calls' sum and names the rest, e.g. ``list-price cost $0.5000 for the priced
calls; 2 calls unpriced (pi-fixture-model), their cost unknown``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from agent_history.timestamps import minute


@dataclass(frozen=True, slots=True)
class UsageRow:
    """Model calls of one launch by role (`root` | `lane`) and model; `cost_usd` None = unknown."""

    loop_id: int
    role: str
    model: str | None
    calls: int
    cost_usd: Decimal | None


@dataclass(frozen=True, slots=True)
class UsageLaunch:
    """One launch of the closeout: what the block's list line says about it."""

    loop_id: int
    agent: str
    root_session_uid: str
    status: str
    started_at: datetime | None
    wall_seconds: float | None
    lanes: int | None
    model_calls: int | None
    cost_usd: Decimal | None
    commits: int | None = None
    pushes: int | None = None
    landed: int | None = None
    parked: int | None = None
    progress_sources: dict[str, str] | None = None
    """column → the source of its value (`agent_history.loops.progress`)."""

    def progress(self) -> str:
        """``commits 3 (repository), pushes unknown, landed 2 (closeout), parked unknown``."""
        sources = self.progress_sources or {}
        parts = []
        for name in ("commits", "pushes", "landed", "parked"):
            value = getattr(self, name)
            source = f" ({sources[name]})" if value is not None and name in sources else ""
            parts.append(f"{name} {'unknown' if value is None else value}{source}")
        return ", ".join(parts)


def format_duration(seconds: float | None) -> str:
    """``3d 04h``, ``2h 05m``, ``10m 01s``, ``42s``; "unknown" for None."""
    if seconds is None:
        return "unknown"
    s = int(round(seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _utc(ts: datetime | None) -> str:
    return f"{minute(ts.astimezone(UTC))} UTC" if ts else "unknown"


def _cost(value: Decimal | None) -> str:
    return f"{value:.4f}" if value is not None else "unknown"


def _sum_cost(values: list[Decimal | None]) -> Decimal | None:
    return None if not values or any(v is None for v in values) else sum(values, Decimal(0))  # type: ignore[arg-type]


def render_usage(
    *,
    repo: str | None,
    loop_number: int,
    closeout_path: str,
    as_of: datetime | None,
    launches: list[UsageLaunch],
    rows: list[UsageRow],
) -> str:
    """The Markdown block (ends with a newline). `as_of` is the catalogue's last index pass (UTC)."""
    out = [f"### Usage: {repo or 'unknown repo'} loop{loop_number}", ""]
    out.append(f"- As of {_utc(as_of)}, from the agent-history catalogue (it lags the transcripts by one index pass).")
    out.append(f"- Closeout: `{closeout_path}`")
    if len(launches) > 1:
        ids = ", ".join(str(x.loop_id) for x in launches)
        out.append(f"- This closeout is shared by {len(launches)} launches (a relaunch): {ids}; all are counted below.")
    for x in launches:
        lanes = "lanes unknown" if x.lanes is None else f"{x.lanes} lane{'s' if x.lanes != 1 else ''}"
        out.append(
            f"- Launch {x.loop_id}: root {x.agent} `{x.root_session_uid}`, {x.status}, started {_utc(x.started_at)}, "
            f"wall time {format_duration(x.wall_seconds)}, {lanes}; {x.progress()}."
        )
    calls = [x.model_calls for x in launches]
    total_calls = None if all(c is None for c in calls) else sum(c or 0 for c in calls)
    total_cost = _sum_cost([x.cost_usd for x in launches])
    unpriced = [r for r in rows if r.cost_usd is None]
    if total_cost is None and unpriced:  # the priced calls' sum, and the rest named, never a blank total
        priced = [r.cost_usd for r in rows if r.cost_usd is not None]
        n = sum(r.calls for r in unpriced)
        names = ", ".join(sorted({r.model or "unknown model" for r in unpriced}))
        head = f"${_cost(sum(priced, Decimal(0)))} for the priced calls; " if priced else "unknown: "
        cost = f"{head}{n} call{'s' if n != 1 else ''} unpriced ({names}), their cost unknown"
    else:
        cost = "unknown" if total_cost is None else "$" + _cost(total_cost)
    calls_text = (
        "unknown model calls" if total_calls is None else f"{total_calls} model call{'s' if total_calls != 1 else ''}"
    )
    out.append(f"- Total: {calls_text}, list-price cost {cost}.")
    out += ["", "| Launch | Role | Model | Calls | Cost (USD) |", "|---:|---|---|---:|---:|"]
    for r in rows:
        out.append(f"| {r.loop_id} | {r.role} | {r.model or 'unknown'} | {r.calls} | {_cost(r.cost_usd)} |")
    if not rows:
        out.append("| – | – | no model calls recorded | – | – |")
    return "\n".join(out) + "\n"
