"""Whole-document sources (DESIGN §7 "Source kinds"): a JSON file the harness rewrites in place.

Per document, by what `stat` and its content hash say:
- same size and mtime as last indexed → skipped without reading;
- read, same ``sha256`` as last indexed (a touch) and same parser version → only size/mtime
  are updated;
- otherwise the document is parsed whole (`parsers.base.DocumentParser`) and, in **one**
  transaction: its per-source rows (parse issues, record-type counts) are replaced, its rows are
  merged by natural key (an unchanged item changes nothing and marks nothing dirty), rows it
  contributed that the new version no longer holds are deleted (their sessions marked dirty so
  the post-passes recompute), and the file's size, mtime, hash and parser version are saved.
A failure rolls back and is recorded as `load_error` by the loader; the pass goes on.

A parser that stamps its sessions (`DocumentParser.session_versions`, e.g. claude.ai
conversations by ``updated_at``) makes a re-read incremental: only the sessions whose stamp
changed are merged; the others' rows are left untouched (and not purged). The stamps are kept in
``source_file.parser_state`` (``{"versions": {uid: stamp}}``).

OpenCode storage *part* files do not say their message's role: the message file
(``storage/message/<session>/<messageID>.json``) is read as the part's sidecar.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import psycopg
from psycopg.types.json import Jsonb

from agent_history.ingest.discovery import FileRef
from agent_history.ingest.writer import EVENT_TABLES, PER_SOURCE_TABLES, Part, write_parts
from agent_history.model.rows import ROW_TYPES, ParseIssueRow, Row, SessionRow
from agent_history.parsers import source_parser
from agent_history.parsers.base import ParseContext

if TYPE_CHECKING:
    from agent_history.ingest.loader import Loader, PassSummary

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""A document larger than this is recorded as `document_too_large` and not read."""
_EVENT_TYPES = tuple(t for t in ROW_TYPES if t.TABLE in EVENT_TABLES)


def _sidecar(loader: Loader, ref: FileRef) -> dict | None:
    """The message record of an OpenCode storage part file (for its role and session), if any.

    Looked up by the part's ``messageID`` (else its directory name) among the message files of
    the same home, read once per pass (file names usually equal ids, but not in every fixture).
    """
    if ref.source.agent != "opencode" or not ref.rel_path.startswith("storage/part/"):
        return None
    cache: dict = loader.__dict__.setdefault("_opencode_messages", {})
    home = str(ref.source.home)
    if home not in cache:
        index: dict[str, dict] = {}
        for path in sorted((ref.source.home / "storage" / "message").glob("*/*.json")):
            try:
                msg = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if isinstance(msg, dict):
                index.setdefault(str(msg.get("id") or path.stem), msg)
        cache[home] = index
    message_id = Path(ref.rel_path).parent.name
    try:
        part = orjson.loads(Path(ref.path).read_bytes())
        if isinstance(part, dict) and isinstance(part.get("messageID"), str):
            message_id = part["messageID"]
    except (OSError, orjson.JSONDecodeError):
        pass
    return cache[home].get(message_id)


def index_document(loader: Loader, ref: FileRef, st: os.stat_result, known, summary: PassSummary) -> None:
    """Index one document source (see the module docstring). Raises psycopg errors and OSError
    for the loader to record; never leaves a partial write."""
    if known.size == st.st_size and known.mtime_ns == st.st_mtime_ns:
        return
    conn = loader.conn
    parser_cls = source_parser(ref.source.agent, "document")
    loader._commit()  # earlier files' batches are written before this document's transaction
    loader._drain()
    if st.st_size > MAX_DOCUMENT_BYTES:
        rows: list[Row] = [ParseIssueRow("document_too_large", 0, None, f"{st.st_size} bytes")]
        data = b""
    else:
        with open(ref.path, "rb") as fh:
            data = fh.read()
        rows = []
    digest = hashlib.sha256(data).hexdigest()
    old = conn.execute(
        "SELECT content_sha256, parser_version FROM ah.source_file WHERE id = %s", (known.id,)
    ).fetchone()
    summary.files_changed += 1
    summary.bytes_read += len(data)
    if old is not None and old[0] == digest and old[1] == parser_cls.VERSION and known.status == "ok":
        conn.execute(
            "UPDATE ah.source_file SET size = %s, mtime_ns = %s, last_indexed_at = now() WHERE id = %s",
            (st.st_size, st.st_mtime_ns, known.id),
        )
        return
    versions = None
    if data:
        ctx = ParseContext(
            path=ref.path, namespace=ref.source.namespace, home=str(ref.source.home), sidecar=_sidecar(loader, ref)
        )
        parser = parser_cls(ctx)
        rows = list(parser.parse(data))
        versions = parser.session_versions()
    write = rows
    if versions is not None and old is not None and old[1] == parser_cls.VERSION:
        before = conn.execute("SELECT parser_state FROM ah.source_file WHERE id = %s", (known.id,)).fetchone()[0] or {}
        write = unchanged_sessions_dropped(rows, versions, before.get("versions") or {})
    with conn.transaction():
        written, purged = replace_document(conn, known.id, ref.source.namespace, rows, write)
        conn.execute(
            "UPDATE ah.source_file SET kind = 'document', content_sha256 = %s, size = %s, mtime_ns = %s, "
            "indexed_offset = %s, line_count = %s, parser_version = %s, parser_state = %s, status = 'ok', "
            "last_error = NULL, last_indexed_at = now() WHERE id = %s",
            (
                digest,
                st.st_size,
                st.st_mtime_ns,
                len(data),
                data.count(b"\n"),
                parser_cls.VERSION,
                Jsonb({"versions": versions}) if versions is not None else None,
                known.id,
            ),
        )
        conn.execute("DELETE FROM ah.parse_issue WHERE kind = 'load_error' AND source_id = %s", (known.id,))
    summary.rows_new.update(written.new)
    summary.rows_merged.update(written.merged)
    summary.rows.update(written.new)
    summary.rows.update(written.merged)
    if purged:
        summary.rows["purged"] += purged
    for row in rows:
        if isinstance(row, ParseIssueRow):
            summary.issues[row.kind] += 1
    if loader.progress:
        loader.progress(ref.path, len(data), 1)


def unchanged_sessions_dropped(rows: list[Row], versions: dict[str, str], before: dict[str, str]) -> list[Row]:
    """`rows` without the event and session rows of sessions whose version stamp is the same as
    at the last read (per-source rows — issues, record-type counts — are always kept)."""
    same = {uid for uid, v in versions.items() if before.get(uid) == v}
    if not same:
        return rows
    return [r for r in rows if type(r).PER_SOURCE or getattr(r, "session_uid", None) not in same]


def replace_document(
    conn: psycopg.Connection, source_id: int, namespace: str, rows: list[Row], write: list[Row] | None = None
):
    """Make source `source_id`'s rows exactly `rows` (inside the caller's transaction):
    per-source rows replaced, event rows and sessions merged by natural key (only those in
    `write` when given: rows known unchanged are left as they are), rows of this source no
    longer present deleted (sessions marked dirty). Returns ``(Written, rows deleted)``."""
    with conn.cursor() as cur:
        for table in PER_SOURCE_TABLES:
            cur.execute(f"DELETE FROM ah.{table} WHERE source_id = %s", (source_id,))
    written = write_parts(conn, [Part(source_id, namespace, rows if write is None else write)])
    return written, purge_missing(conn, source_id, rows)


def purge_missing(conn: psycopg.Connection, source_id: int, rows: list[Row]) -> int:
    """Delete the event rows and sessions `source_id` contributed whose natural key is not among
    `rows`; mark the sessions of deleted rows dirty. Returns the number of event rows deleted."""
    deleted = 0
    with conn.cursor() as cur:
        for row_type in _EVENT_TYPES:
            cols = row_type.key_columns()
            keys = {r.natural_key() for r in rows if type(r) is row_type}
            arrays = [list(k[i] for k in keys) for i in range(len(cols))]
            cast = ", ".join("%s::text[]" for _ in cols)
            cur.execute(
                f"WITH d AS (DELETE FROM ah.{row_type.TABLE} WHERE source_id = %s AND ({', '.join(cols)}) NOT IN "
                f"(SELECT * FROM unnest({cast})) RETURNING session_id) "
                "INSERT INTO ah.dirty_session (session_id) SELECT DISTINCT session_id FROM d "
                "ON CONFLICT (session_id) DO NOTHING",
                (source_id, *arrays),
            )
            deleted += cur.rowcount
        skeys = {r.natural_key() for r in rows if type(r) is SessionRow}
        skeys |= {
            (r.agent, r.session_uid, r.agent_id)
            for r in rows
            if hasattr(r, "session_uid") and type(r) is not SessionRow
        }
        refs = " AND ".join(f"NOT EXISTS (SELECT 1 FROM ah.{t} x WHERE x.session_id = s.id)" for t in EVENT_TABLES)
        cur.execute(
            f"DELETE FROM ah.session s WHERE s.source_id = %s AND (s.agent, s.session_uid, s.agent_id) NOT IN "
            f"(SELECT * FROM unnest(%s::text[], %s::text[], %s::text[])) AND {refs}",
            (source_id, [k[0] for k in skeys], [k[1] for k in skeys], [k[2] for k in skeys]),
        )
    return deleted
