"""`session`: one thread's ordered timeline — messages, tool calls, spawns, compactions, git
events — a page of events at a time, with its health line, journal summary and (``--calls``)
model calls (thin: parse, `read.timeline.session_timeline`, render)."""

from __future__ import annotations

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.options import EXIT_NOTHING, _ambiguous, _ask, _not_found
from agent_history.cli.output import console, count, fail, print_json
from agent_history.cli.tables import Record, compact_table, flow, path_line, print_table_or_records
from agent_history.cli.text import _body, _first_line, _short_ts
from agent_history.read.common import AmbiguousSession, SessionNotFound
from agent_history.read.requests import session_request


def _page_range(page: int | None, start: int | None, end: int | None, every: bool) -> tuple[int | None, int | None]:
    """(first, last) event numbers to show: ``--from``/``--to`` as given, everything with
    ``--all``, else page `page` (default 1) of `PAGE_EVENTS`. Exit 2 on a contradiction (a
    backwards ``--from``/``--to`` is the request's to refuse: `read.requests.session_request`)."""
    from agent_history.read.timeline import PAGE_EVENTS

    ranged = start is not None or end is not None
    if sum((page is not None, ranged, every)) > 1:
        fail("--page, --all and --from/--to exclude each other", 2)
    for option, value in (("--page", page), ("--from", start), ("--to", end)):
        if value is not None and value < 1:
            fail(f"{option} must be 1 or more (got {value})", 2)
    if ranged or every:
        return start, end
    # event numbers are bigints: a page past the last whose numbers fit asks for that one, just as
    # empty, and the caller names the page as given ("has 1 page of 200 events, not N", exit 2)
    last_page = (2**63 - 1) // PAGE_EVENTS - 1
    first = (min(page or 1, last_page) - 1) * PAGE_EVENTS + 1
    return first, first + PAGE_EVENTS - 1


@app.command("session")
def session_cmd(
    uid: str = typer.Argument(
        ..., help="Session uid (or a unique prefix of ≥ 6 characters); UID/AGENT-ID for a sub-agent thread."
    ),
    agent_id: str = typer.Option(None, "--agent-id", help="A sub-agent thread of the session."),
    page: int = typer.Option(None, "--page", help="Page of 200 events to show (default: the first)."),
    every: bool = typer.Option(False, "--all", help="Every event, not a page."),
    start: int = typer.Option(None, "--from", help="First event number (1-based)."),
    end: int = typer.Option(None, "--to", help="Last event number (inclusive)."),
    full: bool = typer.Option(False, "--full", help="Do not shorten texts."),
    calls: bool = typer.Option(
        False,
        "--calls",
        help="Also the thread's model calls: tokens, duration, time to first token and thinking time "
        "(where the transcript records them; unknown elsewhere).",
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A session's ordered timeline: messages, tool calls, spawns, compactions, git events — a
    page of 200 events at a time (--page N, --all, or --from/--to), saying how many remain."""
    from agent_history.read.sessions import is_excluded
    from agent_history.read.timeline import PAGE_EVENTS, timeline_of

    first, last = _page_range(page, start, end, every)
    req = _ask(
        session_request,
        {
            "uid": uid,
            "agent_id": agent_id,
            "from": first,
            "to": last,
            "max_chars": None if full else (4000 if json else 400),
        },
    )
    uid = req.uid
    db = database()
    try:
        with db.connect() as conn:
            tl = timeline_of(conn, req)
            from agent_history.search.summaries import summaries_for_sessions

            journal = summaries_for_sessions(conn, [tl.session.id]).get(tl.session.id)
            excluded = is_excluded(conn, tl.session.id)
            if calls:
                from agent_history.read.usage import call_timings, replies_without_usage

                model_calls = call_timings(conn, tl.session.id)
                unrecorded = replies_without_usage(conn, tl.session.id)
    except SessionNotFound as exc:
        _not_found(uid, "session", exc)
    except AmbiguousSession as exc:
        _ambiguous(exc)
    if excluded:  # curated out: not served, as the MCP `session` tool refuses it
        fail(
            f"session {tl.session.session_uid} is excluded (sessions exclude); "
            f"`agent-history sessions restore {tl.session.session_uid}` brings it back",
            EXIT_NOTHING,
        )
    pages = max(1, -(-tl.total // PAGE_EVENTS))
    if page is not None and page > pages:
        fail(f"session {tl.session.session_uid} has {count(pages, 'page')} of {PAGE_EVENTS} events, not {page}", 2)
    if start is not None and start > tl.total:  # `--to` past the end means "to the end" (shown as such)
        valid = f"must be between 1 and {tl.total:,}" if tl.total else "has nothing to select"
        fail(f"session {tl.session.session_uid} has {count(tl.total, 'event')}: --from {valid} (got {start})", 2)
    shown_to = tl.events[-1].seq if tl.events else 0
    remaining = max(tl.total - max(shown_to, (first or 1) - 1), 0)
    paged = start is None and end is None and not every
    if json:
        where = {"page": page or 1, "pages": pages, "page_size": PAGE_EVENTS} if paged else {}
        extra = {"model_calls": model_calls, "replies_without_usage": unrecorded} if calls else {}
        print_json(
            tl.as_dict() | where | {"remaining": remaining} | ({"journal_summary": journal} if journal else {}) | extra
        )
        return
    _print_timeline(tl, journal)
    if remaining and tl.events:
        how = f"--page {(page or 1) + 1}" if paged else f"--from {shown_to + 1}"
        console.print(Text(f"{remaining:,} more events ({how}, or --all)", style="dim"), soft_wrap=True)
    if calls:
        _print_calls(model_calls, unrecorded)


def _ms(value: int | None) -> str:
    return "-" if value is None else f"{value:,} ms"


def _print_calls(model_calls: list[dict], unrecorded: int = 0) -> None:
    """The thread's model calls (`read.usage.call_timings`): time, model, tokens, duration, time to
    first token, thinking time — ``-`` where the transcript records none. A thread with replies
    and no call (`unrecorded` replies) has an unknown count, said so, never "0 model calls"."""
    if not model_calls and unrecorded:
        console.print(
            Text(f"model calls unknown: {count(unrecorded, 'reply', 'replies')}, no usage recorded in the transcript"),
            style="bold",
        )
        return
    console.print(Text(count(len(model_calls), "model call"), style="bold"))
    headers = ("time", "model", "tokens", "duration", "first token", "thinking")
    cells = [
        (
            _short_ts(c["ts"]),
            c["model"] or "-",
            "-" if c["tokens"] is None else f"{c['tokens']:,}",
            _ms(c["duration_ms"]),
            _ms(c["ttft_ms"]),
            _ms(c["thinking_ms"]),
        )
        for c in model_calls
    ]
    table = compact_table(*headers)
    for c in cells:
        table.add_row(*c)
    print_table_or_records(console, table, headers, [Record(c) for c in cells])


EVENT_STYLES = {"message": "green", "tool_call": "magenta", "spawn": "cyan", "compaction": "yellow", "git": "red"}


def _print_timeline(tl, journal: dict | None) -> None:
    """The session's header (uid, title, journal summary, namespace, cwd, file, the rows of its
    transcript another session owns: `read.shared`) and its events:
    a head line each (number, time, kind:label, outcome …) and the text below, indented."""
    s = tl.session
    width = console.width
    console.print(Text(f"{s.session_uid}" + (f"/{s.agent_id}" if s.agent_id else ""), style="bold blue"))
    if s.title:
        console.print(_first_line(s.title, min(160, width)), style="italic", soft_wrap=True)
    if journal:  # the journal's summary (journal-sync)
        for key in ("title", "objective", "outcomes", "unfinished"):
            if journal.get(key):
                console.print(_body(f"{key}: {journal[key]}", 0, style="cyan"))
    flow(console, [Text(s.namespace or s.agent, style="dim"), Text(s.cwd or "-", style="dim")])
    if s.source_path:
        path_line(console, s.source_path, indent="")
    if tl.summary is not None:
        console.print(_health_line(tl.summary), soft_wrap=True)
    for shared in tl.shared:  # a copied transcript's rows, counted in the session that owns them
        console.print(Text(shared.phrase(), style="yellow"), soft_wrap=True)
    first = tl.events[0].seq if tl.events else 0
    last = tl.events[-1].seq if tl.events else 0
    console.print(Text(f"events {first:,}–{last:,} of {tl.total:,}", style="dim"))
    for e in tl.events:
        d = e.detail
        parts = [Text(f"{e.seq:>5}", style="dim"), Text(_short_ts(e.ts), style="dim")]
        label = Text(f"{e.kind}:{e.label or ''}", style=EVENT_STYLES.get(e.kind))
        if e.kind == "tool_call" and d.get("outcome"):
            label.append(f" [{d.get('error_class') or d['outcome']}]", style="red" if d["outcome"] != "ok" else "dim")
        parts.append(label)
        if e.kind == "git":
            parts += [d.get("sha", ""), d.get("branch", "")]
        if e.kind == "spawn" and d.get("child_session_uid"):
            parts.append(Text(f"→ {d['child_session_uid']}/{d.get('child_agent_id', '')}", style="blue"))
        flow(console, parts, sep=" ", indent="      ")
        if e.text:
            console.print(_body(e.text, 6))


HEALTH_STYLES = {"A": "green", "B": "green", "C": "yellow", "D": "red", "F": "bold red"}


def _health_line(summary) -> Text:
    """``health C (75): reason; reason · unknown: signal, signal`` (docs/health.md)."""
    line = Text("health ", style="dim")
    if summary.health_grade is None:
        line.append("unknown", style="dim")
    else:
        line.append(summary.health_grade, style=HEALTH_STYLES.get(summary.health_grade))
        line.append(f" ({summary.health_score})")
        if summary.health_reasons:
            line.append(": " + "; ".join(summary.health_reasons))
    if summary.health_unknown:
        line.append(" · unknown: " + ", ".join(summary.health_unknown), style="dim")
    return line
