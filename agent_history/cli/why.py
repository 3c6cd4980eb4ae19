"""`why` and `touched`: where code came from — the session, tool call, prompt and sub-agent
brief behind a commit, and the sessions that read, created, edited, deleted or moved matching
files (thin: parse, build the request — `read.requests.why_request` / `touched_request` — ask
`read.why.why_of` / `read.touched.touched_of`, render)."""

from __future__ import annotations

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database, warn_empty_contexts
from agent_history.cli.options import _ask, _check_filter_values, _found, _namespaces
from agent_history.cli.output import console, fail, print_json
from agent_history.cli.sessions import TITLE_WIDTH
from agent_history.cli.tables import Record, compact_table, flow, path_line, print_table_or_records
from agent_history.cli.text import _body, _first_line, _short_ts
from agent_history.echo import clip_echoes
from agent_history.read.requests import TOUCHED_DEFAULT_LIMIT, touched_request, why_request
from agent_history.search.request import MAX_LIMIT

WHY_SHOWN = 20
"""Origins `why` prints as text (`--json` gives every one): a commit is made once, but copied
sessions (a copied project, the 770 clones of `just bench-scale`) repeat its events — 749 of them
at 1 M messages took ≈ 0.8 s of rendering (docs/performance.md, read path at 1 M)."""


@app.command("why")
def why_cmd(
    sha: str = typer.Argument(..., help="A commit sha (7–40 hex digits)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Which session, tool call, prompt (and sub-agent brief) produced a commit."""
    from agent_history.read.why import one_per_commit, why_of

    req = _ask(why_request, {"sha": sha})
    db = database()
    with db.connect() as conn:
        origins, collected = why_of(conn, req)
    if json:
        print_json(
            {"sha": sha, "matches": [o.as_dict() for o in origins], "collected": [c.as_dict() for c in collected]}
        )
        _found(bool(origins or collected))
        return
    for c, *also in one_per_commit(collected):  # one line per commit, its other repositories named
        console.print(
            f"{c.sha[:12]} {c.sentence(sessions=[o.session.session_uid for o in origins], also=also)}",
            soft_wrap=True,
            markup=False,
        )
    if not origins and not collected:
        console.print(f"no commit or push {sha} in the catalogue")
        _found(False)
    for o in origins[:WHY_SHOWN]:
        s = o.session
        flow(console, [Text(f"{o.op} {o.sha}", style="bold red"), o.branch or "", _short_ts(o.ts)])
        if o.sha and len(o.sha) < len(req.sha):  # the transcript printed an abbreviation of what was asked
            console.print(
                f"  matched the abbreviation {o.sha} the transcript printed (the commit {req.sha} "
                f"unless another commit also starts with {o.sha})",
                highlight=False,
                soft_wrap=True,
                markup=False,
            )
        if o.subject:
            console.print(_body(Text(o.subject, style="italic"), 2))
        thread = s.session_uid + (f"/{s.agent_id}" if s.agent_id else "")
        flow(console, [Text("  session", style="blue"), Text(thread, style="blue"), Text(f"({s.namespace},", style="blue"),
                       Text(f"{s.cwd or '-'})", style="blue")], sep=" ", indent="    ")  # fmt: skip
        if s.title:
            console.print(
                "  title    " + _first_line(s.title, min(140, console.width - 11)), style="italic", soft_wrap=True
            )
        if o.command:
            console.print(_body(Text(f"{o.tool_name or 'tool'}  ", style="magenta") + Text(o.command[:400]), 2))
        if o.brief:
            brief = Text(f"brief ({o.subagent_type or 'sub-agent'}) ", style="cyan") + Text(o.brief.text[:600])
            console.print(_body(brief, 2))
        if o.prompt:
            console.print(_body(Text("prompt   ", style="green") + Text(o.prompt.text[:600]), 2))
        line = getattr(o, "line_number", None)
        if s.source_path:
            path_line(console, s.source_path, f"{f':{line}' if line else ''} (byte {o.byte_offset})")
    if len(origins) > WHY_SHOWN:
        console.print(
            f"… and {len(origins) - WHY_SHOWN} more origins of {sha} (`why {sha} --json` lists all {len(origins)})",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


@app.command("touched")
def touched_cmd(
    pattern: str = typer.Argument(
        ..., help="A path (file or directory, absolute or relative) or a glob (*, **, ?, [..])."
    ),
    op: list[str] = typer.Option(
        None, "--op", help="Only these operations: read, create, edit, delete, move; repeatable."
    ),
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only this harness; repeatable."),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context; repeatable."),
    since: str = typer.Option(None, "--since", help="Touched since: 7d, 12h, YYYY-MM-DD …"),
    limit: int = typer.Option(TOUCHED_DEFAULT_LIMIT, "--limit", "-n", help=f"Sessions to list (1–{MAX_LIMIT})."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Sessions that read, created, edited, deleted or moved matching files, newest first. A
    pattern too complex for PostgreSQL's regular expressions (e.g. a pasted megabyte) is a usage
    error (exit 2, one line)."""
    from agent_history.read.requests import RequestError
    from agent_history.read.touched import touched_of

    db = database()
    params = {
        "pattern": pattern,
        "ops": op,
        "agents": agent,
        "namespaces": list(_namespaces(namespace, context, db.settings.contexts)),
        "since": since,
        "limit": limit,
    }
    req = _ask(touched_request, params)
    with db.connect() as conn:
        warn_empty_contexts(conn, context, db.settings.contexts)
        _check_filter_values(conn, namespace)
        try:
            rows = touched_of(conn, req)
        except RequestError as exc:  # a pattern too complex for PostgreSQL (`read.touched.touched_of`)
            fail(str(exc), 2)
    if json:
        print_json({"pattern": pattern, "sessions": [r.as_dict() for r in rows]})
        _found(bool(rows))
        return
    if not rows:
        console.print(f"no session touched {clip_echoes(pattern)}", highlight=False)  # a pasted page: cut
        _found(False)
    records = []
    for r in rows:
        s = r.session
        ops = " ".join(f"{k}:{v}" for k, v in r.ops.items())
        uid = s.session_uid[:13] + (f"/{s.agent_id}" if s.agent_id else "")
        title = (s.title or "").splitlines()[0] if s.title else "-"
        more = [f"… {len(r.paths) - 5} more"] if len(r.paths) > 5 else []
        fields = (_short_ts(r.last_ts), s.namespace or s.agent, uid, ops)
        records.append(Record(fields, lines=(title,), paths=[*r.paths[:5], *more], styles=(None, "green", "blue")))
    table = compact_table("last", "agent", "session", "ops", "paths", "title")
    for rec in records:
        table.add_row(*rec.fields, "\n".join(rec.paths), rec.lines[0][:50])
    for column in table.columns[:5]:
        column.no_wrap = True
    # else paths on lines of their own, shortened in the middle only if longer than a line
    print_table_or_records(console, table, ("last", "agent", "session", "ops"), records, wrapped={5: TITLE_WIDTH})
