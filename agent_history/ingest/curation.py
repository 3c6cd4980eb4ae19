"""Session curation (issue 17): exclude, restore, delete, and exclusions in and out as JSON.

- **Exclude** records the session's natural key (agent, session uid) in ``ah.session_exclusion``.
  Nothing is deleted: the source record and rows stay, so passes stay incremental, and the
  decision outlives passes and `rebuild` (the table is kept, `ingest.rebuild.KEPT_TABLES`). Every
  search backend (`session.exclusions` via `search.filters`), recall, `recent_sessions`, the embed pass
  (`embed.store._PENDING`) and the MCP tools leave excluded sessions out, sub-agent threads
  included (they share the uid).
- **Delete** purges every row of the transcript files that hold the session (`ingest.writer.
  purge_source`), drops those files' source records, and the session's remaining rows: the next
  pass finds the files new and indexes them again — unless the session is excluded, it comes back
  (other sessions sharing one of those files come back with it).
- **Export / import**: ``[{"agent", "session_uid", "reason", "excluded_at"}]``, so exclusions
  travel with the config to another machine (`sessions exclusions export FILE` / `import FILE`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent_history.ingest.writer import purge_source
from agent_history.session.filters import like_prefix
from agent_history.session.refs import MIN_UID_PREFIX, SessionRef


def exclude(conn: psycopg.Connection, ref: SessionRef, reason: str | None = None) -> bool:
    """Exclude `ref`'s session (all its threads). False when it already was."""
    row = conn.execute(
        "INSERT INTO ah.session_exclusion (agent, session_uid, reason) VALUES (%s, %s, %s) "
        "ON CONFLICT (agent, session_uid) DO NOTHING RETURNING 1",
        (ref.agent, ref.session_uid, reason),
    ).fetchone()
    return row is not None


def restore(conn: psycopg.Connection, agent: str, session_uid: str) -> bool:
    """Lift an exclusion. False when the session was not excluded."""
    row = conn.execute(
        "DELETE FROM ah.session_exclusion WHERE agent = %s AND session_uid = %s RETURNING 1", (agent, session_uid)
    ).fetchone()
    return row is not None


def excluded(conn: psycopg.Connection, uid: str) -> list[tuple[str, str]]:
    """(agent, session uid) exclusions whose uid is `uid` or starts with it (≥ 6 characters,
    the rule of `session.refs.resolve_session`), for restoring a session no longer indexed."""
    return [
        (a, u)
        for a, u in conn.execute(
            "SELECT agent, session_uid FROM ah.session_exclusion WHERE session_uid = %(u)s "
            "OR (length(%(u)s) >= %(n)s AND session_uid LIKE %(p)s) ORDER BY 1, 2",
            {"u": uid, "n": MIN_UID_PREFIX, "p": like_prefix(uid)},
        ).fetchall()
    ]


def delete(conn: psycopg.Connection, ref: SessionRef) -> dict[str, int]:
    """Delete `ref`'s session (every thread) and the rows of the files holding it; returns
    ``{"files": n, "messages_and_tool_calls": n, "sessions": n}`` (threads). Runs in one
    transaction."""
    with conn.transaction():
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM ah.session WHERE agent = %s AND session_uid = %s", (ref.agent, ref.session_uid)
        ).fetchall()]  # fmt: skip
        files = [r[0] for r in conn.execute(
            "SELECT source_id FROM ah.session WHERE id = ANY(%(ids)s) AND source_id IS NOT NULL "
            "UNION SELECT source_id FROM ah.message WHERE session_id = ANY(%(ids)s) "
            "UNION SELECT source_id FROM ah.tool_call WHERE session_id = ANY(%(ids)s)",
            {"ids": ids},
        ).fetchall()]  # fmt: skip
        events = conn.execute(
            "SELECT (SELECT count(*) FROM ah.message WHERE source_id = ANY(%(f)s)) "
            "+ (SELECT count(*) FROM ah.tool_call WHERE source_id = ANY(%(f)s))",
            {"f": files},
        ).fetchone()[0]
        for f in files:
            purge_source(conn, f)
        conn.execute("DELETE FROM ah.source_file WHERE id = ANY(%s)", (files,))
        conn.execute("DELETE FROM ah.session WHERE id = ANY(%s)", (ids,))
        conn.execute("DELETE FROM ah.dirty_session WHERE session_id = ANY(%s)", (ids,))
    return {"files": len(files), "messages_and_tool_calls": events, "sessions": len(ids)}


def export_exclusions(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """Every exclusion, oldest first, JSON-ready."""
    rows = conn.execute(
        "SELECT agent, session_uid, reason, excluded_at FROM ah.session_exclusion ORDER BY excluded_at, agent, session_uid"
    ).fetchall()
    return [{"agent": a, "session_uid": u, "reason": r, "excluded_at": t.isoformat()} for a, u, r, t in rows]


def import_exclusions(conn: psycopg.Connection, entries: Any) -> int:
    """Add the exclusions in `entries` (the `export_exclusions` shape; ``reason`` and
    ``excluded_at`` optional); returns how many were new. Raises ValueError naming the first bad
    entry (nothing is imported then)."""
    if not isinstance(entries, list):
        raise ValueError("exclusions file: expected a JSON list of {agent, session_uid, …}")
    rows = []
    for n, e in enumerate(entries, 1):
        if not isinstance(e, dict) or not isinstance(e.get("agent"), str) or not isinstance(e.get("session_uid"), str):
            raise ValueError(f"exclusions file: entry {n} needs string fields agent and session_uid")
        at = e.get("excluded_at")
        try:
            ts = datetime.fromisoformat(at) if at else None
        except (TypeError, ValueError):
            raise ValueError(f"exclusions file: entry {n}: excluded_at {at!r} is not an ISO timestamp") from None
        rows.append((e["agent"], e["session_uid"], e.get("reason"), ts))
    added = 0
    with conn.transaction():
        for agent, uid, reason, ts in rows:
            added += conn.execute(
                "INSERT INTO ah.session_exclusion (agent, session_uid, reason, excluded_at) "
                "VALUES (%s, %s, %s, coalesce(%s, now())) ON CONFLICT DO NOTHING",
                (agent, uid, reason, ts),
            ).rowcount
    return added
