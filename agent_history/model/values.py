"""Untrusted JSON values made storable: bounded nesting, finite numbers, text PostgreSQL accepts.

Pure and iterative (no recursion: a value nested 1,000 levels deep must not exhaust Python's
stack, field report of issue 25). The JSON decoders (`parsers.common.lines`,
`parsers.common.document`) run `sanitize` on a decoded value whenever it may need it, so the
parsers only ever see values within these bounds; `model.limits` runs it on jsonb columns.

- **Nesting.** A container (object or array) deeper than `MAX_JSON_DEPTH` levels (the top value
  is level 1) is replaced by None and counted as ``too_deep``. Why 200: the parsers turn
  sub-values into text with orjson, whose serialiser stops at 254 levels, and add a few levels
  of their own around them; a recursive walk costs one or two Python frames per level, and the
  interpreter stops at 1,000 frames. No harness writes records nested more than a few dozen
  levels deep.
- **Numbers.** NaN and ±Infinity (which Python's ``json`` module accepts, and which JSON, jsonb
  and PostgreSQL's numeric sums do not) → None, counted as ``non_finite``.
- **Text.** NUL (PostgreSQL text cannot hold ``\\x00``) and lone UTF-16 surrogates (not
  encodable as UTF-8) → U+FFFD, in object keys and in strings, counted as ``bad_text``.
- **Types.** In a value built by a parser (jsonb columns), anything but dict, list, str, int,
  float, bool and None → None, counted as ``bad_type`` (it would make the row unwritable).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

MAX_JSON_DEPTH = 200
"""Deepest nesting kept, in levels (the top value is level 1); see the module docstring."""

_BAD_TEXT = re.compile("[\ud800-\udfff\x00]")


def text_needs_cleaning(s: str) -> bool:
    """True when `s` holds a NUL or a lone surrogate. Fast for the common case: ``isascii`` is a
    flag check in CPython and NUL a byte search, so only non-ASCII text is scanned by the regex."""
    return "\x00" in s or (not s.isascii() and _BAD_TEXT.search(s) is not None)


def clean_text(s: str) -> str:
    """`s` with NUL and lone surrogates replaced by U+FFFD (so it encodes as UTF-8 and fits PG text)."""
    return _BAD_TEXT.sub("\ufffd", s) if text_needs_cleaning(s) else s


@dataclass
class Repairs:
    """What `sanitize` changed, by cause (counts of values)."""

    too_deep: int = 0
    non_finite: int = 0
    bad_text: int = 0
    bad_type: int = 0

    def __bool__(self) -> bool:
        return bool(self.too_deep or self.non_finite or self.bad_text or self.bad_type)

    def describe(self) -> str:
        """One phrase per cause, e.g. ``2 values nested deeper than 200 levels dropped``."""
        parts = []
        if self.too_deep:
            parts.append(f"{self.too_deep} value(s) nested deeper than {MAX_JSON_DEPTH} levels dropped")
        if self.non_finite:
            parts.append(f"{self.non_finite} NaN/Infinity number(s) read as null")
        if self.bad_text:
            parts.append(f"{self.bad_text} string(s) with NUL or lone surrogates: replaced by U+FFFD")
        if self.bad_type:
            parts.append(f"{self.bad_type} value(s) of a type JSON cannot hold dropped")
        return "; ".join(parts)


_SCALARS = (str, int, float, bool, type(None))


def _fix_scalar(v: Any, rep: Repairs) -> tuple[bool, Any]:
    """(changed, new value) for a non-container `v`."""
    t = type(v)
    if t is str:
        if text_needs_cleaning(v):
            rep.bad_text += 1
            return True, clean_text(v)
        return False, v
    if t is float:
        if not math.isfinite(v):
            rep.non_finite += 1
            return True, None
        return False, v
    if t is int or t is bool or v is None:
        return False, v
    rep.bad_type += 1
    return True, None


def sanitize(value: Any, max_depth: int = MAX_JSON_DEPTH) -> tuple[Any, Repairs]:
    """`value` within the module's bounds → (value, what was repaired).

    Containers are repaired **in place** (a freshly decoded value, or a parser's jsonb value);
    the returned value is the same object unless the top value itself had to change. Never
    raises; iterative, so any depth is safe.
    """
    rep = Repairs()
    t = type(value)
    if t is not dict and t is not list:
        changed, new = _fix_scalar(value, rep)
        return (new if changed else value), rep
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deeper = depth + 1
        if type(node) is dict:
            bad_keys = False
            for k, v in node.items():
                if type(k) is not str or text_needs_cleaning(k):
                    bad_keys = True
                tv = type(v)
                if tv is dict or tv is list:
                    if deeper > max_depth:
                        node[k] = None  # same key: the dict's size does not change while iterating
                        rep.too_deep += 1
                    else:
                        stack.append((v, deeper))
                else:
                    changed, new = _fix_scalar(v, rep)
                    if changed:
                        node[k] = new
            if bad_keys:
                items = list(node.items())
                node.clear()
                for k, v in items:
                    if type(k) is str:
                        if text_needs_cleaning(k):
                            rep.bad_text += 1
                            k = clean_text(k)
                    elif not isinstance(k, _SCALARS) or type(k) is float and not math.isfinite(k):
                        rep.bad_type += 1
                        continue
                    node[k] = v
        else:
            for i, v in enumerate(node):
                tv = type(v)
                if tv is dict or tv is list:
                    if deeper > max_depth:
                        node[i] = None
                        rep.too_deep += 1
                    else:
                        stack.append((v, deeper))
                else:
                    changed, new = _fix_scalar(v, rep)
                    if changed:
                        node[i] = new
    return value, rep


def max_depth_exceeds(value: Any, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """True when `value` nests containers deeper than `max_depth` levels. Iterative; stops at
    the first container too deep."""
    t = type(value)
    if t is not dict and t is not list:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if type(node) is dict else node
        for v in children:
            tv = type(v)
            if tv is dict or tv is list:
                if depth + 1 > max_depth:
                    return True
                stack.append((v, depth + 1))
    return False
