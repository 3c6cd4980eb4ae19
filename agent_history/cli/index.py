"""`agent-history index`, `status`, `issues`: the main job and its bookkeeping."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import typer
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import console, err_console, fail, print_json
from agent_history.ingest.loader import AnotherPassRunning, Loader, PassSummary
from agent_history.ingest.sources import resolve_sources
from agent_history.ingest.status import catalogue_status, list_issues


def _summary_line(s: PassSummary) -> str:
    rows = ", ".join(f"{k} {v:,}" for k, v in sorted(s.rows.items()) if v) or "none"
    issues = ", ".join(f"{k} {v}" for k, v in sorted(s.issues.items())) or "none"
    state = " (interrupted)" if s.interrupted else ""
    return (
        f"indexed{state}: {s.files_scanned:,} files scanned, {s.files_changed:,} changed, "
        f"{s.bytes_read / 1e6:,.1f} MB read; rows: {rows}; issues: {issues}; "
        f"{s.sessions_rolled_up:,} sessions rolled up; {s.seconds:.2f} s"
    )


@app.command("index")
def index_cmd(
    home: Path = typer.Option(None, "--home", help="Index a directory laid out like ~ (e.g. a copy of a home)."),
    source: list[str] = typer.Option(None, "--source", help="Add a source: NAMESPACE=PATH (repeatable)."),
    every: float = typer.Option(None, "--every", help="Repeat every SECONDS until stopped."),
    json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Index agent homes into the catalogue (incremental; unchanged files are not read)."""
    db = database()
    try:
        sources = resolve_sources(db.settings, home=home, extra=source)
    except ValueError as exc:
        fail(str(exc), 2)
    stop = threading.Event()

    def _stop(signum, frame):  # finish the batch in flight, then exit
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    conn = db.connect(autocommit=True)
    try:
        while True:
            summary = _one_pass(conn, sources, stop, show_progress=console.is_terminal and not json)
            if summary is None:
                console.print("another index pass is running")
                return
            for line in summary.skipped_homes:
                err_console.print(f"skipped {line}", highlight=False)
            if json:
                print_json(summary.as_dict())
            else:
                console.print(_summary_line(summary), highlight=False, soft_wrap=True)
            if not every or stop.is_set():
                break
            deadline = time.monotonic() + every
            while time.monotonic() < deadline and not stop.is_set():
                stop.wait(min(1.0, deadline - time.monotonic()))
            if stop.is_set():
                break
    finally:
        conn.close()
    if summary.files_failed:
        raise typer.Exit(1)


def _one_pass(conn, sources, stop, *, show_progress: bool) -> PassSummary | None:
    if not show_progress:
        try:
            return Loader(conn, stop=stop).run(sources)
        except AnotherPassRunning:
            return None
    columns = (
        TextColumn("[bold]indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files"),
        DownloadColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        files = progress.add_task("files", total=None)
        byte_task = progress.add_task("bytes", total=None, visible=False)

        def plan(n_files: int, n_bytes: int) -> None:
            progress.update(files, total=n_files)
            progress.update(byte_task, total=n_bytes)

        def tick(path: str, nbytes: int, done: int) -> None:
            progress.update(files, advance=done)

        try:
            return Loader(conn, stop=stop, progress=tick).run(sources, plan=plan)
        except AnotherPassRunning:
            return None


@app.command("status")
def status_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Per namespace: files by status, sessions, messages, model calls, tokens, issues; last pass."""
    db = database()
    with db.connect() as conn:
        data = catalogue_status(conn)
    if json:
        print_json(data)
        return
    table = Table("namespace", "files", "sessions", "messages", "model calls", "tokens", "issues")
    for name, d in sorted(data["namespaces"].items()):
        files = ", ".join(f"{k} {v}" for k, v in sorted(d["files"].items()))
        issues = ", ".join(f"{k} {v}" for k, v in sorted(d["issues"].items())) or "-"
        tokens = f"{d['tokens']:,}" if d["tokens"] is not None else "-"
        table.add_row(name, files, f"{d['sessions']:,}", f"{d['messages']:,}", f"{d['model_calls']:,}", tokens, issues)
    console.print(table)
    last = data["last_pass"]
    if last:
        console.print(f"last pass: {last['finished_at']:%Y-%m-%d %H:%M:%S %Z} ({last['status']}, {last['seconds']:.2f} s)")
    else:
        console.print("no index pass yet: run `agent-history index`")


@app.command("issues")
def issues_cmd(
    kind: str = typer.Option(None, "--kind", help="Only this kind (e.g. invalid_json, load_error)."),
    namespace: str = typer.Option(None, "--namespace", "-n"),
    limit: int = typer.Option(100, "--limit"),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List parse issues with file and byte offset."""
    db = database()
    with db.connect() as conn:
        rows = list_issues(conn, kind=kind, namespace=namespace, limit=limit)
    if json:
        print_json(rows)
        return
    if not rows:
        console.print("no parse issues")
        return
    table = Table("kind", "file", "byte", "line", "detail")
    for r in rows:
        table.add_row(r["kind"], r["path"], str(r["byte_offset"]), str(r["line_number"] or ""), r["detail"] or "")
    console.print(table)
