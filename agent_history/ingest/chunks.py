"""Read and parse one JSONL transcript into batch-sized chunks — pure file work, no database.

The loader's serial path and its parse workers (`agent_history.ingest.parse_pool`) share this
code, so a file parsed in a worker process yields exactly the chunks the loader would have made
in-process: same cut points, offsets, line counts, prefix hashes, CRC and parser state.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import orjson

from agent_history.ingest.cursor_state import composer_sidecar, state_db_path
from agent_history.ingest.discovery import FileRef
from agent_history.ingest.prefix import crc_range, edge_hashes, extend_crc, update_windows
from agent_history.ingest.sidecar import read_sidecar
from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext, Parser
from agent_history.parsers.common.lines import MAX_LINE_BYTES, complete_prefix
from agent_history.parsers.driver import feed_bytes, flush_rows

BATCH_BYTES = 8 * 1024 * 1024
"""Upper bound of one batch's bytes (a single longer line is read whole, up to MAX_LINE_BYTES)."""


@dataclass
class Chunk:
    """One file's contribution to a batch: its rows and where the file's offset moves to."""

    ref: FileRef
    source_id: int
    rows: list[Row]
    offset: int
    line_count: int
    head: str
    checkpoint: str
    state: dict
    windows: dict
    crc: int | None
    parser_version: int
    size: int | None
    """Recorded only when every complete line was read (else a crash could skip the rest)."""
    mtime_ns: int | None
    consumed: int
    ready: dict[str, tuple[str, str]] | None = None
    """The search-text analyses of its documents, when a parse worker computed them
    (`search_ready.prepare_map`); None: the loader computes them."""


def read_batch(fh: BinaryIO, offset: int, size: int) -> bytes:
    """Read complete lines from `offset`: up to BATCH_BYTES, more if one line is longer."""
    fh.seek(offset)
    want = min(BATCH_BYTES, size - offset)
    buf = fh.read(want)
    cut = complete_prefix(buf)
    while cut == 0 and len(buf) < size - offset:
        more = fh.read(min(BATCH_BYTES, size - offset - len(buf)))
        if not more:
            break
        buf += more
        cut = complete_prefix(buf)
        if cut == 0 and len(buf) > MAX_LINE_BYTES:
            return buf  # caller handles an over-long line
    return buf[:cut]


def limit_lines(buf: bytes, batch_lines: int) -> tuple[bytes, int]:
    """Cut `buf` (complete lines only) after `batch_lines` lines → (bytes kept, their length)."""
    idx, n = -1, 0
    while n < batch_lines:
        idx = buf.find(b"\n", idx + 1)
        if idx < 0:
            return buf, len(buf)
        n += 1
    return buf[: idx + 1], idx + 1


def skip_long_line(fh: BinaryIO, offset: int, size: int) -> int | None:
    """Offset just past the newline ending an over-long line, or None if it is still torn."""
    pos = offset
    fh.seek(pos)
    while pos < size:
        chunk = fh.read(BATCH_BYTES)
        if not chunk:
            return None
        i = chunk.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(chunk)
    return None


def file_sidecar(ref: FileRef) -> dict | None:
    """Side information a parser gets besides the transcript (Cursor: title/model from its
    ``state.vscdb``, issue 16; others: the ``.meta.json`` sidecar), or None."""
    if ref.source.agent == "cursor":
        return composer_sidecar(state_db_path(ref.source.home), ref.path)
    return read_sidecar(ref.path)


def iter_chunks(
    ref: FileRef,
    fh: BinaryIO,
    size: int,
    mtime_ns: int,
    source_id: int,
    offset: int,
    line_count: int,
    state: dict | None,
    parser_cls: type[Parser],
    windows: dict | None,
    crc: int | None,
    batch_lines: int,
    stop: threading.Event | None = None,
) -> Iterator[Chunk]:
    """Parse `fh` (the file `ref`, `size` bytes at `mtime_ns`) from `offset` with the saved parser
    `state` → chunks of at most `batch_lines` lines / BATCH_BYTES bytes, in file order.

    The last chunk is the one that reached the end of the file (its ``size``/``mtime_ns`` are
    set and the parser was flushed) or, when `stop` is set, the one read after it was set. A
    line longer than MAX_LINE_BYTES becomes a ``line_too_long`` issue. Parser exceptions
    propagate (the chunks yielded before stay valid: each is a resumable checkpoint).
    """
    ctx = ParseContext(
        path=ref.path, namespace=ref.source.namespace, home=str(ref.source.home), sidecar=file_sidecar(ref)
    )
    parser: Parser = parser_cls(ctx, state)
    while True:
        buf = read_batch(fh, offset, size) if offset < size else b""
        rows: list[Row] = []
        consumed = len(buf)
        if buf and complete_prefix(buf) == 0:  # one line longer than MAX_LINE_BYTES
            nl = skip_long_line(fh, offset, size)
            if nl is None:
                buf, consumed = b"", 0
            else:
                rows.append(ParseIssueRow("line_too_long", offset, line_count + 1, f"{nl - offset} bytes"))
                consumed, buf = nl - offset, b""
                line_count += 1
                crc = crc_range(fh, offset, nl, crc)
        if buf:
            buf, consumed = limit_lines(buf, batch_lines)
            crc = extend_crc(buf, crc)
            rows.extend(feed_bytes(parser, buf, offset, line_count + 1))
            line_count += buf.count(b"\n")
        new_offset = offset + consumed
        at_eof = consumed == 0 or new_offset >= size
        final = at_eof or (stop is not None and stop.is_set())
        if final:
            rows.extend(flush_rows(parser))
        head, ckpt = edge_hashes(fh, new_offset)
        windows = update_windows(fh, new_offset, windows)
        yield Chunk(
            ref,
            source_id,
            rows,
            new_offset,
            line_count,
            head,
            ckpt,
            orjson.loads(orjson.dumps(parser.state())),
            windows,
            crc,
            parser_cls.VERSION,
            size if at_eof else None,
            mtime_ns if at_eof else None,
            consumed,
        )
        offset = new_offset
        if final:
            return


def parse_new_file(
    ref: FileRef, source_id: int, size: int, mtime_ns: int, line_count: int, batch_lines: int, prepare: bool = False
) -> tuple[list[Chunk], BaseException | None]:
    """A parse worker's job: a file never read before (offset 0, no saved state) up to `size`
    bytes (what the loader's `stat` saw; `mtime_ns` likewise) → (its chunks in order, the
    exception that stopped parsing or None). Nothing raises: an error is handed back with the
    chunks made before it, so the loader writes and records exactly what the in-process path
    would have. With `prepare`, each chunk also carries the search-text analyses of its
    documents (`Chunk.ready`): the pure per-chunk work the writer would otherwise wait for."""
    chunks: list[Chunk] = []
    try:
        parser_cls = parser_class(ref.source.agent)
        with open(ref.path, "rb") as fh:
            for chunk in iter_chunks(
                ref, fh, size, mtime_ns, source_id, 0, line_count, None, parser_cls, None, 0, batch_lines
            ):
                if prepare:
                    from agent_history.ingest.search_ready import prepare_map

                    chunk.ready = prepare_map(chunk.rows)
                chunks.append(chunk)
    except Exception as exc:  # noqa: BLE001 - handed back to the loader, which records it
        return chunks, exc
    return chunks, None
