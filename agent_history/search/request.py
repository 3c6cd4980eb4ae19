"""What a keyword search asks for and what it returns (pure dataclasses, no I/O).

`SearchRequest` is shared by the CLI, the MCP server and the evaluation; `SearchHit` carries the
provenance docs/design.md §8 requires (session, agent, namespace, timestamp, class, source file and byte
offset, snippet). Snippets mark matched words with `HL_START` / `HL_END` (U+0002 / U+0003):
`SearchHit.plain_snippet()` strips them, `highlights()` gives their character spans.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum

from agent_history.analysis.scripts import has_script
from agent_history.model import classes

HL_START = "\x02"
HL_END = "\x03"
DEFAULT_LIMIT = 20
MAX_LIMIT = 1000
"""The most hits one CLI search returns (the MCP tools cap lower, for the model's context)."""


class Scope(StrEnum):
    """Which documents to search: message text, tool input/output, or both."""

    MESSAGES = "messages"
    TOOLS = "tools"
    ALL = "all"
    SUMMARIES = "summaries"  # journal session summaries (search.summaries; English stemming)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A keyword search. Empty filter tuples mean "no restriction".

    ``classes`` defaults to the conversational subset (`model.classes.CONVERSATIONAL`); pass
    ``classes.ALL`` (``--all-classes``) or ``classes.PROMPTS`` (``--prompts``). ``namespaces``
    is what a context resolves to. ``project`` is a cwd prefix. ``since``/``until`` are
    timezone-aware bounds on the message timestamp (tool calls: their start).
    """

    query: str
    limit: int = DEFAULT_LIMIT
    scope: Scope = Scope.MESSAGES
    agents: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    classes: tuple[str, ...] = classes.CONVERSATIONAL
    since: datetime | None = None
    until: datetime | None = None
    project: str | None = None
    session: str | None = None
    """A session uid (matches main thread and its sub-agents) — or a uid prefix of ≥ 6 characters
    (`session.refs.MIN_UID_PREFIX`; the CLI and MCP resolve a prefix to one session first)."""
    exclude_agents: tuple[str, ...] = ()
    """Harness names left out before retrieval (`search.rank.resolve_agent` maps product names)."""
    source_types: tuple[str, ...] = ()
    """``session`` and/or ``memory`` (``ah.session.source_type``); empty = both."""
    context_project: str | None = None
    """Prefer hits whose cwd is this directory or below (`search.rank.boost_project`); others stay."""
    rank: str = "default"
    """``default`` (the backend's order) or ``blend`` (`search.rank.blend`)."""
    now: datetime | None = None
    """The clock for ``blend`` recency (None: the current time); injectable for tests."""


@dataclass(slots=True)
class SearchHit:
    """One result with provenance. ``kind`` is ``message`` or ``tool_call``; ``id`` is that
    table's surrogate id (stable within one catalogue build only). ``label`` is the message
    class, or the tool name for a tool call. ``score`` is BM25 (higher is better; comparable
    within one search)."""

    kind: str
    id: int
    score: float
    session_uid: str
    agent_id: str
    agent: str
    namespace: str | None
    ts: datetime | None
    label: str | None
    title: str | None
    cwd: str | None
    source_path: str | None
    byte_offset: int | None
    line_number: int | None
    snippet: str
    root_session_uid: str | None = None
    outcome: str | None = None
    matched_terms: int | None = None
    backend: str = "fts"
    extra: dict = field(default_factory=dict)

    def plain_snippet(self) -> str:
        """The snippet without highlight markers."""
        return self.snippet.replace(HL_START, "").replace(HL_END, "")

    def highlights(self) -> list[tuple[int, int]]:
        """Character spans ``[start, end)`` of the highlighted words in `plain_snippet()`."""
        spans, out, start = [], 0, None
        for ch in self.snippet:
            if ch == HL_START:
                start = out
            elif ch == HL_END:
                if start is not None:
                    spans.append((start, out))
                start = None
            else:
                out += 1
        return spans

    def as_dict(self) -> dict:
        """JSON-ready form: plain snippet plus highlight spans."""
        d = asdict(self)
        d["snippet"] = self.plain_snippet()
        d["highlights"] = [list(s) for s in self.highlights()]
        d["score"] = round(self.score, 4)
        if not d["extra"]:
            del d["extra"]
        return d


def mark_terms(snippet: str, needles: list[str], min_len: int = 3) -> str:
    """`snippet` with case-insensitive occurrences of `needles` wrapped in HL_START/HL_END —
    the fallback for what ts_headline cannot mark. A snippet ts_headline marked nothing in gets
    every needle of ≥ `min_len` characters (the match was a part of a compound token: ``pool``
    inside ``src/db/pool.py``); needles holding CJK or symbol characters (``构建``, ``🚀``),
    which ts_headline's parser never sees as words, are marked at any length, outside the
    spans already marked."""
    marked = HL_START in snippet
    words = sorted({n for n in needles if has_script(n) or (not marked and len(n) >= min_len)}, key=len, reverse=True)
    if not words:
        return snippet
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    parts = re.split(f"({HL_START}[^{HL_END}]*{HL_END})", snippet)
    return "".join(
        p if p.startswith(HL_START) else pattern.sub(lambda m: HL_START + m.group(0) + HL_END, p) for p in parts
    )


_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|min|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {
    "m": timedelta(minutes=1),
    "min": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
}
MAX_RELATIVE = timedelta(days=36_525)
"""How far back a relative time may reach: 100 years (36,525 days). A fixed bound, so the
accepted range does not depend on today's date; anything older is before any transcript."""
EARLIEST, LATEST = date(1, 1, 2), date(9999, 12, 30)
"""ISO dates and timestamps accepted: one day inside Python's `datetime` range, so the end of a
day and a conversion to UTC cannot overflow (PostgreSQL's range is wider)."""
_HELP = "use 7d, 12h, 30m, 2w, YYYY-MM-DD or an ISO timestamp"


def check_range(
    since: datetime | None,
    until: datetime | None,
    since_text: str,
    until_text: str,
    *,
    names: tuple[str, str] = ("--since", "--until"),
) -> None:
    """Raise ValueError (``--since X is after --until Y``) when both bounds are given and `since`
    (inclusive) is not before `until` (exclusive): a backwards range is a mistake, not an empty
    answer. `*_text` are the values as the user wrote them; `names` how the user named the two
    bounds (the CLI's options by default)."""
    if since is not None and until is not None and since >= until:
        word = "is after" if since > until else "is not before"
        raise ValueError(f"{names[0]} {since_text} {word} {names[1]} {until_text}")


def parse_when(value: str, *, now: datetime | None = None, end_of_day: bool = False, option: str = "time") -> datetime:
    """A timezone-aware bound from ``7d`` / ``12h`` / ``30m`` / ``2w`` (that long before `now`), an
    ISO date (``2025-11-20``: its start in UTC, or its end with `end_of_day`) or an ISO timestamp
    (naive means UTC).

    Raises ValueError with a one-line message starting with `option` (the flag or argument name,
    e.g. ``--since``): for text that is not a time, a relative time beyond `MAX_RELATIVE`, or a
    date outside `EARLIEST`…`LATEST`.
    """
    now = now or datetime.now(UTC)
    m = _RELATIVE.match(value)
    if m:
        amount, unit = float(m.group(1)), _UNITS[m.group(2).lower()]
        if amount * unit.total_seconds() > MAX_RELATIVE.total_seconds():
            raise ValueError(
                f"{option} {value.strip()} is out of range: a relative time reaches back at most 100 years "
                f"({MAX_RELATIVE.days}d, {MAX_RELATIVE.days * 24}h or {MAX_RELATIVE.days // 7}w)"
            )
        return now - amount * unit
    text = value.strip()
    is_date = re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) is not None
    try:
        ts = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{option}: not a time: {value!r} ({_HELP})") from None
    if not EARLIEST <= ts.date() <= LATEST:
        raise ValueError(f"{option} {text} is out of range: dates and timestamps go from {EARLIEST} to {LATEST}")
    if is_date:
        return datetime.combine(ts.date() + timedelta(days=1) if end_of_day else ts.date(), time.min, UTC)
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)
