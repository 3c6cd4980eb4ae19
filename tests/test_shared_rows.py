"""A transcript copied under another session id keeps its message uuids, ``message.id`` and
tool-use ids, so its rows are the original's and belong to one session by the owner rule
(docs/design.md §7; `db.tables.claims`). The copy then says where its rows are counted — the
`session` view (text and ``--json``), the web session page, `usage` (not "no usage recorded")
and one ``rows_shared`` parse issue per copy — instead of showing none. A real corpus transcript,
copied into two more project directories of one home: whole (only ``sessionId`` changed) and as
a fork (every record ``uuid`` new too, so only its model calls and tool calls are shared); the
real loader, the CLI and the web server in subprocesses."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_history.read.shared import SharedRows, shared_elsewhere
from tests.conftest import clone_database, drop_database
from tests.homes import cli, index
from tests.test_web import Served, _env

PROJECT = ".claude/projects/-Users-user1-workspace-JSSoundRecorder"
ORIGINAL = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"
WHOLE = "fffffffe-ffff-4fff-8fff-00000000c0de"  # sorts after the original: the original owns the rows
FORK = "ffffffff-ffff-4fff-8fff-0000000f0c0d"


def _with_session(text: str, uid: str) -> str:
    out = text.replace(f'"sessionId": "{ORIGINAL}"', f'"sessionId": "{uid}"')
    return out.replace(f'"sessionId":"{ORIGINAL}"', f'"sessionId":"{uid}"')


def _with_new_uuids(text: str) -> str:
    """Every record ``uuid`` (and each reference to it) replaced by a fresh one."""
    for record in map(json.loads, text.splitlines()):
        if isinstance(record.get("uuid"), str):
            text = text.replace(record["uuid"], str(uuid.uuid5(uuid.NAMESPACE_URL, record["uuid"])))
    return text


@pytest.fixture(scope="module")
def copied(corpus_home, pg_server, tmp_path_factory):
    """(test database, home): the original transcript in its project directory, its whole copy
    and its fork in two more, indexed in one pass."""
    home = tmp_path_factory.mktemp("shared-rows") / "home"
    text = (corpus_home / PROJECT / f"{ORIGINAL}.jsonl").read_text()
    for project, uid, body in (
        (PROJECT, ORIGINAL, text),
        (f"{PROJECT}-copy", WHOLE, _with_session(text, WHOLE)),
        (f"{PROJECT}-fork", FORK, _with_new_uuids(_with_session(text, FORK))),
    ):
        (home / project).mkdir(parents=True)
        (home / project / f"{uid}.jsonl").write_text(body)
    db = clone_database(pg_server)
    assert index(db, home).files_failed == 0
    yield db, home
    drop_database(db)


def _cli_env(db, tmp: Path) -> dict[str, str]:
    return {**_env(tmp, db.dsn, db.reader_dsn), "AGENT_HISTORY_QUERY_IDLE_S": "0"}


def _session_id(conn: psycopg.Connection, uid: str) -> int:
    return conn.execute("SELECT id FROM ah.session WHERE session_uid = %s AND agent_id = ''", (uid,)).fetchone()[0]


def test_the_copies_name_the_session_that_counts_their_rows(copied):
    db, _ = copied
    with db.connect() as conn:
        counts = dict(
            conn.execute(
                "SELECT session_uid, ARRAY[message_count, coalesce(model_call_count, -1)] FROM ah.session "
                "WHERE agent_id = ''"
            ).fetchall()
        )
        shared = {uid: shared_elsewhere(conn, _session_id(conn, uid)) for uid in (ORIGINAL, WHOLE, FORK)}
    # the original owns every shared row; the whole copy keeps nothing, the fork its own messages
    # (new uuids) and no call (-1: model_call_count NULL, replies without a call of its own)
    assert counts == {ORIGINAL: [59, 36], WHOLE: [0, 0], FORK: [59, -1]}
    assert shared == {
        ORIGINAL: [],
        WHOLE: [SharedRows(ORIGINAL, "", 36, 59)],
        FORK: [SharedRows(ORIGINAL, "", 36, 0)],
    }


def test_one_rows_shared_issue_per_copy_names_the_owner_and_the_counts(copied):
    db, home = copied
    with db.connect() as conn:
        issues = conn.execute(
            "SELECT f.path, i.byte_offset, i.detail FROM ah.parse_issue AS i "
            "JOIN ah.source_file AS f ON f.id = i.source_id WHERE i.kind = 'rows_shared' ORDER BY f.path"
        ).fetchall()
    # at each copy's session position: its first conversation record, after the queue operations
    assert [(Path(p).relative_to(home).as_posix(), off, d) for p, off, d in issues] == [
        (
            f"{PROJECT}-copy/{WHOLE}.jsonl",
            321,
            f"36 model calls / 59 messages shared with session {ORIGINAL} (counted there)",
        ),
        (
            f"{PROJECT}-fork/{FORK}.jsonl",
            321,
            f"36 model calls / 0 messages shared with session {ORIGINAL} (counted there)",
        ),
    ]


def test_session_view_says_where_the_rows_are_counted(copied, tmp_path):
    db, _ = copied
    env = _cli_env(db, tmp_path)
    text = cli("session", WHOLE, env=env)
    assert text.returncode == 0, text.stderr
    assert f"36 model calls / 59 messages shared with session {ORIGINAL} (counted there)" in text.stdout
    as_json = cli("session", FORK, "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["shared_elsewhere"] == [
        {"session_uid": ORIGINAL, "agent_id": "", "model_calls": 36, "messages": 0}
    ]
    original = json.loads(cli("session", ORIGINAL, "--json", env=env).stdout)
    assert original["shared_elsewhere"] == []


def test_usage_counts_the_copies_apart_from_sessions_without_usage(copied, tmp_path):
    db, _ = copied
    env = _cli_env(db, tmp_path)
    r = cli("usage", "session", "--json", env=env)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    # the fork's replies have no call of their own: its calls are the original's, not unknown
    assert report["sessionsWithoutUsage"] == {}
    assert report["sessionsWithCallsElsewhere"] == {"claude": 2}
    assert report["totals"]["calls"] == 36  # each shared call counted once
    text = cli("usage", "session", env=env)
    assert text.returncode == 0, text.stderr
    assert "record no usage" not in text.stdout
    assert (
        "counted elsewhere: the model calls of 2 sessions (claude 2) are copies another session owns, "
        "counted there once" in re.sub(r"\s+", " ", text.stdout)
    )


def test_web_session_page_says_where_the_rows_are_counted(copied, tmp_path):
    db, _ = copied
    web = Served(_env(tmp_path, db.dsn, db.reader_dsn))
    try:
        page = httpx.get(f"{web.url}/session/{WHOLE}", timeout=120)
        original = httpx.get(f"{web.url}/session/{ORIGINAL}", timeout=120)
    finally:
        err = web.stop()
    assert "Traceback" not in err, err
    assert page.status_code == 200
    assert re.findall(r'<p class="shared-elsewhere muted">([^<]*)</p>', page.text) == [
        f"36 model calls / 59 messages shared with session {ORIGINAL} (counted there)"
    ]
    assert "shared-elsewhere" not in original.text


def test_sessions_listing_says_where_a_copys_rows_are_counted(copied, tmp_path):
    db, _ = copied
    env = _cli_env(db, tmp_path)
    r = cli("sessions", "--json", "--limit", "10", env=env)
    assert r.returncode == 0, r.stderr
    rows = {s["session_uid"]: s for s in json.loads(r.stdout)}
    assert (rows[WHOLE]["message_count"], rows[WHOLE]["shared_elsewhere"]) == (
        0,
        [{"session_uid": ORIGINAL, "agent_id": "", "model_calls": 36, "messages": 59}],
    )
    assert rows[FORK]["shared_elsewhere"] == [
        {"session_uid": ORIGINAL, "agent_id": "", "model_calls": 36, "messages": 0}
    ]
    assert rows[ORIGINAL]["shared_elsewhere"] == []
    text = cli("sessions", env=env)
    assert text.returncode == 0, text.stderr
    notes = [line for line in text.stdout.splitlines() if line.startswith("note: ")]
    assert sorted(notes) == [
        f"note: {uid[:13]}: 36 model calls / {n} messages shared with session {ORIGINAL} (counted there)"
        for uid, n in ((WHOLE, 59), (FORK, 0))
    ]


def test_one_statement_counts_the_copies_as_the_two_did(copied):
    from agent_history.read.usage import sessions_uncounted

    db, _ = copied
    with db.connect() as conn:
        assert sessions_uncounted(conn) == ({}, {"claude": 2})
        # the copies keep the original's cwd (only the transcript moved)
        assert sessions_uncounted(conn, project="JSSoundRecorder") == ({}, {"claude": 2})
        assert sessions_uncounted(conn, project="no-such-project") == ({}, {})
