"""Shared pieces of the read API: the session vocabulary (from `agent_history.session`, the floor
below `read/` and `search/`) under the names the read API has always used, and `iso`.

Every read function takes an open connection (owner or the read-only ``ah_reader``) and returns
plain dataclasses; ``as_dict()`` gives JSON-ready dicts for the CLI's ``--json`` and the MCP
server. Nothing here writes.
"""

from __future__ import annotations

from datetime import datetime

from agent_history.session.filters import empty_namespaces, session_filter
from agent_history.session.refs import (
    MIN_UID_PREFIX,
    SESSION_REF_COLUMNS,
    SESSION_REF_JOINS,
    AmbiguousSession,
    SessionNotFound,
    SessionRef,
    resolve_session,
    session_ref,
)

__all__ = [
    "MIN_UID_PREFIX",
    "SESSION_REF_COLUMNS",
    "SESSION_REF_JOINS",
    "AmbiguousSession",
    "SessionNotFound",
    "SessionRef",
    "empty_namespaces",
    "iso",
    "resolve_session",
    "session_filter",
    "session_ref",
]


def iso(ts: datetime | None) -> str | None:
    """ISO 8601 text of a timestamp (None stays None)."""
    return ts.isoformat() if ts else None
