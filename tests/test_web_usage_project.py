"""The web usage page's ``project`` filter narrows its cells (`read.usage_cells.usage_cells`): the
charts' JSON (``/api/usage``) and the page's tables count the calls ``usage --project`` counts —
the root session's working directory containing the text, case-insensitively. A real ``agent-history
web`` process on the corpus catalogue."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import httpx
import psycopg
import pytest

from agent_history.read.requests import usage_request
from agent_history.read.usage import usage_report
from agent_history.read.usage_cells import usage_cells
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.test_web import Served, _env

PROJECT = "/Users/user1/workspace/JSSoundRecorder"


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("usage-project"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


def _report_totals(dsn: str, project: str | None) -> tuple[int, int]:
    """(calls, total tokens) of `usage --project` (`read.usage.usage_report`, days in UTC)."""
    params = {"timezone": "UTC", **({"project": project} if project else {})}
    with psycopg.connect(dsn) as conn:
        t = usage_report(conn, usage_request(params, flags=False), datetime.now(UTC))["totals"]
    return t["calls"], t["totalTokens"]


def _chart_tokens(payload: dict) -> int:
    return sum(v for series in payload["tokens_by_agent"].values() for v in series if v is not None)


def test_usage_cells_keep_the_calls_of_the_project(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        every = usage_cells(conn)
        mine = usage_cells(conn, project="jssoundrecorder")
        model = usage_cells(conn, project="jssoundrecorder", model="no-such-model")
    assert {c.project for c in mine} == {PROJECT}
    assert len({c.project for c in every}) > 1
    assert (sum(c.calls for c in mine), sum(c.tokens or 0 for c in mine)) == _report_totals(
        corpus_db.dsn, "jssoundrecorder"
    )
    assert model == []


def test_the_usage_api_and_page_filter_by_project(web, corpus_db):  # noqa: F811
    every = httpx.get(f"{web.url}/api/usage", timeout=120).json()
    mine = httpx.get(f"{web.url}/api/usage", params={"project": "JSSoundRecorder"}, timeout=120).json()
    calls, tokens = _report_totals(corpus_db.dsn, "JSSoundRecorder")
    assert _chart_tokens(mine) == tokens < _chart_tokens(every)
    assert list(mine["tokens_by_agent"]) == ["claude"]
    page = httpx.get(f"{web.url}/usage", params={"project": "JSSoundRecorder"}, timeout=120)
    assert page.status_code == 200
    table = page.text.split('<table id="by-project">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr><td>([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)', table)
    assert rows == [(PROJECT, f"{calls:,}", f"{tokens:,}")]
    assert 'name="project" value="JSSoundRecorder"' in page.text  # the form keeps the filter


def _threads(html: str) -> int:
    """The threads the page's "by thread role" table counts (0 when it says there are none)."""
    if '<table id="efficiency">' not in html:
        return 0
    table = html.split('<table id="efficiency">', 1)[1].split("</table>", 1)[0]
    return sum(int(n) for n in re.findall(r'<tr><td>[^<]*</td><td class="num">(\d+)</td>', table))


def test_the_role_and_loop_tables_follow_the_project_filter(web, corpus_db):  # noqa: F811
    from agent_history.read.efficiency import efficiency_report
    from agent_history.read.loops import list_loops

    with psycopg.connect(corpus_db.dsn) as conn:
        every = efficiency_report(conn).threads
        mine = efficiency_report(conn, project="jssoundrecorder").threads
        cwds = {
            uid: cwd
            for uid, cwd in conn.execute(
                "SELECT s.session_uid, coalesce(r.cwd, s.cwd) FROM ah.session AS s "
                "LEFT JOIN ah.session AS r ON r.id = s.root_session_id"
            )
        }
        loops_none = list_loops(conn, project="no-such-project", limit=1000)
    assert 0 < len(mine) < len(every)
    assert {cwds[t.session_uid] for t in mine} == {PROJECT}
    assert loops_none == []
    page = httpx.get(f"{web.url}/usage", params={"project": "JSSoundRecorder"}, timeout=120)
    assert page.status_code == 200
    assert _threads(page.text) == len(mine)
    assert _threads(httpx.get(f"{web.url}/usage", timeout=120).text) == len(every)
    nowhere = httpx.get(f"{web.url}/usage", params={"project": "no-such-project"}, timeout=120).text
    assert "no classified threads in this range" in nowhere and "no loops in this range" in nowhere
