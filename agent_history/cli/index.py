"""`agent-history index`, `status`, `issues`: the main job and its bookkeeping."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psycopg
import typer
from rich.table import Table

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.loop import BUSY_EXIT, INTERRUPTED_EXIT, every_seconds, run_every, start_metrics, stop_on_signals
from agent_history.cli.output import (
    check_limit,
    console,
    count,
    fail,
    nothing_found_line,
    path_option,
    print_event,
    print_json,
    print_warning,
    print_wrapped,
)
from agent_history.cli.tables import Record, compact_table, fits, print_records, wrap_headers_to_fit
from agent_history.ingest.loader import BATCH_LINES, AnotherPassRunning, Loader, PassSummary
from agent_history.ingest.sources import resolve_sources
from agent_history.ingest.status import catalogue_status, list_issues
from agent_history.timestamps import second


def _summary_line(s: PassSummary) -> str:
    rows = (
        ", ".join(
            f"{k} {s.rows_new[k]:,} new" + (f" + {s.rows_merged[k]:,} merged" if s.rows_merged[k] else "")
            for k, v in sorted(s.rows.items())
            if v
        )
        or "none"
    )
    issues = ", ".join(f"{k} {v}" for k, v in sorted(s.issues.items())) or "none"
    state = " (interrupted)" if s.interrupted else ""
    gone = f"{s.files_missing:,} now missing from disk (sessions kept), " if s.files_missing else ""
    back = f"{s.files_returned:,} back on disk, " if s.files_returned else ""
    # paths passed over (a symlink, a FIFO, an undecodable name …: named above the line)
    skipped = f"{len(s.skipped_paths):,} skipped, " if s.skipped_paths else ""
    elsewhere = "".join(
        f"{count(n, 'session')} of {ns} already stored by namespace {first}; "
        for ns, by in sorted(s.sessions_elsewhere.items())
        for first, n in sorted(by.items())
    )
    return (
        f"indexed{state}: {count(s.files_scanned, 'file')} scanned, {skipped}{s.files_changed:,} changed, {gone}{back}"
        f"{s.bytes_read / 1e6:,.1f} MB read; rows: {rows}; issues: {issues}; {elsewhere}"
        f"{count(s.sessions_rolled_up, 'session')} rolled up; {s.seconds:.2f} s"
    )


def _elsewhere_lines(namespaces: dict[str, dict]) -> list[str]:
    """`status`'s word on namespaces whose files hold sessions another namespace stored first
    (a synced home, `db.tables.shared_sessions`): otherwise such a namespace shows 0 sessions silently."""
    return [
        f"{name}: {count(n, 'session')} already stored by namespace {first} "
        "(the same transcripts, indexed there first; counted there)"
        for name, d in sorted(namespaces.items())
        for first, n in sorted(d.get("sessions_elsewhere", {}).items())
    ]


# A pass that read at least this much is a bulk load: checkpoint the embedded server after it so
# its WAL (up to max_wal_size) is recycled at once rather than kept until the next timed checkpoint.
BULK_CHECKPOINT_BYTES = 64 * 1024 * 1024


def wal_left_unsettled(summary: PassSummary) -> bool:
    """True when a finished pass read at least `BULK_CHECKPOINT_BYTES` and did not end with the
    checkpoint that settles its WAL itself (`PassSummary.wal_settled`: a bulk pass on an embedded
    server whose settings it widened; docs/performance.md, decision 21) — an incremental pass of
    that size, or a bulk pass on a server it did not tune: the CLI then asks for a checkpoint.
    False for a stopped pass (a service manager's grace period is short)."""
    return summary.bytes_read >= BULK_CHECKPOINT_BYTES and not summary.interrupted and not summary.wal_settled


def _claude_export_problem(path: Path) -> str | None:
    """Why `path` given to ``--claude-export`` cannot be the export (None when it can): a folder
    without ``conversations.json`` directly in it (the pass found nothing there and said
    nothing), or the export's zip archive itself (read as JSON, it was two parse issues)."""
    if path.is_dir():
        if not (path / "conversations.json").is_file():
            return "holds no conversations.json (give the unzipped export's folder, or the file)"
        return None
    if not path.is_file():  # a FIFO or a device: opening one to look would block or never end
        return "is not a regular file"
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if head == b"PK\x03\x04":
        return "is a zip archive: unzip it and give its folder (or its conversations.json)"
    return None


def _check_parse_workers() -> None:
    """Exit 2 with one line when ``$AGENT_HISTORY_PARSE_WORKERS`` is malformed — before the server
    starts, and for every pass kind (a pass only reads the setting when it has enough new files)."""
    from agent_history.config import ConfigError, parse_workers

    try:
        parse_workers()
    except ConfigError as exc:
        fail(str(exc), 2)


@app.command("index")
def index_cmd(
    home_arg: str = typer.Option(
        None, "--home", metavar="PATH", help="Index a directory laid out like ~ (e.g. a copy of a home)."
    ),
    source: list[str] = typer.Option(None, "--source", help="Add a source: NAMESPACE=PATH (repeatable)."),
    every: float = typer.Option(
        None, "--every", min=1.0, callback=every_seconds, help="Repeat every SECONDS (≥ 1) until stopped."
    ),
    json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    claude_export_arg: str = typer.Option(
        None,
        "--claude-export",
        metavar="PATH",
        help="Also index a claude.ai data export: its conversations.json (or the unzipped folder).",
    ),
    file_arg: str = typer.Option(
        None,
        "--file",
        metavar="PATH",
        help="Index just this transcript (a file under a source; e.g. from an after-turn hook).",
    ),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="Also name each default agent home that does not exist on this machine, and each file that failed to load with its error.",
    ),
    archive: bool = typer.Option(
        False, "--archive", help="After each pass, also copy new and grown transcripts into the archive (as `archive`)."
    ),
) -> None:
    """Index agent homes into the catalogue (incremental; unchanged files are not read). Exit 75
    (EX_TEMPFAIL) when another index pass is running: nothing was done, try again later."""
    home, file = path_option(home_arg, "--home"), path_option(file_arg, "--file")
    claude_export = path_option(claude_export_arg, "--claude-export")
    if home is not None and not home.expanduser().is_dir():
        fail(f"--home {home} is not a directory", 2)
    if claude_export is not None:  # issue 16: namespace claude-ai-export
        if not claude_export.expanduser().exists():
            fail(f"--claude-export {claude_export} does not exist", 2)
        if problem := _claude_export_problem(claude_export.expanduser()):
            fail(f"--claude-export {claude_export} {problem}", 2)
        source = [*(source or []), f"claude-ai-export={claude_export}"]
    if file is not None and every is not None:
        fail("--file and --every cannot be combined", 2)
    if file is not None and archive:
        fail("--file and --archive cannot be combined", 2)
    _check_parse_workers()  # a bad value fails now, not in a later pass of an --every loop
    db = database()
    try:
        sources = resolve_sources(db.settings, home=home, extra=source)
    except ValueError as exc:
        fail(str(exc), 2)
    if file is not None:
        _index_one(db, sources, file, json=json)
        return
    if archive:
        from agent_history.ingest.archive.run import ArchiveUnwritable, check_writable

        try:
            check_writable(db.settings.archive_root)
        except ArchiveUnwritable as exc:
            fail(str(exc), 2)
    from agent_history.ingest.archive.retention import retention_warnings

    for w in retention_warnings(sources, need_file=True):  # once per command, not per pass of a loop
        print_warning(w.line())
    explicit = _explicit_namespaces(db.settings, home, source)
    said: set[str] = set()  # missing configured homes already warned about (an --every loop says each once)
    stop = stop_on_signals()
    # The first connection of the command is the first-use check (`Database.connect`: one
    # connection when the server runs and needs nothing, else it starts and migrates it with
    # one-line errors), before the pool connects.
    _warn_if_rebuild_interrupted(db)
    # Two connections per pass: the loader's, and the writer thread's (batches are written while
    # the next one is parsed). Pooled, so a long `--every` loop survives a server restart.
    metrics = start_metrics("index", db, sources) if every else None
    # A loop waits for a connection no longer than about one interval (5–30 s) before it says
    # the pass failed and tries again: a server that is down is reported, not waited on silently.
    pool = db.pool(min_size=2, max_size=2, timeout_s=POOL_WAIT_S if not every else max(5.0, min(POOL_WAIT_S, every)))
    failed = interrupted = False
    busy: list[str] = []  # why the last pass could not start (AnotherPassRunning's line)
    skipped_said: set[str] = set()  # skipped paths (a symlink …) already said: an --every loop says each once

    def one_pass() -> bool:
        nonlocal failed, interrupted
        busy.clear()
        try:
            with pool.connection() as conn, pool.connection() as writer:
                summary = _one_pass(
                    conn,
                    writer,
                    sources,
                    stop,
                    show_progress=console.is_terminal and not json,
                    redact=_redactor(db.settings),
                    bulk_kw=_bulk_kw(db.settings),
                    busy=busy,
                )
        except psycopg.OperationalError as exc:
            if not every:
                raise
            # a loop outlives a database restart: say so and try again next interval
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            print_event(f"pass failed, retrying in {every:g} s: {first}")
            return True
        if summary is None:
            console.print(busy[0] if busy else "another index pass is running", highlight=False)
            busy.append("")  # the exit code: 75 when the last pass could not start
            return False
        interrupted = summary.interrupted
        if db.is_embedded and wal_left_unsettled(summary):
            from agent_history.db.embedded import checkpoint

            checkpoint(db.dsn)  # let the WAL of a bulk load be recycled now (issue 18: data dir size)
        for line in summary.skipped_homes:
            # "<namespace>: <path> does not exist" (or "is a symlink loop"; the loader): a default home the user does not
            # have is not news (only with --verbose); a configured one is a warning, once per loop
            namespace = line.split(":", 1)[0]
            if namespace in explicit and line not in said:
                print_event(f"warning: skipped {line}")
                said.add(line)
            elif namespace not in explicit and verbose and line not in said:
                print_event(f"skipped {line}")
                said.add(line)
        if summary.bulk == "unfinished":
            print_event(
                "bulk load stopped at a batch boundary: the next index pass rebuilds the search indexes "
                "and term statistics"
            )
        new = [line for line in summary.skipped_paths if line not in skipped_said]
        skipped_said.update(new)
        for line in new[:20]:
            print_event(f"skipped {line}")
        if len(new) > 20:
            print_event(f"… and {len(new) - 20} more skipped paths (see --json)")
        if verbose:
            for line in summary.load_errors:
                print_event(f"load error: {line}")
        document = summary.as_dict() if json else None
        if not json:
            console.print(_summary_line(summary), highlight=False, soft_wrap=True)
            if summary.files_scanned == 0 and "nothing found" not in said:  # once per --every loop
                print_event(_nothing_found(sources, summary))
                said.add("nothing found")
        failed = summary.files_failed > 0
        if archive and not stop.is_set():
            from agent_history.cli.archive import run_archive_pass

            with pool.connection() as conn:
                run_archive_pass(conn, db, sources, stop, json=json, keep_going=bool(every), into=document)
        if document is not None:
            print_json(document)  # one document per pass, the archive pass's summary inside it
        return True

    try:
        run_every(every, stop, one_pass, db)
    finally:
        pool.close()
        if metrics is not None:
            metrics.close()  # one last collection, one flush
    if stop.signum == signal.SIGINT:  # Ctrl-C: what was done is committed; say so, exit 130
        if interrupted:  # a pass was cut short
            print_event("interrupted: the files indexed so far are committed; run index again to finish")
        else:  # between passes of a loop (or after the last): nothing was in flight
            print_event("stopped: every pass finished and is committed")
        raise typer.Exit(INTERRUPTED_EXIT)
    if busy:
        raise typer.Exit(BUSY_EXIT)
    if failed:
        raise typer.Exit(1)


POOL_WAIT_S = 30.0
"""Longest wait for a database connection in one pass (psycopg-pool's timeout), seconds."""


def _warn_if_rebuild_interrupted(db) -> None:
    from agent_history.ingest.rebuild import rebuild_interrupted

    with db.connect() as conn:
        at = rebuild_interrupted(conn, host_scope(db.settings).host)
    if at:
        print_warning(REBUILD_INTERRUPTED.format(at=at))


def _nothing_found(sources, summary: PassSummary) -> str:
    """The one line a pass that found no transcript prints: where it looked and what to do.
    Project harnesses' sources (Aider, Crush: searched in known projects and roots) are no home."""
    homes = [s for s in sources if not (s.known_projects or s.roots or s.project_dirs)]
    return nothing_found_line("no transcripts found", "index", homes, len(summary.skipped_homes))


def _explicit_namespaces(settings, home: Path | None, extra: list[str] | None) -> set[str]:
    """Namespaces the user named (config ``[sources]`` / ``[memories]``, ``--source``,
    ``--claude-export``) — a missing one is a warning; the other homes are defaults (or the
    layout of ``--home DIR``), whose absence is normal."""
    named = set() if home else {str(k) for k in (settings.raw.get("sources") or {})}
    named |= set(settings.memories)
    named |= {spec.split("=", 1)[0].strip() for spec in extra or () if "=" in spec}
    return named


def _index_one(db, sources, path: Path, *, json: bool) -> None:
    """`index --file PATH`: one pass over that transcript alone, on one connection (no discovery
    walk, no writer thread, no pool: the after-turn hook path). Exit 2 when no source discovers
    the file, 1 when it failed to load, `BUSY_EXIT` (75) when another pass is running."""
    from agent_history.ingest.discovery import file_ref

    if not path.exists():
        fail(f"--file {path}: no such file", 2)
    if not path.is_file() and not path.is_dir():  # a pass skips these by name; so does --file
        fail(f"--file {path} is not a regular file (a FIFO, a socket or a device)", 2)
    ref = file_ref(sources, path)
    if ref is None:
        fail(f"--file {path} is not a transcript of any source (no discovery rule of a configured home matches it)", 2)
    with db.connect(autocommit=True) as conn:
        try:
            summary = Loader(
                conn, batch_lines=_batch_lines(), redact=_redactor(db.settings), host=db.settings.host
            ).run(sources, refs=[ref])
        except AnotherPassRunning as exc:
            console.print(str(exc), highlight=False)
            raise typer.Exit(BUSY_EXIT) from None
    for line in summary.skipped_paths:
        print_event(f"skipped {line}")
    if json:
        print_json(summary.as_dict())
    else:
        console.print(_summary_line(summary), highlight=False, soft_wrap=True)
    if summary.files_failed:
        raise typer.Exit(1)


def _redactor(settings):
    """`embed.redact.redact` when ``[index] redact`` is on, else None (`Loader(redact=…)`)."""
    if not settings.index_redact:
        return None
    from agent_history.embed.redact import redact

    return redact


def _batch_lines() -> int:
    """Lines per transaction: AGENT_HISTORY_BATCH_LINES (tuning and tests), default BATCH_LINES."""
    value = os.environ.get("AGENT_HISTORY_BATCH_LINES")
    return int(value) if value and value.isdigit() and int(value) > 0 else BATCH_LINES


def _bulk_kw(settings) -> dict:
    """`Loader` keywords of ``[index] bulk`` / ``bulk_min_bytes`` and this machine's ``host``."""
    return {"bulk": settings.index_bulk, "bulk_min_bytes": settings.index_bulk_min_bytes, "host": settings.host}


def host_scope(settings):
    """The `ingest.rebuild.Scope` of this machine: its own files when it indexes into a shared
    server under host namespaces (`config.Settings.profile`), else the whole catalogue."""
    from agent_history.config import LOCAL_PROFILE
    from agent_history.ingest.rebuild import Scope

    if settings.profile == LOCAL_PROFILE:
        return Scope()
    return Scope(settings.host, frozenset(s.namespace for s in resolve_sources(settings)))


def _one_pass(
    conn, writer, sources, stop, *, show_progress: bool, redact=None, bulk_kw=None, busy: list[str] | None = None
) -> PassSummary | None:
    """One pass; None when another pass holds a namespace it needs (its line appended to `busy`)."""
    bulk_kw = bulk_kw or {}
    busy = busy if busy is not None else []
    if not show_progress:
        try:
            return Loader(
                conn, stop=stop, batch_lines=_batch_lines(), writer_conn=writer, redact=redact, **bulk_kw
            ).run(sources)
        except AnotherPassRunning as exc:
            busy.append(str(exc))
            return None
    from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
            return Loader(
                conn, stop=stop, progress=tick, batch_lines=_batch_lines(), writer_conn=writer, redact=redact, **bulk_kw
            ).run(sources, plan=plan)
        except AnotherPassRunning as exc:
            busy.append(str(exc))
            return None


@app.command("status")
def status_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Per namespace: files by status, sessions, messages, model calls, tokens, issues; last pass."""
    from agent_history.db.status import server_summary

    db = database()
    from agent_history.embed.status import embedding_status, status_line
    from agent_history.ingest.archive.retention import retention_warnings
    from agent_history.ingest.archive.status import archive_status
    from agent_history.ingest.collect import collector_status
    from agent_history.ingest.collect import status_line as collector_line
    from agent_history.ingest.rebuild import catalogued_sources, rebuild_interrupted
    from agent_history.ingest.secret_scan import scanned_once
    from agent_history.ingest.sources import resolve_sources
    from agent_history.journal.status import journal_status
    from agent_history.journal.status import status_line as journal_line
    from agent_history.read.secrets import secret_counts

    with db.connect() as conn:
        data = catalogue_status(conn)
        data["rebuild_interrupted_at"] = rebuild_interrupted(conn, host_scope(db.settings).host)
        catalogued = catalogued_sources(conn, host_scope(db.settings))
        data["embedding"] = embedding_status(conn, db.settings.embedding)
        data["journal_sync"] = journal_status(conn)
        data["collector"] = collector_status(conn, embedded=db.is_embedded)
        data["archive"] = archive_status(conn, db.settings.archive_root, db.settings.archive_host)
        data["secrets"] = secret_counts(conn)
        dbs = server_summary(db, conn)  # on this connection: one query, no row counts
        data["secrets_scanned"] = scanned_once(conn)
    # the homes this catalogue holds transcripts of (the configured ones when it holds none yet)
    data["retention_warnings"] = [w.as_dict() for w in retention_warnings(catalogued or resolve_sources(db.settings))]
    data["database"] = {
        k: dbs[k]
        for k in (
            "server",
            "postgres_version",
            "pgvector_version",
            "keyword_backend",
            "schema_revision",
            "schema_at_head",
        )
    }
    if json:
        print_json(data)
        return
    d = data["database"]
    print_wrapped(
        f"{d['server']} · PostgreSQL {d['postgres_version']} · pgvector {d['pgvector_version']} · "
        f"keyword backend {d['keyword_backend']} · schema {d['schema_revision']}"
        + ("" if d["schema_at_head"] else " (not at head)")
    )
    _print_namespaces(data["namespaces"])
    for line in _elsewhere_lines(data["namespaces"]):
        print_wrapped(line)
    last = data["last_pass"]
    if last:
        print_wrapped(
            f"last pass: {second(last['finished_at'], zone=True)} ({last['status']}, {last['seconds']:.2f} s)"
        )
    else:
        print_wrapped("no index pass yet: run `agent-history index`")
    killed = data["killed_passes"]
    if killed:
        print_wrapped(
            f"killed passes: {killed['count']} (the last started {second(killed['last_started_at'], zone=True)}, "
            f"noticed by the next pass at {second(killed['noticed_at'], zone=True)})"
        )
    if data.get("bulk_pass"):
        print_wrapped(
            f"bulk load unfinished (started {second(data['bulk_pass']['started_at'], zone=True)}): search runs without "
            "its indexes and on stale term statistics until the next `agent-history index` completes it"
        )
    print_wrapped(status_line(data["embedding"]))
    print_wrapped(journal_line(data["journal_sync"]))
    print_wrapped(collector_line(data["collector"]))
    print_wrapped(_archive_line(data["archive"]))
    print_wrapped(_secrets_line(data["secrets"], scanned=data["secrets_scanned"]))
    for w in data["retention_warnings"]:
        print_warning(_retention_line(w))
    if data["rebuild_interrupted_at"]:
        print_warning(REBUILD_INTERRUPTED.format(at=data["rebuild_interrupted_at"]))


REBUILD_INTERRUPTED = (
    "a rebuild started at {at} emptied the catalogue and did not finish: it holds only what was "
    "re-read; run `agent-history rebuild` again (index alone does not bring back transcripts that "
    "exist only in cold copies or the archive)"
)


def _retention_line(w: dict) -> str:
    from agent_history.ingest.archive.retention import RetentionWarning

    return RetentionWarning(w["namespace"], w["product"], w["setting"], w["file"], w["days"], w["default_days"]).line()


def _archive_line(a: dict) -> str:
    """The archive in one line of `status`."""
    if not a["copies"]:
        return f"archive: no copies yet in {a['path']} (run `agent-history archive`)"
    bad = f", {a['bad_copies']:,} bad (run `archive --verify`)" if a["bad_copies"] else ""
    return (
        f"archive: {count(a['files'], 'transcript')}, {count(a['copies'], 'copy', 'copies')}, "
        f"{a['compressed_bytes'] / 1e6:,.1f} MB "
        f"({a['bytes'] / 1e6:,.1f} MB uncompressed){bad}, last {second(a['last_archived_at'], zone=True)}; "
        f"{count(a['archive_only_sessions'], 'session')} "
        f"{'exists' if a['archive_only_sessions'] == 1 else 'exist'} only in the archive"
    )


def _secrets_line(counts: dict[str, int], *, scanned: bool) -> str:
    """Secret-shaped spans found by the last `secrets` scan, by detector, in one line of `status`;
    "not scanned yet" when no scan ever ran (`scanned` False: no finding is not "none found")."""
    if not scanned:
        return "secrets: not scanned yet (`agent-history secrets` scans stored text and lists what it finds)"
    if not counts:
        return "secrets: none found by the last scan of stored text (`agent-history secrets` scans)"
    total = sum(counts.values())
    by = ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"secrets: {total:,} secret-shaped spans in stored text ({by}; `agent-history secrets` lists them)"


def _print_namespaces(namespaces: dict[str, dict]) -> None:
    """The per-namespace table, one file status and one issue kind per line; headers wrap when
    it is too wide, and when even that does not fit, one record per namespace (names whole)."""
    records = []
    for name, d in sorted(namespaces.items()):
        tokens = f"{d['tokens']:,}" if d["tokens"] is not None else "-"
        fields = (name, f"{d['sessions']:,}", f"{d['messages']:,}", f"{d['model_calls']:,}", tokens)
        files = [f"{k} {v}" for k, v in sorted(d["files"].items())]
        issues = [f"{k} {v}" for k, v in sorted(d["issues"].items())]
        lines = ["files: " + ", ".join(files), *(f"issue: {i}" for i in issues)]
        records.append((Record(fields, lines=lines, styles=("green",)), files, issues))
    table = compact_table("namespace", "files", "sessions", "messages", "model calls", "tokens", "issues")
    for rec, files, issues in records:
        table.add_row(rec.fields[0], "\n".join(files), *rec.fields[1:], "\n".join(issues) or "-")
    for column in table.columns[:2]:
        column.no_wrap = True
    wrap_headers_to_fit(console, table)
    if fits(console, table):
        console.print(table)
    else:
        print_records(
            console, ("namespace", "sessions", "messages", "model calls", "tokens"), [r for r, _, _ in records]
        )


@app.command("issues")
def issues_cmd(
    kind: str = typer.Option(None, "--kind", help="Only this kind (invalid_json, bad_record, load_error …)."),
    namespace: str = typer.Option(None, "--namespace", "-n", help="Only files of this namespace."),
    limit: int = typer.Option(100, "--limit", help="Issues to list (by file, then byte offset; 1–1000)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List parse issues with file and byte offset, then what `collect` could not read (no namespace)."""
    from agent_history.cli.options import _check_filter_values
    from agent_history.ingest.collect import COLLECT_ISSUE_KINDS, list_collect_issues
    from agent_history.ingest.status import issue_kinds
    from agent_history.model.issues import KINDS

    check_limit(limit)
    db = database()
    with db.connect() as conn:
        _check_filter_values(conn, [namespace] if namespace else None)
        known = (*KINDS, *COLLECT_ISSUE_KINDS)
        if kind is not None and kind not in known and kind not in issue_kinds(conn):
            fail(f"unknown --kind {kind!r} (known: {', '.join(known)})", 2)
        rows = list_issues(conn, kind=kind, namespace=namespace, limit=limit)
        if namespace is None and len(rows) < limit:  # collect issues belong to no namespace
            rows += list_collect_issues(conn, kind=kind, limit=limit - len(rows))
    if json:
        print_json(rows)
        return
    if not rows:
        console.print("no parse issues")
        return
    records = [
        Record((r["kind"], "" if r["byte_offset"] is None else str(r["byte_offset"]), str(r["line_number"] or "")),
               lines=(r["detail"] or "-",),
               paths=(r["path"],), styles=("magenta",))
        for r in rows
    ]  # fmt: skip
    table = compact_table("kind", "file", "byte", "line", "detail")
    for rec in records:
        table.add_row(rec.fields[0], rec.paths[0], *rec.fields[1:], rec.lines[0])
    table.columns[0].no_wrap = True
    if fits(console, table):
        console.print(table)
    else:  # the file on a line of its own: shortened in the middle only if longer than a line
        print_records(console, ("kind", "byte", "line"), records)


@app.command("rebuild-check")
def rebuild_check_cmd(
    json: bool = typer.Option(False, "--json", help="Print JSON (default: a table and one line per finding)."),
    table: bool = typer.Option(False, "--table", hidden=True, help="The table (the default; kept for scripts)."),
    verify: bool = typer.Option(
        False, "--verify", help="Also re-hash every catalogued file and list those whose content changed unnoticed."
    ),
) -> None:
    """Per namespace: catalogued files found hot, cold, cold only, missing; exit 1 if rebuild would
    refuse (or, with --verify, if a catalogued file changed)."""
    from agent_history.ingest.rebuild import rebuild_check
    from agent_history.ingest.sources import cold_sources
    from agent_history.ingest.verify import verify_prefixes

    db = database()
    with db.connect() as conn:
        result = rebuild_check(conn, cold_sources(db.settings), db.settings.archive_root, host_scope(db.settings))
        verified = verify_prefixes(conn) if verify else None
    data = result.as_dict()
    if verified is not None:
        data["verify"] = verified.as_dict()
    if json:
        print_json(data)
    else:
        _print_rebuild_check(data)
    if result.would_refuse or (verified is not None and verified.changed_count):
        raise typer.Exit(1)


def _print_rebuild_check(data: dict) -> None:
    table = Table("namespace", "hot", "cold", "archive", "cold only", "missing")
    for name, c in sorted(data["namespaces"].items()):
        table.add_row(name, *(f"{c[k]:,}" for k in ("hot", "cold", "archive", "cold_only", "missing")))
    console.print(table)
    for path in data["missing_files"]:
        console.print(f"missing from every tier: {path}", highlight=False, markup=False, soft_wrap=True)
    if data["missing_count"] > len(data["missing_files"]):
        console.print(f"… and {data['missing_count'] - len(data['missing_files']):,} more missing from every tier")
    if data["would_refuse"]:
        console.print("rebuild would refuse (`rebuild --allow-missing` drops the missing files)")
    v = data.get("verify")
    if v is None:
        return
    console.print(
        f"verified {count(v['files_checked'], 'file')} ({v['bytes_hashed'] / 1e6:,.1f} MB hashed): "
        f"{v['changed']:,} changed, {v['unnoticed']:,} of them unnoticed by index; "
        f"{v['no_baseline']:,} without a baseline, {v['absent']:,} absent",
        highlight=False,
        soft_wrap=True,
    )
    if not v["changed_files"]:
        return
    for c in v["changed_files"]:  # one line per file, the path whole (never wrapped)
        noticed = "the next index re-reads it" if c["noticed_by_index"] else "unnoticed by index"
        console.print(
            f"{c['reason']} ({noticed}): {c['path']} [{c['namespace']}; "
            f"{c['indexed_offset']:,} bytes indexed, now {c['size']:,}]",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if v["unnoticed"]:
        console.print("run `agent-history rebuild` to re-read the files index misses")


@app.command("rebuild")
def rebuild_cmd(
    home_arg: str = typer.Option(None, "--home", metavar="PATH", help="Also read these hot homes, laid out like ~."),
    source: list[str] = typer.Option(None, "--source", help="Also read a hot source: NAMESPACE=PATH."),
    allow_missing: bool = typer.Option(
        False, "--allow-missing", help="Drop transcripts gone from both tiers instead of refusing."
    ),
    json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Empty the derived tables and re-read every transcript (hot, then cold copies and the archive);
    keeps caches. Exit 75 (EX_TEMPFAIL) when an index pass is running."""
    from agent_history.ingest.rebuild import RebuildRefused, rebuild, rebuild_interrupted
    from agent_history.ingest.sources import cold_sources

    home = path_option(home_arg, "--home", "a directory")
    db = database()
    try:
        hot = resolve_sources(db.settings, home=home, extra=source) if home or source else []
    except ValueError as exc:
        fail(str(exc), 2)
    conn = db.connect(autocommit=True)
    writer = db.connect(autocommit=True)
    try:
        summary = rebuild(
            conn,
            hot,
            cold_sources(db.settings),
            allow_missing=allow_missing,
            archive=db.settings.archive_root,
            staging=db.settings.data_dir / "restore",
            scope=host_scope(db.settings),
            host=db.settings.host,
            writer_conn=writer,
            redact=_redactor(db.settings),
        )
    except RebuildRefused as exc:
        fail(f"rebuild refused: {exc}", 1)
    except AnotherPassRunning as exc:
        console.print(str(exc), highlight=False)
        raise typer.Exit(BUSY_EXIT) from None
    except KeyboardInterrupt:
        conn.close()  # its REBUILD_LOCK with it: the mark left now means interrupted
        with db.connect() as check:
            at = rebuild_interrupted(check, host_scope(db.settings).host)
        if at:
            print_event("interrupted: " + REBUILD_INTERRUPTED.format(at=at).removeprefix("a "))
        else:
            print_event("interrupted before anything was changed")
        raise typer.Exit(INTERRUPTED_EXIT) from None
    finally:
        conn.close()
        writer.close()
    if json:
        print_json(summary.as_dict())
    else:
        console.print("rebuilt: " + _summary_line(summary).removeprefix("indexed: "), highlight=False, soft_wrap=True)
