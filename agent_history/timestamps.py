"""Timestamps as the CLI and reports print them: ``YYYY-MM-DD HH:MM[:SS]``, the year always in
four digits.

`datetime.strftime("%Y")` follows the C library, and glibc does not pad the year: year 1 prints
as ``1-01-01``. Year 1 is real input — Go's zero time ``0001-01-01T00:00:00Z`` is what a
harness written in Go records for an unset time — so nothing here uses ``%Y``.
"""

from __future__ import annotations

from datetime import date, datetime


def day(ts: date) -> str:
    """``YYYY-MM-DD`` of a date or datetime (as it is: no zone conversion)."""
    return f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}"


def minute(ts: datetime) -> str:
    """``YYYY-MM-DD HH:MM`` of `ts` (as it is: no zone conversion)."""
    return f"{day(ts)} {ts.hour:02d}:{ts.minute:02d}"


def second(ts: datetime, *, zone: bool = False) -> str:
    """``YYYY-MM-DD HH:MM:SS`` of `ts`, followed by its zone's name (``UTC``) when `zone` and
    `ts` has one."""
    text = f"{minute(ts)}:{ts.second:02d}"
    name = ts.tzname() if zone else None
    return f"{text} {name}" if name else text
