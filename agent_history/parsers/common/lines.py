"""Bytes of complete JSONL lines → decoded JSON objects + parse issues. Pure, shared by all harnesses.

Facts this relies on (docs/design.md §6–7, field cases E13/E14):
- Only ``\\n``-terminated lines are complete; a torn last line is left for the next pass and is
  neither decoded nor reported (E13 line 6).
- A whitespace-only line carries nothing: it is counted as a `blank_line` issue, never reported
  as malformed (E13 line 2).
- Invalid UTF-8 bytes and lone UTF-16 surrogates (``"\\ud800"``) keep the record, with U+FFFD in
  place of the bad characters, plus an `invalid_utf8` / `lone_surrogate` issue. NUL characters
  are replaced too: PostgreSQL text cannot hold them.
- Nesting is bounded (`model.values.MAX_JSON_DEPTH`, 200 levels): deeper values in a record
  become null with one `too_deep` issue, the rest of the record is kept; a line too deep to
  decode at all (past orjson's 1,024 levels and Python's recursion limit) is one `too_deep`
  issue and the file's other lines are read (issue 25).
- NaN and ±Infinity (not JSON; Python's decoder takes them) and numbers too large for a double
  or with more digits than Python converts (4,300) read as null, with a `non_finite_number` issue.
- Two objects fused on one line (an unterminated append, pi) are both recovered (`fused_line`);
  a torn object followed by a complete one keeps the complete tail (`invalid_json` with the line
  number, then the recovered object) — E13 line 4. Complete objects before the torn one are
  kept too.
- Large lines are fine (E14 is 1.2 MB); lines over `MAX_LINE_BYTES` are skipped with a
  `line_too_long` issue so one runaway line cannot exhaust memory.
- JSON that is not an object (a number, a list) is a `non_object` issue.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import orjson

from agent_history.model.rows import ParseIssueRow
from agent_history.model.values import MAX_JSON_DEPTH, clean_text, max_depth_exceeds, sanitize
from agent_history.parsers.base import Pos

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Lines longer than this (bytes) are skipped with a `line_too_long` issue."""

_MAX_INT_DIGITS = 4000
"""Longer integer literals are read as floats (Python refuses to convert more than 4,300 digits)."""


def _parse_int(digits: str) -> int | float:
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else float(digits)


_DECODER = json.JSONDecoder(parse_int=_parse_int)
_OBJECT_START = re.compile(r'\{\s*["}]')
_VALUE_START = frozenset('{["-0123456789tfnNI')

__all__ = ["MAX_LINE_BYTES", "clean_text", "complete_prefix", "decode_line", "iter_lines", "iter_records"]


def _issue(kind: str, pos: Pos, detail: str) -> ParseIssueRow:
    return ParseIssueRow(kind=kind, byte_offset=pos.byte_offset, line_number=pos.line_number, detail=detail[:500])


def _repair(values: list[Any], pos: Pos, issues: list[ParseIssueRow]) -> list[Any]:
    """`values` sanitized in place (`model.values.sanitize`), with one issue per kind of repair."""
    out = []
    for v in values:
        v, rep = sanitize(v)
        out.append(v)
        if rep.too_deep:
            issues.append(
                _issue(
                    "too_deep", pos, f"{rep.too_deep} value(s) nested deeper than {MAX_JSON_DEPTH} levels read as null"
                )
            )
        if rep.non_finite:
            issues.append(
                _issue(
                    "non_finite_number", pos, f"{rep.non_finite} NaN/Infinity or out-of-range number(s) read as null"
                )
            )
        if rep.bad_text:
            issues.append(_issue("lone_surrogate", pos, "NUL or lone surrogate replaced by U+FFFD"))
    return out


def _decode_prefix(text: str, start: int = 0) -> tuple[list[Any], int | None]:
    """Decode JSON values written back to back from `start` → (values, index of the first invalid
    part or None when the rest of the line decoded fully). Decodes in place: no slicing, so a
    retry from each ``{`` of a long torn line stays linear in copies."""
    values, i, n = [], start, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if values and text[i] not in _VALUE_START:  # `,` `]` `}` after a nested value: fail fast
            return values, i
        try:
            value, i = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError:  # costs O(i): the error computes its line/column
            return values, i
        values.append(value)
    return values, None


def _raw_decode_all(text: str) -> list[Any] | None:
    """Decode one or more JSON values written back to back; None if any part is invalid."""
    values, bad = _decode_prefix(text)
    return None if bad is not None else values


def _recover_tail(text: str, start: int = 1) -> list[Any]:
    """After a torn object, find the first ``{`` from which the rest of the line decodes fully."""
    for m in _OBJECT_START.finditer(text, start):  # `{"` or `{}`: skips braces inside code strings
        values, bad = _decode_prefix(text, m.start())
        if values and bad is None:
            return values
    return []


def decode_line(raw: bytes, pos: Pos) -> tuple[list[Any], list[ParseIssueRow]]:
    """Decode one complete line (without its ``\\n``) → (JSON values, issues). Never raises."""
    issues: list[ParseIssueRow] = []
    if len(raw) > MAX_LINE_BYTES:
        return [], [_issue("line_too_long", pos, f"{len(raw)} bytes > {MAX_LINE_BYTES}")]
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    else:
        # orjson rejects lone surrogates, raw control bytes, NaN and Infinity, so a decoded value
        # can only hold a NUL if the line has the escape, and can only nest deeper than the
        # bound if the line has that many brackets: skip the walk otherwise (hot path).
        if b"\\u0000" in raw or (raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and max_depth_exceeds(value)):
            return _repair([value], pos, issues), issues
        return [value], issues
    if not raw.strip():
        return [], [_issue("blank_line", pos, "whitespace-only line")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(_issue("invalid_utf8", pos, f"invalid UTF-8 at byte {exc.start}; replaced by U+FFFD"))
        text = raw.decode("utf-8", "replace")
    try:
        return _decode_text(text, pos, issues)
    except RecursionError:  # nested too deep for the fallback decoder (past orjson's 1,024 levels)
        return [], [
            *issues,
            _issue("too_deep", pos, f"JSON nested deeper than Python can decode ({len(raw):,} bytes); line skipped"),
        ]


def _decode_text(text: str, pos: Pos, issues: list[ParseIssueRow]) -> tuple[list[Any], list[ParseIssueRow]]:
    """The slow path of `decode_line` for a line orjson refused (as text)."""
    values = _raw_decode_all(text)
    if values is None:
        lead, bad = _decode_prefix(text)  # complete values before the torn part are kept
        tail = lead + _recover_tail(text, (bad or 0) + 1)
        try:
            _DECODER.raw_decode(text.lstrip())
        except json.JSONDecodeError as exc:
            detail = f"invalid JSON: {exc.msg} at char {exc.pos}: {text[:120]!r}"
        else:  # first value fine, garbage after it
            detail = f"invalid JSON after first value: {text[:120]!r}"
        issues.append(_issue("invalid_json", pos, detail))
        if tail:
            issues.append(_issue("recovered_object", pos, f"recovered {len(tail)} value(s) around a torn object"))
        values = tail
    elif len(values) > 1:
        issues.append(_issue("fused_line", pos, f"{len(values)} JSON values on one line"))
    return _repair(values, pos, issues), issues


def iter_lines(buf: bytes, base_offset: int = 0, base_line: int = 1) -> Iterator[tuple[bytes, Pos]]:
    """Yield each complete (``\\n``-terminated) line of `buf` with its position.

    `base_offset` is the file offset of ``buf[0]``; `base_line` the line number of its first
    line. A trailing part without ``\\n`` is not yielded; see `complete_prefix`.
    """
    start, line = 0, base_line
    while True:
        end = buf.find(b"\n", start)
        if end < 0:
            return
        raw = buf[start:end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        yield raw, Pos(base_offset + start, end + 1 - start, line)
        start, line = end + 1, line + 1


def complete_prefix(buf: bytes) -> int:
    """Length of the part of `buf` made of complete lines (0 if there is no ``\\n``)."""
    return buf.rfind(b"\n") + 1


def iter_records(
    buf: bytes, base_offset: int = 0, base_line: int = 1
) -> Iterator[tuple[Pos, list[dict], list[ParseIssueRow]]]:
    """Decode every complete line of `buf` → (pos, JSON objects, issues). Non-objects are issues."""
    for raw, pos in iter_lines(buf, base_offset, base_line):
        values, issues = decode_line(raw, pos)
        objs = []
        for v in values:
            if isinstance(v, dict):
                objs.append(v)
            else:
                issues.append(_issue("non_object", pos, f"JSON {type(v).__name__} is not an object"))
        yield pos, objs, issues
