"""Timestamps in transcripts → timezone-aware UTC datetimes. Pure; never raises.

Forms seen in the harnesses' files:
- ISO-8601 strings: Claude Code ``"2025-06-01T12:34:56.789Z"``, Codex ``"2025-09-10T08:00:00.123Z"``,
  pi ``"2025-10-01T10:00:00.000Z"``; offsets (``+02:00``), a space instead of ``T``, 1–9
  fractional digits (Python keeps microseconds; extra digits are truncated, not rounded).
  A string without an offset is taken as UTC.
- Epoch numbers: pi message ``timestamp`` is epoch milliseconds, Codex legacy headers and some
  tool results carry epoch seconds. A number above ``1e11`` is milliseconds (1e11 seconds is the
  year 5138; 1e11 ms is 1973), otherwise seconds. Numeric strings (``"1717236000"``) count too.

Anything else (None, bool, empty or garbage string, NaN, out-of-range year) → None; a value that
was given but is no timestamp (anything but None and ``""``: ``"2025-13-45T99:00:00Z"``, a bool,
a list) is also noted (`coerce.note_refused`), so the driver records a ``bad_value`` issue for
the record — NULL with an issue, as for a number of the wrong type. Every parser reads its
timestamps through `parse_ts` (or notes a refused one itself, as the OpenHands local-time reader
and Aider's session header do).
"""

from __future__ import annotations

import math
import operator
import re
from datetime import UTC, datetime, timedelta, timezone

from agent_history.parsers.common.coerce import note_refused

__all__ = ["parse_ts"]

MS_THRESHOLD = 1e11
"""Epoch values above this are milliseconds, at or below it seconds."""

_ISO = re.compile(
    r"""^\s*
    (?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})
    (?:[T\s](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?)?
    \s*(?P<tz>Z|z|[+-]\d{2}(?::?\d{2})?)?
    \s*$""",
    re.VERBOSE,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CANONICAL_SEPARATORS = operator.itemgetter(4, 7, 10, 13, 16)
_CANONICAL = ("-", "-", "T", ":", ":")
"""The separators of the form every JSONL harness writes (``YYYY-MM-DDTHH:MM:SS.fffZ``, 24
ASCII characters): such a string is read by ``datetime.fromisoformat`` (in C; with digits at
the other places it accepts exactly what `_ISO` does and gives the same UTC value, 3 fractional
digits being milliseconds), anything else by `_ISO`."""
_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")


def _from_epoch(x: int | float) -> datetime | None:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    try:
        delta = timedelta(milliseconds=x) if abs(x) > MS_THRESHOLD else timedelta(seconds=x)
        return _EPOCH + delta
    except (OverflowError, ValueError):
        return None


def _from_iso(s: str) -> datetime | None:
    if _is_canonical(s):
        try:  # Claude Code's, Codex's and pi's ``2025-06-01T12:34:56.789Z``: the C parser, same value
            return datetime.fromisoformat(s)
        except ValueError:  # a digit out of range: the general path decides (None)
            pass
    return _from_iso_general(s)


def _is_canonical(s: str) -> bool:
    """True for a string of the `_CANONICAL` shape (its digits are checked by the reader)."""
    return len(s) == 24 and s[23] == "Z" and s[19] == "." and s.isascii() and _CANONICAL_SEPARATORS(s) == _CANONICAL


def _from_iso_general(s: str) -> datetime | None:
    """Any ISO-8601 form of the module docstring, through `_ISO`."""
    m = _ISO.match(s)
    if m is None:
        return None
    try:
        frac = (m["f"] or "")[:6].ljust(6, "0")
        tz = m["tz"]
        if tz is None or tz in ("Z", "z"):
            tzinfo: timezone = UTC
        else:
            sign = -1 if tz[0] == "-" else 1
            digits = tz[1:].replace(":", "")
            hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
            if hours > 23 or minutes > 59:
                return None
            tzinfo = timezone(sign * timedelta(hours=hours, minutes=minutes))
        dt = datetime(
            int(m["y"]),
            int(m["mo"]),
            int(m["d"]),
            int(m["h"] or 0),
            int(m["mi"] or 0),
            int(m["s"] or 0),
            int(frac),
            tzinfo=tzinfo,
        )
        return dt.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def parse_ts(value: object) -> datetime | None:
    """Parse an ISO-8601 string or an epoch number (seconds, or ms when > 1e11) → UTC datetime.

    Returns a timezone-aware datetime in UTC, or None when `value` is not a usable timestamp
    (wrong type, unparsable, out of range) — noted then unless `value` is None or ``""`` (see
    the module docstring). Never raises. See the module docstring for the forms.
    """
    parsed = _parse(value)
    if parsed is None and value is not None and value != "":
        note_refused(value, "a timestamp")
    return parsed


def _parse(value: object) -> datetime | None:
    try:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, int | float):
            return _from_epoch(value)
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if isinstance(value, str):
            if len(value) > 64:
                return None
            if _is_canonical(value):  # no number: read it before trying `_NUMBER`
                return _from_iso(value)
            if _NUMBER.match(value):
                v = value.strip()
                return _from_epoch(int(v) if v.lstrip("+-").isdigit() else float(v))
            return _from_iso(value)
    except Exception:  # noqa: BLE001 — contract: never raise on odd input
        return None
    return None
