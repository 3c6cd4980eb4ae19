"""A minimal whole-document path for the issue-16 document sources (Copilot legacy JSON, VS Code
``chatSessions/*.json``, Markdown memories) — a stand-in until the loader's own document source
kind lands; the lead swaps this module for it at merge.

Per document (`discovery.iter_documents`): unchanged size and mtime → skipped unread; else the
whole file is read and hashed; the same sha256 as last time → only size/mtime are updated;
otherwise, in **one transaction**, every row the file contributed before is purged (its sessions
marked dirty), the `DocumentParser`'s rows for the new content are written, and the file's
size, mtime, hash (``head_sha256`` holds the whole-content sha256 here), length and parser
version are saved. So an edited document holds exactly its new content, and a document that
vanished from a rewrite leaves nothing behind. A file that fails is rolled back and recorded
as a ``load_error`` issue (status ``error``); the pass goes on. Losing the connection
(`psycopg.OperationalError`) propagates.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

import psycopg

from agent_history.ingest.discovery import DocumentRef, Source, iter_documents
from agent_history.ingest.writer import purge_source, write_rows
from agent_history.model.rows import ParseIssueRow
from agent_history.parsers import document_parser_class
from agent_history.parsers.base import ParseContext

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Larger documents are not read (a `load_error` says so)."""


class DocumentTooLarge(Exception):
    """A document over `MAX_DOCUMENT_BYTES`."""


def index_documents(conn: psycopg.Connection, sources: Iterable[Source], summary) -> None:
    """Index every whole-document file of `sources` (homes that do not exist are skipped: the
    JSONL pass already reported them). Updates `summary` (a `loader.PassSummary`): files
    scanned/changed/failed, bytes read, rows new/merged per table, issues."""
    for source in sources:
        if not source.home.is_dir():
            continue
        for ref in iter_documents(source, summary.skipped_paths):
            summary.files_scanned += 1
            try:
                st = os.stat(ref.path)
            except OSError as exc:
                summary.skipped_paths.append(f"{ref.path}: {exc.strerror}")
                continue
            _index_one(conn, ref, st, summary)


def _known(conn: psycopg.Connection, ref: DocumentRef, version: int):
    row = conn.execute(
        "SELECT id, size, mtime_ns, head_sha256, parser_version FROM ah.source_file WHERE path = %s", (ref.path,)
    ).fetchone()
    if row is not None:
        return row
    with conn.transaction():
        source_id = conn.execute(
            "INSERT INTO ah.source_file (path, namespace, agent, role, tier, rel_path, parser_version) "
            "VALUES (%s, %s, %s, 'main', %s, %s, %s) RETURNING id",
            (ref.path, ref.source.namespace, ref.source.agent, ref.source.tier, ref.rel_path, version),
        ).fetchone()[0]
    return source_id, None, None, None, version


def _index_one(conn: psycopg.Connection, ref: DocumentRef, st: os.stat_result, summary) -> None:
    parser_cls = document_parser_class(ref.doc_kind, ref.source.agent)
    source_id, size, mtime_ns, sha, version = _known(conn, ref, parser_cls.VERSION)
    if size == st.st_size and mtime_ns == st.st_mtime_ns and version == parser_cls.VERSION:
        return
    try:
        if st.st_size > MAX_DOCUMENT_BYTES:
            raise DocumentTooLarge(f"{st.st_size} bytes is over the {MAX_DOCUMENT_BYTES}-byte document limit")
        with open(ref.path, "rb") as fh:
            data = fh.read()
        digest = hashlib.sha256(data).hexdigest()
        if digest == sha and version == parser_cls.VERSION:
            with conn.transaction():
                conn.execute(
                    "UPDATE ah.source_file SET size = %s, mtime_ns = %s WHERE id = %s",
                    (len(data), st.st_mtime_ns, source_id),
                )
            return
        ctx = ParseContext(path=ref.path, namespace=ref.source.namespace, home=str(ref.source.home))
        rows = list(parser_cls(ctx).parse(data))
        with conn.transaction():
            purge_source(conn, source_id)
            written = write_rows(conn, source_id, ref.source.namespace, rows)
            conn.execute(
                "UPDATE ah.source_file SET size = %s, mtime_ns = %s, head_sha256 = %s, checkpoint_sha256 = NULL, "
                "indexed_offset = %s, line_count = %s, parser_version = %s, parser_state = NULL, status = 'ok', "
                "last_error = NULL, last_indexed_at = now() WHERE id = %s",
                (len(data), st.st_mtime_ns, digest, len(data), data.count(b"\n"), parser_cls.VERSION, source_id),
            )
            conn.execute("DELETE FROM ah.parse_issue WHERE kind = 'load_error' AND source_id = %s", (source_id,))
    except psycopg.OperationalError:
        raise
    except Exception as exc:  # noqa: BLE001 - recorded, the pass goes on
        _load_error(conn, source_id, exc, summary)
        return
    summary.files_changed += 1
    summary.bytes_read += len(data)
    summary.rows_new.update(written.new)
    summary.rows_merged.update(written.merged)
    summary.rows.update(written.new)
    summary.rows.update(written.merged)
    for row in rows:
        if isinstance(row, ParseIssueRow):
            summary.issues[row.kind] += 1


def _load_error(conn: psycopg.Connection, source_id: int, exc: BaseException, summary) -> None:
    summary.files_failed += 1
    summary.issues["load_error"] += 1
    sqlstate = getattr(exc, "sqlstate", None)
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    detail = f"{type(exc).__name__}" + (f" [SQLSTATE {sqlstate}]" if sqlstate else "") + f": {first}"
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()
    with conn.transaction():
        conn.execute("UPDATE ah.source_file SET status = 'error', last_error = %s WHERE id = %s", (detail, source_id))
        conn.execute(
            "INSERT INTO ah.parse_issue (source_id, kind, byte_offset, detail) VALUES (%s, 'load_error', 0, %s) "
            "ON CONFLICT (source_id, kind, byte_offset) DO UPDATE SET detail = EXCLUDED.detail, created_at = now()",
            (source_id, detail),
        )
