"""A file touch keyed by the digest of its key (migration 0029_touch_keys, `db.tables.merges.KEY_DIGESTS`):
``ah.file_touch`` stores ``touch_key = ah.key_digest(touch_uid)`` — the first 16 bytes of the
SHA-256 of ``<tool call uid>:<op>:<path>`` — instead of the text, and the merges, the purge and
the claims compare digests. The touches still dedupe exactly: read again from the same file, from
a resumed session's copy in another file (in every reading order), and a document that no longer
holds one loses exactly that one. Records from a real corpus transcript; the real loader and the
embedded server."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from agent_history.db.migrate import downgrade, upgrade
from agent_history.db.tables.merges import purge_missing_many
from agent_history.ingest.rebuild import rebuild
from agent_history.model.rows import FileTouchRow
from agent_history.parsers.claude_code.parser import PARSER, uuid_digest
from agent_history.parsers.common.shell import touch_uid
from agent_history.read.touched import touched
from agent_history.read.why import why
from tests.corpus_db import corpus_rw_db  # noqa: F401 - fixture
from tests.homes import index, sources_for
from tests.parsers.util import parse_file
from tests.resume_copies import PROJECT, REAL, fresh, later  # noqa: F401 - fixture
from tests.snapshot import snapshot

LINES = 60
"""The real transcript's first lines: they hold 11 file touches of 11 tool calls (9 reads, the
``create`` of CLAUDE.md, then an ``edit`` of it)."""
A = "ffffffff-ffff-4fff-8fff-0000000000a1"  # the original
B = "00000000-0000-4000-8000-0000000000b1"  # its resume: copies A's records, then one more prompt

TOUCH_ROWS = (
    "SELECT s.session_uid, f.touch_key, f.tool_call_uid, f.op, f.path, f.ts, f.byte_offset, f.line_number "
    "FROM ah.file_touch f JOIN ah.session s ON s.id = f.session_id ORDER BY f.byte_offset, f.op, f.path"
)


def key_digest(text: str) -> uuid.UUID:
    """``ah.key_digest`` in Python: the first 16 bytes of the SHA-256 of `text` (UTF-8)."""
    return uuid.UUID(bytes=hashlib.sha256(text.encode("utf-8")).digest()[:16])


def _original_lines(corpus_home: Path) -> list[dict]:
    return [json.loads(x) for x in (corpus_home / REAL).read_text().splitlines()[:LINES]]


def _files(corpus_home: Path) -> dict[str, str]:
    """A: the real transcript's first `LINES` records under session A; B: the same records under
    session B (a resume's copies) and one prompt an hour later."""
    lines = _original_lines(corpus_home)
    prompt = next(r for r in lines if r.get("type") == "user" and isinstance(r["message"].get("content"), str))
    more = {
        **prompt,
        "sessionId": B,
        "uuid": "0b000000-0000-4000-8000-0000000000b2",
        "parentUuid": lines[-1]["uuid"],
        "timestamp": later(lines[-1]["timestamp"], 1),
        "message": {**prompt["message"], "content": "now add a test for it"},
    }
    a = [{**r, "sessionId": A} if "sessionId" in r else r for r in lines]
    b = [{**r, "sessionId": B} if "sessionId" in r else r for r in lines] + [more]
    return {A: "".join(json.dumps(r) + "\n" for r in a), B: "".join(json.dumps(r) + "\n" for r in b)}


def _expected(corpus_home: Path, tmp: Path) -> list[tuple]:
    """The rows of `TOUCH_ROWS` the parser's touches of file A give, all owned by session A."""
    path = tmp / "a.jsonl"
    path.write_text(_files(corpus_home)[A])
    rows = list(parse_file(PARSER, path).get(FileTouchRow, {}).values())
    got = [
        (A, key_digest(r.touch_uid), r.tool_call_uid, r.op, r.path, r.ts, r.byte_offset, r.line_number) for r in rows
    ]
    return sorted(got, key=lambda r: (r[6], r[3], r[4]))


def _write(home: Path, uids: list[str], files: dict[str, str]) -> None:
    project = home / PROJECT
    project.mkdir(parents=True, exist_ok=True)
    for uid in uids:
        (project / f"{uid}.jsonl").write_text(files[uid])


def test_the_touches_of_a_real_transcript_are_stored_once_by_digest_as_the_parser_gave_them(
    corpus_home,
    own_tmp,
    fresh,  # noqa: F811
):
    files, expected = _files(corpus_home), _expected(corpus_home, own_tmp)
    assert (len(expected), sorted({r[3] for r in expected})) == (11, ["create", "edit", "read"])
    db = fresh()
    _write(own_tmp / "home", [A], files)
    first = index(db, own_tmp / "home")
    # the same file read again under another name (a copy the harness left beside it)
    (own_tmp / "home" / PROJECT / "copy-of-a.jsonl").write_text(files[A])
    again = index(db, own_tmp / "home")
    with psycopg.connect(db.dsn) as conn:
        assert conn.execute(TOUCH_ROWS).fetchall() == expected
        # the SQL digest is the Python one, on every stored key
        stored = conn.execute("SELECT ah.key_digest(%s)", (touch_uid(expected[0][2], expected[0][3], expected[0][4]),))
        assert stored.fetchone()[0] == expected[0][1]
        cols = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'ah' AND table_name = 'file_touch'"
        )
        names = {r[0] for r in conn.execute(cols)}
    assert ("touch_key" in names, "touch_uid" in names) == (True, False)
    assert (first.rows_new["file_touch"], again.files_changed, again.rows_new["file_touch"]) == (11, 1, 0)
    assert again.rows_merged["file_touch"] == 0


def test_touches_copied_by_a_resume_merge_into_the_originals_rows_in_every_reading_order(corpus_home, own_tmp, fresh):  # noqa: F811
    files, expected = _files(corpus_home), _expected(corpus_home, own_tmp)
    got = {}
    for name, passes in {"one pass": [[A, B]], "A then B": [[A], [A, B]], "B then A": [[B], [A, B]]}.items():
        home = own_tmp / name.replace(" ", "-")
        db = fresh()
        for present in passes:
            _write(home, present, files)
            index(db, home)
        with psycopg.connect(db.dsn) as conn:
            got[name] = (conn.execute(TOUCH_ROWS).fetchall(), snapshot(conn))
            claimed = conn.execute("SELECT count(DISTINCT row_id) FROM ah.row_claim WHERE row_table = 'file_touch'")
            assert claimed.fetchone()[0] == 11, name  # each touch claimed by both sessions
        if name == "one pass":
            with psycopg.connect(db.dsn, autocommit=True) as conn:
                rebuild(conn, sources_for(home), [])
                got["rebuild"] = (conn.execute(TOUCH_ROWS).fetchall(), snapshot(conn))
    # the same 11 touches, once each, owned by the original (started together, ended first)
    for name, (touches, snap) in got.items():
        assert touches == expected, name
        assert snap == got["one pass"][1], name


def test_a_document_that_no_longer_holds_a_touch_loses_exactly_that_one(corpus_home, own_tmp, fresh):  # noqa: F811
    files, expected = _files(corpus_home), _expected(corpus_home, own_tmp)
    db = fresh()
    _write(own_tmp / "home", [A], files)
    index(db, own_tmp / "home")
    path = own_tmp / "a.jsonl"
    rows = [r for rs in parse_file(PARSER, path).values() for r in rs.values()]
    gone = next(r for r in rows if isinstance(r, FileTouchRow) and r.op == "create")
    with psycopg.connect(db.dsn) as conn:
        (source_id,) = conn.execute("SELECT id FROM ah.source_file WHERE path LIKE %s", (f"%{A}.jsonl",)).fetchone()
        deleted = purge_missing_many(conn, [(source_id, [r for r in rows if r is not gone])])
        left = conn.execute(TOUCH_ROWS).fetchall()
        conn.rollback()
    assert deleted == 1
    assert left == [r for r in expected if r[1] != key_digest(gone.touch_uid)]
    assert len(left) == 10


TOUCHES_BY_ID = (
    "SELECT id, agent, touch_key, session_id, source_id, tool_call_uid, path, op, ts, byte_offset, line_number "
    "FROM ah.file_touch ORDER BY id"
)


def _answers(conn: psycopg.Connection, commits: bool = True) -> tuple[list[dict], dict[str, list[dict]] | None]:
    """`touched` over every path (``**``) and `why` of every commit or push sha the catalogue holds
    (None without `commits`)."""
    listing = [t.as_dict() for t in touched(conn, "**", limit=10_000, touches_per_session=10_000)]
    if not commits:
        return listing, None
    shas = [r[0] for r in conn.execute("SELECT DISTINCT sha FROM ah.git_event WHERE sha IS NOT NULL ORDER BY 1")]
    return listing, {sha: [o.as_dict() for o in why(conn, sha)] for sha in shas}


def _other_states(conn: psycopg.Connection, but: int) -> list[tuple[int, dict | None]]:
    """The parser state of every source file but `but`, without the digests the downgrade empties."""
    rows = conn.execute("SELECT id, parser_state FROM ah.source_file WHERE id <> %s ORDER BY id", (but,))
    return [(i, s and {k: v for k, v in s.items() if k not in ("seen", "seen_digests")}) for i, s in rows]


def test_the_migration_keys_a_catalogue_with_rows_by_digest_and_the_answers_stay_the_same(corpus_rw_db):  # noqa: F811
    db = corpus_rw_db  # the corpus indexed at head
    with db.connect() as conn:
        at_head = conn.execute(TOUCHES_BY_ID).fetchall()
        answers = _answers(conn)
        (claude_file,) = conn.execute("SELECT min(id) FROM ah.source_file WHERE agent = 'claude'").fetchone()
        others = _other_states(conn, claude_file)
    listing, commits = answers
    assert (len(at_head), sum(sum(t["ops"].values()) for t in listing), len(commits)) == (880, 880, 50)
    downgrade(db.dsn, "0028_term_ids")
    with db.connect() as conn:
        keys = conn.execute("SELECT id, touch_uid, tool_call_uid, op, path FROM ah.file_touch ORDER BY id").fetchall()
        # the text key comes back as the parsers build it, the digest of which head stored
        assert [(i, k) for i, k, *_ in keys] == [(i, touch_uid(t, o, p)) for i, _, t, o, p in keys]
        assert [key_digest(k) for _, k, *_ in keys] == [r[2] for r in at_head]
        # `touched` here; `why` reads a commit's tool call by ``ah.key_digest`` (0030_key_digests),
        # which this revision does not have yet: its answers are compared at 0029_touch_keys below
        assert _answers(conn, commits=False) == (listing, None)
        # a Claude Code file's state as saved before: its last record uuids as JSON strings
        state = conn.execute("SELECT parser_state FROM ah.source_file WHERE id = %s", (claude_file,)).fetchone()[0]
        assert state["seen"] == []  # the digests could not be turned back into uuids
        seen = ["0b9e1308-b4bb-2aee-c641-d2d8014e30eb", 7, "été-ü", "a1"]
        conn.execute(
            "UPDATE ah.source_file SET parser_state = %s WHERE id = %s", (Jsonb({**state, "seen": seen}), claude_file)
        )
        conn.commit()
    upgrade(db.dsn, "0029_touch_keys")
    with db.connect() as conn:
        assert conn.execute(TOUCHES_BY_ID).fetchall() == at_head
        assert _answers(conn) == answers
    upgrade(db.dsn)
    with db.connect() as conn:
        assert conn.execute(TOUCHES_BY_ID).fetchall() == at_head
        assert _answers(conn) == answers
        state = conn.execute("SELECT parser_state FROM ah.source_file WHERE id = %s", (claude_file,)).fetchone()[0]
        assert _other_states(conn, claude_file) == others
    # the SQL digests are the parser's (`uuid_digest`), in the same order; the number was never a uuid
    packed = base64.b64encode(b"".join(uuid_digest(u) for u in ("0b9e1308-b4bb-2aee-c641-d2d8014e30eb", "été-ü", "a1")))
    assert (state["seen_digests"], "seen" in state) == (packed.decode(), False)
