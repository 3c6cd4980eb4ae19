"""The vectors stage of a bulk pass: search vectors computed on a second server backend
(issue 27 item 2; docs/performance.md, decision 9).

A bulk pass is server-bound: the writer connection's backend merges batch after batch while the
other core has little to do. The largest share of the merge was the text-search analysis of the
new rows (``to_tsvector`` of each message's and tool call's ready search text, and the tool
calls' term-frequency form). This stage moves it to a backend of its own: between the parsing
thread (which encodes a batch with `writer.encode_parts(…, vectors_apart=True)`) and the writer
thread, the *vectors* thread sends the batch's distinct ready texts on its own connection
(`db.tables.ready_vectors.compute_vectors`) and completes the batch's COPY data with the vectors
(`writer.Encoded.with_vectors`) while the writer connection merges the batch before it.

The vectors are pure functions of the staged text on the same server, so the catalogue is the one
the merge would write (tests/test_bulk_load.py compares a bulk and an incremental load, term
statistics included). The stage's connection holds no transaction of any batch: the writer's
one-transaction-per-batch rule, and what a SIGKILL or SIGTERM leaves, are unchanged. A batch whose
vectors could not be computed (the connection failed to open, a statement failed, the connection
was lost) goes on with its ready text — the merge computes its vectors, as without the stage —
and one line in ``failures`` (the pass summary's ``vectors_fallback``) says so; a lost connection
is not used again by the pass.

Order and memory: batches pass through in order, one at a time. The queue in front of the stage
and the writer's queue share the pass's bound (`batch_queue.QUEUE_BYTES`, half each), so the
bytes a pass holds queued do not grow with the extra stage.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Protocol

import psycopg

from agent_history.db.tables.ready_vectors import compute_vectors, connect_like
from agent_history.ingest.batch_queue import QUEUE_BYTES, BatchQueue


class _Batch(Protocol):
    """What the stage needs of a batch (`batch_queue.ReadyBatch`, a dataclass)."""

    encoded: object
    nbytes: int


def _failure(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    sqlstate = getattr(exc, "sqlstate", None)
    return f"{type(exc).__name__}" + (f" [SQLSTATE {sqlstate}]" if sqlstate else "") + f": {first}"


class VectorStage:
    """The vectors thread and its connection (see the module docstring). `put` takes batches
    from the parsing thread; each one, completed, is put in `downstream` (the writer's queue)."""

    def __init__(
        self,
        conn: psycopg.Connection | None,
        downstream: BatchQueue,
        stop: threading.Event,
        failures: list[str],
    ) -> None:
        self.conn = conn
        """The stage's connection; None once it failed to open or was lost."""
        self.downstream = downstream
        self.stop = stop
        self.failures = failures
        """One line per batch sent on without vectors (why), appended as it happens."""
        self.batches = 0
        """Batches handed on so far."""
        self.queue: BatchQueue = BatchQueue(QUEUE_BYTES // 2)
        downstream.max_bytes = QUEUE_BYTES // 2
        self._thread = threading.Thread(target=self._loop, name="ah-vectors", daemon=True)
        self._thread.start()

    @classmethod
    def start(
        cls, writer_conn: psycopg.Connection, downstream: BatchQueue, stop: threading.Event, failures: list[str]
    ) -> VectorStage:
        """Open the stage's connection (`writer_conn`'s parameters) and start its thread. A
        connection that does not open is one line in `failures`: every batch then goes on with
        its ready text."""
        try:
            conn = connect_like(writer_conn)
        except psycopg.Error as exc:
            failures.append(f"no analysis connection, every batch's vectors computed by the merge: {_failure(exc)}")
            conn = None
        return cls(conn, downstream, stop, failures)

    def put(self, batch: _Batch) -> None:
        """Queue a batch (waits while the stage's half of the bound is held)."""
        self.queue.put(batch, batch.nbytes)

    def join(self) -> None:
        """Wait until every batch put has been handed to `downstream`."""
        self.queue.join()

    def close(self) -> None:
        """Stop the thread once the queued batches are handed on; close the connection."""
        self.queue.put(None, 0)
        self._thread.join()
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _loop(self) -> None:
        while True:
            batch = self.queue.get()
            try:
                if batch is None:
                    return
                # after a stop signal the writer skips the queued batches: no work for them
                if batch.encoded is not None and not self.stop.is_set():
                    try:
                        batch = dataclasses.replace(batch, encoded=self._complete(batch.encoded))
                    except Exception as exc:  # noqa: BLE001 - handed on as it came: `send` completes it
                        self.failures.append(f"batch {self.batches}: {_failure(exc)}")
                self.downstream.put(batch, batch.nbytes)
            finally:
                batch = None  # freed before the wait for the next one
                self.queue.task_done()

    def _complete(self, encoded):
        """`encoded` with its vectors (`writer.Encoded.with_vectors`); with its ready text instead
        when the connection fails (recorded) or is gone (the merge computes the vectors)."""
        self.batches += 1
        if self.conn is None:
            return encoded.with_vectors(None)
        try:
            return encoded.with_vectors(compute_vectors(self.conn, encoded.texts()))
        except Exception as exc:  # noqa: BLE001 - the merge computes them: recorded, the pass goes on
            self.failures.append(f"batch {self.batches}: vectors computed by the merge: {_failure(exc)}")
            if self.conn.broken or self.conn.closed:
                self.conn.close()
                self.conn = None
            return encoded.with_vectors(None)
