"""The hand-over between a pass's parsing thread and its writer thread, bounded by bytes.

The parsing thread puts batches that are ready to send (parsed, folded, analysed and encoded as
COPY data: `ingest.writer.encode_parts`); the writer thread takes them in order and only talks
to the server. A bound in batches would hold very different amounts of memory for a home of
short sessions (a batch cut at 500 files of a few KiB) and one of long ones (a batch cut at
8 MiB), so the bound is in bytes: `put` waits while the queued batches hold `max_bytes` or
more, but always admits a batch into an empty queue (one batch larger than the bound cannot
block the pass). The batch the writer is writing is no longer counted: with a bound of about two
batches, the pass holds at most the batch being built, two queued and the one being written.

`task_done` / `join` follow ``queue.Queue``: `join` returns once every batch put has been
taken and marked done (`Loader.drain`: every handed-over batch is written).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from agent_history.ingest.chunks import Chunk
    from agent_history.ingest.writer import Encoded

T = TypeVar("T")

QUEUE_BYTES = 16 * 1024 * 1024
"""Bytes of ready batches (their COPY data, `writer.Encoded.nbytes`) queued for the writer before
`put` waits: twice `chunks.BATCH_BYTES`, so about two batches of the largest size (their COPY
data is about the size of the transcript bytes they hold; docs/performance.md, decision 7)."""


class BatchQueue(Generic[T]):
    """A FIFO of items with a size in bytes; `put` blocks while `max_bytes` or more are queued
    (an empty queue takes any item). Thread-safe: one producer and one consumer."""

    def __init__(self, max_bytes: int = QUEUE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: deque[tuple[T, int]] = deque()
        self._bytes = 0
        self._unfinished = 0
        self._cond = threading.Condition()
        self.peak_bytes = 0
        """The most bytes queued at once so far (a measurement: docs/performance.md)."""

    def put(self, item: T, nbytes: int) -> None:
        """Queue `item` of `nbytes` bytes, first waiting until the queue holds less than
        `max_bytes` (or nothing)."""
        with self._cond:
            while self._items and self._bytes >= self.max_bytes:
                self._cond.wait()
            self._items.append((item, nbytes))
            self._bytes += nbytes
            self._unfinished += 1
            self.peak_bytes = max(self.peak_bytes, self._bytes)
            self._cond.notify_all()

    def get(self) -> T:
        """The oldest item, waiting for one; its bytes no longer count against the bound."""
        with self._cond:
            while not self._items:
                self._cond.wait()
            item, nbytes = self._items.popleft()
            self._bytes -= nbytes
            self._cond.notify_all()
            return item

    def task_done(self) -> None:
        """Mark an item taken by `get` as processed."""
        with self._cond:
            self._unfinished -= 1
            if self._unfinished <= 0:
                self._cond.notify_all()

    def join(self) -> None:
        """Wait until every item put has been taken and marked done."""
        with self._cond:
            while self._unfinished > 0:
                self._cond.wait()


@dataclass(frozen=True, slots=True)
class ReadyBatch:
    """A batch handed to the writer: its chunks (for the files' offsets, the summary and, should
    the batch fail, writing its files one by one) and their rows encoded in the parsing thread."""

    chunks: list[Chunk]
    encoded: Encoded | None
    """The rows of `chunks` ready to send (`writer.encode_parts`); None when encoding the whole
    batch raised: the writer then writes its files one by one and records the one that fails."""

    @property
    def nbytes(self) -> int:
        """Bytes the batch holds queued (its COPY data; `BatchQueue`)."""
        return self.encoded.nbytes if self.encoded is not None else sum(c.consumed for c in self.chunks)
