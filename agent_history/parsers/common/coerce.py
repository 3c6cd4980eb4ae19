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
"""

from __future__ import annotations

from typing import Any

__all__ = ["as_dict", "as_int", "as_list", "as_nonempty_str", "as_str", "as_strict_int"]


def as_str(value: Any) -> str | None:
    """`value` if it is a string (``""`` included), else None."""
    return value if isinstance(value, str) else None


def as_nonempty_str(value: Any) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_int(value: Any) -> int | None:
    """`value` as an int when it is an int or an integral float (never a bool), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def as_strict_int(value: Any) -> int | None:
    """`value` if it is an int (not a bool, not a float — ``3.0`` → None), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_dict(value: Any) -> dict:
    """`value` if it is a dict, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    """`value` if it is a list, else an empty list."""
    return value if isinstance(value, list) else []
