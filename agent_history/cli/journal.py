"""`agent-history journal-sync`: copy session summaries in from a journal database (thin)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.loop import every_seconds, run_every, start_metrics, stop_on_signals
from agent_history.cli.output import console, count, err_console, fail, print_json
from agent_history.db.errors import ServerUnreachable

if TYPE_CHECKING:  # imported by the command itself, off every other command's start-up
    from agent_history.journal.sync import SyncResult


def summary_line(r: SyncResult) -> str:
    """The one-line result of a pass."""
    kind = "full" if r.full_pass else "incremental"
    return (
        f"journal-sync ({kind}, {r.source}): {count(r.rows_read, 'row')} read, {r.inserted:,} new, {r.updated:,} updated, "
        f"{r.unchanged:,} unchanged, {r.pruned:,} pruned, {r.wiped:,} wiped, {count(r.topics, 'topic')}, "
        f"{count(r.linked, 'link')} changed; {r.seconds:.2f} s"
    )


@app.command("journal-sync")
def journal_sync_cmd(
    source: str = typer.Option(
        None, "--source", help="Journal: a SQLite file or a PostgreSQL DSN (default: [journal] source)."
    ),
    every: float = typer.Option(
        None, "--every", min=1.0, callback=every_seconds, help="Repeat every SECONDS (≥ 1) until stopped."
    ),
    full: bool = typer.Option(False, "--full", help="Full pass: re-read every row and prune deleted conversations."),
    json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Copy session summaries in from an external journal database (read-only; incremental)."""
    from agent_history.journal.sync import sync_journal

    db = database()
    source = source or db.settings.journal_source
    if not source and not every:
        fail("no journal source: pass --source or set [journal] source in the config file", 2)
    stop = stop_on_signals()
    conns: list[psycopg.Connection] = [db.connect(autocommit=True)]  # one-line errors before the loop
    metrics = start_metrics("journal_sync", db, []) if every else None  # OTLP, when an endpoint is set
    last: list[SyncResult] = []

    def one_pass() -> bool:
        try:
            if not conns:  # reconnect after a lost connection (a loop outlives a database restart)
                conns.append(db.connect(autocommit=True))
            result = sync_journal(conns[0], source, full=full and not last)
        except (psycopg.OperationalError, ServerUnreachable) as exc:
            if not every:
                raise
            for c in conns:
                c.close()
            conns.clear()
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            err_console.print(f"pass failed, retrying in {every:g} s: {first}", highlight=False, markup=False)
            return True
        last[:] = [result]
        if json:
            print_json(result.as_dict())
        elif result.status == "ok":
            console.print(summary_line(result), highlight=False, soft_wrap=True, markup=False)
        else:
            err_console.print(
                f"journal-sync {result.status} ({result.reason}): {result.message}",
                highlight=False,
                soft_wrap=True,
                markup=False,
            )
        return True

    try:
        run_every(every, stop, one_pass, db)
    finally:
        for c in conns:
            c.close()
        if metrics is not None:
            metrics.close()  # one last collection, one flush
    if not every and last and last[0].status != "ok":
        raise typer.Exit(1)
