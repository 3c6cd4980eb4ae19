"""Write synthetic rows into a test catalogue through the loader's writer (the production merge
path, so generated columns and statement triggers fire exactly as during indexing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from agent_history.ingest.postpass import run_postpasses
from agent_history.ingest.writer import write_rows
from agent_history.model.rows import MessageRow, Row, SessionRow, ToolCallRow

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def source(conn: psycopg.Connection, path: str, namespace: str = "claude-local", agent: str = "claude") -> int:
    """A source_file row (created if missing); returns its id."""
    return conn.execute(
        "INSERT INTO ah.source_file (path, namespace, agent) VALUES (%s, %s, %s) "
        "ON CONFLICT ON CONSTRAINT source_file_path_host_key DO UPDATE SET namespace = EXCLUDED.namespace RETURNING id",
        (path, namespace, agent),
    ).fetchone()[0]


def write(
    dsn: str,
    rows: list[Row],
    *,
    path: str = "/t/a.jsonl",
    namespace: str = "claude-local",
    agent: str = "claude",
    postpass: bool = True,
) -> None:
    """Merge `rows` as if read from file `path`, then roll up the touched sessions."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        with conn.transaction():
            sid = source(conn, path, namespace, agent)
            write_rows(conn, sid, namespace, rows)
        if postpass:
            run_postpasses(conn)


def session(
    uid: str,
    *,
    agent: str = "claude",
    agent_id: str = "",
    cwd: str | None = "/home/u/proj",
    title: str | None = None,
    offset: int = 0,
    **kw,
) -> SessionRow:
    """A session row (main thread unless `agent_id`)."""
    return SessionRow(
        agent=agent,
        session_uid=uid,
        agent_id=agent_id,
        cwd=cwd,
        custom_title=title,
        started_at=kw.pop("started_at", T0),
        byte_offset=offset,
        **kw,
    )


def message(
    uid: str,
    session_uid: str,
    text: str,
    *,
    cls: str = "assistant_text",
    agent: str = "claude",
    agent_id: str = "",
    offset: int = 0,
    minutes: int = 0,
    role: str | None = None,
) -> MessageRow:
    """A message row at `offset` bytes, `minutes` after T0."""
    return MessageRow(
        agent=agent,
        message_uid=uid,
        session_uid=session_uid,
        agent_id=agent_id,
        role=role or ("user" if cls in ("human_prompt", "queued_prompt", "subagent_brief") else "assistant"),
        message_class=cls,
        text=text,
        ts=T0 + timedelta(minutes=minutes),
        byte_offset=offset,
        line_number=offset // 100 + 1,
    )


def user_message(uid: str, text: str, session: str = "s1", *, attachments: list[dict] | None = None) -> MessageRow:
    """A Claude Code user message `uid` of session `session` with `text`, at 2026-01-02 03:04:05
    UTC, no byte offset (the row the write-pipeline and search-vector tests encode and send);
    `attachments` as `MessageRow.attachments` (None: unknown)."""
    return MessageRow(
        agent="claude",
        message_uid=uid,
        session_uid=session,
        agent_id="",
        role="user",
        text=text,
        ts=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        attachments=attachments,
    )


def tool_call(
    uid: str,
    session_uid: str,
    name: str,
    input: str,
    output: str | None,
    *,
    agent: str = "claude",
    agent_id: str = "",
    offset: int = 0,
    minutes: int = 0,
    outcome: str = "ok",
) -> ToolCallRow:
    """A tool call row with its result."""
    return ToolCallRow(
        agent=agent,
        tool_call_uid=uid,
        session_uid=session_uid,
        agent_id=agent_id,
        name=name,
        input=input,
        output=output,
        outcome=outcome,
        started_at=T0 + timedelta(minutes=minutes),
        byte_offset=offset,
        line_number=offset // 100 + 1,
    )
