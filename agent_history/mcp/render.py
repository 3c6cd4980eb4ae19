"""Compact JSON for tool results, capped in size so one call cannot flood an agent's context.

`to_json(result)` serialises a result dict compactly (ISO timestamps, floats for numerics, bytes
as hex). When the text exceeds `max_chars`, items are dropped from the end of the largest
top-level list until it fits, and ``result["truncated"]`` says how many of how many were kept;
if it still does not fit (a huge single field), long strings are cut to `FALLBACK_STRING_CHARS`.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

MAX_RESULT_CHARS = 30_000
"""Default cap for one tool result (characters of JSON, ≈ 7,500 tokens)."""
FALLBACK_STRING_CHARS = 500


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    return str(value)


def dumps(value: Any) -> str:
    """Compact JSON text of `value` (non-JSON types converted as above)."""
    return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()


def _cut_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    if isinstance(value, dict):
        return {k: _cut_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v, limit) for v in value]
    return value


def to_json(result: dict[str, Any], *, max_chars: int = MAX_RESULT_CHARS) -> str:
    """`result` as compact JSON of at most ~`max_chars` characters (see the module docstring)."""
    text = dumps(result)
    if len(text) <= max_chars:
        return text
    result = dict(result)
    lists = {k: v for k, v in result.items() if isinstance(v, list) and v}
    if lists:
        key = max(lists, key=lambda k: len(dumps(lists[k])))
        items = list(lists[key])
        total = len(items)
        while items:
            items.pop()
            result[key] = items
            result["truncated"] = (
                f"showing {len(items)} of {total} {key} to stay under {max_chars:,} characters; "
                "narrow the query or lower the limit to see the rest"
            )
            text = dumps(result)
            if len(text) <= max_chars:
                return text
    result = _cut_strings(result, FALLBACK_STRING_CHARS)
    result.setdefault("truncated", f"long fields cut to {FALLBACK_STRING_CHARS} characters")
    return dumps(result)
