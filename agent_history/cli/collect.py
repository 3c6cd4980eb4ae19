"""`collect [PATH…] [--every S] [--json]` (issue 30): thin, over `ingest.collect`.

A PATH inside a repository (a subdirectory, a file) reads that repository; a linked worktree is
a repository of its own, said with its main work tree (`ingest.collect`). Exit 2 when a PATH
argument is in no repository or does not exist (a bad argument, as every command's usage errors;
said in one line, after the other paths are collected); 1 when a configured path (``[repos]
paths``) was not a repository or a repository could not be read (each said in one line; the
others are collected); 2 when the connection may not write the collector tables.
"""

from __future__ import annotations

import signal

import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.loop import INTERRUPTED_EXIT, every_seconds, run_every, start_metrics, stop_on_signals
from agent_history.cli.output import console, count, fail, path_arguments, print_event, print_json


@app.command("collect")
def collect_cmd(
    path_args: list[str] = typer.Argument(
        None,
        metavar="PATHS",
        help="Checkouts to read (default: [repos] paths, else the repositories sessions ran in). A "
        "directory or file inside one reads the checkout it is in.",
    ),
    every: float = typer.Option(
        None, "--every", min=1.0, callback=every_seconds, help="Repeat every SECONDS (≥ 1) until stopped."
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Read repositories with git: commits, trailers, pushes, Backlog.md tasks and their status changes,
    skills, plugins, permission rules, loop charters and closeouts. A linked worktree (`git worktree
    add`) is a repository of its own, its work-tree files its own, said with its main work tree; a
    file is taken as the repository it is in (said in one line). Exit 2 when a PATH is in no
    repository (the others are collected), 1 when a configured path is not one or a repository
    could not be read."""
    from agent_history.db.roles import collector_role_problem
    from agent_history.ingest.collect import collect, expand_paths, linked_paths
    from agent_history.ingest.collect_installed import default_homes

    paths = path_arguments(path_args, "PATHS")
    db = database()
    settings = db.settings
    stop = stop_on_signals()
    with db.connect(autocommit=True) as conn:
        problem = collector_role_problem(conn)
    if problem:
        fail(problem, 2)

    failed = bad_argument = False

    def one_pass() -> bool:
        nonlocal failed, bad_argument
        with db.connect(autocommit=True) as conn:
            default = not paths and settings.repo_paths is None
            if paths:
                targets = [p.absolute() for p in paths]
            elif settings.repo_paths is not None:
                targets = expand_paths(settings.repo_paths)
            else:
                targets = linked_paths(conn)
            summary = collect(
                conn, targets, settings.identity_emails, skip_not_repositories=default, homes=default_homes()
            )
        for line in summary.lines:
            print_event(line)
        failed = any(r.state in ("not_a_repository", "failed") for r in summary.repositories)
        # a PATH given that is not a repository: a usage error (exit 2)
        bad_argument = bool(paths) and any(r.state == "not_a_repository" for r in summary.repositories)
        if json:
            print_json(summary.as_dict())
            return True
        if summary.user_skills is not None:
            console.print(
                f"harness homes: {count(summary.user_skills, 'skill or plugin', 'skills and plugins')}, "
                f"{count(summary.user_permission_rules, 'permission rule')}",
                highlight=False,
            )
        if not summary.repositories:
            console.print("no repositories to collect: name them under [repos] paths or as arguments")
        else:
            for r in summary.repositories:
                if r.state == "collected":
                    shown = r.path + (f" (a worktree of {r.worktree_of})" if r.worktree_of else "")
                    console.print(
                        f"{shown}: {count(r.commits, 'commit')} ({r.commits_new:,} new, {r.on_default_branch:,} on "
                        f"{r.default_branch or 'no default branch'}), {count(r.pushes, 'push', 'pushes')}, "
                        f"{count(r.tasks, 'task')}, {count(r.status_changes, 'status change')}, "
                        f"{count(r.skills, 'project skill')}, {count(r.permission_rules, 'permission rule')}, "
                        f"{count(r.loop_files, 'charter or closeout', 'charters and closeouts')} "
                        f"({r.history} history read)",
                        highlight=False,
                        markup=False,
                        soft_wrap=True,
                    )
        return True

    metrics = start_metrics("collect", db, []) if every else None  # OTLP, when an endpoint is set
    try:
        run_every(every, stop, one_pass, db)
    finally:
        if metrics is not None:
            metrics.close()  # one last collection, one flush
    if stop.signum == signal.SIGINT:
        raise typer.Exit(INTERRUPTED_EXIT)
    if bad_argument:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)
