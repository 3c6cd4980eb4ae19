"""The loader: the only writer of transcript rows (docs/design.md §7).

A pass (`Loader.run`) takes its namespaces' advisory locks (`pass_locks`), lists its files and
what the catalogue knows of them and chooses the bulk path (`pass_start`), hands each file to
the strategy of its kind (`strategy.SourceStrategy`: appended files by byte offset, `append`;
whole documents, `documents`; SQLite databases, `databases`), writes the batches
(`batch_writer`) and ends with the post-passes and the bulk end (`pass_end`). This module holds
the pass's order and its open batch.

Only complete ``\\n``-terminated lines are read. Each batch (bounded by lines and bytes) is one
transaction: rows, dirty-session marks and the file's new offset/hashes/state commit together,
so a crash can neither lose nor double-count a batch. Rows arrive within the columns' limits
(`model.limits`, checked where the parsers run), so a bad value costs that value, not the batch.
A batch that fails anyway is rolled back and its files are written again one by one
(`ingest.isolate.write_isolated`): the file that still fails is recorded as `load_error` (with
its own SQLSTATE and message, at the offset where its unwritten part starts) and skipped, the
others load and the pass goes on. Only losing the database connection — told by the
connection's state, not the error's class — aborts the pass (`psycopg.OperationalError`
propagates).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import psycopg

from agent_history.config import default_host
from agent_history.db.tables import parse_issues, source_files
from agent_history.db.tables.runs import finish_run, mark_killed_runs, start_run
from agent_history.db.tables.sessions import known_cwds
from agent_history.ingest import append, pass_end, pass_start
from agent_history.ingest.append import APPEND_KINDS, AppendStrategy
from agent_history.ingest.batch_queue import ReadyBatch
from agent_history.ingest.batch_writer import BatchWriter, encode_ready
from agent_history.ingest.discovery import FileRef, Source
from agent_history.ingest.host_files import claim, mark_missing
from agent_history.ingest.isolate import raise_if_lost, recover
from agent_history.ingest.pass_locks import INDEX_LOCK, AnotherPassRunning, PassLocks
from agent_history.ingest.prefix import HASH_WINDOW
from agent_history.ingest.strategy import KnownFile, PassSummary, SourceStrategy

if TYPE_CHECKING:
    from agent_history.ingest.chunks import Chunk
    from agent_history.ingest.parse_pool import ParsePool

# Parsing, writing and the pool are imported where first needed: a pass with nothing to read
# (the common case: a timer or an after-turn hook) never loads the parsers, the row model or
# multiprocessing (issue 18: whole-process time of a no-change pass).

__all__ = ["HASH_WINDOW", "INDEX_LOCK", "AnotherPassRunning", "Loader", "PassLocks", "PassSummary"]

BATCH_LINES = 20_000

DEFAULT_HOST: str = "\0system"
"""`Loader(host=…)`'s default: this machine's system name (`config.default_host`), as the CLI
records it when nothing names the host."""


class Loader:
    """Runs index passes over sources on one owner connection (autocommit; explicit transactions).

    Small files share a batch (one transaction covering several files' rows and offsets), so a
    home of many short sessions costs few round trips; a file larger than a batch is split.

    With `writer_conn` (a second autocommit connection), batches are written by a writer thread
    while the next batch is parsed: the parsing thread also folds, analyses and encodes each
    batch (`batch_writer.encode_ready`), so the writer thread only sends statements and COPY data
    and waits on the server with the GIL released — the Python side and the server overlap on two
    cores (`batch_writer.BatchWriter`; docs/performance.md, decision 7). Batches are still
    written one at a time, in order, each in its own transaction; every other write of the pass
    waits for the queue to drain first. A bulk pass puts a vectors thread between them
    (`vectors_stage`: the search vectors on a third connection while the writer merges;
    docs/performance.md, decision 9).

    A pass with enough new bytes parses its new files in worker processes
    (`append.start_pool`; `parse_workers` None = ``$AGENT_HISTORY_PARSE_WORKERS`` or the CPU
    count, 0/1 = in-process) and adds their chunks in file order: the same batches, transactions
    and offsets as parsing in-process.
    """

    def __init__(
        self,
        conn: psycopg.Connection,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        batch_lines: int = BATCH_LINES,
        writer_conn: psycopg.Connection | None = None,
        parse_workers: int | None = None,
        parallel_min_bytes: int | None = None,
        redact: Callable[[str], str] | None = None,
        bulk: str = "auto",
        bulk_min_bytes: int | None = None,
        host: str | None = DEFAULT_HOST,
    ) -> None:
        self.conn = conn
        self.host = default_host() if host is DEFAULT_HOST else host
        """This machine's name (`config.Settings.host`; by default the system's, as the CLI
        gives it when nothing names the host): the ``origin_host`` of the files it registers; it
        sees only its own files (and claims unknown-host rows of its namespaces, and any host's
        rows of the ``<agent>-local`` namespace it lists a file under — the same laptop under a
        new name). None: unknown (rows get NULL)."""
        self.bulk_mode = bulk
        """``[index] bulk``: "auto" | "always" | "never" (`ingest.bulk.choose`)."""
        self.bulk_min_bytes = bulk_min_bytes
        """``[index] bulk_min_bytes``; None = `ingest.bulk.BULK_MIN_BYTES`."""
        self.redact = redact
        """``[index] redact``: applied to the free-text fields of every row written (`write_parts`)."""
        self.redact_kw = {"redact": redact} if redact is not None else {}
        """`write_parts` keywords: ``redact`` only when set."""
        self.stop = stop or threading.Event()
        self.progress = progress
        self.batch_lines = batch_lines
        self._writer_conn = writer_conn
        self._summary = PassSummary()
        self._batches: BatchWriter | None = None  # the running pass's (`batch_writer`)
        self._batch: list[Chunk] = []
        self._batch_lines = 0
        self._batch_bytes = 0
        self._failed: set[int] = set()
        self._strategies: dict[str, SourceStrategy] = {}
        self.parse_workers = parse_workers
        self.parallel_min_bytes = parallel_min_bytes
        self._pool: ParsePool | None = None
        self._parallel: set[str] = set()
        self.used_workers = 0
        """Parse worker processes the last pass used (0: it parsed in-process)."""

    # -- pass ---------------------------------------------------------------------------------
    def run(
        self,
        sources: Iterable[Source],
        *,
        plan: Callable[[int, int], None] | None = None,
        refs: list[FileRef] | None = None,
    ) -> PassSummary:
        """One pass over `sources` under its namespaces' advisory locks (`PassLocks`) — over just
        `refs` when given (`index --file`: no discovery walk). Raises AnotherPassRunning."""
        conn = self.conn
        sources = list(sources)
        namespaces = sorted({r.source.namespace for r in refs} if refs is not None else {s.namespace for s in sources})
        locks = PassLocks(conn)
        locks.take(namespaces)
        try:
            return self._run_locked(sources, locks, namespaces, plan=plan, refs=refs)
        finally:
            locks.release()

    def _run_locked(
        self,
        sources: list[Source],
        locks: PassLocks,
        namespaces: list[str],
        *,
        plan: Callable[[int, int], None] | None,
        refs: list[FileRef] | None,
    ) -> PassSummary:
        conn = self.conn
        # Each batch commits rows together with the files' offsets, so losing the last commits in
        # a server crash only means re-reading them: asynchronous commit is safe and saves an
        # fsync per batch.
        conn.execute("SET synchronous_commit = off")
        summary = PassSummary()
        self._summary = summary
        self._batches = BatchWriter(
            conn,
            self._writer_conn,
            summary,
            stop=self.stop,
            failed=self._failed,
            record_load_error=self.record_load_error,
            progress=self.progress,
            redact_kw=self.redact_kw,
        )
        self._batches.start()
        started = time.monotonic()
        self._strategies = {}
        self._cwds: tuple[str, ...] | None = None
        self.used_workers = 0
        # Several passes may run (one per host and namespace set): a row still `running` whose
        # pass holds no run lock was killed before it could record its end.
        mark_killed_runs(conn)
        run_id = start_run(conn, self.host, namespaces)  # the row and its run lock appear together
        status = "failed"
        try:
            files, listed, walked = pass_start.list_files(sources, refs, summary, self._known_cwds)
            if plan:
                plan(len(files), sum(st.st_size for _, st in files))
            claim(self.conn, self.host, files)
            mark_missing(
                self.conn, self.host, walked, listed if refs is None else {ref.path for ref, _ in files}, summary
            )
            known = pass_start.known_files(conn, self.host)
            pass_start.register(conn, self.host, [ref for ref, _ in files if ref.path not in known], known)
            bulk_state = pass_start.begin_bulk(
                conn,
                locks,
                files,
                known,
                run_id,
                file_mode=refs is not None,
                mode=self.bulk_mode,
                min_bytes=self.bulk_min_bytes,
            )
            if bulk_state is not None:
                summary.bulk = "unfinished"  # until `bulk.finish` commits
                # the vectors on a second backend (docs/performance.md, decision 9)
                self._batches.start_vectors(summary.vectors_fallback)
            self._pool, self._parallel, self.used_workers = append.start_pool(
                files,
                known,
                workers=self.parse_workers,
                least=self.parallel_min_bytes,
                batch_lines=self.batch_lines,
                analyse=self._writer_conn is not None,  # the workers analyse the search text too
            )
            for ref, st in files:
                if self.stop.is_set() or summary.interrupted:
                    summary.interrupted = True
                    break
                summary.files_scanned += 1
                if self._pool is not None and ref.path in self._parallel:
                    append.index_parsed(self, self._pool, ref, known[ref.path], summary)
                else:
                    self._index_file(ref, st, known[ref.path], summary)
            if self.stop.is_set():
                self._discard_unwritten()
            else:
                self.commit()
            self.drain()
            pass_end.end_pass(conn, self._writer_conn, summary, namespaces, bulk_state, stopping=self.stop.is_set())
            status = "interrupted" if summary.interrupted else ("ok_with_errors" if summary.files_failed else "ok")
            return summary
        finally:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            self._batches.close()
            summary.seconds = time.monotonic() - started
            try:
                finish_run(
                    conn,
                    run_id,
                    status,
                    summary.files_scanned,
                    summary.files_changed,
                    summary.bytes_read,
                    summary.as_dict(),
                )
            except psycopg.Error:
                pass  # connection lost: the lock dies with the session

    def _known_cwds(self) -> tuple[str, ...]:
        """The distinct absolute working directories of catalogued sessions (cached per pass)."""
        if self._cwds is None:
            self._cwds = known_cwds(self.conn, self.host)
        return self._cwds

    # -- one file -------------------------------------------------------------------------------
    def _index_file(self, ref: FileRef, st: os.stat_result, k: KnownFile, summary: PassSummary) -> None:
        """Hand `ref` to the strategy of its kind; a failure the file caused is recorded as its
        `load_error` and the pass goes on (a lost connection propagates)."""
        strategy = self._strategy(ref.kind)
        if isinstance(strategy, AppendStrategy):
            strategy.index(self, ref, st, k)
            return
        try:
            if k.status == "new":  # registered as jsonl by default; say how it is read
                source_files.set_kind(self.conn, k.id, ref.kind)
            strategy.index(self, ref, st, k)
        except Exception as exc:  # noqa: BLE001 - recorded, the pass goes on
            self.raise_if_lost(exc)
            recover(self.conn)
            self.drain()
            self.record_load_error(ref, k.id, exc)

    def _strategy(self, kind: str) -> SourceStrategy:
        """The strategy reading `kind` this pass (created on first use: a pass with no document
        or database never imports their modules)."""
        strategy = self._strategies.get(kind)
        if strategy is None:
            if kind in APPEND_KINDS:
                strategy = AppendStrategy()
            elif kind == "document":
                from agent_history.ingest.documents import DocumentStrategy

                strategy = DocumentStrategy()
            elif kind == "database":
                from agent_history.ingest.databases import DatabaseStrategy

                strategy = DatabaseStrategy()
            else:
                raise ValueError(f"no strategy reads source kind {kind!r}")
            strategy.begin_pass()
            for k in strategy.KINDS:
                self._strategies[k] = strategy
        return strategy

    # -- batches (`strategy.PassContext`, `append.AppendContext`) --------------------------------
    def add(self, pending: Chunk) -> None:
        """Add a chunk to the open batch; commit the batch once it holds `batch_lines` lines,
        `chunks.BATCH_BYTES` bytes or 500 chunks."""
        from agent_history.ingest.chunks import BATCH_BYTES

        self._batch.append(pending)
        self._batch_lines += max(1, len(pending.rows))
        self._batch_bytes += pending.consumed
        if self._batch_lines >= self.batch_lines or self._batch_bytes >= BATCH_BYTES or len(self._batch) >= 500:
            self.commit()

    @property
    def summary(self) -> PassSummary:
        """The running pass's summary (`strategy.PassContext`)."""
        return self._summary

    def has_failed(self, source_id: int) -> bool:
        """True once file `source_id` was recorded as a `load_error` by this loader."""
        return source_id in self._failed

    def commit(self) -> None:
        """Encode the open batch in this thread (`batch_writer.encode_ready`), then hand it to the
        writer thread, or write it now without one (`BatchWriter.put`)."""
        for strategy in {id(s): s for s in self._strategies.values()}.values():
            strategy.flush(self)  # whole documents parsed and waiting (issue 16)
        batch, self._batch, self._batch_lines, self._batch_bytes = self._batch, [], 0, 0
        writer = self._batches
        writer.raise_error()
        if not batch:
            return
        # a bulk pass's vectors stage computes the vectors apart
        ready = ReadyBatch(batch, encode_ready(batch, vectors_apart=writer.vectors_apart, redact_kw=self.redact_kw))
        writer.put(ready)

    def _discard_unwritten(self) -> None:
        """On a stop signal: drop the open batch and the parsed documents not yet handed to the
        writer (the writer skips its queued batches too), so that only the batch being written
        is finished. Nothing is lost: those files' offsets were not advanced, the next pass
        reads the same lines again. Measured on a ×10 corpus pass at a load average of 9: the
        stop waited for three batches, 15 s (Docker's default grace is 10 s)."""
        self._batch, self._batch_lines, self._batch_bytes = [], 0, 0
        for strategy in self._strategies.values():
            strategy.discard()

    def drain(self) -> None:
        """Wait until every handed-over batch is written; re-raise the writer's failure."""
        if self._batches is not None:
            self._batches.drain()

    def raise_if_lost(self, exc: BaseException) -> None:
        """Re-raise `exc` when a connection of the pass is lost (the pass stops); return when the
        failure is the file's own (it is then recorded and the pass goes on)."""
        if self._batches is not None and exc is self._batches.error:
            raise exc  # the writer thread only hands over what it could not record
        raise_if_lost(exc, self.conn, self._writer_conn)

    def record_load_error(
        self, ref: FileRef, source_id: int, exc: BaseException | None, conn: psycopg.Connection | None = None
    ) -> None:
        """Record a failed file: status 'error', a `load_error` issue with the SQLSTATE; skip it."""
        conn = conn or self.conn
        if source_id in self._failed:
            return
        self._failed.add(source_id)
        summary = self._summary
        summary.files_failed += 1
        summary.issues["load_error"] += 1
        sqlstate = getattr(exc, "sqlstate", None)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        detail = f"{type(exc).__name__}" + (f" [SQLSTATE {sqlstate}]" if sqlstate else "") + f": {first}"
        recover(conn)
        with conn.transaction():
            offset = source_files.mark_error(conn, source_id, detail)
            parse_issues.record_load_error(conn, source_id, offset, detail)
        summary.load_errors.append(f"{ref.path} (byte {offset}): {detail}")
