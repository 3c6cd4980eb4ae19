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

from agent_history.db.tables import secrets
from agent_history.embed.redact import RULES_VERSION, apply_spans, detector_of, find_secrets

PREVIEW_CONTEXT = 32
"""Characters of context kept on each side of a span in its preview."""
BATCH_ROWS = 500
"""Rows scanned per transaction."""


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
            rows = secrets.unscanned(conn, table, after, BATCH_ROWS)
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
    return secrets.scanned_once(conn, RULES_KEY)


def _forget_marks_made_by_other_rules(conn: psycopg.Connection) -> None:
    with conn.transaction():
        if secrets.rules_version_for_update(conn, RULES_KEY) == str(RULES_VERSION):
            return
        secrets.forget_marks(conn, RULES_KEY, str(RULES_VERSION))  # marks of an older (or unrecorded) version


def _write(conn: psycopg.Connection, table: str, rows: list, found: list) -> None:
    with conn.transaction():
        secrets.replace_findings(conn, table, [r[0] for r in rows], found, [r[6] for r in rows])
