"""The ``ah.parse_issue`` rows the loader and the post-pass write themselves (docs/design.md §7):
a file that failed to load, was rewritten under the loader, was read by an older parser or is no
readable database, and a session whose rollup failed. Keyed by ``(source_id, kind,
byte_offset)``: recording again replaces the detail (and the time) — `record_parser_upgraded`
keeps the first. The issues parsers emit arrive as rows through the merges (`merges`). Every
function runs in the caller's transaction.
"""

from __future__ import annotations

import psycopg


def record_load_error(conn: psycopg.Connection, source_id: int, byte_offset: int, detail: str) -> None:
    """A ``load_error`` of file `source_id` at `byte_offset` (where its unwritten part starts)."""
    conn.execute(
        "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, detail) VALUES (%s, 'load_error', %s, %s) "
        "ON CONFLICT (source_id, kind, byte_offset) DO UPDATE SET detail = EXCLUDED.detail, created_at = now()",
        (source_id, byte_offset, detail),
    )


def clear_load_errors(cur: psycopg.Cursor | psycopg.Connection, source_ids: list[int]) -> None:
    """Delete the ``load_error`` issues of files `source_ids` (they loaded again)."""
    cur.execute(
        "DELETE FROM ah.parse_issue WHERE kind = 'load_error' AND source_id = ANY(%s)",
        (source_ids,),
    )


def clear_load_error(conn: psycopg.Connection, source_id: int) -> None:
    """Delete the ``load_error`` issues of file `source_id` (it loaded again)."""
    conn.execute("DELETE FROM ah.parse_issue WHERE kind = 'load_error' AND source_id = %s", (source_id,))


def record_rewritten(conn: psycopg.Connection, source_id: int, byte_offset: int, line_number: int, detail: str) -> None:
    """A ``source_rewritten`` issue: file `source_id` changed before `byte_offset` (its indexed
    prefix, `line_number` lines) and is read again from 0."""
    conn.execute(
        "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, line_number, detail) "
        "VALUES (%s, 'source_rewritten', %s, %s, %s) ON CONFLICT (source_id, kind, byte_offset) "
        "DO UPDATE SET detail = EXCLUDED.detail, created_at = now()",
        (source_id, byte_offset, line_number, detail),
    )


def record_parser_upgraded(
    conn: psycopg.Connection, source_id: int, byte_offset: int, line_number: int, detail: str
) -> None:
    """A ``parser_upgraded`` issue at `byte_offset` (kept as first recorded)."""
    conn.execute(
        "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, line_number, detail) "
        "VALUES (%s, 'parser_upgraded', %s, %s, %s) ON CONFLICT (source_id, kind, byte_offset) DO NOTHING",
        (source_id, byte_offset, line_number, detail),
    )


def record_bad_database(conn: psycopg.Connection, source_id: int, detail: str) -> None:
    """A ``bad_database`` issue at byte 0: file `source_id` is not a readable SQLite database
    (`detail` cut to 300 characters)."""
    conn.execute(
        "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, detail) VALUES (%s, 'bad_database', 0, %s) "
        "ON CONFLICT (source_id, kind, byte_offset) DO UPDATE SET detail = EXCLUDED.detail, created_at = now()",
        (source_id, detail[:300]),
    )


def record_postpass_error(conn: psycopg.Connection, session_id: int, detail: str) -> int:
    """A ``postpass_error`` issue on session `session_id`'s source file, at the session's byte
    offset (nothing when the session has no source file). Returns 1 when the issue is new, 0 when
    it replaced the same issue's earlier detail or the session has no source file."""
    row = conn.execute(
        "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, line_number, detail) "
        "SELECT s.source_id, 'postpass_error', coalesce(s.byte_offset, 0), s.line_number, %s "
        "FROM ah.session s WHERE s.id = %s AND s.source_id IS NOT NULL "
        "ON CONFLICT (source_id, kind, byte_offset) DO UPDATE SET detail = EXCLUDED.detail, "
        "created_at = now() RETURNING (xmax = 0)",
        (detail, session_id),
    ).fetchone()
    return int(bool(row and row[0]))
