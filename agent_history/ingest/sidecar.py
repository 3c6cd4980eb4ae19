"""Metadata files harnesses write beside a transcript (read at the I/O edge, passed to parsers).

Claude Code writes ``agent-<id>.meta.json`` (e.g. ``{"agentType": "general-purpose"}``) beside a
sub-agent transcript ``agent-<id>.jsonl`` (field case E04).
"""

from __future__ import annotations

from pathlib import Path

import orjson

MAX_SIDECAR_BYTES = 64 * 1024


def read_sidecar(transcript: str | Path) -> dict | None:
    """The decoded sidecar of `transcript`, or None when absent, too large or not a JSON object."""
    p = Path(transcript)
    if not p.name.endswith(".jsonl"):
        return None
    meta = p.with_name(p.name[: -len(".jsonl")] + ".meta.json")
    try:
        if meta.stat().st_size > MAX_SIDECAR_BYTES:
            return None
        value = orjson.loads(meta.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None
