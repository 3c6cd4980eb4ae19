"""Append-only sources (JSONL; Markdown: Aider's chat history): read by byte offset, complete
``\\n``-terminated lines only, and what a pass does with each (docs/design.md §7).

Per file, by what `stat` and the prefix hashes (`agent_history.ingest.prefix`) say:
- new → parse from byte 0;
- unchanged (same size and mtime as at the end of the last complete read) → skipped unread;
- grown (or touched) → ``sha256(first 64 KiB)``, ``sha256(64 KiB before the offset)`` and the
  sampled windows in between must match the saved ones, then parsing resumes at the saved
  offset with the saved parser state;
- shrunk or any mismatch → rewritten: every row the file contributed is purged (its sessions
  marked dirty), it is re-parsed from 0 and a `source_rewritten` issue says which check failed;
- parser version changed with offset > 0 → `parser_upgraded` issue, left for `rebuild`.

Limit of these checks: an edit that changes the file's length always reaches the checkpoint, but
a same-length edit between the windows goes unseen by a pass (re-reading every prefix would make
a pass cost the whole catalogue). Each batch extends a CRC-32 of the whole prefix;
`rebuild-check --verify` re-reads whole files against it and lists what changed unnoticed.

The lines become chunks (`ingest.chunks`) that the pass adds to its open batch
(`AppendContext.add`); a pass with enough new bytes parses its new files in worker processes
(`start_pool`, `ingest.parse_pool`) and adds their chunks in file order (`index_parsed`): the
same batches, transactions and offsets as parsing in-process. A failure the file caused is
recorded as its `load_error` and the pass goes on; a lost connection propagates.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from agent_history.db.tables import parse_issues, source_files
from agent_history.ingest.discovery import FileRef
from agent_history.ingest.prefix import crc_range, prefix_change
from agent_history.ingest.strategy import KnownFile, PassContext, PassSummary, SourceStrategy

if TYPE_CHECKING:
    from agent_history.ingest.chunks import Chunk
    from agent_history.ingest.parse_pool import ParsePool

# The parsers, the chunks and the pool are imported where first needed: a pass with nothing to
# read never loads them (issue 18: whole-process time of a no-change pass).

APPEND_KINDS = ("jsonl", "markdown")
"""Source kinds read by byte offset, complete lines only (Markdown: Aider's chat history)."""


class AppendContext(PassContext, Protocol):
    """What the append path uses of the running pass beyond `PassContext` (the loader)."""

    batch_lines: int
    """Lines per batch (a chunk holds at most this many)."""

    def add(self, chunk: Chunk) -> None:
        """Add a chunk to the open batch (committed when the batch is full)."""
        ...

    def has_failed(self, source_id: int) -> bool:
        """True once the file was recorded as a `load_error` this pass (its later chunks are dropped)."""
        ...

    def raise_if_lost(self, exc: BaseException) -> None:
        """Re-raise `exc` when a connection of the pass is lost; return when the file caused it."""
        ...


class AppendStrategy(SourceStrategy):
    """Files read by byte offset, complete lines only (`APPEND_KINDS`): the pass's own batches
    (`ingest.chunks`; parsed in workers for a large pass, `start_pool`)."""

    KINDS = APPEND_KINDS

    def index(self, ctx: AppendContext, ref: FileRef, st: os.stat_result, known: KnownFile) -> None:
        """Read what `ref` appended since `known.offset` into the open batch (`index_append`)."""
        index_append(ctx, ref, st, known, ctx.summary)


def index_append(ctx: AppendContext, ref: FileRef, st: os.stat_result, k: KnownFile, summary: PassSummary) -> None:
    """Read `ref` as the module docstring says (`st`: its stat at discovery, `k`: what the
    catalogue knew of it). A failure the file caused is recorded as its `load_error`; a lost
    connection propagates."""
    if k.size == st.st_size and k.mtime_ns == st.st_mtime_ns:
        return  # unchanged: skipped without reading
    conn = ctx.conn
    from agent_history.parsers import parser_class

    try:
        parser_cls = parser_class(ref.source.agent)
        with open(ref.path, "rb") as fh:
            offset, line_count, state, windows, crc = k.offset, k.line_count, None, None, 0
            if k.offset > 0 and k.parser_version != parser_cls.VERSION:
                ctx.drain()
                parser_upgraded(ctx, k, parser_cls, summary)
                return
            if k.offset > 0:
                why = "it is shorter than what was indexed" if st.st_size < k.offset else None
                if why is None:
                    state, windows, crc = source_files.resume_state(conn, k.id)
                    why = prefix_change(fh, k.offset, k.head, k.checkpoint, windows)
                if why is not None:
                    ctx.commit()  # the purge must not share a batch with this file's old rows
                    ctx.drain()
                    rewrite(ctx, k, st, summary, why)
                    offset, line_count, state, windows, crc = 0, 0, None, None, 0
                elif crc is None:  # indexed before prefix CRCs were kept: the baseline starts now
                    crc = crc_range(fh, 0, k.offset)
            _read_file(ctx, ref, fh, st, k.id, offset, line_count, state, parser_cls, windows, crc)
    except Exception as exc:  # noqa: BLE001 - recorded, the pass goes on
        ctx.raise_if_lost(exc)
        ctx.commit()  # this file's earlier parts must not be written after the error
        ctx.drain()
        ctx.record_load_error(ref, k.id, exc)


def _read_file(ctx, ref, fh, st, source_id, offset, line_count, state, parser_cls, windows, crc) -> None:
    """Add `fh`'s chunks from `offset` on to the open batch until the end or a stop signal."""
    from agent_history.ingest.chunks import iter_chunks

    for chunk in iter_chunks(
        ref,
        fh,
        st.st_size,
        st.st_mtime_ns,
        source_id,
        offset,
        line_count,
        state,
        parser_cls,
        windows,
        crc,
        ctx.batch_lines,
        ctx.stop,
    ):
        ctx.add(chunk)
        if ctx.has_failed(source_id):
            return


def index_parsed(ctx: AppendContext, pool: ParsePool, ref: FileRef, k: KnownFile, summary: PassSummary) -> None:
    """Add a file a worker parsed (`index_append`'s path for a file read from byte 0)."""
    try:
        chunks, error = pool.result(ref.path)
    except Exception as exc:  # noqa: BLE001 - the worker died or its result did not pickle
        chunks, error = [], exc
    for chunk in chunks:
        if ctx.stop.is_set():  # in-process the last chunk read would be flushed; this one is
            summary.interrupted = True  # a resumable checkpoint all the same
            break
        ctx.add(chunk)
        if ctx.has_failed(k.id):
            return
    if error is not None:
        ctx.commit()  # this file's earlier parts must not be written after the error
        ctx.drain()
        ctx.record_load_error(ref, k.id, error)


def rewrite(ctx: PassContext, k: KnownFile, st: os.stat_result, summary: PassSummary, why: str) -> None:
    """Purge every row file `k` contributed (its sessions marked dirty), reset it to byte 0 and
    record a `source_rewritten` issue saying which check failed (`why`), in one transaction."""
    from agent_history.ingest.writer import purge_source

    with ctx.conn.transaction():
        purge_source(ctx.conn, k.id)
        source_files.reset_for_rewrite(ctx.conn, k.id)
        parse_issues.record_rewritten(
            ctx.conn,
            k.id,
            k.offset,
            k.line_count,
            f"file changed before byte {k.offset} ({why}; now {st.st_size} bytes); re-parsed",
        )
    summary.issues["source_rewritten"] += 1


def parser_upgraded(ctx: PassContext, k: KnownFile, parser_cls, summary: PassSummary) -> None:
    """Mark file `k`, read by an older parser version, ``parser_upgraded`` with an issue naming
    both versions (left for `rebuild`; once per file)."""
    if k.status == "parser_upgraded":
        return
    with ctx.conn.transaction():
        source_files.mark_parser_upgraded(ctx.conn, k.id)
        parse_issues.record_parser_upgraded(
            ctx.conn,
            k.id,
            k.offset,
            k.line_count,
            f"parsed by parser v{k.parser_version}, now v{parser_cls.VERSION}: run `agent-history rebuild`",
        )
    summary.issues["parser_upgraded"] += 1


def start_pool(
    files: list[tuple[FileRef, os.stat_result]],
    known: dict[str, KnownFile],
    *,
    workers: int | None,
    least: int | None,
    batch_lines: int,
    analyse: bool,
) -> tuple[ParsePool | None, set[str], int]:
    """Worker processes for the files this pass reads from byte 0, when there are enough of them
    (`least` bytes, None = `parse_pool.PARALLEL_MIN_BYTES`; two files or more) and workers are on
    (`workers`: None = `parse_pool.parse_workers()`, 0/1 = in-process). `analyse`: the workers
    analyse the search text too (the pass has a writer thread). Returns the pool (None: parse
    in-process), the paths it parses and the number of worker processes (0 without a pool)."""
    todo = [
        (ref, st)
        for ref, st in files
        if ref.kind in APPEND_KINDS
        and known[ref.path].offset == 0
        and not (known[ref.path].size == st.st_size and known[ref.path].mtime_ns == st.st_mtime_ns)
    ]
    if len(todo) < 2:
        return None, set(), 0
    from agent_history.ingest.chunks import parse_new_file
    from agent_history.ingest.parse_pool import PARALLEL_MIN_BYTES, ParsePool, parse_workers

    workers = workers if workers is not None else parse_workers()
    least = PARALLEL_MIN_BYTES if least is None else least
    if workers <= 1 or sum(st.st_size for _, st in todo) < least:
        return None, set(), 0
    used = min(workers, len(todo))
    jobs = [
        (
            ref.path,
            (ref, known[ref.path].id, st.st_size, st.st_mtime_ns, known[ref.path].line_count, batch_lines, analyse),
        )
        for ref, st in todo
    ]
    return ParsePool(used, parse_new_file, jobs), {ref.path for ref, _ in todo}, used
