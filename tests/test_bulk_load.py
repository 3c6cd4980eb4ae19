"""The bulk path of large passes (`agent_history.ingest.bulk`, issue 27 item 2): a bulk load and an
incremental load of one home give the same catalogue — every ``ah.*`` table, ids and term
statistics included — and the same search results; a bulk load SIGKILLed after N committed
batches and run again gives that catalogue too; SIGTERM stops one at a batch boundary and says
so. Real CLI processes against the embedded server; the bulk path is forced by ``[index] bulk``
rather than by 64 MB of data."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from agent_history.db.tables import search_stats
from agent_history.ingest.bulk import COMPACT_TABLES, END_COMPACT, REINDEX_AFTER
from tests.conftest import clone_database, drop_database
from tests.snapshot import catalogue_rows
from tests.term_form import terms_differ

PY = sys.executable
NAMESPACES = (
    ".codex",
    ".claude/projects/-Users-user1-workspace-JSSoundRecorder",
    ".claude/projects/-Users-user1-workspace-coderabbit-review-helper",
    ".claude/projects/-Users-user1-workspace-example-site-dev-next",
    ".claude/projects/-experiments-ideas",
    ".claude/projects/-src-experiments-claude_p",
)
"""A small home (≈ 4 MB): Codex and Claude Code sessions with sub-agents, from the shared corpus."""
BATCH_LINES = "150"  # many batches from a small home
QUERIES = ("error", "test", "readme", "function", "npm install")


def reclaimable_pages(dsn: str) -> dict[str, int]:
    """Pages ``VACUUM FULL`` frees in each table a bulk pass compacts (`bulk.COMPACT_TABLES`,
    `bulk.END_COMPACT`);
    0 for a table already compact. (It rewrites them: call it after the contents are read.)"""
    size = "SELECT pg_relation_size(%s::regclass)"
    out = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in (*COMPACT_TABLES, *END_COMPACT):
            before = conn.execute(size, (f"ah.{table}",)).fetchone()[0]
            conn.execute(f"VACUUM (FULL) ah.{table}")
            out[table] = (before - conn.execute(size, (f"ah.{table}",)).fetchone()[0]) // 8192
    return out


def loose_index_pages(dsn: str) -> dict[str, int]:
    """Pages ``REINDEX`` frees in ``search_term_pkey`` (filled in key order by the bulk end's
    recount) and in each index a bulk pass rebuilds (`bulk.REINDEX_AFTER`); 0 for a packed one."""
    size = "SELECT pg_relation_size(%s::regclass)"
    out = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for index in ("search_term_pkey", *REINDEX_AFTER):
            before = conn.execute(size, (f"ah.{index}",)).fetchone()[0]
            conn.execute(f"REINDEX INDEX ah.{index}")
            out[index] = (before - conn.execute(size, (f"ah.{index}",)).fetchone()[0]) // 8192
    return out


def bulk_left(conn: psycopg.Connection) -> tuple[bool, int, int]:
    """(an unfinished bulk pass is recorded, GIN vector indexes present, statistics triggers disabled)."""
    mark = conn.execute("SELECT count(*) FROM ah.meta WHERE key = 'bulk_pass'").fetchone()[0] == 1
    # not a LIKE over pg_indexes.indexdef: it reads every index's definition, another test's
    # dropped temp index among them ("could not open relation with OID")
    gin = len(search_stats.gin_indexes(conn))
    disabled = conn.execute(
        "SELECT count(*) FROM pg_trigger WHERE tgname LIKE '%search_stats%' AND tgenabled = 'D'"
    ).fetchone()[0]
    return mark, gin, disabled


def make_env(base: Path, dsn: str, reader_dsn: str, bulk: str) -> dict[str, str]:
    config = base / f"config-{bulk}.toml"
    config.write_text(f'[index]\nbulk = "{bulk}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_")}
    env.update(
        AGENT_HISTORY_DSN=dsn,
        AGENT_HISTORY_READER_DSN=reader_dsn,
        AGENT_HISTORY_CONFIG=str(config),
        AGENT_HISTORY_DATA_DIR=str(base / "data"),
        AGENT_HISTORY_BATCH_LINES=BATCH_LINES,
        AGENT_HISTORY_PARSE_WORKERS="0",
        AGENT_HISTORY_QUERY_IDLE_S="0",  # no resident query process left behind (tests/conftest.py)
        HOME=str(base / "user"),
    )
    return env


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def searches(env: dict) -> list:
    out = []
    for q in QUERIES:
        proc = cli("search", q, "--json", "--limit", "20", env=env)
        assert proc.returncode in (0, 1), proc.stderr  # 1: nothing found
        out.append(json.loads(proc.stdout))
    return out


@pytest.fixture(scope="module")
def workdir(corpus_home):
    base = Path(tempfile.mkdtemp(prefix="ah-test-bulk-"))
    for rel in NAMESPACES:
        shutil.copytree(corpus_home / rel, base / "home" / rel)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def reference(pg_server, workdir):
    """The small home bulk-loaded in one uninterrupted pass: (dump, batches, search results)."""
    database = clone_database(pg_server, prefix="bulk_ref")
    try:
        env = make_env(workdir, database.dsn, database.reader_dsn, "always")
        proc = cli("index", "--home", str(workdir / "home"), "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads(proc.stdout)
        assert summary["bulk"] == "done" and summary["batches"] >= 5 and summary["files_failed"] == 0
        with psycopg.connect(database.dsn) as conn:
            assert bulk_left(conn) == (False, 2, 0)
            result = catalogue_rows(conn), summary["batches"], searches(env)
        # a cold bulk pass compacts the tables its post-passes rewrote (docs/performance.md, "Store")
        assert reclaimable_pages(database.dsn) == dict.fromkeys((*COMPACT_TABLES, *END_COMPACT), 0)
        # and leaves the B-trees whose keys arrive in random order packed (decision 10)
        assert loose_index_pages(database.dsn) == dict.fromkeys(("search_term_pkey", *REINDEX_AFTER), 0)
        yield result
    finally:
        drop_database(database)


def test_a_bulk_and_an_incremental_load_give_the_same_tables_and_search_results(db, workdir, reference):
    env = make_env(workdir, db.dsn, db.reader_dsn, "never")
    proc = cli("index", "--home", str(workdir / "home"), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["bulk"] is None and summary["batches"] == reference[1]
    with psycopg.connect(db.dsn) as conn:
        assert bulk_left(conn) == (False, 2, 0)
        got = catalogue_rows(conn)
        assert len(got["search_term"]) > 1000 and len(got["message"]) > 500
        assert got == reference[0]  # tool_call.terms / tf and search_term.id included
        # the term dictionary (migration 0028_term_ids): ids dense (none taken for a lexeme already
        # there), every tool call's form the one its text gives
        n, top = conn.execute("SELECT count(*), max(id) FROM ah.search_term WHERE corpus = 'tool_call'").fetchone()
        assert n == top > 1000
        assert (
            conn.execute("SELECT count(*) FROM ah.search_term WHERE corpus = 'message' AND id IS NOT NULL").fetchone()[
                0
            ]
            == 0
        )
        assert conn.execute(f"SELECT count(*) FROM ah.tool_call WHERE {terms_differ()}").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM ah.tool_call WHERE cardinality(terms) > 0").fetchone()[0] > 100
    assert searches(env) == reference[2]
    # the incremental path leaves the post-passes' dead rows (the same contents, more pages)
    assert reclaimable_pages(db.dsn)["model_call"] > 0
    assert sum(len(r["hits"]) for r in reference[2]) >= 3 * len(QUERIES)  # real results, ranked alike


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_a_bulk_load_killed_after_n_batches_and_run_again_gives_the_same_catalogue(db, workdir, reference, which):
    want, batches, _ = reference
    n = {"first": 1, "middle": batches // 2, "last": batches}[which]
    env = make_env(workdir, db.dsn, db.reader_dsn, "always")
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(workdir / "home"), "--json"],
        env={**env, "AGENT_HISTORY_PAUSE_AFTER_BATCHES": str(n)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert line.strip() == f"paused after batch {n}", line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with psycopg.connect(db.dsn) as conn:
        assert bulk_left(conn) == (True, 0, 6)  # what the kill left: the next pass must finish it
        assert conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] > 0
    again = cli(
        "index", "--home", str(workdir / "home"), "--json", env=make_env(workdir, db.dsn, db.reader_dsn, "never")
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["bulk"] == "done"  # continued although this pass would not start one
    with psycopg.connect(db.dsn) as conn:
        assert bulk_left(conn) == (False, 2, 0)
        assert catalogue_rows(conn) == want


def test_sigterm_stops_a_bulk_load_at_a_batch_boundary_and_says_so(db, workdir, reference):
    env = make_env(workdir, db.dsn, db.reader_dsn, "always")
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(workdir / "home"), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] == 0:
            assert proc.poll() is None and time.monotonic() < deadline, "the pass ended before the signal"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "Traceback" not in err, err
        summary = json.loads(out)
        assert summary["interrupted"] is True and summary["bulk"] == "unfinished"
        assert "bulk load stopped at a batch boundary" in err
        assert 0 < summary["batches"] < reference[1]
        assert conn.execute("SELECT status FROM ah.index_run ORDER BY id DESC LIMIT 1").fetchone()[0] == "interrupted"
        assert bulk_left(conn) == (True, 0, 6)
    assert json.loads(cli("status", "--json", env=env).stdout)["bulk_pass"] is not None
    assert "bulk load unfinished (started " in cli("status", env=env).stdout
    # what was loaded is searchable now: the stop recomputed the term statistics (a newcomer found
    # "no matches" here), and search says the bulk load is unfinished
    with psycopg.connect(db.dsn) as conn:
        words = (
            conn.execute(
                "SELECT text FROM ah.message WHERE message_class = 'human_prompt' AND length(text) > 40 ORDER BY id LIMIT 1"
            )
            .fetchone()[0]
            .split()[:4]
        )
        corpus_docs = conn.execute("SELECT doc_count FROM ah.search_corpus WHERE corpus = 'message'").fetchone()[0]
        assert corpus_docs == conn.execute("SELECT count(*) FROM ah.message WHERE length(tsv) > 0").fetchone()[0]
    found = cli("search", " ".join(words), "--mode", "keyword", "--json", env=env)
    assert found.returncode == 0, found.stdout + found.stderr
    result = json.loads(found.stdout)
    assert result["hits"] and "stopped during a bulk load" in result["note"]
    again = cli("index", "--home", str(workdir / "home"), "--json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["bulk"] == "done"
    with psycopg.connect(db.dsn) as conn:
        assert catalogue_rows(conn) == reference[0]
    assert json.loads(cli("status", "--json", env=env).stdout)["bulk_pass"] is None


def test_an_indexer_that_does_not_own_the_tables_loads_incrementally(db, workdir):
    from agent_history.db.roles import WRITER
    from agent_history.ingest.loader import Loader
    from tests.homes import sources_for

    with psycopg.connect(db.server.dsn(db.name, user=WRITER), autocommit=True) as conn:
        summary = Loader(conn, bulk="always", batch_lines=100_000).run(sources_for(workdir / "home"))
    assert summary.files_failed == 0 and summary.bulk is None and summary.rows_new["message"] > 500
    with psycopg.connect(db.dsn) as conn:
        assert bulk_left(conn) == (False, 2, 0)
        assert conn.execute("SELECT count(*) FROM ah.search_term").fetchone()[0] > 1000  # kept per batch
