"""The secrets scan: every secret-shaped span of stored message text and tool-call input/output.

The scanner is the embeddings' (`embed.redact.find_secrets`: detect-secrets' provider rules, our
own, high-entropy tokens), so the report and the redaction agree on what a secret is. Incremental
by row: ``ah.secret_scan`` remembers how many bytes of each row's text were scanned
(``octet_length``, which PostgreSQL answers from the TOAST header without reading the value); a
scan reads only rows that are new or whose text changed size (a tool call's output merged in
after its input), replaces their findings in ``ah.secret_finding`` and moves their marks, one
transaction per batch. Findings store the detector, the span in characters of that field, the
record's source file and byte offset, and a preview whose every secret is ``[REDACTED]`` — never
the secret. Runs from `agent-history secrets` and after each pass of `index --every` (a one-shot
`index` stays as fast as it was: scanning costs about a second per MB of text).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import psycopg

from agent_history.embed.redact import RULES_VERSION, apply_spans, detector_of, find_secrets

PREVIEW_CONTEXT = 32
"""Characters of context kept on each side of a span in its preview."""
BATCH_ROWS = 500
"""Rows scanned per transaction."""

_PENDING = {
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
_COLUMN = {"message": "message_id", "tool_call": "tool_call_id"}


@dataclass
class ScanSummary:
    """Rows scanned per table, findings written, whether a stop cut it short."""

    messages: int = 0
    tool_calls: int = 0
    findings: int = 0
    interrupted: bool = False


def preview(text: str, spans: list, i: int) -> str:
    """The context of span `spans[i]` in `text`: `PREVIEW_CONTEXT` characters each side, every span
    touching the window ``[REDACTED]``, whitespace runs folded to one space; ``…`` marks a cut."""
    s = spans[i]
    start, end = max(0, s.start - PREVIEW_CONTEXT), min(len(text), s.end + PREVIEW_CONTEXT)
    shown, _ = apply_spans(text, spans, start, end)
    shown = re.sub(r"\s+", " ", shown).strip()
    return ("…" if start > 0 else "") + shown + ("…" if end < len(text) else "")


def findings_of(text: str | None) -> list[tuple[str, int, int, str]]:
    """(detector, char start, char end, preview) of every secret-shaped span of `text`."""
    if not text:
        return []
    spans = find_secrets(text)
    return [(detector_of(s.rule), s.start, s.end, preview(text, spans, i)) for i, s in enumerate(spans)]


def scan(conn: psycopg.Connection, *, stop: threading.Event | None = None) -> ScanSummary:
    """Scan every row not scanned at its current size (see the module docstring).

    When the rules changed since the last scan (`embed.redact.RULES_VERSION`, kept in ``ah.meta``
    under `RULES_KEY`), every row's mark is dropped first, in one transaction with the new
    version, so the whole catalogue is scanned again under the new rules (an interrupted re-scan
    goes on from where it stopped). Findings of a row are replaced when the row is re-scanned.
    """
    summary = ScanSummary()
    _forget_marks_made_by_other_rules(conn)
    for table in ("message", "tool_call"):
        after = 0
        while True:
            if stop is not None and stop.is_set():
                summary.interrupted = True
                return summary
            rows = conn.execute(_PENDING[table], (after, BATCH_ROWS)).fetchall()
            if not rows:
                break
            after = rows[-1][0]
            found = []
            for row_id, session_id, source_id, offset, first, second, _ in rows:
                fields = (("text", first),) if table == "message" else (("input", first), ("output", second))
                for field, text in fields:
                    for detector, a, b, shown in findings_of(text):
                        found.append((session_id, row_id, field, detector, a, b, source_id, offset, shown))
            _write(conn, table, rows, found)
            summary.findings += len(found)
            if table == "message":
                summary.messages += len(rows)
            else:
                summary.tool_calls += len(rows)
    return summary


RULES_KEY = "secrets:rules_version"
"""``ah.meta`` key: the `RULES_VERSION` the marks in ``ah.secret_scan`` were made with."""


def scanned_once(conn: psycopg.Connection) -> bool:
    """Whether a scan ever ran on this catalogue (it records `RULES_KEY` first): False means its
    findings are not "none" but unknown (`status` says "not scanned yet")."""
    return conn.execute("SELECT EXISTS (SELECT 1 FROM ah.meta WHERE key = %s)", (RULES_KEY,)).fetchone()[0]


def _forget_marks_made_by_other_rules(conn: psycopg.Connection) -> None:
    with conn.transaction():
        row = conn.execute("SELECT value FROM ah.meta WHERE key = %s FOR UPDATE", (RULES_KEY,)).fetchone()
        if row is not None and row[0] == str(RULES_VERSION):
            return
        conn.execute("DELETE FROM ah.secret_scan")  # marks of an older (or unrecorded) version
        conn.execute(
            "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()",
            (RULES_KEY, str(RULES_VERSION)),
        )


def _write(conn: psycopg.Connection, table: str, rows: list, found: list) -> None:
    col = _COLUMN[table]
    ids = [r[0] for r in rows]
    with conn.transaction(), conn.cursor() as cur:
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
            (ids, [r[6] for r in rows]),
        )
