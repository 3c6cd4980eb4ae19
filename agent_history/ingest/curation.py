"""Session curation (issue 17): exclude, restore, delete, and exclusions in and out as JSON.

- **Exclude** records the session's natural key (agent, session uid) in ``ah.session_exclusion``.
  Nothing is deleted: the source record and rows stay, so passes stay incremental, and the
  decision outlives passes and `rebuild` (the table is kept, `ingest.rebuild.KEPT_TABLES`). Every
  search backend (`session.exclusions` via `search.filters`), recall, `recent_sessions`, the embed pass
  (`db.tables.chunks.pending_statements`) and the MCP tools leave excluded sessions out, sub-agent threads
  included (they share the uid).
- **Delete** purges every row of the transcript files that hold the session (`ingest.writer.
  purge_source`), drops those files' source records, and the session's remaining rows: the next
  pass finds the files new and indexes them again — unless the session is excluded, it comes back
  (other sessions sharing one of those files come back with it).
- **Export / import**: ``[{"agent", "session_uid", "reason", "excluded_at"}]``, so exclusions
  travel with the config to another machine (`sessions exclusions export FILE` / `import FILE`).
  An ``excluded_at`` without an offset is UTC, as every naive timestamp the CLI reads
  (`search.request.parse_when`: ``--since``), never the database server's zone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg

from agent_history.db.tables import curation
from agent_history.harnesses import resolve_name
from agent_history.ingest.writer import purge_source
from agent_history.session.filters import like_prefix
from agent_history.session.refs import MIN_UID_PREFIX, SessionRef, uid_spellings


def exclude(conn: psycopg.Connection, ref: SessionRef, reason: str | None = None) -> bool:
    """Exclude `ref`'s session (all its threads). False when it already was."""
    return curation.add_exclusion(conn, ref.agent, ref.session_uid, reason)


def restore(conn: psycopg.Connection, agent: str, session_uid: str) -> bool:
    """Lift an exclusion. False when the session was not excluded."""
    return curation.remove_exclusion(conn, agent, session_uid)


def excluded(conn: psycopg.Connection, uid: str) -> list[tuple[str, str]]:
    """(agent, session uid) exclusions whose uid is `uid` or starts with it (≥ 6 characters,
    the rule of `session.refs.resolve_session`, a hexadecimal one in any case), for restoring a
    session no longer indexed."""
    for spelling in uid_spellings(uid):
        found = [(a, u) for a, u in curation.exclusions_like(conn, spelling, MIN_UID_PREFIX, like_prefix(spelling))]
        if found:
            return found
    return []


def delete(conn: psycopg.Connection, ref: SessionRef) -> dict[str, int]:
    """Delete `ref`'s session (every thread) and the rows of the files holding it; returns
    ``{"files": n, "messages_and_tool_calls": n, "sessions": n}`` (threads). Runs in one
    transaction."""
    with conn.transaction():
        ids = curation.thread_ids(conn, ref.agent, ref.session_uid)
        files = curation.source_ids_of(conn, ids)
        events = curation.events_of(conn, files)
        for f in files:
            purge_source(conn, f)
        curation.delete_files_and_threads(conn, files, ids)
    return {"files": len(files), "messages_and_tool_calls": events, "sessions": len(ids)}


def export_exclusions(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """Every exclusion, oldest first, JSON-ready."""
    rows = curation.all_exclusions(conn)
    return [{"agent": a, "session_uid": u, "reason": r, "excluded_at": t.isoformat()} for a, u, r, t in rows]


def import_exclusions(conn: psycopg.Connection, entries: Any) -> int:
    """Add the exclusions in `entries` (the `export_exclusions` shape; ``reason`` and
    ``excluded_at`` optional; ``agent`` a harness or product name, stored as the harness's:
    ``claude-code`` → ``claude``); returns how many were new. Raises ValueError naming the first
    bad entry — not a string, a NUL character, an unknown agent, a time that is not ISO 8601
    (nothing is imported then). A naive ``excluded_at`` is UTC (`parse_when`'s rule)."""
    if not isinstance(entries, list):
        raise ValueError("exclusions file: expected a JSON list of {agent, session_uid, …}")
    rows = []
    for n, e in enumerate(entries, 1):
        if not isinstance(e, dict) or not isinstance(e.get("agent"), str) or not isinstance(e.get("session_uid"), str):
            raise ValueError(f"exclusions file: entry {n} needs string fields agent and session_uid")
        reason = e.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ValueError(f"exclusions file: entry {n}: reason must be a string or null (got {reason!r})")
        for key in ("agent", "session_uid", "reason"):
            if "\x00" in (e.get(key) or ""):
                raise ValueError(f"exclusions file: entry {n}: {key} holds a NUL character (no session uid does)")
        try:  # a product name (claude-code) is its harness's (claude): an exclusion matches by harness
            agent = resolve_name(e["agent"])
        except ValueError as exc:
            raise ValueError(f"exclusions file: entry {n}: {exc}") from None
        at = e.get("excluded_at")
        try:
            ts = datetime.fromisoformat(at) if at else None
        except (TypeError, ValueError):
            raise ValueError(f"exclusions file: entry {n}: excluded_at {at!r} is not an ISO timestamp") from None
        if ts is not None and ts.tzinfo is None:  # naive: UTC, as --since reads one
            ts = ts.replace(tzinfo=UTC)
        rows.append((agent, e["session_uid"], reason, ts))
    added = 0
    with conn.transaction():
        for agent, uid, reason, ts in rows:
            added += curation.import_exclusion(conn, agent, uid, reason, ts)
    return added
