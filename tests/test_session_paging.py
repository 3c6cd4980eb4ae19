"""`session UID` pages a long session (issue 25, item 7: a 120,000-message session printed
240,000 lines): 200 events a page as the web UI shows them, ``--page N``, ``--all``, or
``--from/--to``, saying how many events remain. On the corpus's longest thread (596 events)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import psycopg
import pytest

from agent_history.read.timeline import PAGE_EVENTS, session_timeline
from tests.corpus_db import cli_environment, corpus_db, corpus_resident, served  # noqa: F401 - fixtures

PY = sys.executable
LONG = "cf4def41-21e0-4b91-adb4-5397c1492084"  # codex-local: 596 events
HEAD = re.compile(r"^ *(\d+) (?:\d{4}-\d\d-\d\d \d\d:\d\d|-) ")


@pytest.fixture
def env(corpus_db, own_tmp, corpus_resident) -> dict[str, str]:  # noqa: F811
    """The test's own environment over the module's catalogue; its read commands answered by the
    module's resident query process (`served`; tests/test_query_service.py: the in-process output)."""
    return served(cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=120), corpus_resident)


def session(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", "session", *args], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def numbers(out: str) -> list[int]:
    return [int(m[1]) for line in out.splitlines() if (m := HEAD.match(line))]


def test_a_long_session_shows_its_first_page_and_says_how_many_remain(env):
    r = session(env, LONG[:8])
    assert r.returncode == 0, r.stderr
    assert numbers(r.stdout) == list(range(1, 201))
    lines = r.stdout.splitlines()
    assert "events 1–200 of 596" in lines
    assert lines[-1] == "396 more events (--page 2, or --all)"


def test_page_all_and_a_range_select_the_events_they_name(env):
    last = session(env, LONG[:8], "--page", "3")
    assert numbers(last.stdout) == list(range(401, 597))
    assert "events 401–596 of 596" in last.stdout and "more events" not in last.stdout
    assert numbers(session(env, LONG[:8], "--all").stdout) == list(range(1, 597))
    ranged = session(env, LONG[:8], "--from", "590", "--to", "592")
    assert numbers(ranged.stdout) == [590, 591, 592]
    assert ranged.stdout.splitlines()[-1] == "4 more events (--from 593, or --all)"


def test_json_is_paged_the_same_way_and_says_where_it_is(env):
    first = json.loads(session(env, LONG[:8], "--json").stdout)
    assert (len(first["events"]), first["total"], first["page"], first["pages"], first["remaining"]) == (
        PAGE_EVENTS, 596, 1, 3, 396)  # fmt: skip
    every = json.loads(session(env, LONG[:8], "--all", "--json").stdout)
    assert (len(every["events"]), every["remaining"]) == (596, 0) and "page" not in every
    assert every["events"][:PAGE_EVENTS] == first["events"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("--page", "4"), f"error: session {LONG} has 3 pages of 200 events, not 4"),
        (("--page", "0"), "error: --page must be 1 or more (got 0)"),
        (("--page", "2", "--from", "3"), "error: --page, --all and --from/--to exclude each other"),
        (("--all", "--to", "3"), "error: --page, --all and --from/--to exclude each other"),
    ],
)
def test_a_page_that_does_not_exist_or_contradicts_a_range_is_a_usage_error(env, args, error):
    r = session(env, LONG[:8], *args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", error + "\n")


def test_a_slice_reads_the_same_events_as_the_whole_timeline_and_the_web_numbers_them_alike(corpus_db):  # noqa: F811
    from agent_history.read.timeline_pages import timeline_page

    with psycopg.connect(corpus_db.dsn) as conn:
        whole = session_timeline(conn, LONG, max_chars=50)
        part = session_timeline(conn, LONG, start=401, end=600, max_chars=50)
        _, web = timeline_page(conn, whole.session.id, 3)
    assert (whole.total, part.total, len(whole.events)) == (596, 596, 596)
    assert [e.as_dict() for e in part.events] == [e.as_dict() for e in whole.events[400:]]
    assert [(e.seq, e.kind, e.byte_offset, e.label) for e in web] == [
        (e.seq, e.kind, e.byte_offset, e.label) for e in part.events
    ]
    cut = [e for e in whole.events if e.truncated]
    assert cut and all(len(e.text) == 51 and e.text.endswith("…") for e in cut)
