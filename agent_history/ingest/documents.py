"""Whole-document sources (docs/design.md §7 "Source kinds"): a JSON file the harness rewrites in place.

Per document, by what `stat` and its content hash say:
- same size and mtime as last indexed → skipped without reading;
- read, same ``sha256`` as last indexed (a touch) and same parser version → only size/mtime
  are updated;
- otherwise the document is parsed whole (`parsers.base.DocumentParser`) and, in **one**
  transaction with the other documents of its batch (up to `DOCS_PER_BATCH` documents or
  `ROWS_PER_BATCH` rows; the loader flushes the batch whenever it commits its own): its
  per-source rows (parse issues, record-type counts) are replaced, its rows are merged by
  natural key (an unchanged item changes nothing and marks nothing dirty), rows it contributed
  that the new version no longer holds are deleted (their sessions marked dirty so the
  post-passes recompute), and the file's size, mtime, hash and parser version are saved.
A failing batch is retried document by document (`ingest.isolate.write_isolated`); the failing
one is rolled back and recorded as `load_error`; the pass goes on. Rows arrive checked against
the columns' limits (`parsers.driver.document_rows`).

A parser that stamps its sessions (`DocumentParser.session_versions`, e.g. claude.ai
conversations by ``updated_at``) makes a re-read incremental: only the sessions whose stamp
changed are merged; the others' rows are left untouched (and not purged). The stamps are kept in
``source_file.parser_state`` (``{"versions": {uid: stamp}}``).

OpenCode storage *part* files do not say their message's role: the message file
(``storage/message/<session>/<messageID>.json``) is read as the part's sidecar. A *message*
file does not list its parts: its ``step-finish`` parts (``storage/part/<messageID>/*.json``, in
id order) are read as its sidecar ``{"steps": [part, …]}``, one model call per step
(`parsers.opencode.convert`). OpenCode rewrites the message after each step's part, so a
changed message file brings its steps so far.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import orjson
from psycopg.types.json import Jsonb

from agent_history.db.tables import parse_issues, source_files
from agent_history.db.tables.merges import delete_per_source, purge_missing_many
from agent_history.ingest.discovery import FileRef
from agent_history.ingest.isolate import write_isolated
from agent_history.ingest.strategy import KnownFile, PassContext, SourceStrategy
from agent_history.ingest.writer import Part, prepare_staging, write_parts
from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers import source_parser
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import document_rows

MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""A document larger than this is recorded as `document_too_large` and not read."""
DOCS_PER_BATCH = 200
ROWS_PER_BATCH = 20_000
"""A batch of documents is written in one transaction when it reaches either bound."""


def _sidecar(cache: dict[str, dict[str, dict]], ref: FileRef) -> dict | None:
    """The sidecar of an OpenCode storage file, if any: for a message file its step parts
    (`_message_steps`), for a part file its message record (for its role and session).

    A part's message is looked up by the part's ``messageID`` (else its directory name) among
    the message files of the same home, read once per pass into `cache` (home → message id →
    record; file names usually equal ids, but not in every fixture).
    """
    if ref.source.agent != "opencode":
        return None
    if ref.rel_path.startswith("storage/message/"):
        return _message_steps(ref)
    if not ref.rel_path.startswith("storage/part/"):
        return None
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


def _message_steps(ref: FileRef) -> dict | None:
    """``{"steps": [part, …]}``: the ``step-finish`` parts of an OpenCode storage message file
    (``storage/part/<messageID>/*.json``, the message's ``id`` else its file name), sorted by part
    id (OpenCode's ids ascend in time); None when the message has no part directory. Unreadable
    part files are skipped (they are indexed, and their issues recorded, as sources of their own)."""
    message_id = Path(ref.rel_path).stem
    try:
        msg = orjson.loads(Path(ref.path).read_bytes())
        if isinstance(msg, dict) and isinstance(msg.get("id"), str) and msg["id"]:
            message_id = msg["id"]
    except (OSError, orjson.JSONDecodeError):
        return None
    folder = ref.source.home / "storage" / "part" / message_id
    if not folder.is_dir():
        return None
    steps = []
    for path in folder.glob("*.json"):
        try:
            part = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(part, dict) and part.get("type") == "step-finish":
            steps.append(part)
    steps.sort(key=lambda p: str(p.get("id") or ""))
    return {"steps": steps}


class DocumentStrategy(SourceStrategy):
    """Whole-document sources (see the module docstring): parsed documents wait on the strategy
    for their batch's transaction, written when `DOCS_PER_BATCH` / `ROWS_PER_BATCH` is reached or
    the loader commits its own batch (`flush`)."""

    KINDS = ("document",)

    def __init__(self) -> None:
        self.pending: list[_Doc] = []
        self.opencode_messages: dict[str, dict[str, dict]] = {}
        """OpenCode message records by home and id (`_sidecar`), read once per pass."""

    def begin_pass(self) -> None:
        """Forget the documents waiting and the message records read."""
        self.pending = []
        self.opencode_messages = {}

    def index(self, ctx: PassContext, ref: FileRef, st: os.stat_result, known: KnownFile) -> None:
        """Index one document source. Raises psycopg errors and OSError for the loader to record;
        never leaves a partial write."""
        index_document(self, ctx, ref, st, known)

    def flush(self, ctx: PassContext) -> None:
        """Write the documents waiting in one transaction; if it fails, document by document,
        recording the failing one as `load_error`."""
        docs, self.pending = self.pending, []
        if not docs:
            return
        ctx.drain()
        write_isolated(
            ctx.conn,
            docs,
            lambda batch: _write_documents(ctx, batch),
            lambda doc, exc: ctx.record_load_error(doc.ref, doc.source_id, exc),
        )

    def discard(self) -> None:
        """Drop the documents not yet written (their files are read again by the next pass)."""
        self.pending = []


def index_document(strategy: DocumentStrategy, ctx: PassContext, ref: FileRef, st: os.stat_result, known) -> None:
    """Index one document source (see the module docstring) into `strategy`'s pending batch."""
    summary = ctx.summary
    if known.size == st.st_size and known.mtime_ns == st.st_mtime_ns:
        return
    conn = ctx.conn
    parser_cls = source_parser(ref.source.agent, "document", ref.doc_kind)
    if st.st_size > MAX_DOCUMENT_BYTES:
        rows: list[Row] = [ParseIssueRow("document_too_large", 0, None, f"{st.st_size} bytes")]
        data = b""
    else:
        with open(ref.path, "rb") as fh:
            data = fh.read()
        rows = []
    digest = hashlib.sha256(data).hexdigest()
    old = source_files.document_state(conn, known.id)
    if old is not None and old[0] == digest and old[1] == parser_cls.VERSION and known.status == "ok":
        source_files.save_signature(conn, known.id, st.st_size, st.st_mtime_ns)
        summary.changed(known.id)
        summary.bytes_read += len(data)
        return
    versions = None
    if data:
        ctx = ParseContext(
            path=ref.path,
            namespace=ref.source.namespace,
            home=str(ref.source.home),
            sidecar=_sidecar(strategy.opencode_messages, ref),
        )
        parser = parser_cls(ctx)
        rows = document_rows(parser, data)
        versions = parser.session_versions()
    write = rows
    if versions is not None and old is not None and old[1] == parser_cls.VERSION:
        before = source_files.parser_state(conn, known.id) or {}
        write = unchanged_sessions_dropped(rows, versions, before.get("versions") or {})
    pending = strategy.pending
    pending.append(
        _Doc(
            ref,
            known.id,
            rows,
            write,
            digest,
            st.st_size,
            st.st_mtime_ns,
            len(data),
            data.count(b"\n"),
            parser_cls.VERSION,
            versions,
        )
    )
    if len(pending) >= DOCS_PER_BATCH or sum(len(d.rows) for d in pending) >= ROWS_PER_BATCH:
        strategy.flush(ctx)


@dataclass
class _Doc:
    """A parsed document waiting for its batch's transaction."""

    ref: FileRef
    source_id: int
    rows: list[Row]
    write: list[Row]
    digest: str
    size: int
    mtime_ns: int
    nbytes: int
    nlines: int
    version: int
    versions: dict | None


def _write_documents(ctx: PassContext, docs: list[_Doc]) -> None:
    conn, summary = ctx.conn, ctx.summary
    ids = [d.source_id for d in docs]
    prepare_staging(conn)
    with conn.transaction():
        delete_per_source(conn, ids)
        written = write_parts(conn, [Part(d.source_id, d.ref.source.namespace, d.write) for d in docs], **ctx.redact_kw)
        purged = purge_missing_many(conn, [(d.source_id, d.rows) for d in docs])
        with conn.cursor() as cur:
            source_files.save_documents(
                cur,
                [
                    (
                        d.digest,
                        d.size,
                        d.mtime_ns,
                        d.nbytes,
                        d.nlines,
                        d.version,
                        Jsonb({"versions": d.versions}) if d.versions is not None else None,
                        d.source_id,
                    )
                    for d in docs
                ],
            )
            parse_issues.clear_load_errors(cur, ids)
    summary.add_written(written.new, written.merged, written.issues)
    if purged:
        summary.rows["purged"] += purged
    for d in docs:  # counted once committed: a pass stopped before this write discards them
        summary.changed(d.source_id)
        summary.bytes_read += d.nbytes
        for row in d.rows:
            if isinstance(row, ParseIssueRow):
                summary.issues[row.kind] += 1
        if ctx.progress:
            ctx.progress(d.ref.path, d.nbytes, 1)


def unchanged_sessions_dropped(rows: list[Row], versions: dict[str, str], before: dict[str, str]) -> list[Row]:
    """`rows` without the event and session rows of sessions whose version stamp is the same as
    at the last read (per-source rows — issues, record-type counts — are always kept)."""
    same = {uid for uid, v in versions.items() if before.get(uid) == v}
    if not same:
        return rows
    return [r for r in rows if type(r).PER_SOURCE or getattr(r, "session_uid", None) not in same]
