"""The bulk path of large index passes (issue 27 item 2; docs/performance.md "Bulk path").

A pass is *bulk* when it is a cold index (no message catalogued yet: a first `index`, a
`rebuild`), when it has at least ``[index] bulk_min_bytes`` of new bytes (default
`BULK_MIN_BYTES`), or when an earlier bulk pass did not finish. ``[index] bulk = "always" |
"never"`` overrides the choice (``"auto"`` is the default); `index --file` never starts one.

What changes, against the incremental path (whose per-batch transactions, batches, offsets
and row ids are the bulk path's too):
- the term-statistics triggers (``ah.search_stats_apply`` per statement, migration 0002) are
  disabled for the pass and ``ah.search_term`` / ``ah.search_corpus`` are computed once at the
  end, set-based, from the stored vectors (the formula of migration 0002's initial fill, which
  the incremental deltas maintain: identical contents, tested);
- the tool calls' term ids are assigned batch by batch as on the incremental path (the dictionary
  rows come at df 0; the end recounts every df by id, keeping the ids: migration 0028_term_ids);
- the GIN indexes of the vectors (``message.tsv``, ``tool_call.terms``) are dropped at the start and built again at the end
  when the pass brings at least as many new bytes as the catalogue already holds (one sort-based
  build of the whole index is cheaper than maintaining it row by row through the load;
  measured in docs/performance.md); otherwise they are kept;
- on the embedded server, the checkpoint settings are widened for the pass
  (`db.embedded.widen_for_bulk`: fewer checkpoints, so fewer full-page images in the WAL; and no
  WAL segment recycled into a future one, which would outlive the pass) and put back at its end
  or stop (`db.embedded.narrow_after_bulk`); the last step of `finish` is the ``CHECKPOINT``
  that deletes the pass's WAL segments (`db.embedded.settle_wal`; docs/performance.md,
  decision 8); a first one, on the idle writer connection while the post-passes run
  (`start_early_checkpoint`), has written the load's dirty buffers by then (decision 17).

After the end — or beside its transaction, on a second connection when the caller has one (the
loader's writer connection, idle by then) — a pass that rebuilt the indexes also compacts
`COMPACT_TABLES` (`compact`; other tables than the end's, so neither waits for the other): the
post-passes rewrite every row of ``ah.model_call`` and ``ah.session`` they roll up right after it
is loaded, leaving half of each table dead (a cold ×10 load: ``model_call`` 7.4 MB of heap for
3.7 MB of rows), and ``ah.file_touch``'s keys arrive in random order (B-tree pages two-thirds
full). ``VACUUM FULL`` rewrites them packed: −6.7 MB of a 118.5 MB catalogue
(docs/performance.md, "Store"); it first waits for snapshots older than the post-passes (an
autovacuum ``ANALYZE``) to end, else it must keep the replaced rows. After both, the B-tree
indexes whose keys arrive in random order are rebuilt (`REINDEX_AFTER`; decision 10).

Crash safety: the start — a ``bulk_pass`` row in ``ah.meta`` holding the dropped indexes'
definitions, the indexes dropped, the triggers disabled — commits in one transaction, and the
end — the indexes built from the saved definitions, the triggers enabled, the statistics
recomputed, the row deleted — in another. A pass killed in between leaves the row, and the next
pass (whatever its size) continues in bulk mode and ends it; `status` reports it meanwhile.
Only a role owning the tables can take the path (`can_bulk`); an indexer connected as the
non-owning ``ah_writer`` always loads incrementally. One pass at a time takes it (holding
`pass_locks.BULK_LOCK`); passes that start meanwhile — other hosts' — load incrementally beside it,
and `finish` recounts their rows too (`search_stats.LOCK_CORPORA`; docs/design.md §7 "Many machines").
A pass stopped at a batch boundary (Ctrl-C, SIGTERM) recomputes the statistics before it exits
(`refresh_statistics`), so search finds what was loaded; until the next pass ends the bulk pass,
searches run without the GIN index (a sequential scan) and say so (`search` prints a note).

The statements are `db.tables.search_stats`'s (the bulk path's triggers, indexes, mark and
recount); this module decides and holds the transactions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import psycopg

from agent_history.db import embedded
from agent_history.db.bulk_mark import BULK_PASS_KEY
from agent_history.db.tables import search_stats
from agent_history.db.tables.search_stats import recompute_statistics

BULK_MIN_BYTES = 64 * 1024 * 1024
"""New bytes (transcript bytes not yet indexed) from which a pass takes the bulk path."""

BULK_MODES = ("auto", "always", "never")
"""Values of ``[index] bulk``."""

MARK_KEY = BULK_PASS_KEY
"""``ah.meta`` key of an unfinished bulk pass (value: JSON ``{"run_id", "indexes"}``; `db.bulk_mark`)."""


@dataclass(frozen=True, slots=True)
class BulkState:
    """An open bulk pass: the run that started it and the indexes it dropped (name → definition)."""

    run_id: int | None
    indexes: dict[str, str]


def pending(conn: psycopg.Connection) -> BulkState | None:
    """The unfinished bulk pass recorded in ``ah.meta``, or None."""
    row = search_stats.read_mark(conn, MARK_KEY)
    if row is None:
        return None
    data = json.loads(row[0] or "{}")
    return BulkState(data.get("run_id"), dict(data.get("indexes") or {}))


def can_bulk(conn: psycopg.Connection) -> bool:
    """True when the connection's role owns the corpus tables (disabling triggers and dropping
    indexes need ownership): an indexer connected as ``ah_writer`` keeps the incremental path."""
    return search_stats.owns_corpora(conn)


def is_cold(conn: psycopg.Connection) -> bool:
    """True when no message is catalogued (a first index or a `rebuild`)."""
    return search_stats.no_message(conn)


def choose(mode: str, *, new_bytes: int, cold: bool, min_bytes: int = BULK_MIN_BYTES) -> bool:
    """Whether a pass with `new_bytes` new bytes takes the bulk path (`mode`: one of
    `BULK_MODES`; an unfinished bulk pass and `index --file` are the caller's to check)."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    return (cold and new_bytes > 0) or new_bytes >= min_bytes


def begin(conn: psycopg.Connection, run_id: int, *, drop_indexes: bool) -> BulkState:
    """Open a bulk pass (one transaction; see the module docstring). `conn` is autocommit; the
    caller holds `pass_locks.BULK_LOCK`."""
    with conn.transaction():
        search_stats.lock_corpora(conn)
        indexes = search_stats.gin_indexes(conn) if drop_indexes else {}
        state = BulkState(run_id, indexes)
        search_stats.write_mark(conn, MARK_KEY, json.dumps({"run_id": run_id, "indexes": indexes}))
        for name in indexes:
            search_stats.drop_index(conn, name)
        search_stats.switch_stats_triggers(conn, enable=False)
    embedded.widen_for_bulk(conn)  # fewer checkpoints through the load (an embedded server only)
    return state


def refresh_statistics(conn: psycopg.Connection) -> None:
    """Recompute the term statistics of an open bulk pass that stops before its end (one
    transaction; the triggers stay disabled and the ``bulk_pass`` row stays, so the next pass
    still ends it). Search ranks what was loaded correctly meanwhile. `conn` is autocommit."""
    with conn.transaction():
        recompute_statistics(conn)
    embedded.narrow_after_bulk(conn, keep=())  # a stopping pass does not wait for a checkpoint


COMPACT_TABLES: tuple[str, ...] = ("model_call", "session", "file_touch")
"""Tables ``VACUUM FULL``-ed after a bulk pass that rebuilt the search indexes (module docstring)."""

REINDEX_AFTER: tuple[str, ...] = (
    "message_natural_key",
    "tool_call_natural_key",
    "row_claim_pkey",
    "message_ts_idx",
    "turn_natural_key",
    "tool_call_session_idx",
    "message_class_idx",
    "git_event_natural_key",
)
"""B-tree indexes rebuilt after the end of such a pass: their keys (uuids, timestamps across files)
arrive in random order, so a load leaves their pages about two-thirds full; rebuilt, −0.92 MB of
a ×10 cold load's 102.5 MB for 0.07–0.12 s of backend CPU (docs/performance.md, decision 10).
Those of `COMPACT_TABLES` are rebuilt by the compaction; the others measured ≤ 0.025 MB each."""

END_COMPACT: tuple[str, ...] = ("search_term",)
"""Tables ``VACUUM FULL``-ed after the end itself (they are the end's): the pass adds each batch's
new tool-call lexemes to the dictionary with their ids (migration 0028_term_ids; batch order,
not key order) and the end's recount rewrites every tool-call df in place, leaving the heap
twice its rows (×10 cold load: 3.24 MB for 1.6 MB) and both B-trees loose."""

COMPACT_LOCK_TIMEOUT = "5s"
"""How long `compact` and `reindex` wait for a table's lock (a reader holding it: that table or
index is skipped)."""

SNAPSHOT_WAIT_S = 5.0
"""How long `compact` waits at most for the snapshots older than the post-passes to end."""

SNAPSHOT_POLL_S = 0.05
"""Seconds between two looks for older snapshots (`compact`)."""


def compact(conn: psycopg.Connection, horizon: int | None = None) -> list[str]:
    """``VACUUM FULL`` each of `COMPACT_TABLES` (same rows, packed pages, indexes rebuilt); a table
    whose lock is not granted within `COMPACT_LOCK_TIMEOUT` (a long reader) is left as it is.
    With `horizon` (`search_stats.snapshot_horizon` taken after the post-passes committed), first
    waits — at most `SNAPSHOT_WAIT_S` — for the other sessions whose snapshot is older to
    end: ``VACUUM FULL`` copies every row version such a snapshot may still see, so an autovacuum
    ``ANALYZE`` begun during the load left ``model_call`` and ``session`` at twice their size
    (seen in one cold ×10 load of four: 108.2 MB instead of 102.5).
    Returns the tables compacted. `conn` is autocommit (VACUUM runs outside a transaction)."""
    if horizon is not None:
        deadline = time.monotonic() + SNAPSHOT_WAIT_S
        while search_stats.older_snapshots(conn, horizon) and time.monotonic() < deadline:
            time.sleep(SNAPSHOT_POLL_S)
    return _with_lock_timeout(conn, search_stats.vacuum_full, COMPACT_TABLES)


def reindex(conn: psycopg.Connection) -> list[str]:
    """Rebuild each of `REINDEX_AFTER` that exists (``REINDEX INDEX``); one whose table's lock is
    not granted within `COMPACT_LOCK_TIMEOUT` is left as it is. Returns the indexes rebuilt.
    `conn` is autocommit."""
    return _with_lock_timeout(conn, search_stats.reindex, REINDEX_AFTER)


def _with_lock_timeout(
    conn: psycopg.Connection, step: Callable[[psycopg.Connection, str], object], names: tuple[str, ...]
) -> list[str]:
    """``step(conn, name)`` for each of `names` under ``lock_timeout`` `COMPACT_LOCK_TIMEOUT` (put
    back after); the names whose step ran and did not return False."""
    done = []
    old = conn.execute("SELECT current_setting('lock_timeout')").fetchone()[0]
    conn.execute("SELECT set_config('lock_timeout', %s, false)", (COMPACT_LOCK_TIMEOUT,))
    try:
        for name in names:
            try:
                if step(conn, name) is not False:
                    done.append(name)
            except psycopg.errors.LockNotAvailable:
                continue
    finally:
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (old,))
    return done


class EarlyCheckpoint:
    """A ``CHECKPOINT`` on the idle writer connection while the post-passes run on the loader's
    (`start_early_checkpoint`): it writes and syncs the load's dirty buffers (a ×10 cold load:
    ≈ 9,850 of them, 0.7–1.1 s of I/O wait on one backend, docs/performance.md decision 8) beside
    the post-passes' CPU, so `settle_wal`'s checkpoint at the end of `finish` only writes what the
    post-passes and the end changed since. The final one still runs (it is the one whose redo
    point deletes the pass's WAL segments), so ``pg_wal`` ends as before; a checkpoint changes
    nothing a crash keeps. `wait` before the connection is used again."""

    def __init__(self, helper: psycopg.Connection) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ah-checkpoint")
        self._done = self._pool.submit(helper.execute, "CHECKPOINT")

    def wait(self, *, quiet: bool = False) -> None:
        """Block until the checkpoint has returned; re-raise its failure (a lost connection)
        unless `quiet` (the pass is failing already: its own error is the one to raise)."""
        try:
            self._done.result()
        except psycopg.Error:
            if not quiet:
                raise
        finally:
            self._pool.shutdown()


def start_early_checkpoint(conn: psycopg.Connection, helper: psycopg.Connection | None) -> EarlyCheckpoint | None:
    """Start an `EarlyCheckpoint` on `helper` when there is one and this pass's `finish` will end
    with `settle_wal`'s checkpoint (an embedded server whose settings the pass widened: a
    superuser, who may checkpoint); else None. `conn` (the loader's) asks; both are autocommit
    and outside a transaction."""
    if helper is None or not embedded.unsettled(conn):
        return None
    return EarlyCheckpoint(helper)


def finish(conn: psycopg.Connection, state: BulkState, helper: psycopg.Connection | None = None) -> list[str]:
    """End a bulk pass (one transaction): build the dropped indexes, enable the statistics
    triggers, recompute the statistics, delete the ``ah.meta`` row; then, when the pass rebuilt
    the indexes (it at least doubled the catalogue), `compact` the tables the post-passes
    rewrote and `reindex` the B-trees a load leaves loose. `conn` is autocommit; with `helper` (a
    second autocommit connection, idle: the loader's writer connection) the compaction runs on it
    at the same time as the end's transaction — they touch other tables (`COMPACT_TABLES` against
    the corpora, ``ah.search_*`` and ``ah.meta``) — instead of after it; the rebuilds and
    `END_COMPACT` follow both. Last, on an embedded server whose settings the pass widened, the
    checkpoint that deletes the pass's WAL segments (`db.embedded.settle_wal`). Returns the
    tables compacted.

    Other passes (other hosts') may have loaded beside the bulk pass with the triggers off:
    `search_stats.LOCK_CORPORA` makes the recount see every committed row and the next batch wait for the
    enabled triggers, so the statistics equal a recount of the stored rows."""
    if not state.indexes:
        _end(conn, state)
        embedded.settle_wal(conn)
        return []
    horizon = search_stats.snapshot_horizon(conn)
    if helper is None:
        _end(conn, state)
        done = compact(conn, horizon)
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="ah-compact") as pool:
            compacted = pool.submit(compact, helper, horizon)
            try:
                _end(conn, state)
            finally:
                done = compacted.result()
    reindex(conn)
    done = done + _with_lock_timeout(conn, search_stats.vacuum_full, END_COMPACT)
    embedded.settle_wal(conn)  # the pass's WAL segments deleted, the settings all put back
    return done


def _end(conn: psycopg.Connection, state: BulkState) -> None:
    """The end's transaction (see `finish`)."""
    with conn.transaction():
        search_stats.lock_corpora(conn)
        # the whole build may use more memory than a batch's maintenance (session setting)
        conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
        for name, definition in state.indexes.items():
            search_stats.build_index(conn, name, definition)
        search_stats.switch_stats_triggers(conn, enable=True)
        recompute_statistics(conn)
        search_stats.delete_mark(conn, MARK_KEY)
    embedded.narrow_after_bulk(conn)
