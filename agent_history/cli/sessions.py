"""`sessions`: recent sessions with title, agent, tokens, cost, duration, sub-agents and health
grade (thin: parse, `read.sessions.list_sessions`, render). `cli.recall` adds the curation
subcommands (exclude, restore, delete, exclusions) to `sessions_app`."""

from __future__ import annotations

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database, warn_empty_contexts
from agent_history.cli.options import _ask, _check_filter_values, _found, _namespaces, no_empty_directory
from agent_history.cli.output import console, fail, print_json
from agent_history.cli.tables import Record, compact_table, print_table_or_records
from agent_history.cli.text import _short_ts
from agent_history.read.requests import RequestError, sessions_request
from agent_history.search.request import MAX_LIMIT


def _tokens(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}k" if n >= 1e3 else str(n)


def _duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    s = ms // 1000
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


sessions_app = typer.Typer(
    help="Recent sessions; `sessions exclude|restore|delete UID` and `sessions exclusions` curate them.",
    no_args_is_help=False,
)
app.add_typer(sessions_app, name="sessions")


@sessions_app.callback(invoke_without_command=True)
def sessions_cmd(
    ctx: typer.Context,
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only this harness; repeatable."),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context; repeatable."),
    since: str = typer.Option(None, "--since", help="Started since: 7d, 12h, YYYY-MM-DD …"),
    until: str = typer.Option(None, "--until", help="Started before (a date means its end)."),
    project: str = typer.Option(
        None, "--project", "-p", callback=no_empty_directory, help="cwd is this directory or below."
    ),
    subagents: bool = typer.Option(False, "--subagents", help="List sub-agent threads too."),
    limit: int = typer.Option(20, "--limit", "-n", help=f"Sessions to list (1–{MAX_LIMIT})."),
    health: str = typer.Option(
        None, "--health", help="Only sessions of this health grade: a letter (F), a range (C-F) or a list (A,F)."
    ),
    host: list[str] = typer.Option(
        None, "--host", help="Only sessions indexed by this machine (its `[host] name`); repeatable."
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Recent sessions: title, agent, tokens, cost, duration, sub-agents (totals include sub-agents)
    and health grade A–F (docs/health.md; `session` shows the reasons)."""
    if ctx.invoked_subcommand is not None:
        return
    db = database()
    req = _ask(
        sessions_request,
        {
            "agents": agent,
            "namespaces": list(_namespaces(namespace, context, db.settings.contexts)),
            "since": since,
            "until": until,
            "project": project,
            "subagents": subagents,
            "limit": limit,
            "health": health,
            "hosts": host,
        },
    )
    from agent_history.read.sessions import sessions_of

    with db.connect() as conn:
        warn_empty_contexts(conn, context, db.settings.contexts)
        _check_filter_values(conn, namespace)
        try:
            rows = sessions_of(conn, req, flags=True)
        except RequestError as exc:
            fail(str(exc), 2)
    if json:
        print_json([r.as_dict() for r in rows])
        _found(bool(rows))
        return
    if not rows:
        console.print("no sessions")
        _found(False)
    _print_sessions(rows)


SESSION_HEADERS = ("started", "agent", "session", "tokens", "cost", "duration", "subagents", "tools", "health")
RECORD_HEADERS = (*SESSION_HEADERS[:6], "subs", "tools", "hl")  # 9 columns fewer: the line fits 80
TITLE_WIDTH = 30  # narrowest title column in a table; narrower consoles get records


def _print_sessions(rows) -> None:
    """A table with the title beside the figures when it fits the console; else records: the
    figures on one line (uid whole), the title's first line below."""
    records = []
    for r in rows:
        cost = f"${r.cost_usd_with_subagents:.2f}" if r.cost_usd_with_subagents is not None else "-"
        title = (r.title or "").splitlines()[0] if r.title else "-"
        uid = r.session_uid[:13] + (f"/{r.agent_id}" if r.agent_id else "")
        fields = (
            _short_ts(r.started_at),
            r.namespace or r.agent,
            uid,
            _tokens(r.tokens_with_subagents),
            cost,
            _duration(r.duration_ms),
            str(r.subagent_count or 0),
            str(r.tool_call_count or 0),
            r.health_grade or "-",
        )
        records.append(Record(fields, lines=(title,), styles=(None, "green", "blue")))
    table = compact_table(*SESSION_HEADERS[:3], "title", *SESSION_HEADERS[3:])
    for rec in records:
        table.add_row(*rec.fields[:3], rec.lines[0][:60], *rec.fields[3:])
    for column in (*table.columns[:3], *table.columns[4:]):
        column.no_wrap = True
    # the title may wrap, at 30 columns or more; narrower consoles get records
    print_table_or_records(console, table, RECORD_HEADERS, records, wrapped={3: TITLE_WIDTH})
    for r in rows:  # a copied transcript: its rows are counted in the session that owns them
        for shared in r.shared_elsewhere:
            uid = r.session_uid[:13] + (f"/{r.agent_id}" if r.agent_id else "")
            console.print(Text(f"note: {uid}: {shared.phrase()}", style="yellow"), soft_wrap=True, highlight=False)
