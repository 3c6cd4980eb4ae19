"""Loader (docs/design.md §7): real database, real transcript files."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import iter_files
from agent_history.ingest.loader import INDEX_LOCK, AnotherPassRunning, Loader
from agent_history.ingest.rebuild import truncate_derived
from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow, ModelCallRow, SessionRow, ToolCallRow
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes
from tests.homes import copy_home, index, sources_for
from tests.snapshot import snapshot


def snap(db, **kw):
    with db.connect() as conn:
        return snapshot(conn, **kw)


@pytest.fixture
def home(corpus_home, tmp_path) -> Path:
    """A writable copy of the real corpus home."""
    return copy_home(corpus_home, tmp_path / "home")


def expected_rows(home: Path) -> dict:
    """Fold every discovered file's rows together, as the catalogue does (pure path)."""
    rows = []
    for source in sources_for(home):
        for ref in iter_files(source):
            ctx = ParseContext(path=ref.path, namespace=source.namespace, home=str(source.home))
            rows.extend(parse_bytes(parser_class(source.agent), ctx, Path(ref.path).read_bytes()))
    return fold(rows)


def test_corpus_indexes_with_no_load_error_and_counts_equal_the_parse(db, home):
    summary = index(db, home)
    assert summary.files_failed == 0
    assert summary.issues.get("load_error", 0) == 0
    expected = expected_rows(home)
    with db.connect() as conn:
        n_files = conn.execute("SELECT count(*) FROM ah.source_file WHERE status = 'ok'").fetchone()[0]
        counts = {
            t: conn.execute(f"SELECT count(*) FROM ah.{t}").fetchone()[0]
            for t in ("session", "message", "model_call", "tool_call")
        }
        tokens = conn.execute(
            "SELECT sum(input_uncached), sum(cache_read), sum(output) FROM ah.model_call WHERE NOT coalesce(is_api_error, false)"
        ).fetchone()
    assert n_files == len(list(home.rglob("*.jsonl")))
    assert counts == {
        "session": len(expected[SessionRow]),
        "message": len(expected[MessageRow]),
        "model_call": len(expected[ModelCallRow]),
        "tool_call": len(expected[ToolCallRow]),
    }
    billable = [c for c in expected[ModelCallRow].values() if not c.is_api_error]
    assert tuple(int(x or 0) for x in tokens) == (
        sum(c.input_uncached or 0 for c in billable),
        sum(c.cache_read or 0 for c in billable),
        sum(c.output or 0 for c in billable),
    )


def test_second_pass_reads_zero_bytes_and_changes_nothing(db, home):
    index(db, home)
    before = snap(db)
    again = index(db, home)
    assert (again.bytes_read, again.files_changed, sum(again.rows.values())) == (0, 0, 0)
    assert snap(db) == before


def _largest(home: Path) -> Path:
    return max(home.rglob("*.jsonl"), key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("cut", ["line_boundary", "mid_line"])
def test_appending_in_two_halves_equals_indexing_whole(db, pg_server, home, tmp_path, cut):
    whole_db = db
    index(whole_db, home)
    expected = snap(whole_db)

    target = _largest(home)
    data = target.read_bytes()
    half = len(data) // 2
    if cut == "line_boundary":
        half = data.index(b"\n", half) + 1
    target.write_bytes(data[:half])
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        truncate_derived(conn)
    index(db, home)
    with open(target, "ab") as fh:
        fh.write(data[half:])
    second = index(db, home)
    assert second.files_changed == 1
    assert second.issues.get("source_rewritten", 0) == 0
    assert snap(db) == expected


def test_rewrite_truncate_and_torn_line_are_handled_without_stale_rows(db, home):
    files = sorted(home.rglob("*.jsonl"), key=lambda p: p.stat().st_size, reverse=True)
    rewritten, truncated, torn = files[0], files[1], files[2]
    index(db, home)

    # rewrite the middle of one file (a line dropped there, the file grown at the end: only the
    # checkpoint hash can tell), truncate another, tear the last line of a third
    data = rewritten.read_bytes()
    mid = data.index(b"\n", len(data) // 2) + 1
    nxt = data.index(b"\n", mid) + 1
    last = data[data.rindex(b"\n", 0, len(data) - 1) + 1 :]
    rewritten.write_bytes(data[:mid] + data[nxt:] + last + last)
    assert rewritten.stat().st_size > len(data)
    tdata = truncated.read_bytes()
    cut = tdata.index(b"\n", len(tdata) // 3) + 1
    truncated.write_bytes(tdata[:cut])
    tail = b'{"type":"user","message":{"role":"user","content":"torn'
    with open(torn, "ab") as fh:
        fh.write(tail)

    summary = index(db, home)
    assert summary.issues["source_rewritten"] == 2
    with db.connect() as conn:
        issues = Counter(
            (Path(p).name, k)
            for p, k in conn.execute(
                "SELECT f.path, i.kind FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
                "WHERE i.kind IN ('source_rewritten', 'invalid_json', 'load_error')"
            )
        )
        torn_offset = conn.execute(
            "SELECT indexed_offset FROM ah.source_file WHERE path = %s", (str(torn),)
        ).fetchone()[0]
    assert issues == Counter({(rewritten.name, "source_rewritten"): 1, (truncated.name, "source_rewritten"): 1})
    assert torn_offset == torn.stat().st_size - len(tail)

    # the catalogue equals a fresh index of the files as they now are (minus the torn tail)
    after = snap(db, include_issues=False)
    with open(torn, "ab") as fh:
        fh.write(b'"}}\n')
    index(db, home)
    complete = snap(db, include_issues=False)
    assert after != complete  # the completed line added a message
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        truncate_derived(conn)
    index(db, home)
    assert snap(db, include_issues=False) == complete


def test_second_concurrent_pass_is_refused_while_the_lock_is_held(db, home):
    with psycopg.connect(db.dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (INDEX_LOCK,))
        with pytest.raises(AnotherPassRunning, match="another index pass is running"):
            index(db, home)
    assert index(db, home).files_changed == len(list(home.rglob("*.jsonl")))


@pytest.mark.parametrize("pipelined", [False, True])
def test_a_failing_file_is_rolled_back_recorded_and_skipped(db, home, monkeypatch, pipelined):
    from agent_history.ingest import writer as writer_mod  # the loader looks it up per batch

    bad = _largest(home)
    real = writer_mod.send  # the server half of every batch's write

    def failing(conn, encoded):
        for source_id in encoded.source_ids:
            path = conn.execute("SELECT path FROM ah.source_file WHERE id = %s", (source_id,)).fetchone()[0]
            if path == str(bad):
                conn.execute("SELECT 1/0")
        return real(conn, encoded)

    monkeypatch.setattr(writer_mod, "send", failing)
    if pipelined:
        with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
            summary = Loader(conn, writer_conn=writer).run(sources_for(home))
    else:
        summary = index(db, home)
    assert summary.files_failed == 1
    with db.connect() as conn:
        status, err, offset = conn.execute(
            "SELECT status, last_error, indexed_offset FROM ah.source_file WHERE path = %s", (str(bad),)
        ).fetchone()
        detail = conn.execute("SELECT detail FROM ah.parse_issue WHERE kind = 'load_error'").fetchone()[0]
        others = conn.execute("SELECT count(*) FROM ah.source_file WHERE status = 'ok'").fetchone()[0]
    assert (status, offset) == ("error", 0)
    assert "SQLSTATE 22012" in detail and "SQLSTATE 22012" in err
    assert others == len(list(home.rglob("*.jsonl"))) - 1


def test_symlinks_unreadable_names_and_missing_files_are_reported_not_indexed(db, home):
    projects = home / ".claude" / "projects"
    target = _largest(home)
    (projects / "-linked").mkdir()
    (projects / "-linked" / "link.jsonl").symlink_to(target)
    bad_dir = Path(os.fsdecode(bytes(projects) + b"/-bad-\xff\xfe"))
    bad_dir.mkdir()
    shutil.copy(target, bad_dir / "x.jsonl")
    summary = index(db, home)
    assert summary.files_failed == 0
    assert sorted(line.rsplit(": ", 1)[1] for line in summary.skipped_paths) == [
        "name is not valid UTF-8",
        "symlink (not followed)",
    ]
    assert summary.files_scanned == len(list(home.rglob("*.jsonl"))) - 2


def test_a_file_that_loads_again_clears_its_load_error(db, home, monkeypatch):
    from agent_history.ingest import writer as writer_mod

    bad = _largest(home)
    real = writer_mod.send

    def failing(conn, encoded):
        if any(
            conn.execute("SELECT path FROM ah.source_file WHERE id = %s", (source_id,)).fetchone()[0] == str(bad)
            for source_id in encoded.source_ids
        ):
            conn.execute("SELECT 1/0")
        return real(conn, encoded)

    monkeypatch.setattr(writer_mod, "send", failing)
    assert index(db, home).files_failed == 1
    monkeypatch.setattr(writer_mod, "send", real)
    bad.touch()  # a new mtime: the file is looked at again
    assert index(db, home).files_failed == 0
    with db.connect() as conn:
        kinds = [r[0] for r in conn.execute("SELECT kind FROM ah.parse_issue WHERE kind = 'load_error'")]
        status = conn.execute("SELECT status FROM ah.source_file WHERE path = %s", (str(bad),)).fetchone()[0]
    assert (kinds, status) == ([], "ok")


def test_the_pipelined_writer_builds_the_same_catalogue_as_writing_inline(db, home):
    index(db, home, batch_lines=50)
    inline = snap(db)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        truncate_derived(conn)
    with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
        summary = Loader(conn, writer_conn=writer, batch_lines=50).run(sources_for(home))
    assert summary.files_failed == 0
    assert snap(db) == inline
