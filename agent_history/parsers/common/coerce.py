"""Typed reads of JSON record fields: the value when it has the expected type, else a default.

Pure; never raises. Transcript records are untrusted JSON, so a parser reads a field through one
of these instead of assuming its type. The variants differ on purpose (each harness parser keeps
the semantics its tests pin down):

- `as_str`: any ``str``, ``""`` included (pi) — else None.
- `as_nonempty_str`: a ``str`` other than ``""`` (Claude Code, Codex) — else None, so an empty
  field reads as absent.
- `as_int`: an ``int``, or a ``float`` with an integral value (``3.0`` → ``3``; Claude Code, pi);
  never a ``bool``.
- `as_strict_int`: an ``int`` only (``3.0`` → None; Codex); never a ``bool``.
- `as_dict` / `as_list`: the value, else an empty ``dict`` / ``list`` (Claude Code).

A value `as_int` / `as_strict_int` refuses (a bool posing as an int, a string, a fraction, a
container) is read as unknown (None) — and, while `refused_numbers` is active, noted so the
driver can record one ``bad_value`` issue for the record (issue 25: NULL *with* an issue, never
silently). Absent values (None) are not noted. `note_refused` notes any other value a reader
refuses the same way (`timeutil.parse_ts`: a timestamp that is not one, such as month 13).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

__all__ = [
    "as_dict",
    "as_int",
    "as_list",
    "as_nonempty_str",
    "as_str",
    "as_strict_int",
    "note_refused",
    "refused_numbers",
    "start_noting",
    "stop_noting",
]

_REFUSED: ContextVar[list[str] | None] = ContextVar("agent_history_refused_numbers", default=None)
_NOTED = 5
"""At most this many refused values are noted per record."""


def note_refused(value: Any, expected: str) -> None:
    """Note `value` (type and value, cut at 40 characters) as refused for not being `expected`
    (``"an integer"``, ``"a timestamp"``) while noting is active (`start_noting`,
    `refused_numbers`); at most 5 per record. Nothing happens when noting is not active."""
    sink = _REFUSED.get()
    if sink is not None and len(sink) < _NOTED:
        shown = repr(value)
        sink.append(f"{type(value).__name__} {shown if len(shown) <= 40 else shown[:37] + '…'} is not {expected}")


def _refuse(value: Any) -> None:
    note_refused(value, "an integer")


def start_noting() -> tuple[Token, list[str]]:
    """Start noting refused values into a fresh list → (token for `stop_noting`, the list). The
    cheap form of `refused_numbers` for the driver's per-record loop."""
    sink: list[str] = []
    return _REFUSED.set(sink), sink


def stop_noting(token: Token) -> None:
    """Stop what `start_noting` started."""
    _REFUSED.reset(token)


@contextmanager
def refused_numbers() -> Iterator[list[str]]:
    """Within the block, values `as_int` / `as_strict_int` refuse are appended (type and value,
    at most 5) to the list this yields."""
    sink: list[str] = []
    token = _REFUSED.set(sink)
    try:
        yield sink
    finally:
        _REFUSED.reset(token)


def as_str(value: Any) -> str | None:
    """`value` if it is a string (``""`` included), else None."""
    return value if isinstance(value, str) else None


def as_nonempty_str(value: Any) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_int(value: Any) -> int | None:
    """`value` as an int when it is an int or an integral float (never a bool), else None (noted,
    see the module docstring, unless `value` is None)."""
    if isinstance(value, bool):
        _refuse(value)
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is not None:
        _refuse(value)
    return None


def as_strict_int(value: Any) -> int | None:
    """`value` if it is an int (not a bool, not a float — ``3.0`` → None), else None (noted, see
    the module docstring, unless `value` is None)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if value is not None:
        _refuse(value)
    return None


def as_dict(value: Any) -> dict:
    """`value` if it is a dict, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    """`value` if it is a list, else an empty list."""
    return value if isinstance(value, list) else []
