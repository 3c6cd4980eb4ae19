"""`recall`, `sql` and session curation (`sessions exclude|restore|delete`, `sessions exclusions
export|import`): issue 17. Thin: parse, call `read.recall` / `mcp.sqltool` / `ingest.curation`,
render.

Exit codes as the read commands: 0 found, 1 nothing found, 2 usage (a refused, empty or failing `sql` statement too),
configuration and database errors.
"""

from __future__ import annotations

import csv
import io
import sys
from decimal import Decimal

import orjson
import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.options import (
    SEARCH_TIMEOUT_S,
    _ambiguous,
    _check_filter_values,
    _found,
    _namespaces,
    _not_found,
    _search_params,
    _session_arg,
    _time_limit,
    _timed_out,
    no_empty_directory,
)
from agent_history.cli.output import console, count, fail, path_option, print_event, print_json, write_document
from agent_history.cli.sessions import sessions_app
from agent_history.cli.tables import flow, path_line
from agent_history.cli.text import _body, _short_ts
from agent_history.read.common import AmbiguousSession, SessionNotFound
from agent_history.read.requests import cancelled as cancelled_agents
from agent_history.search.request import DEFAULT_LIMIT

exclusions_app = typer.Typer(help="Exclusions as JSON, to carry them with the config to another machine.")
sessions_app.add_typer(exclusions_app, name="exclusions")


@app.command("recall")
def recall_cmd(
    query: str = typer.Argument(..., help="What to recall: words, a phrase, an error, a question."),
    hits: int = typer.Option(3, "--hits", help="How many best hits to expand (1–10)."),
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only this harness; repeatable."),
    exclude_agent: list[str] = typer.Option(
        None, "--exclude-agent", "-x", help="Leave this agent out before retrieval (claude-code = claude); repeatable."
    ),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context from the config; repeatable."),
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        callback=no_empty_directory,
        help="Only sessions whose cwd is this directory or below.",
    ),
    context_project: str = typer.Option(None, "--context-project", help="Prefer this project's sessions (× 1.5)."),
    source_type: list[str] = typer.Option(None, "--source-type", help="session | memory; repeatable."),
    since: str = typer.Option(None, "--since", help="From: 7d, 12h, 2w, YYYY-MM-DD or an ISO timestamp."),
    until: str = typer.Option(None, "--until", help="Until (exclusive; a date means its end)."),
    rank: str = typer.Option("default", "--rank", help="default or blend (see `search --help`)."),
    mode: str = typer.Option(None, "--mode", help="keyword, vector or hybrid (default: hybrid once embeddings exist)."),
    timeout: float = typer.Option(
        SEARCH_TIMEOUT_S, "--timeout", help="Stop a query running longer than this many seconds (exit 3); 0: no limit."
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The thread around the best hits: each hit's turn with 1 turn before and 1 after (prompt →
    replies → tool calls and results, file order; ≤ 12 steps a turn), plus the nearest turn of
    sessions linked by lineage (parent, sub-agents, resumed/forked from and into); ≤ 80 steps,
    ordered by session start then file position, each with its session, agent, time and file:line."""
    from agent_history.read.recall import RecallBounds, thread_recall
    from agent_history.search.hybrid import Mode, VectorUnavailable

    if not 1 <= hits <= 10:
        fail(f"--hits must be between 1 and 10 (got {hits})", 2)
    timeout = _time_limit(timeout)
    if mode is not None and mode not in tuple(Mode):
        fail(f"unknown search mode {mode!r} (known: {', '.join(Mode)})", 2)
    db = database()
    req = _search_params(
        query,
        limit=DEFAULT_LIMIT,
        scope="messages",
        agent=agent,
        exclude_agent=exclude_agent,
        namespaces=_namespaces(namespace, context, db.settings.contexts),
        classes=[],
        since=since,
        until=until,
        project=project,
        session=None,
        source_type=source_type,
        context_project=context_project,
        rank=rank,
    )
    if cancelled := cancelled_agents(req):
        fail(f"nothing to recall: --agent and --exclude-agent both name {', '.join(cancelled)}", 1)
    from agent_history.db.connection import set_statement_timeout

    with db.connect() as conn:
        _check_filter_values(conn, namespace)
        set_statement_timeout(conn, timeout)
        try:
            result = thread_recall(conn, req, mode, db.settings.embedding, RecallBounds(hits=hits))
        except VectorUnavailable as exc:
            fail(str(exc), 2)
        except Exception as exc:
            _timed_out(exc, timeout, "recall")
            raise
    if json:
        print_json(result.as_dict())
        _found(bool(result.steps))
        return
    if result.note:
        console.print(Text.assemble(("note:", "yellow"), " ", result.note), highlight=False, soft_wrap=True)
    if not result.steps:
        console.print("nothing recalled")
    current = None
    for step in result.steps:
        thread = step.session_uid + (f"/{step.agent_id}" if step.agent_id else "")
        if thread != current:
            current = thread
            flow(console, [Text("──", style="bold blue"), Text(step.agent, style="bold blue"),
                           Text(thread, style="bold blue"), Text(f"({step.relation})", style="bold blue")], sep=" ")  # fmt: skip
        label = Text(step.label or step.kind, style="magenta")
        if step.outcome:
            label.append(f" ({step.outcome})", style="red" if step.outcome != "ok" else "dim")
        flow(console, [Text(f"{'▶' if step.is_hit else ' '} {_short_ts(step.ts)}", style="dim"),
                       Text(f"t{step.turn}", style="dim"), label], indent="    ")  # fmt: skip
        if step.source_path:
            path_line(console, step.source_path, f":{step.line_number}", indent="    ")
        console.print(_body(step.text[:600], 4))
    if result.truncated:
        console.print("(cut at the step limit)", style="dim")
    _found(bool(result.steps))


@app.command("sql")
def sql_cmd(
    statement: str = typer.Argument(
        ..., help='One read-only statement, e.g. "SELECT agent, count(*) FROM ah.session GROUP BY 1".'
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON (the MCP sql tool's shape)."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV (header row first)."),
) -> None:
    """Run one read-only SQL statement as the MCP `sql` tool does: reader role, read-only
    transaction, one statement, 30 s timeout, at most 200 rows, cells cut at 2,000 characters.
    Numbers print as PostgreSQL writes them (`4326`, `12.50`; in JSON, numbers of those digits)."""
    from agent_history.mcp.guard import GuardRefused
    from agent_history.mcp.reader import guarded_connection
    from agent_history.mcp.sqltool import SqlError, number_text, run_sql

    if json and as_csv:
        fail("--json and --csv exclude each other", 2)
    db = database()
    try:
        with guarded_connection(db.reader_dsn) as conn:
            result = run_sql(conn, statement, exact_numeric=True)
    except GuardRefused as exc:
        fail(str(exc), 2)
    except SqlError as exc:  # refused, empty or failing statement: an error, not "nothing found"
        fail(str(exc), 2)
    names = [c["name"] for c in result["columns"]]
    note = result.get("truncated")  # the MCP tool's note (str) or None
    if json:
        rows = [[_json_number(v) if isinstance(v, Decimal | float) else v for v in row] for row in result["rows"]]
        print_json({**result, "rows": rows, "truncated": bool(note)})
    elif as_csv:
        text = io.StringIO()
        out = csv.writer(text, lineterminator="\n")
        out.writerow(names)
        for row in result["rows"]:
            out.writerow([_csv_cell(v) for v in row])
        write_document(text.getvalue())
    else:
        from agent_history.cli.tables import compact_table

        table = compact_table(*names)
        for row in result["rows"]:
            table.add_row(
                *["NULL" if v is None else number_text(v) if isinstance(v, Decimal | float) else str(v) for v in row]
            )
        console.print(table)
        console.print(count(result["row_count"], "row"))
    if note:
        print_event(f"note: {note}")


def _csv_cell(value: object) -> str:
    """A cell of `sql --csv`: NULL empty, text as it is, a number as PostgreSQL writes it
    (`mcp.sqltool.number_text`), anything else (booleans, JSON) as JSON text."""
    from agent_history.mcp.sqltool import number_text

    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal | float):
        return number_text(value)
    return orjson.dumps(value).decode()


def _json_number(value: Decimal | float) -> object:
    """A number cell of `sql --json`: a JSON number of PostgreSQL's digits (``4326``, ``12.50``:
    `mcp.sqltool.number_text`, written as they are), or that text as a string for NaN and the
    infinities (no JSON number holds them)."""
    from agent_history.mcp.sqltool import number_text

    text = number_text(value)
    return text if text in ("NaN", "Infinity", "-Infinity") else orjson.Fragment(text.encode())


def _resolve(conn, uid: str):
    from agent_history.read.common import resolve_session

    try:
        return resolve_session(conn, uid, "")
    except SessionNotFound:
        _not_found(uid, "UID", SessionNotFound(f"no session {uid!r} (a uid, or a unique prefix of ≥ 6 characters)"))
    except AmbiguousSession as exc:
        _ambiguous(exc)
    return None


@sessions_app.command("exclude")
def exclude_cmd(
    uid: str = typer.Argument(..., help="Session uid, or a unique prefix of ≥ 6 characters."),
    reason: str = typer.Option(None, "--reason", help="Why (kept with the exclusion)."),
) -> None:
    """Keep a session (and its sub-agents) out of search, recall, embeddings and MCP results;
    its files stay indexed and the decision survives passes and `rebuild`."""
    from agent_history.ingest.curation import exclude

    uid = _session_arg(uid, "UID")
    with database().connect() as conn:
        ref = _resolve(conn, uid)
        new = exclude(conn, ref, reason)
        conn.commit()
    console.print(
        f"{'excluded' if new else 'already excluded'}: {ref.agent} {ref.session_uid}", highlight=False, soft_wrap=True
    )


@sessions_app.command("restore")
def restore_cmd(uid: str = typer.Argument(..., help="Session uid, or a unique prefix of ≥ 6 characters.")) -> None:
    """Lift an exclusion (also for a session no longer in the catalogue)."""
    from agent_history.ingest.curation import excluded, restore
    from agent_history.session.refs import ambiguous_message

    uid = _session_arg(uid, "UID")
    with database().connect() as conn:
        matches = excluded(conn, uid)
        if not matches:
            _not_found(uid, "UID", LookupError(f"no excluded session {uid!r}"))
        uids = sorted({u for _, u in matches})
        if len(uids) > 1:
            fail(ambiguous_message(uid, uids, len(uids), "excluded sessions"), 2)
        for agent, session_uid in matches:
            restore(conn, agent, session_uid)
        conn.commit()
    console.print(f"restored: {matches[0][0]} {matches[0][1]}", highlight=False, soft_wrap=True)


@sessions_app.command("delete")
def delete_cmd(
    uid: str = typer.Argument(..., help="Session uid, or a unique prefix of ≥ 6 characters."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a session's rows (and its files' source records). The transcript is indexed again by
    the next pass unless the session is excluded (`sessions exclude`)."""
    from agent_history.ingest.curation import delete
    from agent_history.read.sessions import exclusion_recorded

    uid = _session_arg(uid, "UID")
    with database().connect() as conn:
        ref = _resolve(conn, uid)
        is_excluded = exclusion_recorded(conn, ref.agent, ref.session_uid)
        if not yes:
            if not sys.stdin.isatty():
                fail("refusing to delete without confirmation: pass --yes", 2)
            console.print(f"{ref.agent} session {ref.session_uid} ({ref.title or 'untitled'})", soft_wrap=True)
            typer.confirm("delete it?", abort=True)
        counts = delete(conn, ref)
    console.print(
        f"deleted {ref.agent} {ref.session_uid}: {count(counts['sessions'], 'thread')}, "
        f"{counts['messages_and_tool_calls']:,} messages and tool calls, {count(counts['files'], 'file record')}",
        highlight=False,
        soft_wrap=True,
    )
    if is_excluded:
        console.print(
            "it stays excluded: the next pass indexes the transcript again but keeps it out of results", soft_wrap=True
        )
    else:
        console.print(
            "the next pass indexes the transcript again unless you exclude it (`sessions exclude`)", soft_wrap=True
        )


@exclusions_app.command("export")
def export_cmd(file_arg: str = typer.Argument(None, metavar="FILE", help="Write here (default: stdout).")) -> None:
    """Write every exclusion as JSON: [{agent, session_uid, reason, excluded_at}]."""
    file = path_option(file_arg, "FILE", "a file")
    from agent_history.ingest.curation import export_exclusions

    with database().connect() as conn:
        data = export_exclusions(conn)
    if file is None:
        print_json(data)
    else:
        try:
            file.write_text(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
        except OSError as exc:  # a missing directory, a directory, no permission: one plain line
            fail(f"cannot write {file}: {exc.strerror or exc}", 2)
        console.print(f"{count(len(data), 'exclusion')} written to {file}", highlight=False, soft_wrap=True)


@exclusions_app.command("import")
def import_cmd(
    file_arg: str = typer.Argument(..., metavar="FILE", help="A file written by `sessions exclusions export`."),
) -> None:
    """Add the exclusions of FILE (existing ones are kept); an excluded_at without an offset is UTC."""
    file = path_option(file_arg, "FILE", "a file")
    from agent_history.ingest.curation import import_exclusions

    try:
        data = orjson.loads(file.read_bytes())
    except orjson.JSONDecodeError as exc:
        fail(f"{file}: not JSON ({exc})", 2)
    except OSError as exc:  # missing, a directory, unreadable: one plain line
        fail(f"cannot read {file}: {exc.strerror or exc}", 2)
    with database().connect() as conn:
        try:
            added = import_exclusions(conn, data)
        except ValueError as exc:
            fail(f"{file}: {exc}", 2)
    console.print(
        f"{count(added, 'exclusion')} added, {len(data) - added} already present", highlight=False, soft_wrap=True
    )
