"""The end of an index pass, after its last batch is written (docs/design.md §7).

A pass that ends normally rolls up the sessions it dirtied (`postpass.run_postpasses`, only its
own namespaces: another host's pass rolls up its own), counts the sessions another namespace had
stored first (`shared_sessions.sessions_stored_elsewhere`) and, on the bulk path, ends it
(`bulk.finish`: the index builds, the statistics recount, the compaction, and on an embedded
server the checkpoint that deletes the pass's WAL segments, `db.embedded.settle_wal`). Beside
the post-passes, a bulk pass's idle writer connection writes the load's dirty buffers
(`bulk.start_early_checkpoint`; docs/performance.md, decision 17); the end waits for it before
`finish`, and — quietly, so the post-pass's own error is the one raised — before raising a
post-pass failure. The summary says when `finish` settled the WAL (`PassSummary.wal_settled`),
so the CLI asks for no checkpoint of its own after it (docs/performance.md, decision 21).

A stopping pass (SIGTERM: a service manager's grace period is short) skips the post-passes —
their marks are committed in ``ah.dirty_session``, so the next pass rolls them up — and, on the
bulk path, only recomputes the term statistics so search finds what was loaded
(`bulk.refresh_statistics`); the index builds are left to the next pass.
"""

from __future__ import annotations

import psycopg

from agent_history.db import embedded
from agent_history.db.tables.shared_sessions import sessions_stored_elsewhere
from agent_history.ingest.postpass import run_postpasses
from agent_history.ingest.strategy import PassSummary


def end_pass(
    conn: psycopg.Connection,
    helper: psycopg.Connection | None,
    summary: PassSummary,
    namespaces: list[str],
    bulk_state,
    *,
    stopping: bool,
) -> None:
    """End a pass whose batches are all written (see the module docstring). `conn`: the pass's
    connection, `helper`: its idle writer connection or None (both autocommit, outside a
    transaction); `bulk_state`: the pass's `bulk.BulkState` or None; `stopping`: a stop signal
    came. Sets `summary.interrupted` (stopping), `sessions_rolled_up`, `sessions_elsewhere`,
    `bulk` ("done" once `finish` committed) and `wal_settled` (its last checkpoint ran). Raises what the post-passes or the bulk end raise
    (a lost connection: ``psycopg.OperationalError``)."""
    if stopping:
        summary.interrupted = True
        if bulk_state is not None:
            from agent_history.ingest import bulk

            bulk.refresh_statistics(conn)
        return
    early = None
    if bulk_state is not None:
        from agent_history.ingest import bulk

        # the load's dirty buffers written on the idle writer connection while the post-passes
        # compute (docs/performance.md, decision 17)
        early = bulk.start_early_checkpoint(conn, helper)
    try:
        # only this pass's namespaces: another host's pass rolls up its own sessions
        summary.sessions_rolled_up = run_postpasses(conn, namespaces=namespaces, on_issues=summary.add_issues)
        summary.sessions_elsewhere = sessions_stored_elsewhere(conn, summary.changed_ids)
    except BaseException:
        if early is not None:
            early.wait(quiet=True)
        raise
    if bulk_state is not None:
        if early is not None:
            early.wait()
        settles = embedded.unsettled(conn)  # `finish` ends with `settle_wal`'s checkpoint
        # and compacts after a pass that at least doubled the catalogue: on the idle writer
        # connection, beside the end's transaction
        bulk.finish(conn, bulk_state, helper=helper)
        summary.bulk = "done"
        summary.wal_settled = settles
