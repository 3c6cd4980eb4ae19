"""`search`: keyword, vector or hybrid search over prompts, replies, briefs, summaries and tool
input/output (thin: parse the options into a `search.request.SearchRequest`, call
`search.hybrid.run_search`, render — rich output on a terminal, ``--json`` for machines:
snippets plain, highlight spans as character offsets)."""

from __future__ import annotations

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database, warn_empty_contexts
from agent_history.cli.options import (
    SEARCH_TIMEOUT_S,
    _ambiguous,
    _check_filter_values,
    _check_limit,
    _found,
    _namespaces,
    _search_params,
    _time_limit,
    _timed_out,
    no_empty_directory,
)
from agent_history.cli.output import console, fail, print_json
from agent_history.cli.tables import flow, path_line
from agent_history.cli.text import _body, _first_line, _short_ts, _snippet_text
from agent_history.harnesses import NAMES
from agent_history.read.common import AmbiguousSession
from agent_history.read.requests import cancelled as cancelled_agents
from agent_history.search.request import Scope, SearchHit


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


def _check_classes(*, prompts: bool, all_classes: bool, message_class: list[str] | None) -> None:
    """Exit 2 (one line naming them) when more than one of --prompts, --all-classes and --class
    is given: each names the classes to search, so a second one would silently lose."""
    given = [o for o, on in (("--prompts", prompts), ("--all-classes", all_classes), ("--class", message_class)) if on]
    if len(given) > 1:
        fail(f"{' and '.join(given)} cannot be combined (each chooses the message classes searched)", 2)


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
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        callback=no_empty_directory,
        help="Only sessions whose cwd is this directory or below.",
    ),
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
    _check_limit(limit)
    _check_classes(prompts=prompts, all_classes=all_classes, message_class=message_class)
    timeout = _time_limit(timeout)
    db = database()
    req = _search_params(
        query,
        limit=limit,
        scope=scope.value,
        agent=agent,
        exclude_agent=exclude_agent,
        namespaces=_namespaces(namespace, context, db.settings.contexts),
        classes=message_class or (["prompts"] if prompts else ["all"] if all_classes else []),
        since=since,
        until=until,
        project=project,
        session=session,
        source_type=source_type,
        context_project=context_project,
        rank=rank,
    )
    from agent_history.search.hybrid import Mode, VectorUnavailable, run_search

    if cancelled := cancelled_agents(req):
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
            _ambiguous(exc)
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
