"""Decode a whole JSON document (DocumentParser sources) the way `common.lines` decodes a line:
undecodable bytes and values PostgreSQL cannot store become issues (and U+FFFD or null), never an
exception. Nesting is bounded as for lines (`model.values.MAX_JSON_DEPTH`): deeper values are read
as null with a `too_deep` issue; a document too deep to decode at all is one `too_deep` issue."""

from __future__ import annotations

import json
from typing import Any

import orjson

from agent_history.model.rows import ParseIssueRow
from agent_history.model.values import MAX_JSON_DEPTH, sanitize
from agent_history.parsers.common.lines import _DECODER


def load_document(data: bytes | str) -> tuple[Any, list[ParseIssueRow]]:
    """``(value, issues)`` for the JSON document `data`; value None when it is not JSON.

    Invalid UTF-8 is replaced (issue ``invalid_utf8``); lone surrogates and NUL in strings become
    U+FFFD (issue ``invalid_utf8`` too, as for JSONL lines); NaN/Infinity become null
    (``non_finite_number``); values nested deeper than `MAX_JSON_DEPTH` become null
    (``too_deep``). Issues sit at byte offset 0.
    """
    issues: list[ParseIssueRow] = []
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        raw = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        if isinstance(data, bytes) and "\ufffd" in raw and b"\xef\xbf\xbd" not in data:
            issues.append(ParseIssueRow("invalid_utf8", 0, 1, "bytes that are not UTF-8 replaced"))
        try:
            value = _DECODER.decode(raw)
        except json.JSONDecodeError as exc:
            return None, [*issues, ParseIssueRow("invalid_json", 0, 1, str(exc)[:200])]
        except RecursionError:
            return None, [*issues, ParseIssueRow("too_deep", 0, 1, "JSON nested deeper than Python can decode")]
    value, rep = sanitize(value)
    if rep.bad_text:
        issues.append(ParseIssueRow("invalid_utf8", 0, 1, "lone surrogates or NUL replaced"))
    if rep.non_finite:
        issues.append(ParseIssueRow("non_finite_number", 0, 1, f"{rep.non_finite} NaN/Infinity number(s) read as null"))
    if rep.too_deep:
        issues.append(
            ParseIssueRow(
                "too_deep", 0, 1, f"{rep.too_deep} value(s) nested deeper than {MAX_JSON_DEPTH} levels read as null"
            )
        )
    return value, issues
