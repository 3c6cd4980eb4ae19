"""A pass stopped mid-way counts only what it committed: ``files_changed`` is the number of
files with something written, not of files begun (their batches are discarded at the stop)."""

from __future__ import annotations

import threading

import psycopg

from agent_history.ingest.loader import Loader
from tests.homes import sources_for


def test_a_stopped_pass_counts_only_the_files_it_committed(db, corpus_home):
    stop = threading.Event()
    with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
        # stop once the first batch is written (the callback runs inside that write, on the writer
        # thread), while the reader has begun the files of the next batches
        loader = Loader(
            conn, stop=stop, progress=lambda *_: stop.set(), writer_conn=writer, bulk="never", batch_lines=200
        )
        summary = loader.run(sources_for(corpus_home))
        committed = conn.execute(
            "SELECT count(*), coalesce(sum(indexed_offset), 0) FROM ah.source_file WHERE last_indexed_at IS NOT NULL"
        ).fetchone()
        total = conn.execute("SELECT count(*) FROM ah.source_file").fetchone()[0]
        recorded = conn.execute("SELECT files_changed FROM ah.index_run ORDER BY id DESC LIMIT 1").fetchone()[0]
    assert summary.interrupted and summary.files_failed == 0
    assert 0 < committed[0] < total
    assert summary.files_changed == committed[0] == recorded
    assert summary.bytes_read == committed[1]
