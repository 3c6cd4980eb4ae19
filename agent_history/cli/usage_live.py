"""`usage blocks --live`: the plan-window snapshot (`usage.plans.plan_status`) rendered with rich,
refreshed every few seconds with rich's Live display until Ctrl-C (exit 0, no traceback)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, tzinfo

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from agent_history.cli.tables import compact_table
from agent_history.timestamps import minute


def _left(minutes: int | None) -> str:
    if minutes is None:
        return "-"
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}%"


def _usd(v: float | None) -> str:
    return "unpriced" if v is None else f"${v:,.2f}"


def _when(iso: str | None, tz: tzinfo) -> str:
    if iso is None:
        return "-"
    return minute(datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(tz))


def snapshot_lines(snapshot: dict, tz: tzinfo) -> list[str]:
    """The snapshot's limit bases, one line each (what each limit was taken from)."""
    lines = []
    for a in snapshot["agents"]:
        for w in ("block", "week"):
            lim = a[w]["limit"]
            lines.append(f"{a['agent']} {w}: tokens — {lim['tokensBasis']}; cost — {lim['costBasis']}")
    return lines


def render(snapshot: dict, tz: tzinfo) -> Group:
    """One table of the agents' plan windows (5-hour block and week) and the limits' bases."""
    table: Table = compact_table(
        "agent", "window", "ends", "left", "tokens", "% plan", "cost", "tok/min", "$/h", "projected", "status"
    )
    for a in snapshot["agents"]:
        label = a["agent"] + (f" ({a['plan']})" if a["plan"] else "")
        for w in ("block", "week"):
            s = a[w]
            if not s["active"]:
                table.add_row(label, w, "no active window", "", "", "", "", "", "", "", "")
                continue
            rate = s["burnRate"] or {}
            proj = s["projection"] or {}
            pct = s["percentUsed"]["tokens"] if s["percentUsed"]["tokens"] is not None else s["percentUsed"]["cost"]
            projected = "-" if not proj else f"{proj['totalTokens']:,} / {_usd(proj['totalCost'])}"
            table.add_row(
                label,
                w,
                _when(s["endTime"], tz),
                _left(s["timeLeftMinutes"]),
                f"{s['totalTokens']:,}",
                _pct(pct),
                _usd(s["costUSD"]),
                "-" if not rate else f"{rate['tokensPerMinute']:,.0f}",
                "-" if not rate or rate["costPerHour"] is None else f"{rate['costPerHour']:,.2f}",
                projected,
                (s["status"] or "no limit").upper() if s["status"] in ("warning", "exceeds") else s["status"] or "-",
            )
    now = _when(snapshot["now"], tz)
    head = Text(f"plan windows at {now} ({tz}) — Ctrl-C to quit", style="bold")
    notes = [Text(line, style="dim") for line in snapshot_lines(snapshot, tz)]
    if not snapshot["agents"]:
        notes = [Text("no agent has a plan configured ([plans] in the config) or an active window")]
    return Group(head, table, *notes)


def run_live(fetch: Callable[[], dict], tz: tzinfo, refresh_s: float, console: Console) -> int:
    """Show `fetch()`'s snapshot and fetch it again every `refresh_s` seconds until Ctrl-C;
    returns the exit code (0)."""
    try:
        with Live(render(fetch(), tz), console=console, auto_refresh=False, transient=False) as live:
            while True:
                time.sleep(refresh_s)
                live.update(render(fetch(), tz), refresh=True)
    except KeyboardInterrupt:
        return 0
