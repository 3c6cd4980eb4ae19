"""The writing side of a pass: each batch in one transaction, on a writer thread when there is a
second connection (docs/design.md §7; docs/performance.md, decision 7).

A batch (`batch_queue.ReadyBatch`: the chunks of several files, parsed, folded, analysed and
encoded as COPY data by the parsing thread, `encode_ready`) is written in ONE transaction: its
rows (`writer.send`), the files' new offsets, hashes and parser state
(`source_files.save_progress`), their open load errors cleared — so a crash can neither lose nor
double-count a batch. A batch that fails is rolled back and written again file by file
(`ingest.isolate.write_isolated`): the file that still fails is recorded (the pass's
``record_load_error``) and skipped. A deadlock with another pass's batch (two hosts' batches
update the same term-statistics rows, SQLSTATE 40P01) writes the batch again whole
(`DEADLOCK_RETRIES`).

With a writer connection, `BatchWriter.start` starts the writer thread: batches wait in a queue
bounded by bytes (`batch_queue.BatchQueue`) and are written one at a time, in order; the writer
thread only sends statements and COPY data and waits on the server with the GIL released, so the
parsing thread and the server overlap on two cores. A bulk pass puts a vectors thread between
them (`vectors_stage`, `start_vectors`). A failure of the writer thread is kept (`error`) and
raised by the pass's next `raise_error` / `drain`. Without a writer connection each batch is
written at once on the pass's connection.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import psycopg
from psycopg.types.json import Jsonb

from agent_history.db.tables import parse_issues, source_files
from agent_history.ingest.batch_queue import BatchQueue, ReadyBatch
from agent_history.ingest.isolate import write_isolated
from agent_history.ingest.strategy import PassSummary

if TYPE_CHECKING:
    from agent_history.ingest.chunks import Chunk
    from agent_history.ingest.discovery import FileRef
    from agent_history.ingest.vectors_stage import VectorStage
    from agent_history.ingest.writer import Encoded, Part

# `ingest.writer` (and with it the row model) is imported where first needed: a pass with
# nothing to read never loads it (issue 18: whole-process time of a no-change pass).

DEADLOCK_RETRIES = 5
"""Times a batch is written again after PostgreSQL broke a deadlock with another pass's batch
(the term-statistics rows both update; SQLSTATE 40P01) before it counts as the files' failure."""
WRITER_SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while a writer thread runs (default 0.005 s). The
parsing thread holds the GIL almost all the time; each time the writer's wait on the server ends
it must take the GIL back, which costs up to one interval — dozens of times per batch (every
statement, every flushed MiB of COPY data), while the server idles. A shorter interval only
matters when a thread asks for the GIL, so the parsing thread loses next to nothing
(docs/performance.md, decision 7)."""
PAUSE_ENV = "AGENT_HISTORY_PAUSE_AFTER_BATCHES"
"""Fault injection for the crash tests: after committing this many batches the writer says
``paused after batch N`` on stderr and waits for good (the test then SIGKILLs the process at a
known batch boundary). Unset in normal use."""

RecordLoadError = Callable[["FileRef", int, "BaseException | None", "psycopg.Connection | None"], None]
"""The pass's ``record_load_error(ref, source_id, exc, conn)`` (`strategy.PassContext`)."""


def parts_of(chunks: list[Chunk]) -> list[Part]:
    """The chunks as the writer's `writer.Part` values (source id, namespace, rows, ready values)."""
    from agent_history.ingest.writer import Part

    return [Part(p.source_id, p.ref.source.namespace, p.rows, p.ready) for p in chunks]


def encode_ready(chunks: list[Chunk], *, vectors_apart: bool, redact_kw: dict) -> Encoded | None:
    """The chunks' rows encoded for the writer (`writer.encode_parts`; `vectors_apart`: a bulk
    pass's vectors stage computes the search vectors), or None when that raises: a file's rows
    the encoder refuses are the file's failure, which `BatchWriter.write_batch` isolates —
    encoding the files one by one and recording the one that fails — as for a batch the server
    refuses. `redact_kw`: ``{"redact": fn}`` or empty."""
    from agent_history.ingest.writer import encode_parts

    try:
        return encode_parts(parts_of(chunks), vectors_apart=vectors_apart, **redact_kw)
    except Exception:  # noqa: BLE001 - the writer encodes file by file and records the culprit
        return None


class BatchWriter:
    """Writes one pass's batches (see the module docstring).

    `conn` is the pass's connection (autocommit), `writer_conn` the writer thread's (autocommit)
    or None; `summary` is the pass's, counted as batches commit (batches, rows, bytes, issues,
    changed files); `failed` the pass's set of failed ``source_file`` ids (read here: a failed
    file's later chunks are not written; added to by `record_load_error`); `progress`
    (``progress(path, bytes, files done)``) is called after each file's part is written."""

    def __init__(
        self,
        conn: psycopg.Connection,
        writer_conn: psycopg.Connection | None,
        summary: PassSummary,
        *,
        stop: threading.Event,
        failed: set[int],
        record_load_error: RecordLoadError,
        progress: Callable[[str, int, int], None] | None,
        redact_kw: dict,
    ) -> None:
        self.conn = conn
        self.writer_conn = writer_conn
        self.summary = summary
        self.stop = stop
        self.failed = failed
        self.record_load_error = record_load_error
        self.progress = progress
        self.redact_kw = redact_kw
        pause = os.environ.get(PAUSE_ENV, "")
        self._pause_after = int(pause) if pause.isdigit() else None
        self._queue: BatchQueue[ReadyBatch | None] | None = None
        self._vectors: VectorStage | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._switch_interval = sys.getswitchinterval()  # restored when the writer thread ends

    @property
    def error(self) -> BaseException | None:
        """The writer thread's failure, kept for the pass to raise (None: none yet)."""
        return self._error

    @property
    def vectors_apart(self) -> bool:
        """True while a vectors stage computes the batches' search vectors (`start_vectors`)."""
        return self._vectors is not None

    def start(self) -> None:
        """Start the writer thread when there is a writer connection (else batches are written
        at once by `put`)."""
        if self.writer_conn is None:
            return
        self.writer_conn.execute("SET synchronous_commit = off")
        self._queue = BatchQueue()
        self._thread = threading.Thread(target=self._write_loop, name="ah-writer", daemon=True)
        self._thread.start()
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, WRITER_SWITCH_INTERVAL_S))

    def start_vectors(self, fallback: list[str]) -> None:
        """A bulk pass's vectors stage on the writer connection's side (`vectors_stage`;
        docs/performance.md, decision 9) — only with a writer thread. `fallback`: the summary's
        list of batches whose vectors the merge computed instead."""
        if self._queue is None:
            return
        from agent_history.ingest.vectors_stage import VectorStage

        self._vectors = VectorStage.start(self.writer_conn, self._queue, self.stop, fallback)

    def raise_error(self) -> None:
        """Re-raise the writer thread's failure, if any."""
        if self._error is not None:
            raise self._error

    def put(self, ready: ReadyBatch) -> None:
        """Hand a ready batch over: to the vectors stage, the writer thread's queue (waits while
        the queue is full), or written now without a writer thread."""
        if self._vectors is not None:
            self._vectors.put(ready)
        elif self._queue is None:
            self.write_batch(ready, self.conn)
        else:
            self._queue.put(ready, ready.nbytes)

    def drain(self) -> None:
        """Wait until every handed-over batch is written; re-raise the writer's failure."""
        if self._vectors is not None:
            self._vectors.join()
        if self._queue is not None:
            self._queue.join()
        self.raise_error()

    def close(self) -> None:
        """End the vectors stage and the writer thread (after the batches queued; the thread's
        switch interval is put back). Idempotent."""
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None
        if self._thread is not None and self._queue is not None:
            self._queue.put(None, 0)
            self._thread.join()
            self._thread, self._queue = None, None
            sys.setswitchinterval(self._switch_interval)

    def _write_loop(self) -> None:
        """The writer thread: send each queued batch (`write_batch`) until None arrives. Its
        only Python is the statements' bookkeeping; a failure is kept for the pass to raise."""
        assert self._queue is not None and self.writer_conn is not None
        while True:
            batch = self._queue.get()
            try:
                if batch is None:
                    return
                # after a stop signal only the batch already being written is finished
                if self._error is None and not self.stop.is_set():
                    self.write_batch(batch, self.writer_conn)
            except BaseException as exc:  # noqa: BLE001 - surfaced to the pass by raise_error/drain
                self._error = exc
            finally:
                batch = None  # its rows and COPY data are freed before the wait for the next one
                self._queue.task_done()

    def write_batch(self, ready: ReadyBatch, conn: psycopg.Connection) -> None:
        """Write a batch in one transaction; if it fails, file by file so only the failing file is
        rolled back, recorded and skipped (`ingest.isolate.write_isolated`). The batch's encoded
        rows are sent as they are when every chunk is still to be written; a file that failed
        in an earlier batch, or writing file by file, encodes the chunks again (here: the rare
        path)."""
        batch = [p for p in ready.chunks if p.source_id not in self.failed]
        encoded = ready.encoded if len(batch) == len(ready.chunks) else None
        if batch:
            write_isolated(
                conn,
                batch,
                lambda chunks: self._write(chunks, conn, encoded if len(chunks) == len(batch) else None),
                lambda chunk, exc: self.record_load_error(chunk.ref, chunk.source_id, exc, conn),
            )

    def _write(self, batch: list[Chunk], conn: psycopg.Connection, encoded: Encoded | None = None) -> None:
        """`_write_once`, again when PostgreSQL broke a deadlock with another pass's batch (two
        hosts' batches update the same term-statistics rows): the batch was rolled back whole,
        so writing it again neither loses nor double-counts a row (`DEADLOCK_RETRIES`)."""
        for attempt in range(DEADLOCK_RETRIES + 1):
            try:
                return self._write_once(batch, conn, encoded)
            except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
                if attempt == DEADLOCK_RETRIES:
                    raise
                time.sleep(0.05 * (attempt + 1))
        return None

    def _write_once(self, batch: list[Chunk], conn: psycopg.Connection, encoded: Encoded | None) -> None:
        """Write `batch` in one transaction: its rows (`encoded`, the batch's rows encoded ahead,
        else encoded now), the files' new offsets, their load errors cleared."""
        from agent_history.ingest import writer
        from agent_history.model.rows import ParseIssueRow

        whole = len(batch)
        batch = [p for p in batch if p.source_id not in self.failed]  # a file failed earlier in the batch
        if not batch:
            return
        if encoded is None or len(batch) != whole:
            encoded = writer.encode_parts(parts_of(batch), **self.redact_kw)
        summary = self.summary
        writer.prepare_staging(conn)
        with conn.transaction():
            written = writer.send(conn, encoded)
            with conn.cursor() as cur:
                source_files.save_progress(
                    cur,
                    [
                        (
                            p.offset,
                            p.line_count,
                            p.head,
                            p.checkpoint,
                            p.parser_version,
                            Jsonb(p.state),
                            p.size,
                            p.mtime_ns,
                            Jsonb(p.windows),
                            p.crc,
                            p.source_id,
                        )
                        for p in batch
                    ],
                )
                # a file that loads again no longer has an open load error
                parse_issues.clear_load_errors(cur, [p.source_id for p in batch])
        summary.batches += 1
        if self._pause_after is not None and summary.batches >= self._pause_after:
            self._pause()
        summary.add_written(written.new, written.merged, written.issues)
        for p in batch:
            summary.changed(p.source_id)
            summary.bytes_read += p.consumed
            for row in p.rows:
                if isinstance(row, ParseIssueRow):
                    summary.issues[row.kind] += 1
            if self.progress:
                self.progress(p.ref.path, p.consumed, 1 if p.size is not None else 0)

    def _pause(self) -> None:
        """`PAUSE_ENV`: say where the pass stands and wait to be killed."""
        print(f"paused after batch {self.summary.batches}", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
