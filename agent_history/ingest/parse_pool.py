"""Parse files in worker processes for large passes (issue 18); the loader writes in file order.

The parser contract is pure (bytes + state in, rows + new state out), so a worker parses a whole
new file into the same chunks the in-process path makes (`agent_history.ingest.chunks`) and the
loader adds them to its batches in discovery order: batch contents, transactions, offsets and
prefix hashes are those of a serial pass. Only files read from byte 0 go to workers (a cold
pass, new files); a file resumed at a saved offset needs the database first and stays in-process.

Workers come from a ``forkserver`` context (no fork of a process holding database connections
and threads) whose server preloads the parsers once, so each worker starts in milliseconds.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

# The setting lives in config (read at `index` start-up without importing multiprocessing).
from agent_history.config import RESERVED_CORES, parse_workers  # noqa: F401 - re-exported

PARALLEL_MIN_BYTES = 4 * 1024 * 1024
"""A pass parses in workers only when the files to read from byte 0 hold at least this many
bytes (and there are two or more): below it the pool's start-up (≈ 0.3 s CPU) costs more than it
saves, so `index --file` and after-turn hooks stay in-process."""

IN_FLIGHT_PER_WORKER = 4
"""Files handed to the pool ahead of the writer, per worker: bounds the parsed rows held in
memory while keeping every worker busy."""

_PRELOAD = [
    "agent_history.ingest.chunks",
    "agent_history.ingest.search_ready",
    *(f"agent_history.parsers.{m}" for m in ("claude_code.parser", "codex.parser", "pi.parser")),
]
"""Modules the fork server imports once (the common harnesses; others load on first use)."""


def _worker_signals() -> None:
    """Workers ignore Ctrl-C and SIGTERM sent to the whole process group: the loader's process
    handles them (`cli.loop.stop_on_signals` sets its stop event), stops adding chunks at a
    checkpoint and shuts the pool down; a worker killed mid-job would break the pool instead
    and turn every file still in flight into a load error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class ParsePool:
    """Parses a known sequence of jobs ahead in worker processes; results come back in order.

    `jobs` are ``(key, args)`` pairs for `fn` (a module-level function). `result(key)` must be
    asked for keys in the order of `jobs` and returns ``fn(*args)``; up to
    ``workers × IN_FLIGHT_PER_WORKER`` jobs are in flight ahead of the caller.
    """

    def __init__(self, workers: int, fn: Callable, jobs: Sequence[tuple[object, tuple]]) -> None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_signals)
        self._fn = fn
        self._jobs = list(jobs)
        self._next = 0
        self._ahead = workers * IN_FLIGHT_PER_WORKER
        self._futures: deque[tuple[object, Future]] = deque()
        self._fill()

    def _fill(self) -> None:
        while self._next < len(self._jobs) and len(self._futures) < self._ahead:
            key, args = self._jobs[self._next]
            self._futures.append((key, self._pool.submit(self._fn, *args)))
            self._next += 1

    def result(self, key: object):
        """The result of job `key` (the next in order); raises what the worker raised, or
        KeyError when `key` is not the next job."""
        if not self._futures or self._futures[0][0] != key:
            raise KeyError(f"{key!r} is not the next parse job")
        _, future = self._futures.popleft()
        self._fill()
        return future.result()

    def close(self) -> None:
        """Stop the workers; jobs not yet started are dropped."""
        self._pool.shutdown(wait=True, cancel_futures=True)
