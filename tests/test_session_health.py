"""Session health A–F (issue 32; docs/health.md): the rule as data, applied in SQL by
``ah.session_health`` — exact grades on the real shared corpus, on the efficiency fixtures (real
transcripts: poll shares, a pi session ending in an API error) and on crafted sessions written
through the loader's writer, one per rule; a signal the harness does not record is unknown and
never graded; and the grade in `sessions`, `session`, the MCP `find_sessions` tool. Real embedded
PostgreSQL, real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.classify import health
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.model.rows import CompactionRow, ToolCallRow
from agent_history.read.requests import SessionsRequest
from agent_history.read.sessions import health_by_session, list_sessions
from tests.catalogue_rows import message, session, write
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.mcp_client import call, server_env

ROOT = Path(__file__).resolve().parents[1]

#: Every corpus thread not scoring 100: uid prefix → (grade, score, reasons, unknown).
CORPUS = {
    "0fae0449-64d3": ("C", 75, ["interrupts 4 ≥ 3 (−15)", "tool failures 14.5% ≥ 10% (−10)"], []),
    "0d3a8e6f-290f": ("C", 75, ["interrupts 3 ≥ 3 (−15)", "tool failures 21.4% ≥ 10% (−10)"], []),
    "2638daee-0588": ("B", 80, ["interrupts 4 ≥ 3 (−15)", "compactions 2 ≥ 1 (−5)"], []),
    "d703a1a9-1b7b": ("B", 85, ["interrupts 4 ≥ 3 (−15)"], []),
    "fe869ecb-c176": ("A", 90, ["tool failures 18.8% ≥ 10% (−10)"], []),
    "326189cf-5676": ("A", 90, ["tool failures 14.3% ≥ 10% (−10)"], []),
    "b45ad5d8-81fb": ("A", 90, ["tool failures 12.5% ≥ 10% (−10)"], []),
    "9e953218-585f": ("A", 90, ["tool failures 10.9% ≥ 10% (−10)"], []),
    "7acd37a8-2745": ("A", 95, ["interrupts 1 ≥ 1 (−5)"], []),
    "019e19b4-eb48": ("A", 95, ["compactions 2 ≥ 1 (−5)"], ["tool_failure_rate"]),
}


# --- the rule as data (pure) ----------------------------------------------------------------------
def test_the_rule_tables_are_consistent_and_the_document_shows_them():
    health.validate()
    doc = (ROOT / "docs" / "health.md").read_text()
    begin, end = "<!-- BEGIN health rule", "<!-- END health rule -->"
    block = doc[doc.index(begin) : doc.index(end)].split("\n", 1)[1].strip()
    assert block == health.rules_markdown()


@pytest.mark.parametrize(
    ("spec", "grades"),
    [("F", ("F",)), ("c-f", ("C", "D", "F")), ("F-C", ("C", "D", "F")), ("A,F", ("A", "F")), ("B, B", ("B",))],
)
def test_a_health_filter_names_letters_ranges_and_lists(spec, grades):
    assert health.grades_in(spec) == grades


@pytest.mark.parametrize("spec", ["", "G", "A-", "A-B-C", "AB"])
def test_a_bad_health_filter_says_what_is_accepted(spec):
    with pytest.raises(ValueError, match="give a letter A–F, a range like C-F, or a list like A,F"):
        health.grades_in(spec)


def test_scores_fall_into_ten_point_bands():
    assert [health.grade_of(s) for s in (100, 90, 89, 80, 79, 70, 69, 60, 59, 0)] == list("AABBCCDDFF")
    with pytest.raises(ValueError, match="outside 0–100"):
        health.grade_of(101)


# --- the shared corpus ----------------------------------------------------------------------------
def _grades(conn: psycopg.Connection, where: str = "true") -> dict[str, tuple]:
    rows = conn.execute(
        "SELECT left(s.session_uid, 13) || CASE WHEN s.agent_id <> '' THEN '/' || s.agent_id ELSE '' END,"
        " h.grade, h.score, h.reasons, h.unknown"
        " FROM ah.session_health h JOIN ah.session s ON s.id = h.session_id JOIN ah.source_file f ON f.id = s.source_id"
        f" WHERE {where}"
    ).fetchall()
    return {r[0]: (r[1], r[2], list(r[3]), list(r[4])) for r in rows}


def test_corpus_grades_and_reasons(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.reader_dsn) as conn:
        got = _grades(conn)
    assert len(got) == 34
    assert {uid: g for uid, g in got.items() if g[1] != 100} == CORPUS
    assert sorted(g[0] for g in got.values()).count("A") == 30
    # threads without a tool call or a classified model call say so; none is graded from it
    assert got["3680252d-d4e3"] == ("A", 100, [], ["tool_failure_rate", "poll_share"])
    assert got["cf4def41-21e0"] == ("A", 100, [], ["poll_share"])


def test_a_session_not_rolled_up_yet_has_no_grade(corpus_db):  # noqa: F811
    """An interrupted pass leaves its sessions in ah.dirty_session (maybe half a file loaded):
    no score, no grade until a pass rolls them up (a newcomer saw such sessions graded A)."""
    uid = "0fae0449-64d3-4788-8622-d3a47d82c14b"
    with psycopg.connect(corpus_db.dsn) as conn:
        sid = conn.execute("SELECT id FROM ah.session WHERE session_uid = %s AND agent_id = ''", (uid,)).fetchone()[0]
        q = "SELECT grade, score FROM ah.session_health WHERE session_id = %s"
        assert conn.execute(q, (sid,)).fetchone() == ("C", 75)
        conn.execute("INSERT INTO ah.dirty_session (session_id) VALUES (%s)", (sid,))
        assert conn.execute(q, (sid,)).fetchone() == (None, None)
        conn.rollback()


def test_sessions_health_filter_and_fields_on_the_corpus(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.reader_dsn) as conn:
        bad = list_sessions(conn, SessionsRequest(health=health.grades_in("C-F")))
        assert [(r.session_uid[:13], r.health_grade, r.health_score) for r in bad] == [
            ("0fae0449-64d3", "C", 75),
            ("0d3a8e6f-290f", "C", 75),
        ]
        assert bad[1].health_reasons == CORPUS["0d3a8e6f-290f"][2]
        assert [r.session_uid[:13] for r in list_sessions(conn, SessionsRequest(health=("B",)))] == [
            "2638daee-0588",
            "d703a1a9-1b7b",
        ]
        assert list_sessions(conn, SessionsRequest(health=("D", "F"))) == []
        assert {r.health_grade for r in list_sessions(conn, SessionsRequest(limit=100))} == {
            "A",
            "B",
            "C",
        }  # 28 main threads
        ids = [r[0] for r in conn.execute("SELECT id FROM ah.session WHERE session_uid LIKE '019e19b4-eb48%'")]
        assert list(health_by_session(conn, ids).values()) == [
            {"grade": "A", "score": 95, "reasons": ["compactions 2 ≥ 1 (−5)"], "unknown": ["tool_failure_rate"]}
        ]


def test_cli_sessions_health_and_session_reasons(corpus_db, tmp_path):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, tmp_path, COLUMNS="80")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
        )

    listed = run("sessions", "--health", "C-F", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["session_uid"][:13], r["health_grade"], r["health_score"]) for r in rows] == [
        ("0fae0449-64d3", "C", 75),
        ("0d3a8e6f-290f", "C", 75),
    ]
    assert rows[0]["health_reasons"] == CORPUS["0fae0449-64d3"][2] and rows[0]["health_unknown"] == []
    table = run("sessions", "--health", "B")
    assert table.returncode == 0, table.stderr
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
    assert table.stdout.splitlines()[0].split()[-1] == "hl"
    assert [line.split()[-1] for line in table.stdout.splitlines()[1::2]] == ["B", "B"]
    none = run("sessions", "--health", "F")
    assert (none.returncode, none.stdout.strip()) == (1, "no sessions")
    bad = run("sessions", "--health", "Z")
    assert bad.returncode == 2 and "health grade 'Z': give a letter A–F" in bad.stderr
    shown = run("session", "0d3a8e6f-290f")
    assert shown.returncode == 0, shown.stderr
    assert "health C (75): interrupts 3 ≥ 3 (−15); tool failures 21.4% ≥ 10% (−10)" in shown.stdout
    pi = run("session", "019e19b4-eb48", "--json")
    summary = json.loads(pi.stdout)["summary"]
    assert (summary["health_grade"], summary["health_unknown"]) == ("A", ["tool_failure_rate"])


def test_find_sessions_health_filter_and_field(corpus_db, tmp_path):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, tmp_path)
    args = {"query": "timeline", "mode": "keyword", "limit": 30}
    every = call(env, "find_sessions", args).data["sessions"]
    graded = {s["session_uid"][:13]: s["health"]["grade"] for s in every}
    assert graded["0d3a8e6f-290f"] == "C" and "A" in graded.values()
    only_c = call(env, "find_sessions", {**args, "health": ["C", "D", "F"]}).data["sessions"]
    assert [s["session_uid"][:13] for s in only_c] == [u for u, g in graded.items() if g in "CDF"]
    assert only_c[0]["health"]["reasons"] == CORPUS[only_c[0]["session_uid"][:13]][2]


# --- real fixture transcripts: poll share, an API error at the end --------------------------------
def test_poll_share_and_ending_on_an_api_error_on_the_efficiency_fixtures(db):
    home = ROOT / "fixtures" / "efficiency" / "home"
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
        assert Loader(conn).run(sources).files_failed == 0
        got = {
            (r[0][-2:], r[1]): (r[2], r[3], list(r[4]), list(r[5]))
            for r in conn.execute(
                "SELECT s.session_uid, s.agent_id, h.grade, h.score, h.reasons, h.unknown "
                "FROM ah.session_health h JOIN ah.session s ON s.id = h.session_id"
            ).fetchall()
        }
    assert got == {
        ("01", ""): ("A", 90, ["poll share 27.3% ≥ 25% (−10)"], []),
        ("01", "a5ub1"): ("B", 80, ["poll share 50% ≥ 50% (−20)"], []),
        ("c1", ""): ("A", 100, [], []),
        ("c2", ""): ("B", 80, ["poll share 50% ≥ 50% (−20)"], []),
        ("b1", ""): ("A", 90, ["poll share 30% ≥ 25% (−10)"], []),
        ("b2", ""): ("B", 80, ["ended in an error (−20)"], ["tool_failure_rate", "poll_share"]),
    }


# --- crafted sessions, one per rule ---------------------------------------------------------------
def _call(uid: str, sess: str, n: int, *, failed: bool = False, inp: str | None = None, cls=None, agent="claude"):
    return ToolCallRow(
        agent=agent,
        tool_call_uid=f"{sess}-{uid}",
        session_uid=sess,
        name="Bash",
        input=inp if inp is not None else json.dumps({"command": f"echo {uid}"}),
        output="boom" if failed else "ok",
        is_error=failed,
        outcome="error" if failed else "ok",
        error_class=cls or ("nonzero_exit" if failed else None),
        byte_offset=n * 100,
    )


def _oks(sess: str, n: int, start: int = 0, agent: str = "claude") -> list[ToolCallRow]:
    return [_call(f"ok{i}", sess, start + i, agent=agent) for i in range(n)]


def _crafted(db) -> dict[str, tuple]:
    pytest_cmd = json.dumps({"command": "pytest -q"})
    cases = {
        # 3 failures in 10 calls (30 %), last call fine
        "fail-rate": [*(_call(f"f{i}", "fail-rate", i, failed=True) for i in range(3)), *_oks("fail-rate", 7, 3)],
        # the same failing `pytest -q` four times in a row (3 retries), then 37 fine calls: 4/41 < 10 %
        "retries": [
            *(_call(f"r{i}", "retries", i, failed=True, inp=pytest_cmd) for i in range(4)),
            *_oks("retries", 37, 4),
        ],
        # 2 markers; an interrupted call a marker follows (one interrupt); an interrupted call alone
        "interrupts": [
            *(
                message(
                    f"m{i}", "interrupts", "[Request interrupted by user]", cls="interrupt_marker", offset=i * 100 + 50
                )
                for i in range(2)
            ),
            _call("i1", "interrupts", 10, failed=True, cls="interrupted"),
            message(
                "m9", "interrupts", "[Request interrupted by user for tool use]", cls="interrupt_marker", offset=1050
            ),
            _call("i2", "interrupts", 20, failed=True, cls="interrupted"),
            *_oks("interrupts", 30, 21),
        ],
        "compactions": [
            *(
                CompactionRow(agent="claude", compaction_uid=f"k{i}", session_uid="compactions", byte_offset=i * 100)
                for i in range(3)
            ),
            *_oks("compactions", 2, 5),
        ],
        # 10 fine calls, then the last one fails: 1/11 = 9.1 %, ended in an error
        "ended": [*_oks("ended", 10), _call("last", "ended", 10, failed=True)],
    }
    for uid, rows in cases.items():
        write(db.dsn, [session(uid), *rows], path=f"/t/{uid}.jsonl")
    # Cursor records neither compactions nor interrupts: they are unknown, never graded.
    cursor = [
        session("cursor-1", agent="cursor"),
        *(
            CompactionRow(agent="cursor", compaction_uid=f"ck{i}", session_uid="cursor-1", byte_offset=i)
            for i in range(3)
        ),
        *(
            message(f"cm{i}", "cursor-1", "[interrupted]", cls="interrupt_marker", agent="cursor", offset=10 + i)
            for i in range(3)
        ),
        *_oks("cursor-1", 2, 1, agent="cursor"),
    ]
    write(db.dsn, cursor, path="/t/cursor-1.json", namespace="cursor-local", agent="cursor")
    with psycopg.connect(db.reader_dsn) as conn:
        return {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT s.session_uid, h.tool_failure_rate, h.retries, h.interrupts, h.compactions, h.ended_in_error,"
                " h.grade, h.score, h.reasons, h.unknown FROM ah.session_health h JOIN ah.session s ON s.id = h.session_id"
            ).fetchall()
        }


def test_each_rule_on_a_crafted_session(db):
    from decimal import Decimal

    got = _crafted(db)
    assert got["fail-rate"][:8] == (Decimal("0.3000"), 0, 0, 0, False, "C", 75, ["tool failures 30% ≥ 25% (−25)"])
    assert got["retries"][:8] == (Decimal("0.0976"), 3, 0, 0, False, "B", 85, ["retries of a failing call 3 ≥ 3 (−15)"])
    assert got["interrupts"][:8] == (Decimal("0.0625"), 0, 4, 0, False, "B", 85, ["interrupts 4 ≥ 3 (−15)"])
    assert got["compactions"][:8] == (Decimal("0.0000"), 0, 0, 3, False, "A", 90, ["compactions 3 ≥ 3 (−10)"])
    assert got["ended"][:8] == (Decimal("0.0909"), 0, 0, 0, True, "B", 80, ["ended in an error (−20)"])
    # poll_share is unknown in every crafted session: they have no model call to classify
    assert {uid: g[8] for uid, g in got.items()} == {
        "fail-rate": ["poll_share"],
        "retries": ["poll_share"],
        "interrupts": ["poll_share"],
        "compactions": ["poll_share"],
        "ended": ["poll_share"],
        "cursor-1": ["interrupts", "compactions", "poll_share"],
    }
    assert got["cursor-1"][:8] == (Decimal("0.0000"), 0, None, None, False, "A", 100, [])
