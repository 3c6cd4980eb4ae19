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

import typer

from agent_history.cli.output import fail
from agent_history.search.request import MAX_LIMIT, check_range, parse_when

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
    from agent_history.read.catalog import filter_values
    from agent_history.read.common import MIN_UID_PREFIX

    known, found = filter_values(conn, session)
    unknown = [n for n in dict.fromkeys(namespaces or ()) if n not in known]
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        fail(f"unknown namespace {names} (indexed: {', '.join(known) or 'none'})", 2)
    if not found:
        if len(session) < MIN_UID_PREFIX:
            _too_short(session, "--session")
        fail(f"--session: no session {session!r} in the catalogue", 2)
