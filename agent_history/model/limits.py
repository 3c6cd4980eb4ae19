"""What every catalogue column accepts, checked on the parse side before PostgreSQL sees a row.

One value PostgreSQL refuses — an index row over the btree limit, a bigint overflow, a NUL in
text, NaN in jsonb — fails the whole transaction it is written in, and with it every other file
of the batch (issue 25: a 300 KB ``sessionId`` or a token count of 2^63 stopped all indexing).
Transcripts are untrusted JSON, so every row that leaves the parse side — JSONL records, whole
documents, SQLite database rows, memories, the claude.ai export (`parsers.driver`) — goes
through `check_rows`. A value outside its column's limit costs that value only: it is replaced
as below, the row is kept, and a parse issue at the record's byte offset names the table, the
column and the original value or length. Only a row whose *required* column (a natural key, a
session reference) is missing or of the wrong type is dropped (issue ``bad_value``).

=====================  =========================================  ==========================  ==================
kind                   columns                                    accepts                     otherwise
=====================  =========================================  ==========================  ==================
key text               ids, uids, agent ids, labels (`KEY_COLUMNS`)  ≤ 512 UTF-8 bytes        digest form ¹ (``key_too_long``)
path text              ``session.cwd``, ``file_touch.path``       ≤ 2,048 UTF-8 bytes         digest form ¹ (``key_too_long``)
free text              message text, tool input/output, titles …  any length ²                —
every text column      NUL, lone UTF-16 surrogates                —                           U+FFFD (``lone_surrogate``)
token count            the five buckets, reasoning, compaction    0 … 10^9 tokens             NULL (``value_out_of_range``)
duration               ``duration_ms``, ``ttft_ms``, ``thinking_ms``  0 … 10^12 ms             NULL (``value_out_of_range``)
position               byte offsets, line numbers                 0 … 2^63 − 1                NULL (``value_out_of_range``)
exit code              ``tool_call.exit_code`` (``integer``)       −2^31 … 2^31 − 1            NULL (``value_out_of_range``)
observation count      ``record_type_seen.count``                 1 … 2^63 − 1                NULL (``value_out_of_range``)
cost                   ``model_call.recorded_cost_usd``           0 … 10^6 USD, finite        NULL (``value_out_of_range``)
boolean / timestamp    flags / ``ts``, ``started_at`` …            ``bool`` / ``datetime``     NULL (``bad_value``)
jsonb                  ``message.attachments``                    JSON, ≤ 200 levels, finite  repaired ³ (``bad_value``)
any non-text column    a value of the wrong type (``True`` posing as an int, a string, a float)  NULL (``bad_value``)
=====================  =========================================  ==========================  ==================

¹ ``<first bytes>…sha256:<64 hex digits of the whole value>``, exactly the column's byte limit
at most: stable, so the same long key still merges with itself and joins its references (every
id column shares the key limit, so a ``session_uid`` and the ``parent_session_uid`` naming it
are shortened alike); different long keys with one prefix stay apart.
² Bounded upstream: a JSONL line is at most 64 MiB (`parsers.common.lines.MAX_LINE_BYTES`) and
the search vectors read a prefix (migration 0002).
³ `model.values.sanitize`: deeper levels, NaN/Infinity and unstorable types become null, NUL
and lone surrogates U+FFFD.

Why these numbers: a btree index row holds at most 2,704 bytes (`BTREE_MAX_BYTES`, PostgreSQL's
"btree version 4 maximum"); the widest text key is ``record_type_seen (source_id, agent,
record_type, subtype, key_set)``: 4 × 512 bytes + 8 leaves room for tuple headers, and cwd and
file paths are indexed alone. Token counts: 10^9 is a hundred times the largest context window
of any model, and keeps every sum the post-passes take within bigint. ``exit_code`` is an
``integer`` column. Timestamps need no range: Python's (years 1–9999) lies inside PostgreSQL's.
`tests/test_value_limits.py` checks this table against the migrated schema: every text column
in a btree index has a byte limit, every index's limits fit, every integer range fits its column.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_history.model.rows import ParseIssueRow, Row
from agent_history.model.values import clean_text, sanitize, text_needs_cleaning

BTREE_MAX_BYTES = 2704
"""PostgreSQL's largest btree (version 4) index row, bytes: "index row size … exceeds btree
version 4 maximum 2704"."""
KEY_BYTES = 512
"""Byte limit of an id, uid or label column (see the module docstring)."""
PATH_BYTES = 2048
"""Byte limit of a path column indexed on its own (``session.cwd``, ``file_touch.path``)."""
INT8_MAX = 2**63 - 1
INT4_MIN, INT4_MAX = -(2**31), 2**31 - 1
MAX_TOKENS = 10**9
"""Largest token count of one bucket of one model call (or one compaction), tokens."""
MAX_DURATION_MS = 10**12
"""Longest duration, ms (≈ 31 years)."""
MAX_CALL_COST_USD = 10**6
"""Largest cost a harness may record for one model call, USD."""

DIGEST_MARK = "…sha256:"
"""Separates the kept prefix of an over-long key from the digest of the whole value."""


class Kind(StrEnum):
    """What a column holds, as far as PostgreSQL's limits go."""

    KEY = "key text"
    TEXT = "free text"
    INT = "integer"
    NUMBER = "number"
    BOOL = "boolean"
    TIME = "timestamp"
    JSON = "jsonb"


@dataclass(frozen=True, slots=True)
class Limit:
    """One column kind's limit: ``hi`` is a byte limit for key text, ``lo``…``hi`` a range for
    integers and numbers (inclusive; `unit` names what they count)."""

    kind: Kind
    lo: int | float | None = None
    hi: int | float | None = None
    unit: str = ""

    def describe(self) -> str:
        """Human form, e.g. ``integer 0…1,000,000,000 tokens`` or ``key text ≤ 512 bytes``."""
        if self.kind is Kind.KEY:
            return f"key text ≤ {self.hi:,} bytes"
        if self.kind in (Kind.INT, Kind.NUMBER):
            return f"{self.kind} {self.lo:,}…{self.hi:,}" + (f" {self.unit}" if self.unit else "")
        return str(self.kind)


KEY = Limit(Kind.KEY, hi=KEY_BYTES, unit="bytes")
PATH = Limit(Kind.KEY, hi=PATH_BYTES, unit="bytes")
TOKENS = Limit(Kind.INT, 0, MAX_TOKENS, "tokens")
DURATION = Limit(Kind.INT, 0, MAX_DURATION_MS, "ms")
POSITION = Limit(Kind.INT, 0, INT8_MAX, "bytes or lines")
EXIT_CODE = Limit(Kind.INT, INT4_MIN, INT4_MAX)
OBSERVATIONS = Limit(Kind.INT, 1, INT8_MAX, "observations")
COST = Limit(Kind.NUMBER, 0, MAX_CALL_COST_USD, "USD")

KEY_COLUMNS: frozenset[str] = frozenset(
    {
        # natural keys and the references that must equal them
        "agent",
        "session_uid",
        "agent_id",
        "turn_uid",
        "message_uid",
        "call_uid",
        "tool_call_uid",
        "spawn_uid",
        "compaction_uid",
        "touch_uid",
        "git_event_uid",
        "parent_session_uid",
        "parent_agent_id",
        "forked_from_uid",
        "parent_uid",
        "child_session_uid",
        "child_agent_id",
        "summary_message_uid",
        "request_id",
        # labels: indexed (message_class, error_class, sha, kind, record_type_seen's key) or
        # short names a report groups by
        "kind",
        "record_type",
        "subtype",
        "key_set",
        "record_origin",
        "message_class",
        "error_class",
        "role",
        "model",
        "name",
        "stop_reason",
        "duration_basis",
        "outcome",
        "trigger",
        "op",
        "sha",
        "old_sha",
        "branch",
        "remote_ref",
        "git_branch",
        "cli_version",
        "subagent_type",
        "source_type",
    }
)
"""Text columns limited to `KEY_BYTES`."""

COLUMN_LIMITS: dict[str, Limit] = {
    **dict.fromkeys(KEY_COLUMNS, KEY),
    "cwd": PATH,
    "path": PATH,
    **dict.fromkeys(
        ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"), TOKENS
    ),
    "tokens_before": TOKENS,
    "tokens_after": TOKENS,
    **dict.fromkeys(("duration_ms", "ttft_ms", "thinking_ms"), DURATION),
    **dict.fromkeys(("byte_offset", "line_number", "output_byte_offset", "output_line"), POSITION),
    "exit_code": EXIT_CODE,
    "count": OBSERVATIONS,
    "recorded_cost_usd": COST,
}
"""Column name → limit, for every column whose kind the annotation alone does not decide (a name
means the same in every table). ``tool_call.output`` is text: see `TABLE_COLUMN_LIMITS`."""

TABLE_COLUMN_LIMITS: dict[tuple[str, str], Limit] = {
    ("tool_call", "output"): Limit(Kind.TEXT),
}
"""(table, column) → limit where a name means something else in one table."""


def _annotation_kind(annotation: str) -> Kind:
    a = annotation.replace(" ", "")
    if a.startswith(("list", "dict")):
        return Kind.JSON
    if "datetime" in a:
        return Kind.TIME
    if a.startswith("bool"):
        return Kind.BOOL
    if a.startswith("int"):
        return Kind.INT
    if a.startswith("float"):
        return Kind.NUMBER
    return Kind.TEXT


@functools.cache
def column_limits(row_type: type[Row]) -> dict[str, Limit]:
    """Column → `Limit` of one row type. Raises LookupError for an integer or number column
    that `COLUMN_LIMITS` does not name (a new numeric column needs a deliberate range)."""
    out: dict[str, Limit] = {}
    for f in dataclasses.fields(row_type):  # type: ignore[arg-type]
        kind = _annotation_kind(str(f.type))
        limit = TABLE_COLUMN_LIMITS.get((row_type.TABLE, f.name)) or COLUMN_LIMITS.get(f.name)
        if limit is None:
            if kind in (Kind.INT, Kind.NUMBER):
                raise LookupError(f"{row_type.TABLE}.{f.name}: no range declared in model.limits.COLUMN_LIMITS")
            limit = Limit(kind)
        elif (
            limit.kind is Kind.KEY
            and kind is not Kind.TEXT
            or limit.kind in (Kind.INT, Kind.NUMBER)
            and (kind is not limit.kind)
        ):
            raise LookupError(f"{row_type.TABLE}.{f.name}: declared {limit.kind} but annotated {f.type}")
        out[f.name] = limit
    return out


@functools.cache
def required_columns(row_type: type[Row]) -> frozenset[str]:
    """Columns that cannot be NULL (annotation without ``None``): natural keys, session refs."""
    return frozenset(f.name for f in dataclasses.fields(row_type) if "None" not in str(f.type))  # type: ignore[arg-type]


def digest_form(value: str, max_bytes: int) -> str:
    """`value` shortened to at most `max_bytes` UTF-8 bytes: its first bytes (whole characters),
    `DIGEST_MARK` and the SHA-256 of all of it. Stable: the same value always gives the same form."""
    raw = value.encode("utf-8")
    tail = DIGEST_MARK + hashlib.sha256(raw).hexdigest()
    room = max_bytes - len(tail.encode("utf-8"))
    return raw[:room].decode("utf-8", "ignore") + tail


def _shown(value: Any) -> str:
    s = repr(value)
    return s if len(s) <= 40 else s[:20] + "…" + s[-8:] + f" ({len(s):,} chars)"


@dataclass(frozen=True, slots=True)
class _Plan:
    """Per row type: positions of the columns to check, by kind (the hot path of every parse)."""

    columns: tuple[str, ...]
    keys: tuple[tuple[int, int], ...]
    texts: tuple[int, ...]
    ints: tuple[tuple[int, int, int, str], ...]
    numbers: tuple[tuple[int, float, float, str], ...]
    bools: tuple[int, ...]
    times: tuple[int, ...]
    jsons: tuple[int, ...]
    required: frozenset[int]


def _unit(limit: Limit) -> str:
    return f" {limit.unit}" if limit.unit else ""


@functools.cache
def _plan(row_type: type[Row]) -> _Plan:
    limits = column_limits(row_type)
    cols = row_type.columns()
    by = {k: [] for k in Kind}
    for i, name in enumerate(cols):
        by[limits[name].kind].append(i)
    req = required_columns(row_type)
    return _Plan(
        cols,
        tuple((i, int(limits[cols[i]].hi)) for i in by[Kind.KEY]),
        tuple(by[Kind.TEXT]),
        tuple((i, int(limits[cols[i]].lo), int(limits[cols[i]].hi), _unit(limits[cols[i]])) for i in by[Kind.INT]),
        tuple(
            (i, float(limits[cols[i]].lo), float(limits[cols[i]].hi), _unit(limits[cols[i]])) for i in by[Kind.NUMBER]
        ),
        tuple(by[Kind.BOOL]),
        tuple(by[Kind.TIME]),
        tuple(by[Kind.JSON]),
        frozenset(i for i, c in enumerate(cols) if c in req),
    )


Problem = tuple[str, str, str]
"""(issue kind, ``table.column``, what was found and done) in one row."""


_BAD_TEXT_SEARCH = re.compile("[\ud800-\udfff\x00]").search


def _fits_test(limit: Limit) -> str:
    """The generated condition under which a non-NULL ``v`` does *not* fit `limit`."""
    if limit.kind is Kind.KEY:
        return f"type(v) is not str or not v.isascii() or len(v) > {int(limit.hi)} or '\\x00' in v"  # type: ignore[arg-type]
    if limit.kind is Kind.TEXT:
        return "type(v) is not str or '\\x00' in v or (not v.isascii() and bad(v) is not None)"
    if limit.kind is Kind.INT:
        return f"type(v) is not int or v < {limit.lo!r} or v > {limit.hi!r}"
    if limit.kind is Kind.NUMBER:
        return f"(type(v) is not float and type(v) is not int) or not ({limit.lo!r} <= v <= {limit.hi!r})"
    if limit.kind is Kind.BOOL:
        return "type(v) is not bool"
    if limit.kind is Kind.TIME:
        return "not isinstance(v, datetime)"
    return "True"  # jsonb: always the full path


@functools.cache
def _fits(row_type: type[Row]) -> Callable[[Row], bool]:
    """A predicate that is True when every column of a `row_type` row is within its limit (so
    `check_row` has nothing to do). Generated as straight-line code per row type, as `dataclasses`
    generates ``__init__``: it runs for every row of every parse, and a loop over the columns
    costs several times more. False sends the row through `check_row`'s full path, which also
    handles every case this treats conservatively (non-ASCII keys, any jsonb value)."""
    limits = column_limits(row_type)
    required = required_columns(row_type)
    lines = ["def fits(row):"]
    for name, limit in limits.items():
        lines.append(f"    v = row.{name}")
        if name in required:
            lines.append("    if v is None: return False")
        test = _fits_test(limit)
        lines.append(f"    if v is not None and ({test}): return False")
    lines.append("    return True")
    namespace = {"bad": _BAD_TEXT_SEARCH, "datetime": datetime}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from the limits table above, no input
    return namespace["fits"]


_FITS: dict[type, Callable[[Row], bool]] = {}


def check_row(row: Row) -> tuple[Row | None, list[Problem]]:
    """`row` within its columns' limits → (the row, changed or not; or None when it must be
    dropped, and what was found). Pure; never raises for any column value."""
    if _fits(type(row))(row):
        return row, []
    plan = _plan(type(row))
    vals = row.values()
    fixes: dict[int, Any] | None = None
    problems: list[Problem] | None = None
    table = row.TABLE

    def bad(i: int, kind: str, detail: str, new: Any) -> None:
        nonlocal fixes, problems
        if fixes is None:
            fixes, problems = {}, []
        fixes[i] = new
        problems.append((kind, f"{table}.{plan.columns[i]}", detail))  # type: ignore[union-attr]

    for i, limit in plan.keys:
        v = vals[i]
        if v is None:
            continue
        if type(v) is not str:
            bad(i, "bad_value", f"{type(v).__name__} where text is expected; stored NULL", None)
            continue
        if text_needs_cleaning(v):
            v = clean_text(v)
            bad(i, "lone_surrogate", "NUL or lone surrogate replaced by U+FFFD", v)
        if len(v) * 4 > limit:  # a character is at most 4 bytes: shorter strings need no count
            n = len(v.encode("utf-8"))
            if n > limit:
                bad(i, "key_too_long", f"{n:,} bytes > {limit:,}; stored as its digest form", digest_form(v, limit))
    for i in plan.texts:
        v = vals[i]
        if v is None:
            continue
        if type(v) is not str:
            bad(i, "bad_value", f"{type(v).__name__} where text is expected; stored NULL", None)
        elif text_needs_cleaning(v):
            bad(i, "lone_surrogate", "NUL or lone surrogate replaced by U+FFFD", clean_text(v))
    for i, lo, hi, unit in plan.ints:
        v = vals[i]
        if v is None:
            continue
        if type(v) is not int:
            bad(i, "bad_value", f"{type(v).__name__} {_shown(v)} where an integer is expected; stored NULL", None)
        elif not lo <= v <= hi:
            bad(i, "value_out_of_range", f"{_shown(v)} outside {lo:,}…{hi:,}{unit}; stored NULL", None)
    for i, lo_f, hi_f, unit in plan.numbers:
        v = vals[i]
        if v is None:
            continue
        if type(v) is not float and type(v) is not int:
            bad(i, "bad_value", f"{type(v).__name__} {_shown(v)} where a number is expected; stored NULL", None)
        elif not (math.isfinite(v) and lo_f <= v <= hi_f):
            bad(i, "value_out_of_range", f"{_shown(v)} outside {lo_f:,g}…{hi_f:,g}{unit}; stored NULL", None)
    for i in plan.bools:
        v = vals[i]
        if v is not None and type(v) is not bool:
            bad(i, "bad_value", f"{type(v).__name__} {_shown(v)} where a boolean is expected; stored NULL", None)
    for i in plan.times:
        v = vals[i]
        if v is not None and not isinstance(v, datetime):
            bad(i, "bad_value", f"{type(v).__name__} {_shown(v)} where a timestamp is expected; stored NULL", None)
    for i in plan.jsons:
        v = vals[i]
        if v is None:
            continue
        if type(v) is not list and type(v) is not dict:
            bad(i, "bad_value", f"{type(v).__name__} where a JSON object or array is expected; stored NULL", None)
            continue
        v, rep = sanitize(v)
        if rep:
            bad(i, "bad_value", rep.describe(), v)
    if fixes is None:
        for i in plan.required:
            if vals[i] is None:
                return None, [("bad_value", f"{table}.{plan.columns[i]}", "missing; row dropped")]
        return row, []
    for i in plan.required:
        if fixes.get(i, vals[i]) is None:
            return None, [*problems, ("bad_value", f"{table}.{plan.columns[i]}", "required; row dropped")]  # type: ignore[misc]
    return dataclasses.replace(row, **{plan.columns[i]: v for i, v in fixes.items()}), problems  # type: ignore[return-value]


DETAIL_CHARS = 500
"""Longest parse-issue detail, characters (the parsers' own issues use the same bound)."""


def check_rows(rows: Iterable[Row], byte_offset: int | None = None, line_number: int | None = None) -> list[Row]:
    """`rows` of one record (the one at `byte_offset`/`line_number`; None: each row's own
    position, as for rows a parser emits at ``flush()``) within their columns' limits, followed
    by one parse issue per kind of problem found. Its detail lists each finding once, with the
    tables it was found in (``session.session_uid, turn.session_uid: 300,000 bytes > 512; stored
    as its digest form``), at most `DETAIL_CHARS` characters.

    A row is kept with its bad values replaced (see the module docstring), or dropped when a
    required column is missing; nothing raises.
    """
    out: list[Row] = []
    found: dict[tuple[str, int], tuple[int | None, dict[str, list[str]]]] | None = None
    for row in rows:
        fits = _FITS.get(type(row))
        if fits is None:
            fits = _FITS[type(row)] = _fits(type(row))
        if fits(row):  # the common case, without a call of check_row
            out.append(row)
            continue
        kept, problems = check_row(row)
        if kept is not None:
            out.append(kept)
        if not problems:
            continue
        at = byte_offset if byte_offset is not None else getattr(row, "byte_offset", None)
        line = line_number if byte_offset is not None else getattr(row, "line_number", None)
        if type(at) is not int or at < 0:
            at, line = 0, None
        if type(line) is not int or line < 0:
            line = None
        if found is None:
            found = {}
        for kind, column, detail in problems:
            where = found.setdefault((kind, at), (line, {}))[1].setdefault(detail, [])
            if column not in where:
                where.append(column)
    if found:
        # an issue the rows brought (a decoder's or the driver's) with the key of a finding would
        # fold into it and lose one detail: it leads the finding's detail instead
        given: dict[tuple[str, int], str] = {}
        for i in range(len(out) - 1, -1, -1):
            r = out[i]
            if type(r) is ParseIssueRow and (r.kind, r.byte_offset) in found:
                given[(r.kind, r.byte_offset)] = r.detail or ""
                del out[i]
        for (kind, at), (line, details) in found.items():
            text = "; ".join(f"{', '.join(columns)}: {detail}" for detail, columns in details.items())
            if (kind, at) in given:
                text = f"{given[(kind, at)]}; {text}"
            if len(text) > DETAIL_CHARS:
                text = text[: DETAIL_CHARS - 1] + "…"
            out.append(ParseIssueRow(kind, at, line, text))
    return out
