"""The loader: the only writer of transcript rows (docs/design.md §7).

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
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

import psycopg
from psycopg.types.json import Jsonb

from agent_history.config import default_host
from agent_history.db.tables import parse_issues, source_files
from agent_history.db.tables.runs import finish_run, mark_killed_runs, start_run
from agent_history.db.tables.sessions import known_cwds
from agent_history.db.tables.shared_sessions import sessions_stored_elsewhere
from agent_history.ingest.batch_queue import BatchQueue, ReadyBatch
from agent_history.ingest.discovery import FileRef, Source, iter_files, missing_home_reason
from agent_history.ingest.host_files import claim, mark_missing
from agent_history.ingest.isolate import raise_if_lost, recover, write_isolated
from agent_history.ingest.pass_locks import INDEX_LOCK, AnotherPassRunning, PassLocks
from agent_history.ingest.postpass import run_postpasses
from agent_history.ingest.prefix import HASH_WINDOW, crc_range, prefix_change
from agent_history.ingest.strategy import KnownFile, PassContext, PassSummary, SourceStrategy

if TYPE_CHECKING:
    from agent_history.ingest.chunks import Chunk
    from agent_history.ingest.parse_pool import ParsePool
    from agent_history.ingest.vectors_stage import VectorStage
    from agent_history.ingest.writer import Encoded, Part

# Parsing, writing and the pool are imported where first needed: a pass with nothing to read
# (the common case: a timer or an after-turn hook) never loads the parsers, the row model or
# multiprocessing (issue 18: whole-process time of a no-change pass).

__all__ = ["HASH_WINDOW", "INDEX_LOCK", "AnotherPassRunning", "Loader", "PassLocks", "PassSummary"]

BATCH_LINES = 20_000
APPEND_KINDS = ("jsonl", "markdown")
"""Source kinds read by byte offset, complete lines only (Markdown: Aider's chat history)."""
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


_Known = KnownFile  # the loader's short name for it


class AppendStrategy(SourceStrategy):
    """Files read by byte offset, complete lines only (`APPEND_KINDS`): the loader's own batches
    (`ingest.chunks`; parsed in workers for a large pass, `ingest.parse_pool`)."""

    KINDS = APPEND_KINDS

    def __init__(self, loader: Loader) -> None:
        self._loader = loader

    def index(self, ctx: PassContext, ref: FileRef, st: os.stat_result, known: KnownFile) -> None:
        """Read what `ref` appended since `known.offset` into the open batch."""
        self._loader._index_append(ref, st, known, ctx.summary)


DEFAULT_HOST: str = "\0system"
"""`Loader(host=…)`'s default: this machine's system name (`config.default_host`), as the CLI
records it when nothing names the host."""


class Loader:
    """Runs index passes over sources on one owner connection (autocommit; explicit transactions).

    Small files share a batch (one transaction covering several files' rows and offsets), so a
    home of many short sessions costs few round trips; a file larger than a batch is split.

    With `writer_conn` (a second autocommit connection), batches are written by a writer thread
    while the next batch is parsed: the parsing thread also folds, analyses and encodes each
    batch (`writer.encode_parts`), so the writer thread only sends statements and COPY data and
    waits on the server with the GIL released — the Python side and the server overlap on two
    cores (docs/performance.md, decision 7). Ready batches wait in a queue bounded by bytes
    (`batch_queue.BatchQueue`). Batches are still written one at a time, in order, each in its
    own transaction; every other write of the pass waits for the queue to drain first. A bulk
    pass puts a vectors thread between them (`vectors_stage`: the search vectors on a third
    connection while the writer merges; docs/performance.md, decision 9).

    A pass with enough new bytes parses its new files in worker processes
    (`agent_history.ingest.parse_pool`; `parse_workers` None = ``$AGENT_HISTORY_PARSE_WORKERS``
    or the CPU count, 0/1 = in-process) and adds their chunks in file order: the same batches,
    transactions and offsets as parsing in-process.
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
        pause = os.environ.get(PAUSE_ENV, "")
        self._pause_after = int(pause) if pause.isdigit() else None
        self.redact = redact
        """``[index] redact``: applied to the free-text fields of every row written (`write_parts`)."""
        self.redact_kw = {"redact": redact} if redact is not None else {}
        """`write_parts` keywords: ``redact`` only when set."""
        self.stop = stop or threading.Event()
        self.progress = progress
        self.batch_lines = batch_lines
        self._writer_conn = writer_conn
        self._queue: BatchQueue[ReadyBatch | None] | None = None
        self._vectors: VectorStage | None = None  # a bulk pass's vectors stage (`vectors_stage`)
        self._writer: threading.Thread | None = None
        self._writer_error: BaseException | None = None
        self._switch_interval = sys.getswitchinterval()  # restored when the writer thread ends
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
        self._locks = locks
        self._namespaces = namespaces
        # Each batch commits rows together with the files' offsets, so losing the last commits in
        # a server crash only means re-reading them: asynchronous commit is safe and saves an
        # fsync per batch.
        conn.execute("SET synchronous_commit = off")
        if self._writer_conn is not None:
            self._writer_conn.execute("SET synchronous_commit = off")
            self._queue = BatchQueue()
            self._writer = threading.Thread(target=self._write_loop, name="ah-writer", daemon=True)
            self._writer.start()
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch_interval, WRITER_SWITCH_INTERVAL_S))
        started = time.monotonic()
        summary = PassSummary()
        self._summary = summary
        self._strategies: dict[str, SourceStrategy] = {}
        self._cwds: tuple[str, ...] | None = None
        self.used_workers = 0
        # Several passes may run (one per host and namespace set): a row still `running` whose
        # pass holds no run lock was killed before it could record its end.
        mark_killed_runs(conn)
        run_id = start_run(conn, self.host, namespaces)  # the row and its run lock appear together
        status = "failed"
        try:
            files: list[tuple[FileRef, os.stat_result]] = []
            for ref in refs or ():
                try:
                    files.append((ref, os.stat(ref.path)))
                except OSError as exc:
                    summary.skipped_paths.append(f"{ref.path}: {exc.strerror}")
            listed: set[str] = set()
            walked: set[str] = set()  # the namespaces this pass looked at
            for source in sources if refs is None else ():
                walked.add(source.namespace)
                if not (source.home.is_dir() or source.home.is_file()):  # a file: `--claude-export FILE`
                    why = missing_home_reason(source.home)  # "does not exist" | "is a symlink loop"
                    summary.skipped_homes.append(f"{source.namespace}: {source.home} {why}")
                    continue
                if source.known_projects:  # Aider, Crush: the projects the catalogue already knows
                    source = replace(source, project_dirs=self._known_cwds())
                for ref in iter_files(source, summary.skipped_paths):
                    if ref.path in listed:  # a project file found by two sources: the first one's
                        continue
                    listed.add(ref.path)
                    try:
                        files.append((ref, os.stat(ref.path)))
                    except OSError as exc:
                        summary.skipped_paths.append(f"{ref.path}: {exc.strerror}")
            if plan:
                plan(len(files), sum(st.st_size for _, st in files))
            claim(self.conn, self.host, files)
            mark_missing(
                self.conn, self.host, walked, listed if refs is None else {ref.path for ref, _ in files}, summary
            )
            known = self._known()
            self._register([ref for ref, _ in files if ref.path not in known], known)
            bulk_state = self._begin_bulk(files, known, run_id, file_mode=refs is not None)
            if bulk_state is not None:
                summary.bulk = "unfinished"  # until `bulk.finish` commits
                if self._queue is not None:  # the vectors on a second backend (docs/performance.md, decision 9)
                    from agent_history.ingest.vectors_stage import VectorStage

                    self._vectors = VectorStage.start(
                        self._writer_conn, self._queue, self.stop, summary.vectors_fallback
                    )
            self._pool = self._start_pool(files, known)
            for ref, st in files:
                if self.stop.is_set() or summary.interrupted:
                    summary.interrupted = True
                    break
                summary.files_scanned += 1
                if self._pool is not None and ref.path in self._parallel:
                    self._index_parsed(ref, known[ref.path], summary)
                else:
                    self._index_file(ref, st, known[ref.path], summary)
            if self.stop.is_set():
                self._discard_unwritten()
            else:
                self.commit()
            self.drain()
            if self.stop.is_set():
                # Stopping (SIGTERM: a service manager's grace period is short): the post-passes
                # over every session this pass dirtied take seconds on a large pass. Their marks
                # are committed in ah.dirty_session, so the next pass rolls them up.
                summary.interrupted = True
                if bulk_state is not None:
                    # the term statistics of what was loaded, so search finds it now; the index
                    # builds (the longer half of `bulk.finish`) are left to the next pass
                    from agent_history.ingest import bulk

                    bulk.refresh_statistics(conn)
            else:
                early = None
                if bulk_state is not None:
                    from agent_history.ingest import bulk

                    # the load's dirty buffers written on the idle writer connection while the
                    # post-passes compute (docs/performance.md, decision 17)
                    early = bulk.start_early_checkpoint(conn, self._writer_conn)
                try:
                    # only this pass's namespaces: another host's pass rolls up its own sessions
                    summary.sessions_rolled_up = run_postpasses(
                        conn, namespaces=namespaces, on_issues=summary.add_issues
                    )
                    summary.sessions_elsewhere = sessions_stored_elsewhere(conn, summary.changed_ids)
                except BaseException:
                    if early is not None:
                        early.wait(quiet=True)
                    raise
                if bulk_state is not None:
                    if early is not None:
                        early.wait()
                    # and compacts after a pass that at least doubled the catalogue: on the idle
                    # writer connection, beside the end's transaction
                    bulk.finish(conn, bulk_state, helper=self._writer_conn)
                    summary.bulk = "done"
            status = "interrupted" if summary.interrupted else ("ok_with_errors" if summary.files_failed else "ok")
            return summary
        finally:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            self._stop_writer()
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

    def _begin_bulk(
        self, files: list[tuple[FileRef, os.stat_result]], known: dict[str, _Known], run_id: int, *, file_mode: bool
    ):
        """Open the bulk path when this pass takes it (`ingest.bulk`), or continue the one an
        earlier pass left unfinished; returns its `bulk.BulkState` or None."""
        from agent_history.ingest import bulk

        if not bulk.can_bulk(self.conn):  # a non-owning role (ah_writer): incremental only
            return None
        state = bulk.pending(self.conn)
        if state is not None:
            # one bulk pass at a time (its mark, triggers and dropped indexes are every
            # namespace's); a pass that cannot take it loads incrementally (the end recomputes
            # the statistics from every stored row, the index builds cover every row)
            return state if self._locks.take_bulk() else None
        if file_mode or self.bulk_mode == "never":
            return None
        new_bytes = sum(
            max(0, st.st_size - known[ref.path].offset)
            for ref, st in files
            if not (known[ref.path].size == st.st_size and known[ref.path].mtime_ns == st.st_mtime_ns)
        )
        least = bulk.BULK_MIN_BYTES if self.bulk_min_bytes is None else self.bulk_min_bytes
        if not bulk.choose(self.bulk_mode, new_bytes=new_bytes, cold=bulk.is_cold(self.conn), min_bytes=least):
            return None
        # one sort-based build beats row-by-row maintenance when the pass at least doubles the
        # catalogue (docs/performance.md, "Bulk path")
        drop = new_bytes >= source_files.indexed_bytes(self.conn)
        if not self._locks.take_bulk():  # another pass is on the bulk path: load incrementally
            return None
        return bulk.begin(self.conn, run_id, drop_indexes=drop)

    def _start_pool(self, files: list[tuple[FileRef, os.stat_result]], known: dict[str, _Known]) -> ParsePool | None:
        """Worker processes for the files this pass reads from byte 0, when there are enough
        of them (`parse_pool.PARALLEL_MIN_BYTES`, two files or more) and workers are on."""
        todo = [
            (ref, st)
            for ref, st in files
            if ref.kind in APPEND_KINDS
            and known[ref.path].offset == 0
            and not (known[ref.path].size == st.st_size and known[ref.path].mtime_ns == st.st_mtime_ns)
        ]
        if len(todo) < 2:
            return None
        from agent_history.ingest.chunks import parse_new_file
        from agent_history.ingest.parse_pool import PARALLEL_MIN_BYTES, ParsePool, parse_workers

        workers = self.parse_workers if self.parse_workers is not None else parse_workers()
        least = PARALLEL_MIN_BYTES if self.parallel_min_bytes is None else self.parallel_min_bytes
        if workers <= 1 or sum(st.st_size for _, st in todo) < least:
            return None
        self._parallel = {ref.path for ref, _ in todo}
        self.used_workers = min(workers, len(todo))
        jobs = [
            (
                ref.path,
                (
                    ref,
                    known[ref.path].id,
                    st.st_size,
                    st.st_mtime_ns,
                    known[ref.path].line_count,
                    self.batch_lines,
                    self._writer_conn is not None,  # the workers analyse the search text too
                ),
            )
            for ref, st in todo
        ]
        return ParsePool(self.used_workers, parse_new_file, jobs)

    def _known_cwds(self) -> tuple[str, ...]:
        """The distinct absolute working directories of catalogued sessions (cached per pass)."""
        if self._cwds is None:
            self._cwds = known_cwds(self.conn, self.host)
        return self._cwds

    def _known(self) -> dict[str, _Known]:
        """This host's catalogued files by path (another host's files may have the same paths)."""
        return {r[0]: _Known(*r[1:]) for r in source_files.known_files(self.conn, self.host)}

    def _register(self, refs: list[FileRef], known: dict[str, _Known]) -> None:
        """Insert new files into ah.source_file in one statement (status 'new', offset 0)."""
        if not refs:
            return
        from agent_history.parsers import parser_class

        versions = {}
        for ref in refs:
            try:
                versions[ref.source.agent] = parser_class(ref.source.agent).VERSION
            except (KeyError, ImportError):
                versions[ref.source.agent] = None
        rows = source_files.register_files(
            self.conn,
            self.host,
            [r.path for r in refs],
            [r.source.namespace for r in refs],
            [r.source.agent for r in refs],
            [r.role for r in refs],
            [r.source.tier for r in refs],
            [r.rel_path for r in refs],
            [versions[r.source.agent] for r in refs],
        )
        by_path = {r.path: r for r in refs}
        for path, source_id in rows:
            known[path] = _Known(source_id, None, None, 0, 0, None, None, versions[by_path[path].source.agent], "new")

    # -- one file -------------------------------------------------------------------------------
    def _index_file(self, ref: FileRef, st: os.stat_result, k: _Known, summary: PassSummary) -> None:
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
            self._raise_if_lost(exc)
            recover(self.conn)
            self.drain()
            self.record_load_error(ref, k.id, exc)

    def _strategy(self, kind: str) -> SourceStrategy:
        """The strategy reading `kind` this pass (created on first use: a pass with no document
        or database never imports their modules)."""
        strategy = self._strategies.get(kind)
        if strategy is None:
            if kind in APPEND_KINDS:
                strategy = AppendStrategy(self)
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

    def _index_append(self, ref: FileRef, st: os.stat_result, k: _Known, summary: PassSummary) -> None:
        if k.size == st.st_size and k.mtime_ns == st.st_mtime_ns:
            return  # unchanged: skipped without reading
        conn = self.conn
        from agent_history.parsers import parser_class

        try:
            parser_cls = parser_class(ref.source.agent)
            with open(ref.path, "rb") as fh:
                offset, line_count, state, windows, crc = k.offset, k.line_count, None, None, 0
                if k.offset > 0 and k.parser_version != parser_cls.VERSION:
                    self.drain()
                    self._parser_upgraded(k, parser_cls, summary)
                    return
                if k.offset > 0:
                    why = "it is shorter than what was indexed" if st.st_size < k.offset else None
                    if why is None:
                        state, windows, crc = source_files.resume_state(conn, k.id)
                        why = prefix_change(fh, k.offset, k.head, k.checkpoint, windows)
                    if why is not None:
                        self.commit()  # the purge must not share a batch with this file's old rows
                        self.drain()
                        self._rewrite(k, st, summary, why)
                        offset, line_count, state, windows, crc = 0, 0, None, None, 0
                    elif crc is None:  # indexed before prefix CRCs were kept: the baseline starts now
                        crc = crc_range(fh, 0, k.offset)
                self._read_file(ref, fh, st, k.id, offset, line_count, state, parser_cls, windows, crc)
        except Exception as exc:  # noqa: BLE001 - recorded, the pass goes on
            self._raise_if_lost(exc)
            self.commit()  # this file's earlier parts must not be written after the error
            self.drain()
            self.record_load_error(ref, k.id, exc)

    def _read_file(self, ref, fh, st, source_id, offset, line_count, state, parser_cls, windows, crc) -> None:
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
            self.batch_lines,
            self.stop,
        ):
            self._add(chunk)
            if source_id in self._failed:
                return

    def _index_parsed(self, ref: FileRef, k: _Known, summary: PassSummary) -> None:
        """Add a file parsed by a worker (`_index_file`'s path for a file read from byte 0)."""
        try:
            chunks, error = self._pool.result(ref.path)
        except Exception as exc:  # noqa: BLE001 - the worker died or its result did not pickle
            chunks, error = [], exc
        for chunk in chunks:
            if self.stop.is_set():  # in-process the last chunk read would be flushed; this one is
                summary.interrupted = True  # a resumable checkpoint all the same
                break
            self._add(chunk)
            if k.id in self._failed:
                return
        if error is not None:
            self.commit()  # this file's earlier parts must not be written after the error
            self.drain()
            self.record_load_error(ref, k.id, error)

    # -- batches --------------------------------------------------------------------------------
    def _add(self, pending: Chunk) -> None:
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

    def commit(self) -> None:
        """Encode the open batch in this thread (`writer.encode_parts`), then hand it to the
        writer thread, or write it now without one."""
        for strategy in {id(s): s for s in self._strategies.values()}.values():
            strategy.flush(self)  # whole documents parsed and waiting (issue 16)
        batch, self._batch, self._batch_lines, self._batch_bytes = self._batch, [], 0, 0
        if self._writer_error is not None:
            raise self._writer_error
        if not batch:
            return
        ready = ReadyBatch(batch, self._encode(batch))
        if self._vectors is not None:
            self._vectors.put(ready)
        elif self._queue is None:
            self._write_batch(ready, self.conn)
        else:
            self._queue.put(ready, ready.nbytes)

    def _parts(self, chunks: list[Chunk]) -> list[Part]:
        from agent_history.ingest.writer import Part

        return [Part(p.source_id, p.ref.source.namespace, p.rows, p.ready) for p in chunks]

    def _encode(self, chunks: list[Chunk]) -> Encoded | None:
        """The chunks' rows encoded for the writer (`writer.encode_parts`), or None when that
        raises: a file's rows the encoder refuses are the file's failure, which the writer
        isolates (`_write_batch`) — encoding the files one by one and recording the one that
        fails — as for a batch the server refuses."""
        from agent_history.ingest.writer import encode_parts

        try:  # a bulk pass's vectors stage computes the vectors apart
            return encode_parts(self._parts(chunks), vectors_apart=self._vectors is not None, **self.redact_kw)
        except Exception:  # noqa: BLE001 - the writer encodes file by file and records the culprit
            return None

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
        if self._vectors is not None:
            self._vectors.join()
        if self._queue is not None:
            self._queue.join()
        if self._writer_error is not None:
            raise self._writer_error

    def _write_loop(self) -> None:
        """The writer thread: send each queued batch (`_write_batch`) until None arrives. Its
        only Python is the statements' bookkeeping; a failure is kept for the pass to raise."""
        assert self._queue is not None and self._writer_conn is not None
        while True:
            batch = self._queue.get()
            try:
                if batch is None:
                    return
                # after a stop signal only the batch already being written is finished
                if self._writer_error is None and not self.stop.is_set():
                    self._write_batch(batch, self._writer_conn)
            except BaseException as exc:  # noqa: BLE001 - surfaced to the pass by _commit/_drain
                self._writer_error = exc
            finally:
                batch = None  # its rows and COPY data are freed before the wait for the next one
                self._queue.task_done()

    def _stop_writer(self) -> None:
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None
        if self._writer is not None and self._queue is not None:
            self._queue.put(None, 0)
            self._writer.join()
            self._writer, self._queue = None, None
            sys.setswitchinterval(self._switch_interval)

    def _write_batch(self, ready: ReadyBatch, conn: psycopg.Connection) -> None:
        """Write a batch in one transaction; if it fails, file by file so only the failing file is
        rolled back, recorded and skipped (`ingest.isolate.write_isolated`). The batch's encoded
        rows are sent as they are when every chunk is still to be written; a file that failed
        in an earlier batch, or writing file by file, encodes the chunks again (here: the rare
        path)."""
        batch = [p for p in ready.chunks if p.source_id not in self._failed]
        encoded = ready.encoded if len(batch) == len(ready.chunks) else None
        if batch:
            write_isolated(
                conn,
                batch,
                lambda chunks: self._write(chunks, conn, encoded if len(chunks) == len(batch) else None),
                lambda chunk, exc: self.record_load_error(chunk.ref, chunk.source_id, exc, conn),
            )

    def _raise_if_lost(self, exc: BaseException) -> None:
        """Re-raise `exc` when a connection of the pass is lost (the pass stops); return when the
        failure is the file's own (it is then recorded and the pass goes on)."""
        if exc is self._writer_error:
            raise exc  # the writer thread only hands over what it could not record
        raise_if_lost(exc, self.conn, self._writer_conn)

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
        batch = [p for p in batch if p.source_id not in self._failed]  # a file failed earlier in the batch
        if not batch:
            return
        if encoded is None or len(batch) != whole:
            encoded = writer.encode_parts(self._parts(batch), **self.redact_kw)
        summary = self._summary
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
        import sys

        print(f"paused after batch {self._summary.batches}", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)

    # -- special cases --------------------------------------------------------------------------
    def _rewrite(self, k: _Known, st, summary: PassSummary, why: str) -> None:
        from agent_history.ingest.writer import purge_source

        with self.conn.transaction():
            purge_source(self.conn, k.id)
            source_files.reset_for_rewrite(self.conn, k.id)
            parse_issues.record_rewritten(
                self.conn,
                k.id,
                k.offset,
                k.line_count,
                f"file changed before byte {k.offset} ({why}; now {st.st_size} bytes); re-parsed",
            )
        summary.issues["source_rewritten"] += 1

    def _parser_upgraded(self, k: _Known, parser_cls, summary: PassSummary) -> None:
        if k.status == "parser_upgraded":
            return
        with self.conn.transaction():
            source_files.mark_parser_upgraded(self.conn, k.id)
            parse_issues.record_parser_upgraded(
                self.conn,
                k.id,
                k.offset,
                k.line_count,
                f"parsed by parser v{k.parser_version}, now v{parser_cls.VERSION}: run `agent-history rebuild`",
            )
        summary.issues["parser_upgraded"] += 1

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
