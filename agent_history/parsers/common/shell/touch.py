"""A file touch read from a shell command or a patch: the ``(op, path)`` pair (op in read |
create | edit | delete | move) and its merge key in ``ah.file_touch`` (`touch_uid`). Pure."""

from __future__ import annotations

import hashlib

Touch = tuple[str, str]
"""``(op, path)``: op in read | create | edit | delete | move; the path as written."""

_MAX_KEY_PATH = 512


def touch_uid(tool_call_uid: str, op: str, path: str) -> str:
    """Merge key of a file touch: ``"{tool_call_uid}:{op}:{path}"``.

    One key per (call, op, path): the same touch seen twice (tool input and result, a replayed
    record) merges into one row. Paths longer than 512 characters are shortened to their first
    256 characters + ``#`` + 16 hex of their SHA-256, to keep the key indexable.
    """
    if len(path) > _MAX_KEY_PATH:
        path = path[:256] + "#" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{tool_call_uid}:{op}:{path}"
