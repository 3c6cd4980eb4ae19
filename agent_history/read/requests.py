"""One request object per question — search, sessions, session, usage, efficiency, loops, why,
touched, recent sessions, active sessions, infra actions — built once, here, from a plain mapping of parameters, and asked through the read layer.

The front ends only parse their own input into that mapping: the CLI from its options, the MCP
server from a tool's arguments, the web UI from GET parameters. Validation lives here, so an
unknown key, a time that is not one, a backwards range, an unknown agent name or a limit out of
range gives the same one-line error text (`RequestError`) from every front end; each front end
turns it into its own failure (exit 2, a tool error, a 400 page).

Errors name a parameter as the person or agent wrote it: builders take ``flags`` — True (the
CLI) names ``--since``, ``--limit``, ``--timezone``; False (the MCP tools' arguments, the web UI's
GET parameters) names ``since``, ``limit``, ``timezone`` — and the rest of the line is the same.

Parameter conventions (every builder): a missing key, None, ``""`` and ``[]`` all mean "not
given"; repeatable values are lists (a single string is one value); ``since`` is inclusive and
``until`` exclusive (a date as ``until`` means its end), as `search.request.parse_when` reads
them; agent names go through `harnesses.resolve_name` (product names accepted); namespaces are
what a front end's context or scope resolved to (contexts are configuration, not a request).
Pure: no database, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from agent_history.harnesses import resolve_name
from agent_history.model import classes as message_classes
from agent_history.model.classes import CLASS_GROUPS
from agent_history.search.request import DEFAULT_LIMIT, MAX_LIMIT, Scope, SearchRequest, check_range, parse_when


class RequestError(ValueError):
    """A request that cannot be asked as given; the message is one line, the same from every
    front end."""


SOURCE_TYPES = ("session", "memory")
"""``ah.session.source_type`` values (migration 0009)."""
RANKS = ("default", "blend")
"""Search orders (`search.postrank.rerank`)."""
ROLES: tuple[str, ...] = ("root", "worker", "solo")
"""Thread roles of the efficiency report (``ah.efficiency.role``, sql/35_efficiency.sql)."""
USAGE_BY = ("loop", "repo", "project", "branch", "host", "model", "agent")
"""Usage groupings that replace the period view (``usage --by``)."""

KEYS: dict[str, frozenset[str]] = {
    "search": frozenset(
        {
            "query",
            "limit",
            "in",
            "agents",
            "exclude_agents",
            "namespaces",
            "classes",
            "since",
            "until",
            "project",
            "session",
            "source_types",
            "context_project",
            "rank",
        }
    ),  # fmt: skip
    "sessions": frozenset(
        {"agents", "namespaces", "since", "until", "project", "subagents", "limit", "health", "hosts"}
    ),
    "session": frozenset({"uid", "agent_id", "from", "to", "max_chars"}),
    "usage": frozenset(
        {"view", "by", "since", "until", "agents", "namespaces", "project", "model", "timezone", "window"}
    ),
    "efficiency": frozenset({"session_uid", "agents", "namespaces", "since", "until", "role", "limit"}),
    "loops": frozenset({"status", "since", "until", "repo", "namespaces", "limit"}),
    "why": frozenset({"sha", "namespaces"}),
    "touched": frozenset({"pattern", "ops", "agents", "namespaces", "since", "limit", "touches_per_session"}),
    "recent_sessions": frozenset({"limit", "project", "agents", "namespaces"}),
    "active_sessions": frozenset({"minutes", "at", "limit", "namespaces"}),
    "infra_actions": frozenset({"host", "since", "until", "programs", "limit", "namespaces"}),
}
"""The parameters each question accepts (the mapping's keys)."""


FLAG_NAMES = {"session_uid": "--session", "ops": "--op", "query": "QUERY"}
"""Request keys whose CLI option is not ``--<key>`` (underscores as dashes; ``QUERY`` the argument)."""
KEY_NAMES = {"ops": "op"}
"""Request keys named otherwise in errors to the MCP tools and the web UI (a list's one item)."""


def name_of(key: str, flags: bool) -> str:
    """How a front end names parameter `key`: its CLI option (``--since``) with `flags`, else the
    key itself (``since``: MCP arguments, web GET parameters; `KEY_NAMES` for a list's item)."""
    return FLAG_NAMES.get(key, "--" + key.replace("_", "-")) if flags else KEY_NAMES.get(key, key)


def check_keys(question: str, params: Mapping[str, Any], *, flags: bool = True) -> None:
    """Raise RequestError naming the first key of `params` that `question` does not accept, or
    the first whose text holds a NUL character — no catalogue text does (PostgreSQL text cannot
    hold one), so it could only find nothing or fail in the driver. A command-line argument
    cannot carry a NUL (the shell ends it there); the MCP tools and the library can."""
    unknown = sorted(set(params) - KEYS[question])
    if unknown:
        raise RequestError(f"{question}: unknown parameter {unknown[0]!r} (known: {', '.join(sorted(KEYS[question]))})")
    for key, value in params.items():
        items = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(v, str) and "\x00" in v for v in items):
            raise RequestError(f"{name_of(key, flags)} holds a NUL character (no catalogue text does)")


def _given(params: Mapping[str, Any], key: str) -> Any:
    """The value of `key`, None when missing or empty."""
    value = params.get(key)
    return None if value in (None, "", [], ()) else value


def _values(params: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A repeatable value as distinct strings in order (blank ones dropped)."""
    value = _given(params, key)
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    return tuple(dict.fromkeys(str(v).strip() for v in items if str(v).strip()))


def agents_of(values) -> tuple[str, ...]:
    """Harness names for `values` (harness or product names, `harnesses.resolve_name`), distinct,
    in order. Raises RequestError: ``unknown agent 'vim' (accepted: …)``."""
    try:
        return tuple(dict.fromkeys(resolve_name(v) for v in values or ()))
    except ValueError as exc:
        raise RequestError(str(exc)) from None


def time_range(
    params: Mapping[str, Any], *, now: datetime | None = None, tz: tzinfo | None = None, flags: bool = True
) -> tuple[datetime | None, datetime | None]:
    """``(since, until)`` of `params` as aware times (`search.request.parse_when`; ``until`` a
    date means its end). With `tz`, a day (``YYYY-MM-DD`` or ``YYYYMMDD``) is read in that zone,
    as the usage report's periods are. Raises RequestError: ``--since: not a time: …``,
    ``--since X is after --until Y``."""
    since_text, until_text = _given(params, "since"), _given(params, "until")
    try:
        names = (name_of("since", flags), name_of("until", flags))
        lo = _when(since_text, names[0], now=now, tz=tz, end=False)
        hi = _when(until_text, names[1], now=now, tz=tz, end=True)
        check_range(lo, hi, since_text or "", until_text or "", names=names)
    except ValueError as exc:
        raise RequestError(str(exc)) from None
    return lo, hi


def _when(value: str | None, option: str, *, now: datetime | None, tz: tzinfo | None, end: bool) -> datetime | None:
    if value is None:
        return None
    text = str(value).strip()
    if tz is not None and len(text) == 8 and text.isdigit():  # ccusage's YYYYMMDD
        text = f"{text[:4]}-{text[4:6]}-{text[6:]}"
    if tz is not None and len(text) == 10 and text[4] == "-" and text[7] == "-":
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{option}: not a date: {value!r}") from None
        return datetime.combine(day + timedelta(days=1) if end else day, time.min, tz)
    return parse_when(text, now=now, end_of_day=end, option=option)


def _limit(params: Mapping[str, Any], default: int, maximum: int, flags: bool) -> int:
    value = _given(params, "limit")
    if value is None:
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise RequestError(f"{name_of('limit', flags)} must be a whole number (got {value!r})") from None
    if not 1 <= n <= maximum:
        raise RequestError(f"{name_of('limit', flags)} must be between 1 and {maximum} (got {n})")
    return n


def _choice(value: Any, what: str, known, default: str | None = None) -> str | None:
    """`value` when it is one of `known` (None/empty: `default`); else RequestError
    ``unknown <what> 'x' (known: …)``."""
    if value in (None, ""):
        return default
    if value not in tuple(known):
        raise RequestError(f"unknown {what} {value!r} (known: {', '.join(known)})")
    return str(value)


def classes_of(values) -> tuple[str, ...]:
    """Message classes for `values` — class names or group names (`model.classes.CLASS_GROUPS`:
    conversational, prompts, all) — distinct, in order; none given = the conversational default.
    Raises RequestError naming the classes and groups."""
    out: list[str] = []
    for value in values or ():
        for name in CLASS_GROUPS.get(value, (value,)):
            if name not in message_classes.ALL:
                raise RequestError(
                    f"unknown message class {name!r} (classes: {', '.join(message_classes.ALL)}; "
                    f"groups: {', '.join(CLASS_GROUPS)})"
                )
            if name not in out:
                out.append(name)
    return tuple(out) or message_classes.CONVERSATIONAL


def session_ref(value: str | None, option: str) -> str | None:
    """A session uid or uid prefix (stripped; None when not given). Raises RequestError for a
    blank one. A uid of any length is looked up exactly; only a prefix needs
    `session.refs.MIN_UID_PREFIX` characters (the lookup says so)."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        from agent_history.session.refs import MIN_UID_PREFIX

        raise RequestError(
            f"{option}: give a session uid or a prefix of at least {MIN_UID_PREFIX} characters (got {value!r})"
        )
    return text


def search_request(
    params: Mapping[str, Any], *, limit_max: int = MAX_LIMIT, now: datetime | None = None, flags: bool = True
) -> SearchRequest:
    """The `search.request.SearchRequest` for `params` (keys: `KEYS["search"]`; ``in`` is the
    scope: messages | tools | all | summaries; ``classes`` class or group names). Raises
    RequestError. `limit_max` is the front end's cap (the MCP tools cap lower)."""
    check_keys("search", params, flags=flags)
    query = params.get("query")
    if query is None:  # an empty one is asked: the search says why it finds nothing
        raise RequestError("search: give a query (words, a phrase, an identifier, a path or a question)")
    since, until = time_range(params, now=now, flags=flags)
    scope = _choice(params.get("in"), "search scope", tuple(Scope), "messages")
    return SearchRequest(
        query=str(query),
        limit=_limit(params, DEFAULT_LIMIT, limit_max, flags),
        scope=Scope(scope),
        agents=agents_of(_values(params, "agents")),
        namespaces=_values(params, "namespaces"),
        classes=classes_of(_values(params, "classes")),
        since=since,
        until=until,
        project=_given(params, "project"),
        session=session_ref(params.get("session"), name_of("session", flags)),
        exclude_agents=agents_of(_values(params, "exclude_agents")),
        source_types=tuple(_choice(t, "source type", SOURCE_TYPES) for t in _values(params, "source_types")),
        context_project=_given(params, "context_project"),
        rank=_choice(params.get("rank"), "rank", RANKS, "default"),
    )


def cancelled(req: SearchRequest) -> list[str]:
    """The agents a search both asks for and leaves out, when that leaves nothing to search
    (every ``agents`` value is in ``exclude_agents``); [] otherwise."""
    if req.agents and set(req.agents) <= set(req.exclude_agents):
        return sorted(req.agents)
    return []


SESSIONS_DEFAULT_LIMIT = 20


@dataclass(frozen=True, slots=True)
class SessionsRequest:
    """A session listing (`read.sessions.sessions_of`): newest first (by start, else end), main
    threads unless ``include_subagents``; ``health`` keeps these grade letters only."""

    agents: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    project: str | None = None
    include_subagents: bool = False
    limit: int = SESSIONS_DEFAULT_LIMIT
    health: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()


def sessions_request(params: Mapping[str, Any], *, now: datetime | None = None, flags: bool = True) -> SessionsRequest:
    """The `SessionsRequest` for `params` (keys: `KEYS["sessions"]`; ``health`` a letter, a
    range ``C-F`` or a list ``A,F``; ``subagents`` a bool; ``hosts`` machine names, checked
    against the catalogue by the caller). Raises RequestError."""
    check_keys("sessions", params, flags=flags)
    from agent_history.classify.health import grades_in

    since, until = time_range(params, now=now, flags=flags)
    health = _given(params, "health")
    try:
        grades = grades_in(",".join(health) if isinstance(health, list | tuple) else health) if health else ()
    except ValueError as exc:
        raise RequestError(str(exc)) from None
    return SessionsRequest(
        agents=agents_of(_values(params, "agents")),
        namespaces=_values(params, "namespaces"),
        since=since,
        until=until,
        project=_given(params, "project"),
        include_subagents=bool(params.get("subagents")),
        limit=_limit(params, SESSIONS_DEFAULT_LIMIT, MAX_LIMIT, flags),
        health=grades,
        hosts=_values(params, "hosts"),
    )


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """One thread's timeline slice (`read.timeline.session_timeline`): events ``start``…``end``
    (1-based, inclusive; None = from the first / to the last), texts cut at ``max_chars``
    characters (None = whole)."""

    uid: str
    agent_id: str | None = None
    start: int | None = None
    end: int | None = None
    max_chars: int | None = None


def session_request(params: Mapping[str, Any], *, flags: bool = True) -> SessionRequest:
    """The `SessionRequest` for `params` (keys: `KEYS["session"]`; ``uid`` may be
    ``UID/AGENT-ID``, the form listings print for a sub-agent thread). Raises RequestError."""
    check_keys("session", params, flags=flags)
    uid = session_ref(params.get("uid") if params.get("uid") is not None else "", "session")
    agent_id = params.get("agent_id")
    if agent_id is None and "/" in uid:
        uid, agent_id = uid.split("/", 1)
    start, end = _given(params, "from"), _given(params, "to")
    for name, value in ((name_of("from", flags), start), (name_of("to", flags), end)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise RequestError(f"{name} must be an event number of 1 or more (got {value!r})")
    if start is not None and end is not None and end < start:
        raise RequestError(f"{name_of('to', flags)} must not be before {name_of('from', flags)}")
    return SessionRequest(uid, agent_id, start, end, _given(params, "max_chars"))


@dataclass(frozen=True, slots=True)
class UsageRequest:
    """A usage report (`read.usage.usage_report`): ``view`` is a period view (`usage.periods.VIEWS`)
    or a grouping (`USAGE_BY`); ``since``/``until`` bound the call time; ``project`` and ``model``
    are case-insensitive substrings; periods are read in ``timezone``; ``window`` is the blocks
    view's window (`usage.plans.WINDOWS`: ``block`` = 5-hour billing blocks, ``week`` = 7-day
    plan windows)."""

    view: str = "daily"
    since: datetime | None = None
    until: datetime | None = None
    agents: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    project: str | None = None
    model: str | None = None
    timezone: tzinfo | None = None
    window: str = "block"


def zone(name: str | None, *, flags: bool = True) -> tzinfo:
    """The time zone named `name` (IANA), else the machine's own (TZ, /etc/localtime … via
    tzlocal). Raises RequestError for an unknown name."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name is None:
        import tzlocal

        return tzlocal.get_localzone()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise RequestError(
            f"{name_of('timezone', flags)}: unknown time zone {name!r} (an IANA name such as UTC or Europe/Berlin)"
        ) from None


def usage_request(params: Mapping[str, Any], *, now: datetime | None = None, flags: bool = True) -> UsageRequest:
    """The `UsageRequest` for `params` (keys: `KEYS["usage"]`; ``by`` replaces ``view``, whose
    default is ``daily`` — ``blocks`` with a ``window`` other than ``block``; a day as
    ``since``/``until`` is read in ``timezone``, default the machine's). Raises RequestError."""
    check_keys("usage", params, flags=flags)
    from agent_history.usage.periods import VIEWS
    from agent_history.usage.plans import WINDOWS

    view, by = _given(params, "view"), _given(params, "by")
    if view is not None and view not in VIEWS:
        raise RequestError(f"unknown view {view!r} (known: {', '.join(VIEWS)})")
    if by is not None:
        if by not in USAGE_BY:
            raise RequestError(f"{name_of('by', flags)}: unknown grouping {by!r} (known: {', '.join(USAGE_BY)})")
        if view is not None:
            raise RequestError(f"{name_of('by', flags)} {by} replaces the view; drop {view!r}")
    window = _given(params, "window") or "block"
    if window not in WINDOWS:
        raise RequestError(f"{name_of('window', flags)}: unknown window {window!r} (known: {', '.join(WINDOWS)})")
    if window != "block" and (by is not None or view not in (None, "blocks")):
        raise RequestError(f"{name_of('window', flags)} goes with the blocks view")
    view = by or view or ("blocks" if window != "block" else "daily")
    tz = zone(_given(params, "timezone"), flags=flags)
    since, until = time_range(params, now=now, tz=tz, flags=flags)
    return UsageRequest(
        view=view,
        since=since,
        until=until,
        agents=agents_of(_values(params, "agents")),
        namespaces=_values(params, "namespaces"),
        project=_given(params, "project"),
        model=_given(params, "model"),
        timezone=tz,
        window=window,
    )


@dataclass(frozen=True, slots=True)
class EfficiencyRequest:
    """An efficiency report (`read.efficiency.efficiency_report`): threads by trigger, newest first."""

    session_uid: str | None = None
    agents: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    role: str | None = None
    limit: int | None = None


def efficiency_request(
    params: Mapping[str, Any], *, now: datetime | None = None, limit_max: int = MAX_LIMIT, flags: bool = True
) -> EfficiencyRequest:
    """The `EfficiencyRequest` for `params` (keys: `KEYS["efficiency"]`). Raises RequestError."""
    check_keys("efficiency", params, flags=flags)
    since, until = time_range(params, now=now, flags=flags)
    limit = _limit(params, 0, limit_max, flags) if _given(params, "limit") is not None else None
    return EfficiencyRequest(
        session_uid=session_ref(params.get("session_uid"), name_of("session_uid", flags)),
        agents=agents_of(_values(params, "agents")),
        namespaces=_values(params, "namespaces"),
        since=since,
        until=until,
        role=_choice(params.get("role"), "role", ROLES),
        limit=limit,
    )


LOOPS_DEFAULT_LIMIT = 20


@dataclass(frozen=True, slots=True)
class LoopsRequest:
    """A loop listing (`read.loops.list_loops`): newest launch first."""

    status: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    repo: str | None = None
    namespaces: tuple[str, ...] = ()
    limit: int = LOOPS_DEFAULT_LIMIT


def loops_request(
    params: Mapping[str, Any], *, now: datetime | None = None, limit_max: int = MAX_LIMIT, flags: bool = True
) -> LoopsRequest:
    """The `LoopsRequest` for `params` (keys: `KEYS["loops"]`; ``status`` one of
    `loops.rules.STATUSES`). Raises RequestError."""
    check_keys("loops", params, flags=flags)
    from agent_history.loops.rules import STATUSES

    since, until = time_range(params, now=now, flags=flags)
    return LoopsRequest(
        status=_choice(params.get("status"), "status", STATUSES),
        since=since,
        until=until,
        repo=_given(params, "repo"),
        namespaces=_values(params, "namespaces"),
        limit=_limit(params, LOOPS_DEFAULT_LIMIT, limit_max, flags),
    )


SHA = re.compile(r"^[0-9a-f]{7,40}$")
"""A commit sha as `why` takes it: 7–40 hex digits (an abbreviation is a prefix)."""


@dataclass(frozen=True, slots=True)
class WhyRequest:
    """Where a commit came from (`read.why.why_of`): ``sha`` lower-case hex, 7–40 digits;
    ``namespaces`` keeps the origins of sessions in these (empty: every one)."""

    sha: str
    namespaces: tuple[str, ...] = ()


def why_request(params: Mapping[str, Any], *, flags: bool = True) -> WhyRequest:
    """The `WhyRequest` for `params` (keys: `KEYS["why"]`; ``sha`` stripped and lower-cased).
    Raises RequestError: ``not a commit sha: 'xyz' (7–40 hex digits)``."""
    check_keys("why", params, flags=flags)
    sha = str(params.get("sha") or "").strip().lower()
    if not SHA.match(sha):
        raise RequestError(f"not a commit sha: {sha!r} (7–40 hex digits)")
    return WhyRequest(sha, _values(params, "namespaces"))


TOUCHED_DEFAULT_LIMIT = 50
TOUCHES_PER_SESSION = 20
MAX_TOUCHES_PER_SESSION = 50


@dataclass(frozen=True, slots=True)
class TouchedRequest:
    """Sessions that touched files (`read.touched.touched_of`): ``pattern`` a path or glob
    (`read.touched.path_regex`), ``ops`` of `model.rows.FILE_OPS` (empty: all), touches since
    ``since``; at most ``limit`` sessions, ``touches_per_session`` touches listed each."""

    pattern: str
    ops: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    since: datetime | None = None
    limit: int = TOUCHED_DEFAULT_LIMIT
    touches_per_session: int = TOUCHES_PER_SESSION


def touched_request(
    params: Mapping[str, Any], *, now: datetime | None = None, limit_max: int = MAX_LIMIT, flags: bool = True
) -> TouchedRequest:
    """The `TouchedRequest` for `params` (keys: `KEYS["touched"]`). Raises RequestError: ``empty
    path pattern``, ``unknown --op 'x' (known: read, create, edit, delete, move)`` (``op`` for a
    tool argument or GET parameter), a bad ``since``, a limit out of 1…`limit_max`."""
    check_keys("touched", params, flags=flags)
    from agent_history.model.rows import FILE_OPS

    pattern = str(params.get("pattern") or "")
    if not pattern.strip():
        raise RequestError("empty path pattern")
    ops = _values(params, "ops")
    unknown = [op for op in ops if op not in FILE_OPS]
    if unknown:
        raise RequestError(
            f"unknown {name_of('ops', flags)} {', '.join(map(repr, unknown))} (known: {', '.join(FILE_OPS)})"
        )
    since, _until = time_range({"since": params.get("since")}, now=now, flags=flags)
    per = _given(params, "touches_per_session")
    if per is not None and (not isinstance(per, int) or not 1 <= per <= MAX_TOUCHES_PER_SESSION):
        raise RequestError(
            f"{name_of('touches_per_session', flags)} must be between 1 and {MAX_TOUCHES_PER_SESSION} (got {per!r})"
        )
    return TouchedRequest(
        pattern=pattern,
        ops=ops,
        agents=agents_of(_values(params, "agents")),
        namespaces=_values(params, "namespaces"),
        since=since,
        limit=_limit(params, TOUCHED_DEFAULT_LIMIT, limit_max, flags),
        touches_per_session=per or TOUCHES_PER_SESSION,
    )


RECENT_DEFAULT_LIMIT = 10


@dataclass(frozen=True, slots=True)
class RecentSessionsRequest:
    """The newest main threads with their first and last prompt (`read.overview.recent_of`):
    ``project`` a cwd (that directory or below)."""

    limit: int = RECENT_DEFAULT_LIMIT
    project: str | None = None
    agents: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()


def recent_sessions_request(
    params: Mapping[str, Any], *, limit_max: int = MAX_LIMIT, flags: bool = True
) -> RecentSessionsRequest:
    """The `RecentSessionsRequest` for `params` (keys: `KEYS["recent_sessions"]`). Raises
    RequestError (an unknown agent, a limit out of 1…`limit_max`)."""
    check_keys("recent_sessions", params, flags=flags)
    return RecentSessionsRequest(
        limit=_limit(params, RECENT_DEFAULT_LIMIT, limit_max, flags),
        project=_given(params, "project"),
        agents=agents_of(_values(params, "agents")),
        namespaces=_values(params, "namespaces"),
    )


ACTIVE_DEFAULT_MINUTES = 60
ACTIVE_MAX_MINUTES = 43_200  # 30 days
ACTIVE_DEFAULT_LIMIT = 20


@dataclass(frozen=True, slots=True)
class ActiveSessionsRequest:
    """Root sessions with events in ``(since, until]`` (`read.activity.active_roots`): the
    window of ``minutes`` minutes ending at ``until``."""

    since: datetime
    until: datetime
    minutes: int = ACTIVE_DEFAULT_MINUTES
    limit: int = ACTIVE_DEFAULT_LIMIT
    namespaces: tuple[str, ...] = ()


def active_sessions_request(
    params: Mapping[str, Any], *, now: datetime, limit_max: int = MAX_LIMIT, flags: bool = True
) -> ActiveSessionsRequest:
    """The `ActiveSessionsRequest` for `params` (keys: `KEYS["active_sessions"]`; ``at`` the
    window's end, default `now`; ``minutes`` 1…`ACTIVE_MAX_MINUTES`). Raises RequestError: a bad
    ``at``, ``minutes`` out of range, a window that would start before 0001-01-01."""
    check_keys("active_sessions", params, flags=flags)
    at = _given(params, "at")
    try:
        hi = parse_when(str(at), now=now, option=name_of("at", flags)) if at is not None else now
    except ValueError as exc:
        raise RequestError(str(exc)) from None
    minutes = _given(params, "minutes")
    minutes = ACTIVE_DEFAULT_MINUTES if minutes is None else minutes
    if not isinstance(minutes, int) or not 1 <= minutes <= ACTIVE_MAX_MINUTES:
        raise RequestError(f"{name_of('minutes', flags)} must be between 1 and {ACTIVE_MAX_MINUTES} (got {minutes!r})")
    try:
        lo = hi - timedelta(minutes=minutes)
    except OverflowError:
        raise RequestError(
            f"{name_of('at', flags)} {at} is out of range: the window would start before 0001-01-01"
        ) from None
    return ActiveSessionsRequest(
        since=lo,
        until=hi,
        minutes=minutes,
        limit=_limit(params, ACTIVE_DEFAULT_LIMIT, limit_max, flags),
        namespaces=_values(params, "namespaces"),
    )


INFRA_DEFAULT_LIMIT = 50


@dataclass(frozen=True, slots=True)
class InfraActionsRequest:
    """Tool calls that ran a remote program against a host (`mcp.tools.activity`): ``host`` a
    case-insensitive substring of the remote host (None: any), ``programs`` of
    `mcp.remote_commands.PROGRAMS`, started in ``[since, until)``."""

    programs: tuple[str, ...]
    host: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = INFRA_DEFAULT_LIMIT
    namespaces: tuple[str, ...] = ()


def infra_actions_request(
    params: Mapping[str, Any],
    *,
    programs: tuple[str, ...],
    now: datetime | None = None,
    limit_max: int = MAX_LIMIT,
    flags: bool = True,
) -> InfraActionsRequest:
    """The `InfraActionsRequest` for `params` (keys: `KEYS["infra_actions"]`; `programs` the
    known remote programs, which are also the default). Raises RequestError: an unknown program,
    a bad or backwards time range, a limit out of 1…`limit_max`."""
    check_keys("infra_actions", params, flags=flags)
    wanted = _values(params, "programs") or programs
    for program in wanted:
        _choice(program, "program", programs)
    since, until = time_range(params, now=now, flags=flags)
    return InfraActionsRequest(
        programs=wanted,
        host=_given(params, "host"),
        since=since,
        until=until,
        limit=_limit(params, INFRA_DEFAULT_LIMIT, limit_max, flags),
        namespaces=_values(params, "namespaces"),
    )
