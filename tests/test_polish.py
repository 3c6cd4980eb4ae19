"""Findings of a newcomer's break-it run, each pinned by a test (issue: h-polish brief)."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from agent_history.read.efficiency import efficiency_report
from agent_history.read.loops import list_loops
from tests.corpus_db import corpus_db  # noqa: F401 - fixture


def test_usage_page_role_table_and_loops_honour_until(corpus_db):  # noqa: F811
    # the web usage page's "by thread role" table and loops list read these with the page's range
    cut = datetime(2020, 1, 1, tzinfo=UTC)
    with psycopg.connect(corpus_db.dsn) as conn:
        assert efficiency_report(conn).threads  # the corpus has threads …
        assert efficiency_report(conn, until=cut).threads == []  # … none started before 2020
        dated = [t for t in efficiency_report(conn).threads if t.started_at]  # a bound drops undated
        assert efficiency_report(conn, since=cut).threads == dated
        starts = sorted(t.started_at for t in efficiency_report(conn).threads if t.started_at)
        mid = starts[len(starts) // 2]
        before = efficiency_report(conn, until=mid).threads
        assert before and all(t.started_at < mid for t in before)
        assert list_loops(conn, until=cut) == []
