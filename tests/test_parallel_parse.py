"""Issue 18: parsing in worker processes gives the catalogue a serial pass gives.

The shared corpus home is loaded twice into fresh databases — once in-process, once with two
parse workers — and every ``ah.*`` table the loader writes is compared row for row (order-
independent). Surrogate ids are compared too: the workers' chunks are written in file order in
the same batches, so every sequence advances identically. Left out, because they record *when*
a pass ran, not what it read: columns defaulting to ``now()`` / ``clock_timestamp()``,
``session.rolled_up_at``, ``source_file.last_indexed_at`` and ``ah.index_run`` (one row per pass: its start, end and the pass's duration in ``summary``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import psycopg
import pytest

from agent_history.config import ConfigError
from agent_history.evaluation.search import load_queries
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.parse_pool import parse_workers
from agent_history.search.keyword import search
from agent_history.search.request import Scope, SearchRequest
from tests.conftest import clone_database, drop_database

PASS_TIME_DEFAULTS = ("now()", "clock_timestamp()", "CURRENT_TIMESTAMP")
PASS_TIME_COLUMNS = {("session", "rolled_up_at"), ("source_file", "last_indexed_at")}
"""Set to the time of the pass: by the roll-up post-pass (`ingest.postpass`) and the loader."""


def _sources(home: Path) -> list[Source]:
    return [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]


@pytest.fixture(scope="module")
def loaded(pg_server, corpus_home, tmp_path_factory):
    """(serial database, parallel database, their summaries) over one copy of the corpus home."""
    home = tmp_path_factory.mktemp("home") / "home"
    shutil.copytree(corpus_home, home, symlinks=True)
    serial, parallel = clone_database(pg_server, prefix="ser"), clone_database(pg_server, prefix="par")
    summaries = []
    for database, workers in ((serial, 0), (parallel, 2)):
        # the parallel pass has a writer thread, so its workers analyse the search text too
        # (`search_ready.prepare_map`); the serial one computes it as it writes
        with (
            psycopg.connect(database.dsn, autocommit=True) as conn,
            psycopg.connect(database.dsn, autocommit=True) as writer,
        ):
            loader = Loader(conn, parse_workers=workers, parallel_min_bytes=0, writer_conn=writer if workers else None)
            summaries.append(loader.run(_sources(home)))
            summaries.append(loader.used_workers)
    yield serial, parallel, summaries
    drop_database(serial)
    drop_database(parallel)


def _tables(conn: psycopg.Connection) -> dict[str, list[str]]:
    """Columns to compare per ``ah`` base table (pass-time columns left out)."""
    cols = conn.execute(
        "SELECT c.table_name, c.column_name, coalesce(c.column_default, '') FROM information_schema.columns c "
        "JOIN information_schema.tables t USING (table_schema, table_name) "
        "WHERE c.table_schema = 'ah' AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position"
    ).fetchall()
    out: dict[str, list[str]] = {}
    for table, column, default in cols:
        if table == "index_run":
            continue
        if (table, column) not in PASS_TIME_COLUMNS and not any(d in default for d in PASS_TIME_DEFAULTS):
            out.setdefault(table, []).append(column)
    return out


def _contents(dsn: str) -> dict[str, list[str]]:
    with psycopg.connect(dsn) as conn:
        out = {}
        for table, columns in _tables(conn).items():
            select = ", ".join(f'"{c}"::text' for c in columns)
            out[table] = sorted(repr(r) for r in conn.execute(f"SELECT {select} FROM ah.{table}").fetchall())
        return out


def test_parallel_cold_load_equals_serial(loaded):
    serial, parallel, (s_summary, s_workers, p_summary, p_workers) = loaded
    assert (s_workers, p_workers) == (0, 2)  # the second load really used the pool
    assert s_summary.files_failed == p_summary.files_failed == 0
    assert p_summary.as_dict() | {"seconds": 0} == s_summary.as_dict() | {"seconds": 0}
    a, b = _contents(serial.dsn), _contents(parallel.dsn)
    assert a.keys() == b.keys()
    assert {"message", "tool_call", "session", "source_file", "model_call"} <= a.keys()
    assert len(a["message"]) > 1000  # the corpus, not an empty catalogue
    for table in a:
        only_a, only_b = sorted(set(a[table]) - set(b[table])), sorted(set(b[table]) - set(a[table]))
        assert (only_a[:2], only_b[:2], len(a[table])) == ([], [], len(b[table])), table


def test_parallel_cold_load_searches_like_serial(loaded):
    serial, parallel, _ = loaded
    queries = load_queries()[:12]  # enough to cover both scopes; each costs two searches
    assert len(queries) == 12
    results = []
    for database in (serial, parallel):
        with psycopg.connect(database.dsn) as conn:
            results.append([_ranked(search(conn, SearchRequest(q.q, scope=q.scope))) for q in queries])
    for q, a, b in zip(queries, *results, strict=True):
        assert len(a) == len(b), q.q
        # a tie at the cut-off (the limit) may keep either of the tied hits: compare above it
        floor = min(a[-1][0], b[-1][0]) if a else None
        assert [r for r in a if r[0] > floor] == [r for r in b if r[0] > floor], q.q
        assert [r[0] for r in a] == [r[0] for r in b], q.q
    assert sum(1 for hits in results[0] if hits) >= len(queries) - 1


def _ranked(hits) -> list[tuple]:
    """Hits as (score to 9 significant digits, kind, id, session), best first, ties by kind and id.
    BM25 scores are float sums the server may add up in another order in another database (a plan
    chosen from that database's own statistics), so two identical catalogues can differ in the
    last bits — enough to swap two tied hits (seen once in CI: two messages at 5.5807355708749…).
    Equal catalogues must still give the same hits, the same ranks up to such ties and scores
    equal to 9 digits."""
    rows = [(float(f"{h.score:.9g}"), h.kind, h.id, h.session_uid) for h in hits]
    return sorted(rows, key=lambda r: (-r[0], r[1], -r[2]))


def test_search_finds_rows_of_an_incremental_pass(db, corpus_home, tmp_path):
    """A parallel cold pass, then a line appended to one transcript: the next (in-process)
    pass resumes at the saved offset and a search right after it finds the new message."""
    home = tmp_path / "home"
    shutil.copytree(corpus_home / ".claude", home / ".claude", symlinks=True)
    path = next(p for p in sorted((home / ".claude" / "projects").rglob("*.jsonl")) if not p.name.startswith("agent-"))
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    line = {
        "parentUuid": last.get("uuid"),
        "isSidechain": False,
        "userType": "external",
        "cwd": last.get("cwd"),
        "sessionId": last["sessionId"],
        "version": last.get("version"),
        "type": "user",
        "message": {"role": "user", "content": "please rename the quuxfrobnicator helper"},
        "uuid": "00000000-0000-4000-8000-00000000f00d",
        "timestamp": "2030-01-01T00:00:00.000Z",
    }
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        first = Loader(conn, parse_workers=2, parallel_min_bytes=0)
        first.run(_sources(home))
        assert first.used_workers == 2
        req = SearchRequest("quuxfrobnicator", scope=Scope.MESSAGES)
        assert search(conn, req) == []
        with path.open("ab") as fh:
            fh.write(orjson.dumps(line) + b"\n")
        again = Loader(conn, parse_workers=2, parallel_min_bytes=0)
        summary = again.run(_sources(home))
        assert (summary.files_changed, summary.rows_new["message"], again.used_workers) == (1, 1, 0)
        hits = search(conn, req)
        assert [(h.kind, h.session_uid) for h in hits] == [("message", last["sessionId"])]


def test_parse_workers_setting(monkeypatch):
    monkeypatch.delenv("AGENT_HISTORY_PARSE_WORKERS", raising=False)
    assert parse_workers() == max(0, os.cpu_count() - 2)
    monkeypatch.setenv("AGENT_HISTORY_PARSE_WORKERS", "3")
    assert parse_workers() == 3
    monkeypatch.setenv("AGENT_HISTORY_PARSE_WORKERS", "0")
    assert parse_workers() == 0
    monkeypatch.setenv("AGENT_HISTORY_PARSE_WORKERS", "two")
    with pytest.raises(ConfigError, match="AGENT_HISTORY_PARSE_WORKERS='two'"):
        parse_workers()


def test_a_parallel_pass_stopped_midway_resumes_to_the_same_catalogue(loaded, pg_server, corpus_home, tmp_path):
    """Stop set once the first batch is written (the progress callback runs inside that write,
    so the point is deterministic): the pass ends at a checkpoint without errors, and the next
    pass completes the catalogue — every table holds what the serial load holds."""
    import threading

    serial, _, _ = loaded
    home = tmp_path / "home"
    shutil.copytree(corpus_home, home, symlinks=True)
    database = clone_database(pg_server, prefix="stp")
    try:
        stop = threading.Event()
        with psycopg.connect(database.dsn, autocommit=True) as conn:
            first = Loader(
                conn, stop=stop, progress=lambda *_: stop.set(), batch_lines=500, parse_workers=2, parallel_min_bytes=0
            )
            summary = first.run(_sources(home))
            assert (summary.interrupted, summary.files_failed, first.used_workers) == (True, 0, 2)
            rest = Loader(conn, parse_workers=2, parallel_min_bytes=0).run(_sources(home))
            assert (rest.interrupted, rest.files_failed) == (False, 0)
            assert 0 < summary.files_scanned < rest.files_scanned

        def counts(dsn: str) -> dict[str, int]:
            with psycopg.connect(dsn) as conn:
                return {t: conn.execute(f"SELECT count(*) FROM ah.{t}").fetchone()[0] for t in _tables(conn)}

        assert counts(database.dsn) == counts(serial.dsn)
    finally:
        drop_database(database)


def test_parse_workers_rejects_non_ascii_digits(monkeypatch):
    monkeypatch.setenv("AGENT_HISTORY_PARSE_WORKERS", "²")  # str.isdigit() is True, int() raises
    with pytest.raises(ConfigError, match="AGENT_HISTORY_PARSE_WORKERS='²'"):
        parse_workers()


def test_index_checks_parse_workers_before_any_pass(cli_env, tmp_path):
    """A no-change pass never reads the setting, so `index` checks it first: a typo cannot wait
    for the first large pass of an --every loop."""
    env = dict(cli_env, AGENT_HISTORY_PARSE_WORKERS="x")
    home = tmp_path / "empty-home"
    home.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "agent_history", "index", "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: AGENT_HISTORY_PARSE_WORKERS='x': expected a whole number of worker processes (0 = none)"
    ]


def test_a_worker_analyses_the_search_text_of_its_chunks_as_the_writer_would(corpus_home):
    from agent_history.ingest.chunks import parse_new_file
    from agent_history.ingest.discovery import iter_files
    from agent_history.ingest.search_ready import DOCUMENT, ready_of
    from agent_history.model.merge import fold

    source = next(s for s in _sources(corpus_home) if s.agent == "claude")
    ref = next(r for r in iter_files(source, []) if r.kind == "jsonl")
    st = os.stat(ref.path)
    chunks, error = parse_new_file(ref, 1, st.st_size, st.st_mtime_ns, 0, 50, True)
    assert error is None and len(chunks) > 1
    analysed = 0
    for chunk in chunks:
        for row_type, recs in fold(chunk.rows).items():  # the rows as the writer folds them
            for row in recs.values() if row_type in DOCUMENT else ():
                assert chunk.ready[DOCUMENT[row_type](row)] == ready_of(row)
                analysed += 1
    assert analysed > 10
    assert all(c.ready is None for c in parse_new_file(ref, 1, st.st_size, st.st_mtime_ns, 0, 50)[0])
