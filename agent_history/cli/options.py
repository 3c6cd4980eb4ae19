"""What the read commands share on the way in and out: option values checked and turned into
request values (`read.requests`: agents, namespaces and contexts, times and ranges, session
uids, limits), and the exit contract.

Exit codes (`EXIT_FOUND`, `EXIT_NOTHING`; 2 from `fail`/`main` for usage, config and database
errors), the same with and without ``--json``: 0 when the lookup found something, 1 when it
found nothing; `EXIT_TIMEOUT` (3) when `search` (or `recall`) ran past its time limit.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

import typer

from agent_history.cli.output import check_limit, fail
from agent_history.read.requests import RequestError, agents_of, search_request, session_ref
from agent_history.search.request import MAX_LIMIT, parse_when

T = TypeVar("T")

EXIT_FOUND, EXIT_NOTHING, EXIT_TIMEOUT = 0, 1, 3
SEARCH_TIMEOUT_S = 30.0
"""Default time limit of each statement of `search` and `recall` (seconds): the web UI's and
the MCP `sql` tool's 30 s. Past it the command stops with one line and exit `EXIT_TIMEOUT`."""


MAX_TIMEOUT_S = 2_147_483.0
"""The longest ``--timeout`` (seconds): PostgreSQL's ``statement_timeout`` is an integer number of
milliseconds, at most 2³¹ − 1 (≈ 24.8 days); a longer one is refused by the server."""


def _time_limit(seconds: float) -> float:
    """``--timeout`` checked: 0 (no limit) … `MAX_TIMEOUT_S` seconds; else exit 2 (NaN, a
    negative number, ``inf`` or more than the server's limit)."""
    if not 0 <= seconds <= MAX_TIMEOUT_S:
        fail(f"--timeout must be 0 (no limit) or up to {MAX_TIMEOUT_S:.0f} seconds (got {seconds:.15g})", 2)
    return seconds


def no_empty_directory(param: typer.CallbackParam, value: str | None) -> str | None:
    """A typer callback for a directory option (``--project``): `value` unchanged, or exit 2 with
    one line when it is empty — an unset shell variable would otherwise filter nothing and answer
    for the whole catalogue, silently."""
    if value == "":
        fail(f"{max(param.opts, key=len)}: an empty path (give a directory)", 2)
    return value


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


def _ask(build: Callable[..., T], *args, **kwargs) -> T:
    """`build(*args, **kwargs)` — a request builder of `read.requests` — or exit 2 with its
    one-line `RequestError` (the text the MCP server and the web UI give for the same mistake)."""
    try:
        return build(*args, **kwargs)
    except RequestError as exc:
        fail(str(exc), 2)
    raise AssertionError  # fail() exits


def _agents(values: list[str] | None) -> tuple[str, ...]:
    """Validated ``--agent`` values as harness names — product names accepted
    (`read.requests.agents_of`); a typo is a usage error (exit 2), since it would otherwise just
    find nothing."""
    return _ask(agents_of, values)


def _check_limit(limit: int) -> None:
    """``--limit`` must be 1–`MAX_LIMIT` (as the search request requires); else exit 2
    (`cli.output.check_limit`)."""
    check_limit(limit, high=MAX_LIMIT)


def _session_arg(value: str | None, option: str) -> str | None:
    """A session uid or uid prefix given as `option` (None when not given), stripped; empty is a
    usage error (exit 2, `read.requests.session_ref`). A uid of any length is looked up exactly;
    only a *prefix* needs `read.common.MIN_UID_PREFIX` characters (`_not_found` says so when a
    short one matched nothing)."""
    return _ask(session_ref, value, option)


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


def _ambiguous(exc: Exception) -> None:
    """Exit 2 (a usage error: the reference must be longer) for a session uid prefix that names
    several sessions, with `session.refs.ambiguous_message`'s one line listing the candidates —
    the same for every command that takes a session reference."""
    fail(str(exc), 2)


def _when(value: str | None, option: str, *, end: bool = False) -> datetime | None:
    """`value` of `option` (``--since``/``--until``) as a time; a usage error (exit 2) if not one."""
    if not value:
        return None
    try:
        return parse_when(value, end_of_day=end, option=option)
    except ValueError as exc:
        fail(str(exc), 2)
    return None


def _search_params(
    query: str,
    *,
    limit: int,
    scope: str,
    agent: list[str] | None,
    exclude_agent: list[str] | None,
    namespaces: tuple[str, ...],
    classes: list[str],
    since: str | None,
    until: str | None,
    project: str | None,
    session: str | None,
    source_type: list[str] | None,
    context_project: str | None,
    rank: str,
):
    """The `search.request.SearchRequest` for the options `search` and `recall` share
    (`read.requests.search_request`); exit 2 with its one-line error."""
    params = {
        "query": query, "limit": limit, "in": scope, "agents": agent, "exclude_agents": exclude_agent,
        "namespaces": list(namespaces), "classes": classes, "since": since, "until": until, "project": project,
        "session": session, "source_types": source_type, "context_project": context_project, "rank": rank,
    }  # fmt: skip
    return _ask(search_request, params)


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
    nothing (`read.catalog.check_filter_values`, which ``/api/search`` asks too)."""
    from agent_history.read.catalog import check_filter_values

    _ask(check_filter_values, conn, namespaces, session)
