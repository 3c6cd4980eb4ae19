"""Decode a whole JSON document (DocumentParser sources) the way `common.lines` decodes a line:
undecodable bytes and text PostgreSQL cannot store become issues and U+FFFD, never an exception."""

from __future__ import annotations

import json
from typing import Any

import orjson

from agent_history.model.rows import ParseIssueRow
from agent_history.parsers.common.lines import _clean, _has_bad_chars


def load_document(data: bytes | str) -> tuple[Any, list[ParseIssueRow]]:
    """``(value, issues)`` for the JSON document `data`; value None when it is not JSON.

    Invalid UTF-8 is replaced (issue ``invalid_utf8``); lone surrogates and NUL in strings become
    U+FFFD (issue ``invalid_utf8`` too, as for JSONL lines). Issues sit at byte offset 0.
    """
    issues: list[ParseIssueRow] = []
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        raw = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        if isinstance(data, bytes) and "\ufffd" in raw and b"\xef\xbf\xbd" not in data:
            issues.append(ParseIssueRow("invalid_utf8", 0, 1, "bytes that are not UTF-8 replaced"))
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return None, [*issues, ParseIssueRow("invalid_json", 0, 1, str(exc)[:200])]
    if _has_bad_chars(value):
        issues.append(ParseIssueRow("invalid_utf8", 0, 1, "lone surrogates or NUL replaced"))
        value = _clean(value)
    return value, issues
