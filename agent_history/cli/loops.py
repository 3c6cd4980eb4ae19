"""`loops` and `loop <id | closeout path> [--json | --usage]` (issue 12): thin, over `read.loops`."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from decimal import Decimal

import typer
from rich.markup import escape
from rich.table import Table

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import console, fail, print_json
from agent_history.cli.read import _found
from agent_history.loops.rules import STATUSES
from agent_history.loops.usage import format_duration


def _ts(ts: datetime | None) -> str:
    return ts.strftime("%Y-%m-%d %H:%M") if ts else "-"


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _cost(value: Decimal | None) -> str:
    return "-" if value is None else f"${value:.2f}"


@app.command("loops")
def loops_cmd(
    status: str = typer.Option(None, "--status", help=f"Only this status: {', '.join(STATUSES)}."),
    since: str = typer.Option(None, "--since", help="Launched since: 7d, 12h, YYYY-MM-DD …"),
    repo: str = typer.Option(None, "--repo", help="Only this repository (as the closeout names it)."),
    limit: int = typer.Option(50, "--limit", "-n", help="Loops to list."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Loop runs: status, repo, loop, started, wall time, lanes, calls, cost, landed/parked ('-' = unknown)."""
    from agent_history.read.loops import list_loops
    from agent_history.search.request import parse_when

    if status is not None and status not in STATUSES:
        fail(f"unknown status {status!r} (known: {', '.join(STATUSES)})", 2)
    try:
        since_at = parse_when(since, option="--since") if since else None
    except ValueError as exc:
        fail(str(exc), 2)
    with database().connect() as conn:
        rows = list_loops(conn, status=status, since=since_at, repo=repo, limit=limit)
    if json:
        print_json({"loops": [r.as_dict() for r in rows]})
        _found(bool(rows))
        return
    if not rows:
        console.print(
            "No loops found: no prompt with 'You are the root' and a codex/closeout-<date>-loop<N>.md path.",
            soft_wrap=True,
            highlight=False,
            markup=False,
        )
        _found(False)
    table = Table("id", "status", "repo", "loop", "started", "wall", "lanes", "calls", "cost", "landed/parked")
    for r in rows:
        status_text = r.status + (f" until {_ts(r.waiting_until)}" if r.waiting_until else "")
        table.add_row(
            str(r.id), status_text, r.repo or "-", str(r.loop_number), _ts(r.started_at),
            format_duration(r.wall_seconds) if r.wall_seconds is not None else "-", _n(r.lanes),
            _n(r.model_calls), _cost(r.cost_usd), f"{_n(r.landed)}/{_n(r.parked)}",
        )  # fmt: skip
    console.print(table)


@app.command("loop")
def loop_cmd(
    ref: str = typer.Argument(..., help="A loop id, or its closeout path (as in the launch, or absolute)."),
    usage: bool = typer.Option(False, "--usage", help="Print a Markdown usage block for the closeout's Notes."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One loop (every launch of its closeout): lanes with link method, role, model, calls, tokens, cost, return status."""
    from agent_history.read.loops import AmbiguousLoop, LoopNotFound, loop_detail, resolve_loops, usage_report

    if usage and json:
        fail("--usage and --json are exclusive", 2)
    with database().connect() as conn:
        try:
            ids = resolve_loops(conn, ref)
        except AmbiguousLoop as exc:
            # a relative path names closeouts in several repositories: the one under this directory
            try:
                ids = resolve_loops(conn, os.path.normpath(os.path.join(os.getcwd(), ref)))
            except LoopNotFound:
                fail(str(exc), 1)
        except LoopNotFound as exc:
            fail(str(exc), 1)
        if usage:
            sys.stdout.write(usage_report(conn, ids))
            return
        detail = loop_detail(conn, ids)
    if json:
        print_json(detail.as_dict())
        return
    if detail.relaunched:
        console.print(f"This closeout has {len(detail.loops)} launches (a relaunch); all are shown.")
    for x in detail.loops:
        console.print(
            f"[bold]loop {x.id}[/]: {escape(x.repo or '-')} loop{x.loop_number} · {x.status}"
            + (f" until {_ts(x.waiting_until)}" if x.waiting_until else "")
            + f" · root {x.root_agent} {x.root_session_uid} · started {_ts(x.started_at)}"
            + (f" · ended {_ts(x.ended_at)}" if x.ended_at else ""),
            soft_wrap=True,
            highlight=False,
        )
        console.print(
            f"  closeout {escape(x.closeout_path)} · charter {escape(x.charter_path or '-')} · calls {_n(x.model_calls)} · "
            f"tokens {_n(x.tokens)} · cost {_cost(x.cost_usd)} · errors {_n(x.errors)} · commits {_n(x.commits)} · "
            f"pushes {_n(x.pushes)} · landed {_n(x.landed)} · parked {_n(x.parked)}",
            soft_wrap=True,
            highlight=False,
        )
        if x.end_evidence:
            console.print(f"  {x.end_evidence}", soft_wrap=True, highlight=False, markup=False)
    if detail.lanes:
        table = Table("loop", "lane", "link", "role", "model", "calls", "tokens", "cost", "return")
        for a in detail.lanes:
            uid = a.session_uid[:13] + (f"/{a.agent_id}" if a.agent_id else "")
            table.add_row(
                str(a.loop_id), uid, a.link_method, a.subagent_type or a.role, a.model or "-", _n(a.model_calls),
                _n(a.tokens), _cost(a.cost_usd), a.return_status or "-",
            )  # fmt: skip
        console.print(table)
    for c in detail.closeouts:
        mark = "qualified" if c.qualified else f"not qualified: {c.reason}"
        console.print(
            f"  closeout write {_ts(c.written_at)} by {c.session_uid or '-'}: {mark}",
            soft_wrap=True,
            highlight=False,
            markup=False,
        )
