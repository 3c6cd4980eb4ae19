"""The secrets scan's statements (docs/design.md §19): the rows to scan, ``ah.secret_scan`` (how
many bytes of each row were scanned), ``ah.secret_finding`` (what was found) and the rules
version in ``ah.meta``. `ingest.secret_scan` runs the detectors and owns the transactions; every
function here runs in the caller's transaction and commits nothing."""

from __future__ import annotations

import psycopg

PENDING = {
    "message": (
        "SELECT m.id, m.session_id, m.source_id, m.byte_offset, m.text, NULL::text, coalesce(octet_length(m.text), 0) "
        "FROM ah.message AS m LEFT JOIN ah.secret_scan AS ss ON ss.message_id = m.id "
        "WHERE m.id > %s AND (ss.message_id IS NULL OR ss.scanned_bytes <> coalesce(octet_length(m.text), 0)) "
        "ORDER BY m.id LIMIT %s"
    ),
    "tool_call": (
        "SELECT t.id, t.session_id, t.source_id, t.byte_offset, t.input, t.output, "
        "coalesce(octet_length(t.input), 0) + coalesce(octet_length(t.output), 0) "
        "FROM ah.tool_call AS t LEFT JOIN ah.secret_scan AS ss ON ss.tool_call_id = t.id "
        "WHERE t.id > %s AND (ss.tool_call_id IS NULL "
        "  OR ss.scanned_bytes <> coalesce(octet_length(t.input), 0) + coalesce(octet_length(t.output), 0)) "
        "ORDER BY t.id LIMIT %s"
    ),
}
"""Rows of a table ('message' | 'tool_call') not scanned at their current size, keyset on id."""
COLUMN = {"message": "message_id", "tool_call": "tool_call_id"}
"""Scanned table → its id column in ``ah.secret_scan`` and ``ah.secret_finding``."""


def unscanned(conn: psycopg.Connection, table: str, after: int, limit: int) -> list[tuple]:
    """Up to `limit` rows of `table` with id > `after` not scanned at their current size, in id
    order: (id, session_id, source_id, byte_offset, first text, second text or None, bytes) — a
    message's text, a tool call's input and output; bytes is ``octet_length`` of the texts."""
    return conn.execute(PENDING[table], (after, limit)).fetchall()


def scanned_once(conn: psycopg.Connection, key: str) -> bool:
    """Whether ``ah.meta`` holds `key` (the rules version a scan records first)."""
    return conn.execute("SELECT EXISTS (SELECT 1 FROM ah.meta WHERE key = %s)", (key,)).fetchone()[0]


def rules_version_for_update(conn: psycopg.Connection, key: str) -> str | None:
    """The rules version recorded under ``ah.meta`` `key`, its row locked until the caller's
    transaction ends (None: none recorded)."""
    row = conn.execute("SELECT value FROM ah.meta WHERE key = %s FOR UPDATE", (key,)).fetchone()
    return None if row is None else row[0]


def forget_marks(conn: psycopg.Connection, key: str, version: str) -> None:
    """Drop every row's scan mark and record `version` under ``ah.meta`` `key`."""
    conn.execute("DELETE FROM ah.secret_scan")  # marks of an older (or unrecorded) version
    conn.execute(
        "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()",
        (key, version),
    )


def replace_findings(conn: psycopg.Connection, table: str, ids: list[int], found: list, sizes: list[int]) -> None:
    """For rows `ids` of `table`: replace their findings with `found` ((session_id, row id,
    field, detector, char_start, char_end, source_id, byte_offset, preview) each, written by
    COPY) and mark them scanned at `sizes` bytes (parallel to `ids`)."""
    col = COLUMN[table]
    with conn.cursor() as cur:
        cur.execute(f"DELETE FROM ah.secret_finding WHERE {col} = ANY(%s)", (ids,))
        if found:
            with cur.copy(
                f"COPY ah.secret_finding (session_id, {col}, field, detector, char_start, char_end, source_id, "
                "byte_offset, preview) FROM STDIN"
            ) as copy:
                for f in found:
                    copy.write_row(f)
        cur.execute(
            f"INSERT INTO ah.secret_scan ({col}, scanned_bytes) SELECT * FROM unnest(%s::bigint[], %s::bigint[]) "
            f"ON CONFLICT ({col}) DO UPDATE SET scanned_bytes = EXCLUDED.scanned_bytes",
            (ids, sizes),
        )
