"""The start and end of a bulk pass on the server (docs/performance.md, decision 8): the checkpoint
settings (`db.embedded.BULK_SETTINGS`) — `ingest.bulk.begin` widens them on an embedded server,
`finish` (and a stopped pass's `refresh_statistics`) puts `SERVER_SETTINGS` back, a server started
after a killed pass is set back at start (`_tune`), a role that is not a superuser changes nothing
— and the compaction `finish` runs on a second connection beside its transaction, after the
snapshots older than the post-passes ended, and the loose B-trees are rebuilt. A private embedded
server (the settings are the cluster's: the session's shared server has other tests' bulk passes
widening and narrowing them)."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from agent_history.db import embedded
from agent_history.db.migrate import upgrade
from agent_history.db.roles import WRITER, ensure_roles
from agent_history.ingest import bulk

AUTO_CONF = (
    "SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf' "
    "AND name IN ('max_wal_size', 'checkpoint_timeout') ORDER BY name"
)
EMBEDDED = [("max_wal_size", "64MB")]
"""The two settings as `SERVER_SETTINGS` leaves them (checkpoint_timeout: the server's default)."""
WIDE = [("checkpoint_timeout", "30min"), ("max_wal_size", "1GB")]


@pytest.fixture(scope="module")
def server():
    """(owner DSN, writer DSN, admin DSN) of a private migrated embedded server."""
    base = Path(tempfile.mkdtemp(prefix="ah-test-bulk-settings-"))
    pgdata = base / "pg"
    try:
        dsn = embedded.ensure_running(pgdata)
        upgrade(dsn)
        ensure_roles(dsn)
        yield dsn, embedded.server_dsn(pgdata, user=WRITER), embedded.server_dsn(pgdata, database="postgres")
    finally:
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)


def test_a_bulk_pass_widens_the_checkpoint_settings_and_its_end_narrows_them(server):
    with psycopg.connect(server[0], autocommit=True) as conn:
        assert conn.execute(AUTO_CONF).fetchall() == EMBEDDED
        try:
            state = bulk.begin(conn, run_id=1, drop_indexes=True)
            assert conn.execute(AUTO_CONF).fetchall() == WIDE
            bulk.finish(conn, state)
            assert conn.execute(AUTO_CONF).fetchall() == EMBEDDED
            assert embedded.narrow_after_bulk(conn) is False  # nothing left to undo
        finally:
            embedded.narrow_after_bulk(conn)


def test_a_stopped_bulk_pass_narrows_them_and_keeps_its_mark(server):
    with psycopg.connect(server[0], autocommit=True) as conn:
        try:
            state = bulk.begin(conn, run_id=1, drop_indexes=False)
            bulk.refresh_statistics(conn)
            assert conn.execute(AUTO_CONF).fetchall() == EMBEDDED
            assert bulk.pending(conn) == state  # the next pass still ends it
            bulk.finish(conn, state)
            assert bulk.pending(conn) is None
        finally:
            embedded.narrow_after_bulk(conn)


def test_settings_a_killed_bulk_pass_left_are_undone_when_the_server_starts(server):
    owner, _, admin = server
    with psycopg.connect(owner, autocommit=True) as conn:
        try:
            assert embedded.widen_for_bulk(conn) is True  # then the pass is killed
            assert conn.execute(AUTO_CONF).fetchall() == WIDE
            assert not embedded._tune(admin) & embedded._RESTART_SETTINGS  # what a start runs; no restart
            assert conn.execute(AUTO_CONF).fetchall() == EMBEDDED
        finally:
            embedded.narrow_after_bulk(conn)


def test_a_role_that_is_not_a_superuser_leaves_the_server_settings_alone(server):
    owner, writer, _ = server
    with psycopg.connect(writer, autocommit=True) as conn:
        assert embedded.widen_for_bulk(conn) is False
        assert embedded.narrow_after_bulk(conn) is False
    with psycopg.connect(owner, autocommit=True) as conn:
        assert conn.execute(AUTO_CONF).fetchall() == EMBEDDED


def test_finish_compacts_on_the_helper_connection_beside_its_transaction(server):
    owner = server[0]
    with psycopg.connect(owner, autocommit=True) as conn, psycopg.connect(owner, autocommit=True) as helper:
        state = bulk.begin(conn, run_id=2, drop_indexes=True)
        assert set(state.indexes) == {"message_tsv_idx", "tool_call_terms_idx"}
        assert bulk.finish(conn, state, helper=helper) == [*bulk.COMPACT_TABLES, *bulk.END_COMPACT]
        assert bulk.pending(conn) is None
        assert len(bulk.search_stats.gin_indexes(conn)) == 2
        # the helper is left as it was found: autocommit, idle, its lock_timeout back
        assert helper.execute("SHOW lock_timeout").fetchone()[0] == "0"
        assert helper.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_server_switched_off_keeps_its_checkpoint_settings_through_a_bulk_pass(pg_server, db):
    """The test session's shared server has `BULK_SETTINGS_SWITCH` 'off' (tests/conftest.py)."""
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert embedded.widen_for_bulk(conn) is False
        assert dict(conn.execute(AUTO_CONF).fetchall())["max_wal_size"] == "64MB"


def test_finish_rebuilds_the_b_trees_a_load_leaves_loose(server):
    owner = server[0]
    with psycopg.connect(owner, autocommit=True) as conn:
        state = bulk.begin(conn, run_id=3, drop_indexes=True)
        bulk.finish(conn, state)
        # every index of `REINDEX_AFTER` exists in the migrated schema and was rebuilt
        assert bulk.reindex(conn) == list(bulk.REINDEX_AFTER)
        assert conn.execute("SHOW lock_timeout").fetchone()[0] == "0"
        assert bulk.search_stats.reindex(conn, "no_such_index") is False


def test_compact_waits_for_a_snapshot_older_than_the_post_passes(server):
    """An autovacuum ``ANALYZE`` begun during the load holds a snapshot older than the post-passes'
    updates; ``VACUUM FULL`` beside it would copy the replaced rows. `compact` waits for it."""
    owner = server[0]
    with psycopg.connect(owner, autocommit=True) as conn, psycopg.connect(owner) as old:
        old.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        old.execute("SELECT count(*) FROM ah.session").fetchone()  # its snapshot is taken, held
        conn.execute("SELECT pg_current_xact_id()")  # a post-pass's write: a transaction id used
        horizon = bulk.search_stats.snapshot_horizon(conn)
        assert bulk.search_stats.older_snapshots(conn, horizon) == 1
        held = "SELECT backend_xmin IS NOT NULL FROM pg_stat_activity WHERE pid = %s"
        assert conn.execute(held, (old.info.backend_pid,)).fetchone()[0] is True  # the one counted
        ender = threading.Timer(0.5, old.rollback)
        ender.start()
        started = time.monotonic()
        assert bulk.compact(conn, horizon) == list(bulk.COMPACT_TABLES)
        waited = time.monotonic() - started
        ender.join()
        assert 0.5 <= waited < bulk.SNAPSHOT_WAIT_S
        assert bulk.search_stats.older_snapshots(conn, horizon) == 0
        # the session's own snapshot is not counted
        with conn.transaction():
            conn.execute("SELECT pg_current_xact_id()")
            assert bulk.search_stats.older_snapshots(conn, bulk.search_stats.snapshot_horizon(conn)) == 0


RECYCLE = "SELECT setting FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf' AND name = 'wal_recycle'"


def test_wal_recycling_is_off_through_a_pass_and_back_after_its_end_its_stop_or_a_start(server):
    """``wal_recycle`` off from `begin` until `finish`'s last checkpoint (`embedded.settle_wal`),
    and back (the server's default: no line) when a pass stops or a server starts after a kill."""
    owner, _, admin = server
    with psycopg.connect(owner, autocommit=True) as conn:
        try:
            state = bulk.begin(conn, run_id=3, drop_indexes=False)
            assert conn.execute(RECYCLE).fetchall() == [("off",)]
            bulk.finish(conn, state)
            assert conn.execute(RECYCLE).fetchall() == []
            bulk.begin(conn, run_id=4, drop_indexes=False)
            bulk.refresh_statistics(conn)  # a stopped pass: no checkpoint waited for
            assert conn.execute(RECYCLE).fetchall() == []
            bulk.finish(conn, bulk.pending(conn))
            assert embedded.widen_for_bulk(conn) is True  # then the pass is killed
            embedded._tune(admin)
            assert conn.execute(RECYCLE).fetchall() == []
            assert embedded.settle_wal(conn) is False  # nothing left to settle
        finally:
            embedded.narrow_after_bulk(conn, keep=())


REQUESTED = "SELECT num_requested FROM pg_stat_checkpointer"
"""Checkpoints asked for (``CHECKPOINT`` commands included) since the statistics were reset."""


def requested_since(conn: psycopg.Connection, before: int, expected: int) -> int:
    """Checkpoints requested since the count was `before`, once it reaches `expected` (or after
    10 s). The checkpointer wakes the waiting ``CHECKPOINT`` before it reports its statistics
    (checkpointer.c: the done broadcast, then ``pgstat_report_checkpointer``), so a read right
    after the command can still show the old count — seen once under a load average of 20."""
    deadline = time.monotonic() + 10
    while True:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        n = conn.execute(REQUESTED).fetchone()[0] - before
        if n >= expected or time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def test_the_early_checkpoint_runs_beside_the_post_passes_only_while_the_pass_widened_the_settings(server):
    """`bulk.start_early_checkpoint` checkpoints on the helper connection only when the pass's end
    will settle the WAL (a widened embedded server, a superuser); `finish` then still settles it."""
    owner, writer, _ = server
    with psycopg.connect(owner, autocommit=True) as conn, psycopg.connect(owner, autocommit=True) as helper:
        try:
            assert bulk.start_early_checkpoint(conn, helper) is None  # no bulk pass: nothing to settle
            state = bulk.begin(conn, run_id=5, drop_indexes=False)
            assert bulk.start_early_checkpoint(conn, None) is None  # no helper connection
            before = conn.execute(REQUESTED).fetchone()[0]
            early = bulk.start_early_checkpoint(conn, helper)
            assert early is not None
            early.wait()
            assert requested_since(conn, before, 1) == 1
            assert helper.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            bulk.finish(conn, state, helper=helper)
            assert conn.execute(RECYCLE).fetchall() == []  # the end's checkpoint ran and put it back
            assert embedded.settle_wal(conn) is False
        finally:
            embedded.narrow_after_bulk(conn, keep=())
    with psycopg.connect(owner, autocommit=True) as conn, psycopg.connect(writer, autocommit=True) as helper:
        try:
            state = bulk.begin(conn, run_id=6, drop_indexes=False)
            with psycopg.connect(writer, autocommit=True) as as_writer:
                # a role that may not read the server's settings never asks for a checkpoint
                assert bulk.start_early_checkpoint(as_writer, helper) is None
            bulk.finish(conn, state)
        finally:
            embedded.narrow_after_bulk(conn, keep=())


def test_a_pass_end_says_it_settled_the_wal_only_when_its_last_checkpoint_ran(server):
    """`pass_end.end_pass` on the bulk path: the early checkpoint and `settle_wal`'s (two asked
    for), then `PassSummary.wal_settled`, so the CLI asks for no third (`cli.index.wal_left_unsettled`,
    docs/performance.md decision 21). An incremental pass, or a bulk pass on a server it did not
    widen (`BULK_SETTINGS_SWITCH` 'off'), settles nothing: the CLI's checkpoint stays."""
    from agent_history.cli.index import BULK_CHECKPOINT_BYTES, wal_left_unsettled
    from agent_history.ingest.pass_end import end_pass
    from agent_history.ingest.strategy import PassSummary

    owner = server[0]
    with psycopg.connect(owner, autocommit=True) as conn, psycopg.connect(owner, autocommit=True) as helper:
        try:
            state = bulk.begin(conn, run_id=8, drop_indexes=False)
            before = conn.execute(REQUESTED).fetchone()[0]
            summary = PassSummary(bytes_read=BULK_CHECKPOINT_BYTES)
            end_pass(conn, helper, summary, ["nobody-here"], state, stopping=False)
            assert requested_since(conn, before, 2) == 2
            assert (summary.bulk, summary.wal_settled, summary.interrupted) == ("done", True, False)
            assert wal_left_unsettled(summary) is False
            assert bulk.pending(conn) is None

            incremental = PassSummary(bytes_read=BULK_CHECKPOINT_BYTES)
            end_pass(conn, helper, incremental, ["nobody-here"], None, stopping=False)
            assert (incremental.bulk, incremental.wal_settled) == (None, False)
            assert wal_left_unsettled(incremental) is True

            conn.execute(f"ALTER SYSTEM SET {embedded.BULK_SETTINGS_SWITCH} = 'off'")
            conn.execute("SELECT pg_reload_conf()")
            state = bulk.begin(conn, run_id=9, drop_indexes=False)
            unwidened = PassSummary(bytes_read=BULK_CHECKPOINT_BYTES)
            end_pass(conn, helper, unwidened, ["nobody-here"], state, stopping=False)
            assert (unwidened.bulk, unwidened.wal_settled) == ("done", False)
            assert wal_left_unsettled(unwidened) is True
            assert wal_left_unsettled(PassSummary(bytes_read=BULK_CHECKPOINT_BYTES - 1)) is False
            assert wal_left_unsettled(PassSummary(bytes_read=BULK_CHECKPOINT_BYTES, interrupted=True)) is False
        finally:
            conn.execute(f"ALTER SYSTEM RESET {embedded.BULK_SETTINGS_SWITCH}")
            conn.execute("SELECT pg_reload_conf()")
            embedded.narrow_after_bulk(conn, keep=())


def test_a_failed_early_checkpoint_is_raised_unless_the_pass_is_failing_already(server):
    """`EarlyCheckpoint.wait` re-raises the checkpoint's failure (a lost connection); with
    ``quiet`` (the post-passes raised: theirs is the error to report) it does not."""
    helper = psycopg.connect(server[0], autocommit=True)
    helper.close()
    with pytest.raises(psycopg.OperationalError):
        bulk.EarlyCheckpoint(helper).wait()
    bulk.EarlyCheckpoint(helper).wait(quiet=True)
