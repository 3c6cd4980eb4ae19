"""The loader's write pipeline (docs/design.md §7, docs/performance.md decision 7): the parsing
thread encodes each batch (`writer.encode_parts`), a queue bounded by bytes hands it over
(`batch_queue.BatchQueue`), the writer thread only sends it (`writer.send`)."""

from __future__ import annotations

import json
import re
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from agent_history.db.tables.source_files import register_files
from agent_history.ingest.batch_queue import BatchQueue
from agent_history.ingest.loader import Loader
from agent_history.ingest.search_ready import analysis_of, ready_of
from agent_history.ingest.writer import Part, encode_parts, send, write_parts
from agent_history.model.rows import MessageRow, SessionRow
from tests.catalogue_rows import user_message
from tests.homes import copy_home, sources_for

# -- the byte-bounded queue ----------------------------------------------------------------------


def _blocks(action) -> threading.Thread:
    """Run `action` in a thread; return it (alive while `action` blocks)."""
    t = threading.Thread(target=action, daemon=True)
    t.start()
    t.join(0.3)
    return t


def test_a_put_waits_while_the_queue_holds_its_bound_in_bytes():
    q: BatchQueue[str] = BatchQueue(max_bytes=100)
    q.put("a", 60)
    q.put("b", 60)  # 60 < 100 queued: admitted (the bound is reached now: 120)
    third = _blocks(lambda: q.put("c", 1))
    assert third.is_alive()  # 120 ≥ 100 queued: the producer waits
    assert q.get() == "a"  # 60 queued again: room
    third.join(2)
    assert not third.is_alive()
    assert [q.get(), q.get()] == ["b", "c"]
    assert q.peak_bytes == 120


def test_an_empty_queue_takes_a_batch_larger_than_its_bound():
    q: BatchQueue[str] = BatchQueue(max_bytes=10)
    q.put("huge", 1_000)  # must not block the pass
    assert q.get() == "huge"


def test_join_waits_until_every_batch_taken_is_marked_done():
    q: BatchQueue[str] = BatchQueue(max_bytes=10)
    q.put("a", 1)
    assert q.get() == "a"
    waiter = _blocks(q.join)
    assert waiter.is_alive()  # taken but not yet written
    q.task_done()
    waiter.join(2)
    assert not waiter.is_alive()


# -- encoding --------------------------------------------------------------------------------------


def _message(uid: str, text: str, session: str = "s1") -> MessageRow:
    """`catalogue_rows.user_message` with one attachment (the encoding carries it as JSON)."""
    return user_message(uid, text, session, attachments=[{"media_type": "image/png", "bytes": 12}])


def test_a_repeated_document_is_analysed_once_per_batch():
    memo: dict[str, tuple[str, str]] = {}
    first = analysis_of(_message("m1", "fooBar baz_qux"), memo)
    again = analysis_of(_message("m2", "fooBar baz_qux", session="s2"), memo)
    assert again is first  # the memo's value, not a second analysis
    assert list(memo) == ["fooBar baz_qux"]
    assert first == ready_of(_message("m1", "fooBar baz_qux"))


def _unescape(field: str) -> str | None:
    """A COPY text field's value (``\\N`` = NULL; backslash escapes)."""
    escapes = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}
    return None if field == "\\N" else re.sub(r"\\(.)", lambda m: escapes[m.group(1)], field)


def test_encoded_rows_are_copy_text_with_their_search_text_and_source():
    text = "tab\there\nnew line back\\slash é"
    encoded = encode_parts([Part(7, "claude-local", [_message("m1", text)])])
    tables = dict(encoded.tables)
    assert set(tables) == {MessageRow, SessionRow}  # the stub session the event names
    (line,) = bytes(tables[MessageRow]).decode().split("\n")[:-1]  # one row, ended by a newline
    raw = line.split("\t")
    assert "tab\\there\\nnew line back\\\\slash é" in raw  # escaped as COPY text
    fields = [_unescape(f) for f in raw]
    assert fields[-5:] == ["7", "claude-local", *ready_of(_message("m1", text)), None]  # no vector: merge computes it
    assert text in fields and "2026-01-02 03:04:05+00:00" in fields
    assert '[{"media_type": "image/png", "bytes": 12}]' in fields  # jsonb as psycopg dumps it
    assert encoded.source_ids == (7,) and encoded.nbytes == sum(len(d) for d in tables.values())


def _source(conn: psycopg.Connection) -> int:
    """A registered source file's id (what every staged row names)."""
    ((_, source_id),) = register_files(
        conn, "h", ["/x.jsonl"], ["claude-local"], ["claude"], ["main"], ["local"], [None], [1]
    )
    return source_id


def test_encoded_then_sent_rows_read_back_exactly(db):
    text = "tab\there\nnew line back\\slash é — 中文"
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        source_id = _source(conn)
        encoded = encode_parts([Part(source_id, "claude-local", [_message("m1", text), _message("m2", "same")])])
        with conn.transaction():
            written = send(conn, encoded)
        stored = conn.execute(
            "SELECT text, ts, attachments, tsv = ah.message_tsv(text) FROM ah.message ORDER BY message_uid"
        ).fetchall()
    assert written.new["message"] == 2 and written.new["session"] == 1
    assert stored == [
        (text, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), [{"media_type": "image/png", "bytes": 12}], True),
        ("same", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), [{"media_type": "image/png", "bytes": 12}], True),
    ]


def test_write_parts_is_encode_then_send(db):
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        source_id = _source(conn)
        with conn.transaction():
            written = write_parts(conn, [Part(source_id, "claude-local", [_message("m1", "hello")])])
        again = encode_parts([Part(source_id, "claude-local", [_message("m1", "hello")])])
        with conn.transaction():
            rewritten = send(conn, again)  # the same row re-observed: nothing new, nothing changed
    assert (written.new["message"], rewritten.new["message"], rewritten.merged["message"]) == (1, 0, 0)


# -- the loader ------------------------------------------------------------------------------------


@pytest.fixture
def home(corpus_home, tmp_path) -> Path:
    return copy_home(corpus_home, tmp_path / "home")


def test_the_writer_thread_runs_no_python_encoding(db, home):
    """The writer thread sends and waits: no fold, no search-text analysis, no row values or
    COPY encoding runs in it (they run in the parsing thread, before the batch is queued). The
    thread switch interval the pass shortens for it is restored after the pass."""
    called: set[tuple[str, str]] = set()

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            called.add((Path(code.co_filename).name, code.co_name))

    def start_profiling(*_) -> None:
        sys.setprofile(profile if threading.current_thread().name == "ah-writer" else None)

    interval = sys.getswitchinterval()
    threading.setprofile(start_profiling)  # a thread's first event replaces it
    try:
        with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
            summary = Loader(conn, writer_conn=writer, batch_lines=200).run(sources_for(home))
    finally:
        threading.setprofile(None)
    assert summary.files_failed == 0 and summary.batches > 5
    assert sys.getswitchinterval() == interval  # shortened only while the writer thread ran
    assert ("writer.py", "send") in called  # the profile saw the writer thread's work
    forbidden = {
        ("writer.py", "encode_parts"),
        ("writer.py", "_fold_parts"),
        ("merge.py", "fold"),
        ("search_ready.py", "analysis_of"),
        ("search_text.py", "ready"),
        ("search_text.py", "search_text"),
        ("redaction.py", "redact_rows"),
    }
    assert called & forbidden == set()


def _refused_file(home: Path) -> Path:
    """A Claude Code transcript of `home` with one more user message, holding a marker the test's
    redaction refuses."""
    candidates = sorted((home / ".claude").rglob("*.jsonl"), key=lambda p: (p.stat().st_size, str(p)))
    path, first = next(
        (p, json.loads(lines[0]))
        for p in candidates
        if (lines := p.read_bytes().splitlines()) and b'"sessionId"' in lines[0]
    )
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": first.get("cwd", "/x"),
        "sessionId": first["sessionId"],
        "version": "2.0.5",
        "type": "user",
        "message": {"role": "user", "content": "REFUSED-BY-REDACTION"},
        "uuid": "0b0b0b0b-1111-4222-8333-444444444444",
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    end = b"" if path.read_bytes().endswith(b"\n") else b"\n"
    with path.open("ab") as fh:
        fh.write(end + json.dumps(line).encode() + b"\n")
    return path


def _redact(text: str) -> str:
    if "REFUSED-BY-REDACTION" in text:
        raise ValueError("this redaction refuses the marker")
    return text


@pytest.mark.parametrize("pipelined", [False, True], ids=["one connection", "writer thread"])
def test_a_file_whose_rows_cannot_be_encoded_is_recorded_and_the_others_load(db, home, pipelined):
    bad = _refused_file(home)
    with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
        loader = Loader(conn, writer_conn=writer if pipelined else None, redact=_redact)
        summary = loader.run(sources_for(home))
        status, offset = conn.execute(
            "SELECT status, indexed_offset FROM ah.source_file WHERE path = %s", (str(bad),)
        ).fetchone()
        detail = conn.execute("SELECT detail FROM ah.parse_issue WHERE kind = 'load_error'").fetchone()[0]
        others = conn.execute("SELECT count(*) FROM ah.source_file WHERE status = 'ok'").fetchone()[0]
    assert summary.files_failed == 1
    assert (status, offset) == ("error", 0)
    assert detail == "ValueError: this redaction refuses the marker"
    assert others == len(list(home.rglob("*.jsonl"))) - 1
