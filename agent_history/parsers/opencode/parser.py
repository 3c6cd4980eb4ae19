"""OpenCode parsers: storage-tree / export documents (`OpencodeDocumentParser`) and the SQLite
database (`OpencodeDbParser`). Record mapping and token accounting: `parsers.opencode.convert`.

Record types counted in `record_type_seen`: ``session``, ``message/<role>``, ``part/<type>``
(storage files and database rows), ``export`` (an ``opencode export`` document, whose ``info``,
messages and parts are counted as ``export/info``, ``export/message/<role>``, ``export/part/<type>``).
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers.base import DatabaseParser, DbTable, DocumentParser, Pos, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_list, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.opencode.convert import AGENT, message_rows, part_rows, session_rows, turn_of

VERSION = 2  # 2: a child session's user text is a sub-agent brief, not a prompt (field case E35)


def _kind(doc: dict, path: str) -> str:
    """What a storage/export document holds: export | session | message | part."""
    if isinstance(doc.get("info"), dict) and isinstance(doc.get("messages"), list):
        return "export"
    segs = path.replace("\\", "/").split("/")
    for kind in ("part", "message", "session"):
        if kind in segs[:-1]:
            return kind
    if "messageID" in doc and "type" in doc:
        return "part"
    if "role" in doc:
        return "message"
    return "session"


class OpencodeDocumentParser(DocumentParser):
    """One storage JSON file (``storage/session|message|part/…``) or an ``opencode export`` document.

    A part file's message (for the role) comes as ``ctx.sidecar``: the loader reads
    ``storage/message/<session>/<messageID>.json`` beside it when it exists. A message file's
    ``step-finish`` parts come as ``ctx.sidecar["steps"]`` (``storage/part/<messageID>/``, in
    id order): one model call per step, as the export and the database give.
    """

    AGENT = AGENT
    # 2: a storage message file's calls are its steps' (was one call, the last step's tokens);
    # 3: an export's child session's user text is a sub-agent brief, not a prompt (E35)
    VERSION = 3

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of the whole document; undecodable input → one parse issue."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, "document is not a JSON object")]
        kind = _kind(doc, self.ctx.path)
        pos = Pos(0, 0, 1)
        if kind == "session":
            return [*issues, *session_rows(doc, pos)]
        if kind == "message":
            steps = as_list((self.ctx.sidecar or {}).get("steps"))
            return [*issues, *message_rows(doc, pos, steps=[as_dict(p) for p in steps])]
        if kind == "part":
            msg = self.ctx.sidecar or {}
            return [
                *issues,
                *part_rows(
                    doc,
                    pos,
                    as_str(msg.get("role")),
                    turn_of(msg) if msg else None,
                    session=as_str(msg.get("sessionID")),
                ),
            ]
        return [*issues, *self._export(doc)]

    @staticmethod
    def _export(doc: dict) -> list[Row]:
        rows: list[Row] = [record_type_row(AGENT, doc, "export", None, True)]
        rows += session_rows(doc["info"], Pos(0, 0, 1), "export/info")
        child = as_str(as_dict(doc["info"]).get("parentID")) not in (None, "")
        n = 1
        for m in doc["messages"]:
            m = as_dict(m)
            info = as_dict(m.get("info"))
            parts = [as_dict(part) for part in as_list(m.get("parts"))]
            steps = [p for p in parts if p.get("type") == "step-finish"]
            rows += message_rows(info, Pos(n, 0, n + 1), "export/message", steps=steps)
            n += 1
            role, turn = as_str(info.get("role")), turn_of(info)
            # parts of an export may omit their ids' context: they belong to their message's session
            session = as_str(info.get("sessionID")) or as_str(as_dict(doc["info"]).get("id"))
            for part in parts:
                rows += part_rows(part, Pos(n, 0, n + 1), role, turn, "export/part", session=session, child=child)
                n += 1
        return rows


def _with_data(record: dict, extra: dict) -> dict:
    """A database row as the JSON record OpenCode stores: the ``data`` column's object plus ids."""
    raw = record.get("data")
    data, _ = load_document(raw) if isinstance(raw, str | bytes) else (None, [])
    if not isinstance(data, dict):
        return {}
    return {**data, **{k: v for k, v in extra.items() if v is not None}}


class OpencodeDbParser(DatabaseParser):
    """``opencode.db`` (OpenCode ≥ 1.2, Drizzle schema): tables ``session`` (columns), ``message``
    and ``part`` (a ``data`` JSON column plus ``id``/``session_id``/``message_id``), all with
    ``time_created``/``time_updated`` in unix ms. Parts are read with their message's role, a
    message with its ``step-finish`` parts (one model call per step, `convert` docstring)."""

    AGENT = AGENT
    VERSION = VERSION
    TABLES = (
        DbTable("session", "SELECT s.*, s.rowid AS _rowid FROM session s WHERE", ("s.time_updated", "s.id")),
        # a message with its step-finish parts in id order (ascending ids, OpenCode
        # PartID.ascending); OpenCode updates the message after each step-finish part
        # (processor.ts `finish-step`), so a re-read message row brings its steps so far.
        DbTable(
            "message",
            "SELECT m.*, m.rowid AS _rowid, (SELECT json_group_array(json(s.data)) FROM "
            "(SELECT data FROM part WHERE message_id = m.id AND json_valid(data) "
            "AND json_extract(data, '$.type') = 'step-finish' ORDER BY id) s) AS _steps "
            "FROM message m WHERE",
            ("m.time_updated", "m.id"),
        ),
        DbTable(
            "part",
            "SELECT p.*, p.rowid AS _rowid, json_extract(m.data, '$.role') AS _role, "
            "json_extract(m.data, '$.parentID') AS _parent, "
            "(SELECT s.parent_id FROM session s WHERE s.id = p.session_id) AS _session_parent "
            "FROM part p LEFT JOIN message m ON m.id = p.message_id WHERE",
            ("p.time_updated", "p.id"),
        ),
    )

    def rows(self, table: str, record: dict, pos: Pos) -> Iterable[Row]:
        """Rows of one row of `table` (session | message | part)."""
        if table == "session":
            rec = {
                "id": record.get("id"),
                "parentID": record.get("parent_id"),
                "directory": record.get("directory"),
                "title": record.get("title"),
                "version": record.get("version"),
                "projectID": record.get("project_id"),
                "time": {"created": record.get("time_created"), "updated": record.get("time_updated")},
            }
            return session_rows({k: v for k, v in rec.items() if v is not None}, pos)
        if table == "message":
            rec = _with_data(record, {"id": record.get("id"), "sessionID": record.get("session_id")})
            if not rec:
                return [
                    ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "message data is not a JSON object")
                ]
            steps, _ = load_document(record.get("_steps") or "[]")
            return message_rows(rec, pos, steps=[as_dict(p) for p in as_list(steps)])
        rec = _with_data(
            record,
            {"id": record.get("id"), "sessionID": record.get("session_id"), "messageID": record.get("message_id")},
        )
        if not rec:
            return [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, "part data is not a JSON object")]
        role = as_str(record.get("_role"))
        turn = record.get("message_id") if role == "user" else as_str(record.get("_parent"))
        return part_rows(rec, pos, role, turn, child=bool(record.get("_session_parent")))


PARSER = OpencodeDocumentParser
DOCUMENT_PARSER = OpencodeDocumentParser
DATABASE_PARSER = OpencodeDbParser
