"""`agent-history archive`: compressed, verified, versioned copies of every transcript."""

from __future__ import annotations

import signal

import psycopg
import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.loop import BUSY_EXIT, INTERRUPTED_EXIT, every_seconds, run_every, stop_on_signals
from agent_history.cli.output import (
    console,
    count,
    fail,
    nothing_found_line,
    path_option,
    print_event,
    print_json,
    print_warning,
)


def summary_line(s) -> str:
    """One line for a pass summary (`archive.run.ArchiveSummary`)."""
    state = " (interrupted)" if s.interrupted else ""
    return (
        f"archived{state}: {count(s.files_seen, 'file')} seen, {s.copied:,} copied, {s.grown:,} grown, "
        f"{count(s.new_versions, 'new version')}, {s.unchanged:,} unchanged, {s.touched:,} touched, {s.repaired:,} repaired; "
        f"{s.bytes_read / 1e6:,.1f} MB read, {s.bytes_written / 1e6:,.1f} MB written; {s.seconds:.2f} s"
    )


def nothing_seen(sources) -> str:
    """The one line an archive pass that saw no file prints: where it looked and what to do.
    Project harnesses' sources (Aider, Crush: searched in projects and roots) are no home."""
    homes = [s for s in sources if s.tier == "hot" and not (s.known_projects or s.roots or s.project_dirs)]
    missing = sum(1 for s in homes if not s.home.exists())
    return nothing_found_line("no transcripts to archive", "archive", homes, missing)


def run_archive_pass(
    conn,
    db,
    sources,
    stop,
    *,
    json: bool = False,
    keep_going: bool = False,
    say_where: bool = False,
    into: dict | None = None,
) -> bool:
    """One archive pass over `sources` into the configured archive, its summary printed; exits 2
    when the archive cannot be written, 1 when its filesystem is full — or, with `keep_going` (the
    indexer's `index --every --archive`, whose indexing must go on), says so in one line and
    returns False. With `say_where`, a pass that saw no file says where it looked (`nothing_seen`).
    With `json` and `into` (the index pass's JSON document), the summary goes into ``into["archive"]``
    instead of being printed, so `index --archive --json` prints one document per pass (a pass
    skipped or stopped puts ``{"skipped": "<reason>"}`` there). Returns False when another pass
    holds the lock, else True."""
    from agent_history.ingest.archive.run import AnotherArchivePass, ArchiveFull, ArchiveUnwritable, archive_pass

    try:
        summary = archive_pass(conn, sources, db.settings.archive_root, stop=stop, host=db.settings.archive_host)
    except ArchiveUnwritable as exc:
        if keep_going:
            print_event(f"archive pass skipped: {exc}")
            if into is not None:
                into["archive"] = {"skipped": str(exc)}
            return False
        fail(str(exc), 2)
    except ArchiveFull as exc:
        if keep_going:
            print_event(f"archive pass stopped: {exc.strerror}; the copy in progress was discarded")
            if into is not None:
                into["archive"] = {"skipped": exc.strerror}
            return False
        fail(f"{exc.strerror}: the copy in progress was discarded; free space and run archive again", 1)
    except AnotherArchivePass as exc:  # "another archive pass is running (it is archiving <namespace>)"
        if into is not None:
            into["archive"] = {"skipped": str(exc)}
        else:
            console.print(str(exc), highlight=False, markup=False)
        return False
    for line in summary.skipped[:20]:
        print_event(f"skipped {line}")
    if len(summary.skipped) > 20:
        print_event(f"… and {len(summary.skipped) - 20} more skipped files (see --json)")
    if say_where and summary.files_seen == 0 and not summary.interrupted:
        print_event(nothing_seen(sources))
    if json and into is not None:
        into["archive"] = summary.as_dict()
    elif json:
        print_json(summary.as_dict())
    else:
        console.print(summary_line(summary), highlight=False, soft_wrap=True, markup=False)
    return True


@app.command("archive")
def archive_cmd(
    home_arg: str = typer.Option(
        None, "--home", metavar="PATH", help="Archive a directory laid out like ~ instead of the configured homes."
    ),
    source: list[str] = typer.Option(None, "--source", help="Add a source: NAMESPACE=PATH (repeatable)."),
    every: float = typer.Option(
        None, "--every", min=1.0, callback=every_seconds, help="Repeat every SECONDS (≥ 1) until stopped."
    ),
    json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    verify: bool = typer.Option(
        False, "--verify", help="Re-hash every archived copy instead; list the bad ones (exit 1 if any)."
    ),
) -> None:
    """Copy every transcript of every configured home into the archive (zstd, verified, versioned).

    New and grown files only; a file that shrank or was rewritten is kept as a new version beside
    the old copy. `rebuild` reads the archive for transcripts the agents deleted. Exit 75
    (EX_TEMPFAIL) when another archive pass holds a namespace: nothing was done, try again later."""
    from agent_history.ingest.archive.retention import retention_warnings
    from agent_history.ingest.archive.run import ArchiveUnwritable, check_writable
    from agent_history.ingest.sources import resolve_sources

    home = path_option(home_arg, "--home", "a directory")
    if home is not None and not home.expanduser().is_dir():
        fail(f"--home {home} is not a directory", 2)
    db = database()
    root = db.settings.archive_root
    if verify:
        _verify(db, json=json)
        return
    try:
        check_writable(root)  # one line before the server starts or a file is read
    except ArchiveUnwritable as exc:
        fail(str(exc), 2)
    try:
        sources = resolve_sources(db.settings, home=home, extra=source)
    except ValueError as exc:
        fail(str(exc), 2)
    for w in retention_warnings(sources, need_file=True):  # as `index`: only a settings file that exists
        print_warning(w.line())
    stop = stop_on_signals()
    db.dsn  # noqa: B018 - start/migrate the server (one-line errors) first

    busy = False  # the last pass could not start: another holds a namespace's lock

    def one_pass() -> bool:
        nonlocal busy
        try:
            with db.connect(autocommit=True) as conn:
                busy = not run_archive_pass(conn, db, sources, stop, json=json, say_where=True)
                return not busy
        except psycopg.OperationalError as exc:
            if not every:
                raise
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            print_event(f"archive pass failed, retrying in {every:g} s: {first}")
            return True

    run_every(every, stop, one_pass, db)
    if stop.signum == signal.SIGINT:
        print_event("interrupted: the copies made so far are kept; run archive again to finish")
        raise typer.Exit(INTERRUPTED_EXIT)
    if busy:
        raise typer.Exit(BUSY_EXIT)


def _verify(db, *, json: bool) -> None:
    from agent_history.ingest.archive.verify import ArchiveRootMissing, verify_archive

    try:
        with db.connect(autocommit=True) as conn:
            result = verify_archive(conn, db.settings.archive_root, db.settings.archive_host)
    except ArchiveRootMissing as exc:
        fail(str(exc), 2)
    if json:
        print_json(result.as_dict())
    else:
        console.print(
            f"verified {count(result.checked, 'copy', 'copies')} ({result.bytes_hashed / 1e6:,.1f} MB hashed): "
            f"{len(result.bad):,} bad",
            highlight=False,
            markup=False,
        )
        for bad in result.bad:
            console.print(
                f"bad copy: {bad['archive_file']} ({bad['path']}, version {bad['version']}): {bad['error']}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    if result.bad:
        raise typer.Exit(1)
