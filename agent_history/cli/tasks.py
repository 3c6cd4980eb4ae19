"""`tasks [--status] [--repo] [--json]` and `task ID [--repo] [--json]` (issue 30): thin, over `read.tasks`."""

from __future__ import annotations

from datetime import datetime

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import check_limit, console, fail, print_json
from agent_history.cli.tables import compact_table
from agent_history.timestamps import minute


def _ts(ts: datetime | None) -> str:
    return minute(ts) if ts else "-"


@app.command("tasks")
def tasks_cmd(
    status: str = typer.Option(None, "--status", help="Only tasks with this status (e.g. 'To Do', Done)."),
    repo: str = typer.Option(None, "--repo", help="Only this repository (its directory name)."),
    limit: int = typer.Option(200, "--limit", "-n", help="Tasks to list (1–1000)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Backlog.md tasks the collector read: id, status, title, commits naming it ('collect' fills them)."""
    from agent_history.read.tasks import list_tasks

    check_limit(limit)
    with database().connect() as conn:
        rows = list_tasks(conn, status=status, repo=repo, limit=limit)
        filtered = not rows and (status or repo) and bool(list_tasks(conn, limit=1))
    if json:
        print_json({"tasks": [r.as_dict() for r in rows]})
    elif filtered:  # tasks were collected; the filters leave none
        console.print("No task matches --status/--repo (`agent-history tasks` lists them all).", markup=False)
    elif not rows:
        console.print("No tasks found: run `agent-history collect` over repositories with a backlog/ folder.")
    else:
        table = compact_table("repo", "task", "status", "title", "labels", "commits")
        for r in rows:
            table.add_row(r.repository, r.task_id, r.status or "-", r.title or "-", ", ".join(r.labels), str(r.commits))
        console.print(table)
    if not rows:
        raise typer.Exit(1)


@app.command("task")
def task_cmd(
    task_id: str = typer.Argument(..., help="Backlog.md task id, e.g. task-12."),
    repo: str = typer.Option(None, "--repo", help="Only this repository (its directory name)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One Backlog task: status history, commits with its Task: trailer (and the sessions that made them), loops."""
    from agent_history.read.tasks import TaskNotFound, task_detail

    if not task_id.strip():
        fail(f"task: give a Backlog.md task id, e.g. task-12 (got {task_id!r})", 2)
    with database().connect() as conn:
        try:
            details = task_detail(conn, task_id, repo=repo)
        except TaskNotFound as exc:
            fail(str(exc), 1)
    if json:
        print_json({"tasks": [d.as_dict() for d in details]})
        return
    for d in details:
        t = d.task
        console.print(
            Text(t.task_id, style="bold") + Text(f" · {t.repository} · {t.status or 'no status'} · {t.folder}"),
            soft_wrap=True,
            highlight=False,
        )
        console.print(f"  {t.title or '-'}", soft_wrap=True, highlight=False, markup=False)
        for h in d.history:
            console.print(
                f"  {_ts(h.changed_at)} {h.old or '(new)'} → {h.new or '-'} in {h.sha[:10]}",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
        for c in d.commits:
            made = f"; made in session {', '.join(c.sessions)}" if c.sessions else ""
            landed = f"reached default {_ts(c.reached_default_at)}" if c.reached_default_at else "not on default"
            console.print(
                f"  commit {c.sha[:10]} {c.subject} ({landed}){made}", soft_wrap=True, highlight=False, markup=False
            )
        for lp in d.loops:
            console.print(
                f"  loop {lp.loop_id}: {lp.repo or '-'} loop{lp.loop_number} ({lp.how}), root {lp.root_session_uid}",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
