"""`loops` and `loop <id | closeout path> [--json | --usage]` (issue 12): thin, over `read.loops`."""

from __future__ import annotations

import os
from datetime import datetime
from decimal import Decimal

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.options import _ask, _found
from agent_history.cli.output import console, fail, print_json, write_document
from agent_history.cli.tables import Record, compact_table, flow, path_line, print_table_or_records
from agent_history.cli.text import _body
from agent_history.loops.rules import STATUSES
from agent_history.loops.usage import format_duration
from agent_history.read.requests import loops_request
from agent_history.timestamps import minute


def _ts(ts: datetime | None) -> str:
    return minute(ts) if ts else "-"


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _cost(value: Decimal | None) -> str:
    return "-" if value is None else f"${value:.2f}"


@app.command("loops")
def loops_cmd(
    status: str = typer.Option(None, "--status", help=f"Only this status: {', '.join(STATUSES)}."),
    since: str = typer.Option(None, "--since", help="Launched since: 7d, 12h, YYYY-MM-DD …"),
    repo: str = typer.Option(None, "--repo", help="Only this repository (as the closeout names it)."),
    limit: int = typer.Option(50, "--limit", "-n", help="Loops to list (1–1000)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Loop runs: status, repo, loop, started, wall time, lanes, calls, cost, landed/parked ('-' = unknown)."""
    from agent_history.read.loops import loops_of

    req = _ask(loops_request, {"status": status, "since": since, "repo": repo, "limit": limit})
    with database().connect() as conn:
        rows = loops_of(conn, req)
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
    headers = ("id", "status", "repo", "loop", "started", "wall", "lanes", "calls", "cost", "landed/parked")
    records = []
    for r in rows:
        fields = (
            str(r.id), r.status, r.repo or "-", str(r.loop_number), _ts(r.started_at),
            format_duration(r.wall_seconds) if r.wall_seconds is not None else "-", _n(r.lanes),
            _n(r.model_calls), _cost(r.cost_usd), f"{_n(r.landed)}/{_n(r.parked)}",
        )  # fmt: skip
        until = (f"until {_ts(r.waiting_until)}",) if r.waiting_until else ()
        records.append(Record(fields, lines=until))
    table = compact_table(*headers)
    for rec, r in zip(records, rows, strict=True):
        table.add_row(rec.fields[0], r.status + (f" {rec.lines[0]}" if rec.lines else ""), *rec.fields[2:])
    for column in table.columns:
        column.no_wrap = True
    # narrower: one record per loop, its figures on the first line, the rest below (whole)
    print_table_or_records(console, table, headers, records)


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
    if not ref.strip():
        fail(f"loop: give a loop id or its closeout path (got {ref!r})", 2)
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
            write_document(usage_report(conn, ids))
            return
        detail = loop_detail(conn, ids)
    if json:
        print_json(detail.as_dict())
        return
    if detail.relaunched:
        console.print(f"This closeout has {len(detail.loops)} launches (a relaunch); all are shown.", soft_wrap=True)
    for x in detail.loops:
        status = x.status + (f" until {_ts(x.waiting_until)}" if x.waiting_until else "")
        flow(console, [
            Text(f"loop {x.id}:", style="bold") + f" {x.repo or '-'} loop{x.loop_number}", f"· {status}",
            f"· root {x.root_agent} {x.root_session_uid}", f"· started {_ts(x.started_at)}",
            *((f"· ended {_ts(x.ended_at)}",) if x.ended_at else ()),
        ], sep=" ")  # fmt: skip
        figures = [("calls", _n(x.model_calls)), ("tokens", _n(x.tokens)), ("cost", _cost(x.cost_usd)),
                   ("errors", _n(x.errors)), ("commits", _n(x.commits)), ("pushes", _n(x.pushes)),
                   ("landed", _n(x.landed)), ("parked", _n(x.parked))]  # fmt: skip
        flow(
            console,
            [f"  {k} {v}" if i == 0 else f"{k} {v}" for i, (k, v) in enumerate(figures)],
            sep=" · ",
            indent="  ",
        )
        path_line(console, x.closeout_path, indent="  closeout ", style="")
        path_line(console, x.charter_path or "-", indent="  charter ", style="")
        if x.progress_sources:
            sources = [f"{k} from {v}" for k, v in x.progress_sources.items()]
            flow(console, [f"  progress: {sources[0]}", *sources[1:]], sep=", ", indent="    ")
        if x.end_evidence:
            console.print(_body(x.end_evidence, 2))
    if detail.lanes:
        headers = ("loop", "lane", "link", "role", "model", "calls", "tokens", "cost", "return")
        records = []
        for a in detail.lanes:
            uid = a.session_uid[:13] + (f"/{a.agent_id}" if a.agent_id else "")
            records.append(Record((str(a.loop_id), uid, a.link_method, a.subagent_type or a.role, a.model or "-",
                                   _n(a.model_calls), _n(a.tokens), _cost(a.cost_usd), a.return_status or "-")))  # fmt: skip
        table = compact_table(*headers)
        for rec in records:
            table.add_row(*rec.fields)
        for column in table.columns:
            column.no_wrap = True
        print_table_or_records(console, table, headers, records)
    for c in detail.closeouts:
        mark = "qualified" if c.qualified else f"not qualified: {c.reason}"
        flow(
            console,
            [f"  closeout write {_ts(c.written_at)}", f"by {c.session_uid or '-'}:", mark],
            sep=" ",
            indent="    ",
        )
