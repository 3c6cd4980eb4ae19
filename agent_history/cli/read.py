"""`search`, `sessions`, `session`, `why`, `touched`: the read commands (thin: parse, call, render).

Each command calls one library function (`search.keyword.search`, `read.*`) and renders its
result — rich output on a terminal, ``--json`` for machines (snippets plain, highlight spans
as character offsets).

Exit codes (`EXIT_FOUND`, `EXIT_NOTHING`; 2 from `fail`/`main` for usage, config and database
errors), the same with and without ``--json``: 0 when the lookup found something, 1 when it
found nothing; `EXIT_TIMEOUT` (3) when `search` (or `recall`) ran past its time limit.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database, warn_empty_contexts
from agent_history.cli.output import console, count, fail, print_json
from agent_history.cli.tables import (
    Indented,
    Record,
    compact_table,
    flow,
    path_line,
    print_table_or_records,
    shorten_end,
    shown,
)
from agent_history.harnesses import NAMES
from agent_history.model import classes
from agent_history.read.common import AmbiguousSession, SessionNotFound
from agent_history.search.request import (
    HL_END,
    HL_START,
    MAX_LIMIT,
    Scope,
    SearchHit,
    SearchRequest,
    check_range,
    parse_when,
)
from agent_history.timestamps import minute

EXIT_FOUND, EXIT_NOTHING, EXIT_TIMEOUT = 0, 1, 3
SEARCH_TIMEOUT_S = 30.0
"""Default time limit of each statement of `search` and `recall` (seconds): the web UI's and
the MCP `sql` tool's 30 s. Past it the command stops with one line and exit `EXIT_TIMEOUT`."""


def _time_limit(seconds: float) -> float:
    """``--timeout`` checked: ≥ 0 (0 = no limit); else exit 2."""
    if not seconds >= 0:
        fail(f"--timeout must be 0 (no limit) or more seconds (got {seconds:g})", 2)
    return seconds


def _timed_out(exc: Exception, seconds: float, what: str) -> None:
    """Exit `EXIT_TIMEOUT` with one line when `exc` is PostgreSQL cancelling a statement at the
    time limit (``QueryCanceled``); return otherwise."""
    import psycopg

    if isinstance(exc, psycopg.errors.QueryCanceled):
        fail(
            f"{what} stopped at its time limit ({seconds:g} s): narrow it (fewer words, --since, --agent, "
            "--namespace) or give --timeout more seconds (0: no limit)",
            EXIT_TIMEOUT,
        )


def _found(anything: bool) -> None:
    """End a read command: exit 1 when it found nothing (0 is the normal return)."""
    if not anything:
        raise typer.Exit(EXIT_NOTHING)


def _agents(values: list[str] | None) -> tuple[str, ...]:
    """Validated ``--agent`` values as harness names — product names accepted as for
    ``--exclude-agent`` (`search.rank.resolve_agent`); a typo is a usage error (exit 2), since it
    would otherwise just find nothing."""
    from agent_history.search.rank import resolve_agent

    try:
        return tuple(dict.fromkeys(resolve_agent(v) for v in values or ()))
    except ValueError as exc:
        fail(str(exc), 2)
    raise AssertionError  # fail() exits


def _check_limit(limit: int) -> None:
    """``--limit`` must be 1–`MAX_LIMIT` (as the search request requires); else exit 2."""
    if not 1 <= limit <= MAX_LIMIT:
        fail(f"--limit must be between 1 and {MAX_LIMIT} (got {limit})", 2)


def _session_arg(value: str | None, option: str) -> str | None:
    """A session uid or uid prefix given as `option` (None when not given), stripped; empty is a
    usage error (exit 2). A uid of any length is looked up exactly; only a *prefix* needs
    `read.common.MIN_UID_PREFIX` characters (`_not_found` says so when a short one matched
    nothing)."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        _too_short(value, option)
    return text


def _too_short(value: str, option: str) -> None:
    """Exit 2: `value` of `option` is too short to be looked up as a prefix."""
    from agent_history.read.common import MIN_UID_PREFIX

    fail(f"{option}: give a session uid or a prefix of at least {MIN_UID_PREFIX} characters (got {value!r})", 2)


def _not_found(value: str, option: str, exc: Exception) -> None:
    """Exit for a session uid/prefix that named no session: 2 (usage) when it is shorter than a
    prefix may be — it was looked up as an exact uid only — else 1 (nothing found)."""
    from agent_history.read.common import MIN_UID_PREFIX

    if len(value) < MIN_UID_PREFIX:
        _too_short(value, option)
    fail(str(exc), EXIT_NOTHING)


def _excluded_agents(values: list[str] | None) -> tuple[str, ...]:
    """``--exclude-agent`` values as harness names (product names accepted: `search.rank`)."""
    from agent_history.search.rank import resolve_agent

    out = []
    for v in values or ():
        try:
            out.append(resolve_agent(v))
        except ValueError as exc:
            fail(str(exc), 2)
    return tuple(dict.fromkeys(out))


SOURCE_TYPES = ("session", "memory")  # ah.session.source_type (migration 0009)
RANKS = ("default", "blend")  # search.postrank.rerank


def _source_types(values: list[str] | None) -> tuple[str, ...]:
    unknown = [v for v in values or () if v not in SOURCE_TYPES]
    if unknown:
        fail(f"unknown --source-type {unknown[0]!r} (known: {', '.join(SOURCE_TYPES)})", 2)
    return tuple(dict.fromkeys(values or ()))


def _rank(value: str) -> str:
    if value not in RANKS:
        fail(f"unknown --rank {value!r} (known: {', '.join(RANKS)})", 2)
    return value


def _when(value: str | None, option: str, *, end: bool = False) -> datetime | None:
    """`value` of `option` (``--since``/``--until``) as a time; a usage error (exit 2) if not one."""
    if not value:
        return None
    try:
        return parse_when(value, end_of_day=end, option=option)
    except ValueError as exc:
        fail(str(exc), 2)
    return None


def _range(
    since: str | None, until: str | None, *, parse: Callable[..., datetime | None] | None = None
) -> tuple[datetime | None, datetime | None]:
    """``--since``/``--until`` as (inclusive, exclusive) times — `until` a date means its end —
    parsed by `parse(value, option, end=…)` (default `_when`); a backwards range is a usage error
    (exit 2). Every command with both options reads them through here."""
    parse = parse or _when
    lo, hi = parse(since, "--since", end=False), parse(until, "--until", end=True)
    try:
        check_range(lo, hi, since or "", until or "")
    except ValueError as exc:
        fail(str(exc), 2)
    return lo, hi


def _namespaces(
    namespace: list[str] | None, context: list[str] | None, contexts: dict[str, list[str]]
) -> tuple[str, ...]:
    out = list(namespace or [])
    for name in context or []:
        if name not in contexts:
            known = ", ".join(sorted(contexts)) or "none configured"
            fail(f"unknown context {name!r} (known: {known}; define [contexts] in the config file)", 2)
        out.extend(contexts[name])
    return tuple(dict.fromkeys(out))


def _check_filter_values(conn, namespaces: list[str] | None, session: str | None = None) -> None:
    """Exit 2 with a one-line error naming an explicit ``--namespace`` that has no indexed file,
    or a ``--session`` uid/prefix that names no session — values that would otherwise just find
    nothing. One query, run only when such a filter is given."""
    if not namespaces and not session:
        return
    from agent_history.read.common import MIN_UID_PREFIX
    from agent_history.search.filters import like_prefix

    known, found = conn.execute(
        "SELECT ARRAY(SELECT DISTINCT namespace FROM ah.source_file ORDER BY 1),"
        " %(s)s::text IS NULL OR EXISTS (SELECT 1 FROM ah.session"
        " WHERE session_uid = %(s)s OR (length(%(s)s) >= %(n)s AND session_uid LIKE %(like)s))",
        {"s": session, "n": MIN_UID_PREFIX, "like": like_prefix(session) if session else None},
    ).fetchone()
    unknown = [n for n in dict.fromkeys(namespaces or ()) if n not in known]
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        fail(f"unknown namespace {names} (indexed: {', '.join(known) or 'none'})", 2)
    if not found:
        if len(session) < MIN_UID_PREFIX:
            _too_short(session, "--session")
        fail(f"--session: no session {session!r} in the catalogue", 2)


def _short_ts(ts: datetime | None) -> str:
    return minute(ts) if ts else "-"


def _snippet_text(snippet: str) -> Text:
    text, bold = Text(), False
    buf = ""
    for ch in snippet:
        if ch in (HL_START, HL_END):
            if buf:
                text.append(buf, style="bold yellow" if bold else None)
            buf, bold = "", ch == HL_START
        else:
            buf += ch
    if buf:
        text.append(buf, style="bold yellow" if bold else None)
    return text


def _first_line(text: str, width: int) -> str:
    """The first line of `text` as the console shows it (`tables.shown`), cut at the end to
    `width` characters."""
    return shorten_end(shown(console, text.splitlines()[0]) if text else "", width)


def _body(text: str | Text, indent: int, style: str | None = None) -> Indented:
    """`text` indented by `indent` columns, wrapped by the console at its width (words kept
    whole where possible)."""
    body = text if isinstance(text, Text) else console.render_str(text, style=style or "", highlight=False)
    return Indented(body, indent)


def _render_hit(n: int, h: SearchHit) -> None:
    thread = h.session_uid + (f"/{h.agent_id}" if h.agent_id else "")
    outcome = Text(f"({h.outcome})", style="red" if h.outcome not in ("ok",) else "dim") if h.outcome else Text()
    flow(
        console,
        [
            Text(f"{n:>2}. ", style="dim") + Text(f"{h.score:6.2f}", style="cyan"),
            _short_ts(h.ts),
            Text(h.namespace or h.agent, style="green"),
            Text(f"{h.label or h.kind}", style="magenta") + (Text(" ") + outcome if h.outcome else Text()),
            Text(thread, style="blue"),
        ],
        indent="    ",
    )
    if h.title:
        console.print("    " + _first_line(h.title, min(120, console.width - 4)), style="italic", soft_wrap=True)
    console.print(_body(_snippet_text(h.snippet), 4))
    if h.source_path:
        line = getattr(h, "line_number", None)
        path_line(console, h.source_path, f"{f':{line}' if line else ''} (byte {h.byte_offset})", indent="    ")


@app.command("search")
def search_cmd(
    query: str = typer.Argument(..., help='Words, "quoted phrases", identifiers, paths, error text or a question.'),
    limit: int = typer.Option(20, "--limit", "-n", help="Number of results."),
    agent: list[str] = typer.Option(
        None,
        "--agent",
        "-a",
        help=f"Only this harness ({', '.join(NAMES)}; product names such as claude-code work too); repeatable.",
    ),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context from the config; repeatable."),
    all_classes: bool = typer.Option(
        False, "--all-classes", help="Search every message class (reasoning, system, hooks …)."
    ),
    prompts: bool = typer.Option(False, "--prompts", help="Only what a person typed."),
    message_class: list[str] = typer.Option(None, "--class", help="Only these message classes; repeatable."),
    since: str = typer.Option(None, "--since", help="From: 7d, 12h, 2w, YYYY-MM-DD or an ISO timestamp."),
    until: str = typer.Option(None, "--until", help="Until (exclusive; a date means its end)."),
    project: str = typer.Option(None, "--project", "-p", help="Only sessions whose cwd is this directory or below."),
    session: str = typer.Option(
        None, "--session", "-s", help="Only this session uid (or a unique prefix of ≥ 6 characters)."
    ),
    scope: Scope = typer.Option(
        Scope.MESSAGES, "--in", help="messages, tools (tool input/output), all, or summaries (journal summaries)."
    ),
    mode: str = typer.Option(None, "--mode", help="keyword, vector or hybrid (default: hybrid once embeddings exist)."),
    exclude_agent: list[str] = typer.Option(
        None,
        "--exclude-agent",
        "-x",
        help="Leave this agent out before retrieval; repeatable. Product names work: claude-code = claude.",
    ),
    source_type: list[str] = typer.Option(
        None, "--source-type", help="Only session transcripts or memory files: session | memory; repeatable."
    ),
    context_project: str = typer.Option(
        None,
        "--context-project",
        help="Prefer sessions whose cwd is this directory or below (their scores × 1.5); others still appear.",
    ),
    rank: str = typer.Option(
        "default",
        "--rank",
        help="default (relevance) or blend: 0.7 × relevance (min-max normalised over the top candidates, "
        "limit + 30 or more) + 0.2 × recency (1 today, linear to 0 at 365 days) + 0.1 × depth (session "
        "turns = human prompts, capped at 50, / 50).",
    ),
    timeout: float = typer.Option(
        SEARCH_TIMEOUT_S, "--timeout", help="Stop a query running longer than this many seconds (exit 3); 0: no limit."
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Search prompts, replies, briefs, summaries (and tool input/output with --in): keyword, vector or hybrid.

    Results show distinct turns first, then further fragments of the same turns."""
    if message_class:
        unknown = sorted(set(message_class) - set(classes.ALL))
        if unknown:
            fail(f"unknown message class {', '.join(unknown)} (known: {', '.join(classes.ALL)})", 2)
        cls = tuple(message_class)
    elif prompts:
        cls = classes.PROMPTS
    elif all_classes:
        cls = classes.ALL
    else:
        cls = classes.CONVERSATIONAL
    _check_limit(limit)
    timeout = _time_limit(timeout)
    db = database()
    req = SearchRequest(
        query=query,
        limit=limit,
        scope=scope,
        agents=_agents(agent),
        namespaces=_namespaces(namespace, context, db.settings.contexts),
        classes=cls,
        since=(span := _range(since, until))[0],
        until=span[1],
        project=project,
        session=_session_arg(session, "--session"),
        exclude_agents=_excluded_agents(exclude_agent),
        source_types=_source_types(source_type),
        context_project=context_project,
        rank=_rank(rank),
    )
    from agent_history.search.hybrid import Mode, VectorUnavailable, run_search

    cancelled = sorted(set(req.agents) & set(req.exclude_agents))
    if cancelled and set(req.agents) <= set(req.exclude_agents):
        if json:
            print_json({"query": query, "hits": [], "note": f"--agent and --exclude-agent both name {cancelled[0]}"})
        else:
            console.print(f"nothing to search: --agent and --exclude-agent both name {', '.join(cancelled)}")
        _found(False)

    if mode is not None and mode not in tuple(Mode):
        fail(f"unknown search mode {mode!r} (known: {', '.join(Mode)})", 2)
    from agent_history.db.connection import set_statement_timeout

    with db.connect() as conn:
        warn_empty_contexts(conn, context, db.settings.contexts)
        _check_filter_values(conn, namespace, req.session)
        set_statement_timeout(conn, timeout)
        try:
            if scope is Scope.SUMMARIES:  # keyword = English full text; vector/hybrid over summary chunks
                from agent_history.search.summaries_vector import run_summary_search

                result = run_summary_search(conn, req, mode, db.settings.embedding)
            else:
                result = run_search(conn, req, mode, db.settings.embedding)
        except VectorUnavailable as exc:
            fail(str(exc), 2)  # the search could not run: configuration or the endpoint
        except AmbiguousSession as exc:
            fail(str(exc), 1)
        except Exception as exc:  # the time limit, or the embedding provider failed (summaries: no fallback)
            from agent_history.embed.provider import EmbeddingError

            _timed_out(exc, timeout, "search")
            if not isinstance(exc, EmbeddingError):
                raise
            fail(str(exc), 2)
        from agent_history.db.bulk_mark import bulk_load_unfinished

        if bulk_load_unfinished(conn):  # an index pass left its bulk load unfinished
            unfinished = (
                "an index pass stopped during a bulk load: search is slower until `agent-history index` finishes it"
            )
            result.note = f"{result.note}; {unfinished}" if result.note else unfinished
    hits = result.hits
    if json:
        print_json({"query": query, "namespaces": list(req.namespaces) or None, "mode": result.mode,
                    "note": result.note, "hits": [h.as_dict() for h in hits]})  # fmt: skip
        _found(bool(hits))
        return
    if result.note:
        console.print(Text.assemble(("note:", "yellow"), " ", result.note), highlight=False, soft_wrap=True)
    if not hits:
        console.print("no matches")
    for n, h in enumerate(hits, 1):
        _render_hit(n, h)
    _found(bool(hits))


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
    project: str = typer.Option(None, "--project", "-p", help="cwd is this directory or below."),
    subagents: bool = typer.Option(False, "--subagents", help="List sub-agent threads too."),
    limit: int = typer.Option(20, "--limit", "-n", help=f"Sessions to list (1–{MAX_LIMIT})."),
    health: str = typer.Option(
        None, "--health", help="Only sessions of this health grade: a letter (F), a range (C-F) or a list (A,F)."
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Recent sessions: title, agent, tokens, cost, duration, sub-agents (totals include sub-agents)
    and health grade A–F (docs/health.md; `session` shows the reasons)."""
    if ctx.invoked_subcommand is not None:
        return
    _check_limit(limit)
    from agent_history.classify.health import grades_in
    from agent_history.read.sessions import list_sessions

    try:
        grades = grades_in(health) if health is not None else ()
    except ValueError as exc:
        fail(str(exc), 2)

    db = database()
    with db.connect() as conn:
        warn_empty_contexts(conn, context, db.settings.contexts)
        _check_filter_values(conn, namespace)
        rows = list_sessions(
            conn,
            agents=_agents(agent),
            namespaces=_namespaces(namespace, context, db.settings.contexts),
            since=_when(since, "--since"),
            project=project,
            limit=limit,
            include_subagents=subagents,
            health=grades,
        )
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


def _is_excluded(conn, session_id: int) -> bool:
    """True when session row `session_id` (or its root) is curated out (`search.filters.not_excluded`)."""
    from agent_history.search.filters import not_excluded

    row = conn.execute(f"SELECT NOT {not_excluded('s')} FROM ah.session AS s WHERE s.id = %s", (session_id,)).fetchone()
    return bool(row and row[0])


def _page_range(page: int | None, start: int | None, end: int | None, every: bool) -> tuple[int | None, int | None]:
    """(first, last) event numbers to show: ``--from``/``--to`` as given, everything with
    ``--all``, else page `page` (default 1) of `PAGE_EVENTS`. Exit 2 on a contradiction."""
    from agent_history.read.timeline import PAGE_EVENTS

    ranged = start is not None or end is not None
    if sum((page is not None, ranged, every)) > 1:
        fail("--page, --all and --from/--to exclude each other", 2)
    if start is not None and end is not None and end < start:
        fail("--to must not be before --from", 2)
    if page is not None and page < 1:
        fail(f"--page must be 1 or more (got {page})", 2)
    if ranged or every:
        return start, end
    first = ((page or 1) - 1) * PAGE_EVENTS + 1
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
    from agent_history.read.timeline import PAGE_EVENTS, session_timeline

    if agent_id is None and "/" in uid:  # the form `sessions` prints for sub-agent threads
        uid, agent_id = uid.split("/", 1)
    uid = _session_arg(uid, "session")
    first, last = _page_range(page, start, end, every)
    db = database()
    try:
        with db.connect() as conn:
            tl = session_timeline(
                conn, uid, agent_id=agent_id, start=first, end=last, max_chars=None if full else (4000 if json else 400)
            )
            from agent_history.search.summaries import summaries_for_sessions

            journal = summaries_for_sessions(conn, [tl.session.id]).get(tl.session.id)
            excluded = _is_excluded(conn, tl.session.id)
            if calls:
                from agent_history.read.usage import call_timings, replies_without_usage

                model_calls = call_timings(conn, tl.session.id)
                unrecorded = replies_without_usage(conn, tl.session.id)
    except SessionNotFound as exc:
        _not_found(uid, "session", exc)
    except AmbiguousSession as exc:
        fail(str(exc), EXIT_NOTHING)
    if excluded:  # curated out: not served, as the MCP `session` tool refuses it
        fail(
            f"session {tl.session.session_uid} is excluded (sessions exclude); "
            f"`agent-history sessions restore {tl.session.session_uid}` brings it back",
            EXIT_NOTHING,
        )
    pages = max(1, -(-tl.total // PAGE_EVENTS))
    if page is not None and page > pages:
        fail(f"session {tl.session.session_uid} has {count(pages, 'page')} of {PAGE_EVENTS} events, not {page}", 2)
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
    """The session's header (uid, title, journal summary, namespace, cwd, file) and its events:
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


@app.command("why")
def why_cmd(
    sha: str = typer.Argument(..., help="A commit sha (7–40 hex digits)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Which session, tool call, prompt (and sub-agent brief) produced a commit."""
    from agent_history.read.why import BadSha, collected_commits, why

    db = database()
    try:
        with db.connect() as conn:
            origins = why(conn, sha)
            collected = collected_commits(conn, sha)
    except BadSha as exc:
        fail(str(exc), 2)
    if json:
        print_json(
            {"sha": sha, "matches": [o.as_dict() for o in origins], "collected": [c.as_dict() for c in collected]}
        )
        _found(bool(origins or collected))
        return
    for c in collected:
        console.print(f"{c.sha[:12]} {c.sentence(made_by_session=bool(origins))}", soft_wrap=True, markup=False)
    if not origins and not collected:
        console.print(f"no commit or push {sha} in the catalogue")
        _found(False)
    for o in origins:
        s = o.session
        flow(console, [Text(f"{o.op} {o.sha}", style="bold red"), o.branch or "", _short_ts(o.ts)])
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


@app.command("touched")
def touched_cmd(
    pattern: str = typer.Argument(
        ..., help="A path (file or directory, absolute or relative) or a glob (*, **, ?, [..])."
    ),
    op: list[str] = typer.Option(None, "--op", help="Only these operations: read, create, edit, delete, move."),
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only this harness; repeatable."),
    namespace: list[str] = typer.Option(None, "--namespace", "-N", help="Only this namespace; repeatable."),
    context: list[str] = typer.Option(None, "--context", "-c", help="A named context; repeatable."),
    since: str = typer.Option(None, "--since", help="Touched since: 7d, 12h, YYYY-MM-DD …"),
    limit: int = typer.Option(50, "--limit", "-n", help="Sessions to list."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Sessions that read, created, edited, deleted or moved matching files, newest first."""
    from agent_history.read.touched import touched

    db = database()
    try:
        with db.connect() as conn:
            warn_empty_contexts(conn, context, db.settings.contexts)
            _check_filter_values(conn, namespace)
            rows = touched(
                conn,
                pattern,
                ops=tuple(op or ()),
                agents=_agents(agent),
                namespaces=_namespaces(namespace, context, db.settings.contexts),
                since=_when(since, "--since"),
                limit=limit,
            )
    except ValueError as exc:
        fail(str(exc), 2)
    if json:
        print_json({"pattern": pattern, "sessions": [r.as_dict() for r in rows]})
        _found(bool(rows))
        return
    if not rows:
        console.print(f"no session touched {pattern}", highlight=False)
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
