"""A bulk pass's search vectors computed on a second server backend (`ingest.vectors_stage`,
`db.tables.ready_vectors`; docs/performance.md, decision 9): the batch's distinct ready texts go
to the analysis connection, their vectors come back as COPY text and ride in the staged rows;
the merge stores them as sent, or computes them from the ready text when none was sent. Same
vectors either way; a failing analysis connection costs no batch."""

from __future__ import annotations

import shutil
import sys
import threading
from dataclasses import dataclass

import psycopg

from agent_history.db.tables.ready_vectors import compute_vectors, connect_like
from agent_history.db.tables.source_files import register_files
from agent_history.ingest.batch_queue import BatchQueue
from agent_history.ingest.loader import Loader
from agent_history.ingest.vectors_stage import VectorStage
from agent_history.ingest.writer import Encoded, Part, Pending, encode_parts, send
from agent_history.model.rows import MessageRow, ToolCallRow
from tests.catalogue_rows import user_message
from tests.homes import sources_for
from tests.term_form import terms_differ

NAMESPACES = (
    ".codex",
    ".claude/projects/-Users-user1-workspace-JSSoundRecorder",
    ".claude/projects/-src-experiments-claude_p",
)
"""A small home from the shared corpus: Codex and Claude Code sessions with tool calls."""


def _tool_call(uid: str, inp: str, output: str) -> ToolCallRow:
    return ToolCallRow(
        agent="claude", tool_call_uid=uid, session_uid="s1", agent_id="", name="Bash", input=inp, output=output
    )


ROWS = [
    user_message("m1", "tab\there\nnew line back\\slash é — 中文 fooBar baz_qux"),
    user_message("m2", "the same text twice"),
    user_message("m3", "the same text twice"),
    user_message("m4", "it's a 'quoted' lexeme: O'Brien \\ C:\\path"),
    user_message("m5", ""),
    _tool_call("t1", '{"command": "npm install --save-dev x"}', "added 12 packages\tok"),
    _tool_call("t2", '{"command": "ls"}', "a a a b b c"),
]


def _source(conn: psycopg.Connection) -> int:
    ((_, source_id),) = register_files(
        conn, "h", ["/x.jsonl"], ["claude-local"], ["claude"], ["main"], ["local"], [None], [1]
    )
    return source_id


def test_a_pending_batch_completed_without_vectors_is_the_plain_encoding():
    parts = [Part(7, "claude-local", ROWS)]
    plain = encode_parts(parts)
    apart = encode_parts(parts, vectors_apart=True)
    pending = dict(apart.tables)
    assert isinstance(pending[MessageRow], Pending) and isinstance(pending[ToolCallRow], Pending)
    assert len(pending[MessageRow].ends) == 5 and len(pending[MessageRow].text_ends) == 4  # one text twice
    assert pending[MessageRow].doc_of == [0, 1, 1, 2, 3]
    assert apart.with_vectors(None).tables == plain.tables
    assert set(apart.texts()) == {MessageRow, ToolCallRow} and apart.texts()[ToolCallRow][1] == 2


def test_vectors_from_the_analysis_connection_are_the_merges(db):
    with psycopg.connect(db.dsn, autocommit=True) as conn, connect_like(conn) as analysis:
        source_id = _source(conn)
        encoded = encode_parts([Part(source_id, "claude-local", ROWS)], vectors_apart=True)
        vectors = compute_vectors(analysis, encoded.texts())
        assert [len(vectors[MessageRow]), len(vectors[ToolCallRow])] == [4, 2]
        # of the vector 'b':7,8 'bash':1 'c':9 'command':2 'ls':3, the lexemes and their tf (two COPY
        # fields): the merge maps them to term ids (0028; 'a' a stop word)
        assert vectors[ToolCallRow][1] == b"{b,bash,c,command,ls}\t{2,1,1,1,1}"
        assert vectors[MessageRow][1] == b"'text':3 'twice':4"  # a message's: its vector ('same' a stop word)
        complete = encoded.with_vectors(vectors)
        lines = bytes(dict(complete.tables)[MessageRow]).split(b"\n")[:-1]
        assert all(line.split(b"\t")[-3:-1] == [b"\\N", b"\\N"] for line in lines)  # no ready text sent
        with conn.transaction():
            written = send(conn, complete)
        messages = conn.execute(
            "SELECT message_uid, tsv::text, tsv = ah.message_tsv(text) FROM ah.message ORDER BY 1"
        ).fetchall()
        tools = conn.execute(f"SELECT tool_call_uid, NOT {terms_differ()} FROM ah.tool_call ORDER BY 1").fetchall()
    assert written.new["message"] == 5 and written.new["tool_call"] == 2
    assert [m[2] for m in messages] == [True] * 5 and tools == [("t1", True), ("t2", True)]
    assert messages[4][1] == ""  # the empty text's empty vector, not NULL
    assert messages[3][1] == "'brien':7 'c':8 'lexem':5 'o':6 'path':9 'quot':4"


@dataclass(frozen=True)
class _Batch:
    encoded: Encoded | None

    @property
    def nbytes(self) -> int:
        return self.encoded.nbytes if self.encoded is not None else 0


def test_a_lost_analysis_connection_sends_the_batch_with_its_ready_text_and_says_so(db):
    parts = [Part(7, "claude-local", ROWS)]
    out: BatchQueue = BatchQueue()
    failures: list[str] = []
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        stage = VectorStage.start(conn, out, threading.Event(), failures)
        conn.execute("SELECT pg_terminate_backend(%s)", (stage.conn.info.backend_pid,))
        stage.put(_Batch(encode_parts(parts, vectors_apart=True)))
        stage.put(_Batch(encode_parts(parts, vectors_apart=True)))
        stage.join()
        stage.close()
    first, second = out.get(), out.get()
    assert first.encoded.tables == second.encoded.tables == encode_parts(parts).tables  # nothing lost
    assert len(failures) == 1 and failures[0].startswith("batch 1: vectors computed by the merge: ")
    assert stage.conn is None and stage.batches == 2  # the lost connection was not tried again


def test_a_bulk_pass_sends_vectors_from_its_second_backend(db, corpus_home, tmp_path):
    home = tmp_path / "home"
    for rel in NAMESPACES:
        shutil.copytree(corpus_home / rel, home / rel)
    called: dict[str, set[str]] = {"ah-vectors": set(), "ah-writer": set()}

    def profile(frame, event, arg):
        if event == "call":
            called[threading.current_thread().name].add(frame.f_code.co_name)

    def start_profiling(*_) -> None:
        sys.setprofile(profile if threading.current_thread().name in called else None)

    threading.setprofile(start_profiling)
    try:
        with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
            summary = Loader(conn, writer_conn=writer, batch_lines=150, bulk="always").run(sources_for(home))
            wrong = conn.execute(
                "SELECT (SELECT count(*) FROM ah.message WHERE tsv IS DISTINCT FROM ah.message_tsv(text)), "
                f"(SELECT count(*) FROM ah.tool_call WHERE {terms_differ()}), "
                "(SELECT count(*) FROM ah.message), (SELECT count(*) FROM ah.tool_call)"
            ).fetchone()
            others = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()[0]
    finally:
        threading.setprofile(None)
    assert summary.bulk == "done" and summary.batches > 5 and summary.files_failed == 0
    assert summary.vectors_fallback == [] and "vectors_fallback" not in summary.as_dict()
    assert wrong[:2] == (0, 0) and wrong[2] > 400 and wrong[3] > 100
    assert {"compute_vectors", "complete"} <= called["ah-vectors"]  # the vectors thread did the work
    assert "complete" not in called["ah-writer"] and "send" in called["ah-writer"]  # the writer only sends
    assert others == 1  # the writer's connection; the analysis connection is closed


def test_an_incremental_pass_computes_the_vectors_in_the_merge(db, corpus_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(corpus_home / NAMESPACES[1], home / NAMESPACES[1])
    names: set[str] = set()
    threading.setprofile(lambda *_: names.add(threading.current_thread().name))
    try:
        with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
            summary = Loader(conn, writer_conn=writer, bulk="never").run(sources_for(home))
            wrong = conn.execute("SELECT count(*) FROM ah.message WHERE tsv IS DISTINCT FROM ah.message_tsv(text)")
            assert wrong.fetchone()[0] == 0
    finally:
        threading.setprofile(None)
    assert summary.bulk is None and summary.files_failed == 0
    assert "ah-vectors" not in names and "ah-writer" in names


def test_the_stage_s_queue_and_the_writer_s_share_the_pass_s_bound():
    from agent_history.ingest.batch_queue import QUEUE_BYTES

    out: BatchQueue = BatchQueue()
    stage = VectorStage(None, out, threading.Event(), [])
    try:
        assert stage.queue.max_bytes + out.max_bytes == QUEUE_BYTES
    finally:
        stage.close()
