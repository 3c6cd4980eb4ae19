"""A bad record costs that record — at worst that file — never another file, namespace or the pass.

Through the real CLI and the real loader on the embedded server: the values of the field report
(a 300 KB ``sessionId``, ``cwd``, ``tool_use`` id or request id; a token count of 2^63, 1e30 or
1e308) are stored within the columns' limits with a parse issue at the record's offset; a file
the database refuses anyway is recorded with its own error while the others load; a lost
connection still stops the pass with one line.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sqlite3

import psycopg
import pytest

from agent_history.ingest.loader import Loader
from tests.bad_home import BAD, GOOD, HUGE, base_records, good_message_uids, make_home, offsets, rel_of
from tests.homes import cli, sources_for
from tests.new_formats_home import OPENCODE_EXPORT, export_to_sqlite, gemini_layout, opencode_layout

# --- the reported values, through `agent-history index --home` ----------------------------------


def _blocks(rec: dict) -> list:
    content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _session_id(rec: dict) -> bool:
    if "sessionId" in rec:
        rec["sessionId"] = "s" * HUGE
    return "sessionId" in rec


def _cwd(rec: dict) -> bool:
    if "cwd" in rec:
        rec["cwd"] = "/" + "d" * HUGE
    return "cwd" in rec


TOOL_ID = "toolu_" + "x" * HUGE


def _tool_use_id(rec: dict) -> bool:
    hit = False
    for b in _blocks(rec):
        if b.get("type") == "tool_use":
            b["id"], hit = TOOL_ID, True
        if b.get("type") == "tool_result":
            b["tool_use_id"], hit = TOOL_ID, True
    if hit and isinstance(rec.get("toolUseResult"), dict) and "tool_use_id" in rec["toolUseResult"]:
        rec["toolUseResult"]["tool_use_id"] = TOOL_ID
    return hit


def _request_id(rec: dict) -> bool:
    if "requestId" not in rec:
        return False
    rec["requestId"] = "req_" + "r" * HUGE
    rec["message"].pop("id", None)  # the request id becomes the model call's key
    return True


def _output_tokens(value):
    def mutate(rec: dict) -> bool:
        usage = rec.get("message", {}).get("usage") if isinstance(rec.get("message"), dict) else None
        if isinstance(usage, dict):
            usage["output_tokens"] = value
        return isinstance(usage, dict)

    return mutate


CASES = {
    "sessionId 300 KB": (_session_id, "key_too_long", "session.session_uid"),
    "cwd 300 KB": (_cwd, "key_too_long", "session.cwd"),
    "tool_use id 300 KB": (_tool_use_id, "key_too_long", "tool_call.tool_call_uid"),
    "request id 300 KB": (_request_id, "key_too_long", "model_call.call_uid"),
    "output tokens 2^63": (_output_tokens(2**63), "value_out_of_range", "model_call.output: 9223372036854775808"),
    "output tokens 1e30": (_output_tokens(1e30), "value_out_of_range", "model_call.output: 1000000000000000019884"),
    "output tokens 1e308": (_output_tokens(1e308), "value_out_of_range", "model_call.output: 10000000000000000109…"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_reported_bad_value_costs_that_value_and_every_file_loads(case, corpus_home, own_tmp, cli_env):
    mutate, kind, column = CASES[case]
    lines, hit = [], []
    for i, rec in enumerate(base_records(corpus_home)):
        rec = copy.deepcopy(rec)
        if mutate(rec):
            hit.append(i)
        lines.append(json.dumps(rec))
    assert hit, "the mutation found its field"
    home = make_home(corpus_home, own_tmp / "home", lines)
    done = cli("index", "--home", str(home), "--json", env=cli_env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["files_failed"], summary["load_errors"]) == (0, [])
    assert summary["issues"][kind] == len(hit)  # one issue per bad record
    with psycopg.connect(cli_env["AGENT_HISTORY_DSN"]) as conn:
        files = {
            rel: (status, offset == size)
            for rel, status, offset, size in conn.execute(
                "SELECT rel_path, status, indexed_offset, size FROM ah.source_file"
            )
        }
        issues = conn.execute(
            "SELECT i.byte_offset, i.detail FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
            "WHERE f.rel_path = %s AND i.kind = %s ORDER BY 1",
            (rel_of(BAD), kind),
        ).fetchall()
        messages = {
            r[0]
            for r in conn.execute(
                "SELECT m.message_uid FROM ah.message m JOIN ah.source_file f ON f.id = m.source_id "
                "WHERE f.rel_path <> %s",
                (rel_of(BAD),),
            )
        }
        bad_calls = conn.execute(
            "SELECT count(*), count(m.output), max(octet_length(m.call_uid)) FROM ah.model_call m "
            "JOIN ah.source_file f ON f.id = m.source_id WHERE f.rel_path = %s",
            (rel_of(BAD),),
        ).fetchone()
        tools = conn.execute(
            "SELECT t.tool_call_uid, t.input IS NOT NULL, t.output IS NOT NULL FROM ah.tool_call t "
            "JOIN ah.source_file f ON f.id = t.source_id WHERE f.rel_path = %s",
            (rel_of(BAD),),
        ).fetchall()
    assert len(files) == len(GOOD) + 1
    assert all(v == ("ok", True) for v in files.values()), files  # every file read to its end
    assert [o for o, _ in issues] == [offsets(lines)[i] for i in hit]  # at each bad record's offset
    assert all(column in d for _, d in issues), issues[0][1]
    assert messages == good_message_uids(home)  # the good files, whole
    if case == "tool_use id 300 KB":  # the long id still pairs the call with its result
        digest = hashlib.sha256(TOOL_ID.encode()).hexdigest()
        assert [(u.endswith(digest), i, o) for u, i, o in tools] == [(True, True, True)]
    if case.startswith("output tokens"):
        assert bad_calls[0] > 0 and bad_calls[1] == 0  # unknown (NULL), never a wrong number
    if case == "request id 300 KB":
        assert bad_calls[2] <= 512


def test_a_new_good_transcript_loads_in_the_pass_after_a_bad_one(corpus_home, own_tmp, cli_env):
    lines = [json.dumps({**r, "sessionId": "s" * HUGE}) for r in base_records(corpus_home)]
    home = make_home(corpus_home, own_tmp / "home", lines)
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    extra = ".claude/projects/-experiments-ideas/a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl"
    (home / extra).parent.mkdir(parents=True)
    shutil.copyfile(corpus_home / extra, home / extra)
    done = cli("index", "--home", str(home), "--json", env=cli_env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["files_changed"], summary["files_failed"]) == (1, 0)


# --- a file the database refuses anyway: recorded with its own error, the batch loads ------------

REFUSE = """
CREATE FUNCTION public.refuse_poisoned_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.session_uid = ANY (%(uids)s) THEN
        RAISE EXCEPTION 'session % refused by the test trigger', NEW.session_uid USING ERRCODE = %(code)s;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER refuse_poisoned_session BEFORE INSERT ON ah.session
    FOR EACH ROW EXECUTE FUNCTION public.refuse_poisoned_session();
"""
"""A real server-side error for the sessions named, standing for any value the database refuses
that the row model let through (SQLSTATE 54000 is the btree limit's, and a subclass of
``psycopg.OperationalError``)."""


def refuse(db, uids: list[str], sqlstate: str) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        body = REFUSE.replace("%(uids)s", "ARRAY[" + ", ".join(f"'{u}'" for u in uids) + "]")
        conn.execute(body.replace("%(code)s", f"'{sqlstate}'"))


def file_states(db) -> dict[str, tuple[str, bool, str | None]]:
    with psycopg.connect(db.dsn) as conn:
        return {
            rel: (status, offset == size, err)
            for rel, status, offset, size, err in conn.execute(
                "SELECT rel_path, status, indexed_offset, size, last_error FROM ah.source_file"
            )
        }


@pytest.mark.parametrize("sqlstate", ["54000", "22003"], ids=["program-limit", "data-error"])
@pytest.mark.parametrize("pipelined", [False, True], ids=["inline", "writer-thread"])
def test_a_file_the_database_refuses_in_the_first_batch_costs_that_file_only(
    db, corpus_home, tmp_path, sqlstate, pipelined
):
    lines = [json.dumps({**r, "sessionId": "poison"} if "sessionId" in r else r) for r in base_records(corpus_home)]
    home = make_home(corpus_home, tmp_path / "home", lines)
    refuse(db, ["poison"], sqlstate)
    with psycopg.connect(db.dsn, autocommit=True) as conn, psycopg.connect(db.dsn, autocommit=True) as writer:
        summary = Loader(conn, writer_conn=writer if pipelined else None).run(sources_for(home))
    states = file_states(db)
    bad = states.pop(rel_of(BAD))
    assert summary.files_failed == 1
    assert bad[:2] == ("error", False)
    assert bad[2].startswith(f"{'ProgramLimitExceeded' if sqlstate == '54000' else 'NumericValueOutOfRange'} ")
    assert f"[SQLSTATE {sqlstate}]: session poison refused by the test trigger" in bad[2]
    assert summary.load_errors == [f"{home / BAD} (byte 0): {bad[2]}"]
    assert states == {rel_of(rel): ("ok", True, None) for rel in GOOD}


def test_documents_and_databases_the_database_refuses_cost_those_files_only(db, tmp_path):
    home = tmp_path / "home"
    docs = gemini_layout(home)
    root = opencode_layout(home)
    export = json.loads(OPENCODE_EXPORT.read_text())
    export_to_sqlite(export, root / "opencode.db").close()
    refuse(db, ["test-session-1", export["info"]["id"]], "54000")
    poisoned = str(
        docs["cass__tests__fixtures__gemini__hash123__chats__session-test.json"].relative_to(home / ".gemini")
    )
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources_for(home))
    states = file_states(db)
    failed = {rel: err for rel, (status, _, err) in states.items() if status == "error"}
    assert summary.files_failed == 2
    assert sorted(failed) == sorted(["opencode.db", poisoned])
    assert all(e.startswith("ProgramLimitExceeded [SQLSTATE 54000]: session ") for e in failed.values())
    assert sum(1 for status, _, _ in states.values() if status == "ok") == len(states) - 2 > 10


def test_bad_values_in_a_document_and_a_database_cost_those_values(db, tmp_path):
    """Values the JSON decoder never sees (SQLite text with a NUL, a 300 KB directory) and a long
    document key go through the same check as JSONL records."""
    home = tmp_path / "home"
    docs = gemini_layout(home)
    doc = docs["cass__tests__fixtures__gemini__hash123__chats__session-test.json"]
    doc_rel = str(doc.relative_to(home / ".gemini"))
    data = json.loads(doc.read_text())
    data["sessionId"] = "g" * HUGE
    doc.write_text(json.dumps(data))
    root = home / ".local" / "share" / "opencode"
    root.mkdir(parents=True)
    export = json.loads(OPENCODE_EXPORT.read_text())
    con = export_to_sqlite(export, root / "opencode.db")
    con.execute("UPDATE session SET title = 'a' || char(0) || 'b', directory = '/' || hex(zeroblob(150000))")
    con.close()
    assert sqlite3.connect(root / "opencode.db").execute("SELECT title FROM session").fetchone() == ("a\x00b",)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources_for(home))
        ses = conn.execute(
            "SELECT ai_title, octet_length(cwd) FROM ah.session WHERE session_uid = %s", (export["info"]["id"],)
        ).fetchone()
        issues = conn.execute(
            "SELECT f.rel_path, i.kind, i.detail FROM ah.parse_issue i JOIN ah.source_file f ON f.id = i.source_id "
            "WHERE i.kind IN ('key_too_long', 'lone_surrogate') ORDER BY 1, 2, i.byte_offset"
        ).fetchall()
    assert summary.files_failed == 0
    assert ses == ("a\ufffdb", 2048)
    db_issues = [(k, d) for rel, k, d in issues if rel == "opencode.db"]
    doc_issues = [(k, d) for rel, k, d in issues if rel == doc_rel]
    assert db_issues == [
        ("key_too_long", "session.cwd: 300,001 bytes > 2,048; stored as its digest form"),
        ("lone_surrogate", "session.ai_title: NUL or lone surrogate replaced by U+FFFD"),
    ]
    assert len(doc_issues) == 1 + len(data["messages"])  # the document head and each message name it
    assert all(k == "key_too_long" and ".session_uid" in d for k, d in doc_issues)
    assert len(issues) == len(db_issues) + len(doc_issues)


# --- the connection itself lost: the pass stops, with one line ----------------------------------

KILL = """
CREATE FUNCTION public.end_own_backend() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.session_uid = 'poison' THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER end_own_backend BEFORE INSERT ON ah.session FOR EACH ROW EXECUTE FUNCTION public.end_own_backend();
"""


def test_losing_the_connection_stops_the_pass_with_one_line(db, corpus_home, own_tmp, cli_env):
    lines = [json.dumps({**r, "sessionId": "poison"} if "sessionId" in r else r) for r in base_records(corpus_home)]
    home = make_home(corpus_home, own_tmp / "home", lines)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute(KILL)
    done = cli("index", "--home", str(home), env=cli_env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: database connection lost: terminating connection due to administrator command"
    ]


def test_verbose_index_names_each_failed_file_with_its_first_real_cause(db, corpus_home, own_tmp, cli_env):
    lines = [json.dumps({**r, "sessionId": "poison"} if "sessionId" in r else r) for r in base_records(corpus_home)]
    home = make_home(corpus_home, own_tmp / "home", lines)
    refuse(db, ["poison"], "54000")
    done = cli("index", "--home", str(home), "-v", env=cli_env)
    assert done.returncode == 1
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("load error:")]
    assert said == [
        f"load error: {home / BAD} (byte 0): ProgramLimitExceeded [SQLSTATE 54000]: "
        "session poison refused by the test trigger"
    ]


# --- sums of in-range values: the post-passes store what fits, NULL (unknown) otherwise ----------


def test_a_session_cost_too_large_to_store_is_unknown_and_the_pass_completes(db, corpus_home, tmp_path):
    """1,400 calls of 10^9 output tokens (each within its column's limit) of a $75/Mtok model cost
    more than ``session.cost_usd`` (numeric(14, 6)) holds: the rollup stores NULL, not an error
    that would fail every later pass."""
    call = next(r for r in base_records(corpus_home) if r.get("type") == "assistant" and "usage" in r["message"])
    lines = []
    for i in range(1400):
        rec = copy.deepcopy(call)
        rec["uuid"], rec["requestId"] = f"u-{i:06d}", f"req_{i:06d}"
        rec["message"].update(
            id=f"msg_{i:06d}",
            model="claude-opus-4-1-20250805",
            stop_reason="end_turn",
            usage={"input_tokens": 0, "output_tokens": 10**9},
        )
        lines.append(json.dumps(rec))
    home = make_home(corpus_home, tmp_path / "home", lines)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources_for(home))
        row = conn.execute(
            "SELECT model_call_count, output, cost_usd, rolled_up_at IS NOT NULL FROM ah.session "
            "WHERE session_uid = %s",
            (call["sessionId"],),
        ).fetchone()
        priced = conn.execute(
            "SELECT ah.call_cost_usd('claude-opus-4-1-20250805', now(), 0, 0, 0, 0, 1000000000)"
        ).fetchone()[0]
    assert summary.files_failed == 0 and summary.sessions_rolled_up == len(GOOD) + 1
    assert priced * 1400 >= 10**8  # the sum really does not fit
    assert row == (1400, 1400 * 10**9, None, True)


def _launch_prompt(corpus_home, session_uid: str, path: str) -> str:
    user = copy.deepcopy(next(r for r in base_records(corpus_home) if r.get("type") == "user"))
    user["sessionId"], user["uuid"] = session_uid, f"{session_uid}-prompt"  # its own message
    user["message"]["content"] = f"You are the root. Write your closeout to {path} when done."
    return json.dumps(user)


def test_a_prompt_naming_a_closeout_path_no_index_can_hold_is_not_a_loop_launch(db, corpus_home, tmp_path):
    """Random directory names do not compress: the loop's ``closeout_abspath`` index would refuse
    the row in the post-pass, which failed this pass and every one after it."""
    long = "/" + "".join(hashlib.sha256(str(i).encode()).hexdigest()[:16] + "/" for i in range(400))
    lines = [
        _launch_prompt(corpus_home, "loop-too-long", long + "codex/closeout-2026-01-01-loop1.md"),
        _launch_prompt(corpus_home, "loop-fine", "/repo/codex/closeout-2026-01-02-loop2.md"),
    ]
    home = make_home(corpus_home, tmp_path / "home", lines)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources_for(home))
        loops = conn.execute("SELECT closeout_abspath FROM ah.loops").fetchall()
        dirty = conn.execute("SELECT count(*) FROM ah.dirty_session").fetchone()[0]
    assert summary.files_failed == 0 and summary.sessions_rolled_up == len(GOOD) + 2
    assert (loops, dirty) == ([("/repo/codex/closeout-2026-01-02-loop2.md",)], 0)


REFUSE_ROLLUP = """
CREATE FUNCTION public.refuse_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.session_uid = 'poison' AND NEW.rolled_up_at IS NOT NULL THEN
        RAISE EXCEPTION 'rollup of % refused by the test trigger', NEW.session_uid USING ERRCODE = '22003';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER refuse_rollup BEFORE UPDATE ON ah.session FOR EACH ROW EXECUTE FUNCTION public.refuse_rollup();
"""


def test_a_session_the_post_passes_cannot_roll_up_costs_its_rollups_only(db, corpus_home, tmp_path):
    lines = [json.dumps({**r, "sessionId": "poison"} if "sessionId" in r else r) for r in base_records(corpus_home)]
    home = make_home(corpus_home, tmp_path / "home", lines)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute(REFUSE_ROLLUP)
        first = Loader(conn).run(sources_for(home))
        second = Loader(conn).run(sources_for(home))
        rolled = dict(conn.execute("SELECT session_uid, rolled_up_at IS NOT NULL FROM ah.session").fetchall())
        issue = conn.execute(
            "SELECT f.rel_path, i.kind, i.byte_offset, i.detail FROM ah.parse_issue i "
            "JOIN ah.source_file f ON f.id = i.source_id WHERE i.kind = 'postpass_error'"
        ).fetchall()
    assert (first.files_failed, first.sessions_rolled_up) == (0, len(GOOD))
    assert (second.files_changed, second.sessions_rolled_up) == (0, 0)  # nothing left dirty to fail again
    assert rolled.pop("poison") is False and all(rolled.values())
    assert [(rel, kind, at) for rel, kind, at, _ in issue] == [(rel_of(BAD), "postpass_error", 0)]
    assert issue[0][3].endswith(
        "not rolled up: NumericValueOutOfRange [SQLSTATE 22003]: rollup of poison refused by the test trigger"
    )
