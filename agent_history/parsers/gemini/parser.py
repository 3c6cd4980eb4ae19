"""Gemini CLI parsers: `GeminiDocumentParser` (≤ 0.39 session JSON) and `GeminiParser` (0.40+ JSONL).

See `agent_history.parsers.gemini.convert` for the record mapping and the token buckets.
Record types counted in `record_type_seen`: ``session-doc`` (a whole document), ``header``
(JSONL line 1), ``$set`` (mutation line), ``message/<type>``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers.base import DocumentParser, ParseContext, Parser, Pos, record_type_row
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.lines import iter_records
from agent_history.parsers.gemini.convert import (
    AGENT,
    apply_set,
    message_rows,
    session_row,
    session_uid_of,
)

VERSION = 2  # 2: a reply that only calls tools (content "") is a message row (field case E31)


def _fallback_uid(path: str) -> str:
    """Session id when the file names none: the file name without extension."""
    return os.path.splitext(os.path.basename(path))[0] or path


class GeminiDocumentParser(DocumentParser):
    """A ≤ 0.39 ``session-*.json`` document (DocumentParser contract: complete content each time)."""

    AGENT = AGENT
    VERSION = VERSION

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of the whole document; a document that is not a JSON object → one parse issue."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, "document is not a JSON object")]
        uid = session_uid_of(doc, _fallback_uid(self.ctx.path))
        rows: list[Row] = [
            *issues,
            record_type_row(AGENT, doc, "session-doc", None, True),
            session_row(doc, uid, Pos(0, 0, 1)),
        ]
        turn: str | None = None
        messages = doc.get("messages")
        if not isinstance(messages, list):
            rows.append(ParseIssueRow("bad_record", 0, 1, "document has no messages list"))
            return rows
        for i, msg in enumerate(messages):
            out, turn = message_rows(msg, uid, turn, Pos(i + 1, 0, i + 2), i)
            rows.extend(out)
        return rows


class GeminiParser(Parser):
    """Gemini CLI 0.40+ JSONL: header line, message lines, ``{"$set": …}`` mutations.

    State: the session id, the open turn. A line holding a whole document (``messages`` list,
    as older tools wrote ``.jsonl``) is read like a document, its messages numbered by line
    and index so uids stay unique.
    """

    AGENT = AGENT
    VERSION = VERSION

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        st = state or {}
        self.session_uid: str | None = st.get("session_uid")
        self.turn_uid: str | None = st.get("turn_uid")

    def state(self) -> dict:
        """``{session_uid, turn_uid}``."""
        return {"session_uid": self.session_uid, "turn_uid": self.turn_uid}

    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows of one JSONL record."""
        if not isinstance(record, dict):
            return [ParseIssueRow("non_object", pos.byte_offset, pos.line_number, "line is not a JSON object")]
        if "$set" in record:
            rows: list[Row] = [record_type_row(AGENT, record, "$set", None, True)]
            if self.session_uid is None:
                rows.append(ParseIssueRow("record_before_header", pos.byte_offset, pos.line_number, "$set"))
                return rows
            return rows + apply_set(record["$set"], self.session_uid, pos)
        if "type" not in record and ("sessionId" in record or "session_id" in record or "messages" in record):
            self.session_uid = session_uid_of(record, _fallback_uid(self.ctx.path))
            if isinstance(record.get("messages"), list):
                return self._whole(record, pos)
            self.turn_uid = None
            return [record_type_row(AGENT, record, "header", None, True), session_row(record, self.session_uid, pos)]
        if self.session_uid is None:
            self.session_uid = _fallback_uid(self.ctx.path)
        rows, self.turn_uid = message_rows(record, self.session_uid, self.turn_uid, pos)
        return rows

    def _whole(self, doc: dict, pos: Pos) -> list[Row]:
        assert self.session_uid is not None
        rows: list[Row] = [
            record_type_row(AGENT, doc, "session-doc", None, True),
            session_row(doc, self.session_uid, pos),
        ]
        turn: str | None = None
        for i, msg in enumerate(doc["messages"]):
            out, turn = message_rows(msg, self.session_uid, turn, pos, i)
            rows.extend(out)
        self.turn_uid = turn
        return rows


def parse_jsonl(ctx: ParseContext, data: bytes) -> list[Row]:
    """Convenience: every row of a JSONL file's bytes (tests, `parse`)."""
    p = GeminiParser(ctx, None)
    rows: list[Row] = []
    for pos, objs, issues in iter_records(data):
        rows.extend(issues)
        for obj in objs:
            rows.extend(p.feed(obj, pos))
    return rows


PARSER = GeminiParser
DOCUMENT_PARSER = GeminiDocumentParser
