"""The journal-sync part of `status`: the last pass and the summaries held (read-only)."""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.db.tables import journal
from agent_history.timestamps import second


def journal_status(conn: psycopg.Connection) -> dict[str, Any] | None:
    """``{"summaries", "linked", "topics", "last_pass"}`` where ``last_pass`` is None before the
    first pass, else ``{"finished_at", "status", "skip_reason", "full_pass", "rows_read",
    "rows_written", "message", "seconds"}``. None when the schema predates journal-sync."""
    if not journal.has_sync_runs(conn):
        return None
    summaries, linked, topics = journal.summaries_held(conn)
    last = journal.last_finished_run(conn)
    keys = ("finished_at", "status", "skip_reason", "full_pass", "rows_read", "rows_written", "message", "seconds")
    last_pass = None if last is None else dict(zip(keys, last, strict=True))
    if last_pass is not None:
        last_pass["seconds"] = float(last_pass["seconds"])
    return {"summaries": summaries, "linked": linked, "topics": topics, "last_pass": last_pass}


def status_line(data: dict[str, Any] | None) -> str:
    """One line for `status`: summaries held and the last pass (with its skip reason)."""
    if data is None:
        return "journal-sync: schema too old (run `agent-history db migrate`)"
    last = data["last_pass"]
    summaries = f"{data['summaries']:,} {'summary' if data['summaries'] == 1 else 'summaries'}"
    topics = f"{data['topics']:,} {'topic' if data['topics'] == 1 else 'topics'}"
    held = f"{summaries} ({data['linked']:,} linked to sessions), {topics}"
    if last is None:
        return f"journal-sync: {held}; no pass yet"
    reason = f": {last['skip_reason']}" if last["skip_reason"] else ""
    return f"journal-sync: {held}; last pass {second(last['finished_at'], zone=True)} ({last['status']}{reason})"
