"""`touched PATH-OR-GLOB`: sessions that touched matching files, grouped, newest first."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import pytest

from agent_history.model.rows import FileTouchRow
from agent_history.read.touched import touched
from tests.catalogue_rows import T0, session, write
from tests.corpus_db import corpus_db  # noqa: F401 - fixture


def touch(uid: str, session_uid: str, path: str, op: str, minutes: int, agent_id: str = "") -> FileTouchRow:
    return FileTouchRow(
        agent="claude",
        touch_uid=uid,
        session_uid=session_uid,
        agent_id=agent_id,
        path=path,
        op=op,
        ts=T0 + timedelta(minutes=minutes),
        byte_offset=minutes * 100,
    )


def _touches(db) -> None:
    write(
        db.dsn,
        [
            session("old"),
            touch("o1", "old", "/p/src/db/pool.py", "read", 1),
            touch("o2", "old", "/p/src/db/pool.py", "edit", 2),
            touch("o3", "old", "/p/README.md", "edit", 3),
        ],
        path="/t/old.jsonl",
    )
    write(
        db.dsn,
        [
            session("new"),
            touch("n1", "new", "/p/src/db/pool.py", "read", 50),
            touch("n2", "new", "/p/src/db/conn.py", "create", 51),
            touch("n3", "new", "/q/lib/pool.py", "delete", 52),
        ],
        path="/t/new.jsonl",
    )


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("/p/src/db/pool.py", [("new", ["/p/src/db/pool.py"]), ("old", ["/p/src/db/pool.py"])]),
        ("db/pool.py", [("new", ["/p/src/db/pool.py"]), ("old", ["/p/src/db/pool.py"])]),
        ("pool.py", [("new", ["/p/src/db/pool.py", "/q/lib/pool.py"]), ("old", ["/p/src/db/pool.py"])]),
        ("/p/src", [("new", ["/p/src/db/conn.py", "/p/src/db/pool.py"]), ("old", ["/p/src/db/pool.py"])]),
        ("src/**/*.py", [("new", ["/p/src/db/conn.py", "/p/src/db/pool.py"]), ("old", ["/p/src/db/pool.py"])]),
        ("*.md", [("old", ["/p/README.md"])]),
        ("/p/*.py", []),
    ],
)
def test_paths_and_globs_group_by_session_newest_first(db, pattern, expected):
    _touches(db)
    with db.connect() as conn:
        got = touched(conn, pattern)
    assert [(t.session.session_uid, t.paths) for t in got] == expected


def test_each_session_reports_ops_span_and_its_touches_newest_first(db):
    _touches(db)
    with db.connect() as conn:
        (old,) = touched(conn, "/p", ops=("edit",))
        (new,) = touched(conn, "pool.py", limit=1)
    assert (old.session.session_uid, old.ops, [t.path for t in old.touches]) == (
        "old",
        {"edit": 2},
        ["/p/README.md", "/p/src/db/pool.py"],
    )
    assert (old.first_ts, old.last_ts) == (T0 + timedelta(minutes=2), T0 + timedelta(minutes=3))
    assert (new.session.session_uid, new.ops) == ("new", {"delete": 1, "read": 1})
    assert [(t.op, t.byte_offset) for t in new.touches] == [("delete", 5200), ("read", 5000)]


def test_corpus_file_is_found_in_the_sessions_that_touched_it(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        got = touched(conn, "public/tokenizer.css")
    assert [(t.session.session_uid, t.ops) for t in got] == [
        ("9e953218-585f-4692-89df-9e0747a31c68", {"delete": 1, "read": 2}),
        ("b25638d7-b104-4f06-a797-70ac33d069ed", {"edit": 1, "read": 1}),
    ]


def test_cli_touched_json_and_an_empty_pattern(db, cli_env):
    _touches(db)
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "touched", "*.md", "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert [s["session"]["session_uid"] for s in json.loads(out.stdout)["sessions"]] == ["old"]
    bad = subprocess.run(
        [sys.executable, "-m", "agent_history", "touched", " "],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "empty path pattern" in bad.stderr


_PATHS = [
    "/x/src",
    "/x/src/a.py",
    "/x/srcs/a.py",
    "/y/x/src/a.py",
    "/x/s_c/a.py",
    "/x/sXc/a.py",
    "/x/100%/a.py",
    "/x/100a/a.py",
    "/x/back\\slash/f",
    "/x/backXslash/f",
    "src/db/pool.py",
    "/p/src/db/pool.py",
    "/p/src/db/pool.pyc",
    "/p/mysrc/db/pool.py",
    "relative/a.py",
]


@pytest.mark.parametrize(
    "pattern",
    [
        "/x/src",
        "/x/src/",
        "/x/s_c",
        "/x/100%",
        "/x/back\\slash",
        "/",
        "src/db/pool.py",
        "db/pool.py",
        "s_c/a.py",
        "*.py",
    ],
)
def test_path_condition_selects_what_the_regular_expression_matches(db, pattern):
    """The index-friendly condition (`path_condition`: equality/prefix for an absolute path, a
    substring test before the expression for a relative one) selects exactly the rows
    ``path ~ path_regex(pattern)`` does, LIKE metacharacters in the pattern included."""
    import psycopg

    from agent_history.read.touched import path_condition, path_regex

    params: dict = {}
    cond = path_condition(pattern, params)
    with psycopg.connect(db.dsn) as conn:
        got = [
            r[0]
            for r in conn.execute(
                f"SELECT f.path FROM unnest(%(paths)s::text[]) AS f(path) WHERE {cond}", {**params, "paths": _PATHS}
            )
        ]
        want = [
            r[0]
            for r in conn.execute("SELECT p FROM unnest(%s::text[]) AS p WHERE p ~ %s", (_PATHS, path_regex(pattern)))
        ]
    assert got == want
    assert want  # every pattern matches something here
