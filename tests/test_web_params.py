"""The web UI against hostile URL parameters and as the reader role: a NUL byte in any parameter of
any route is a 400 page with one line (never a 500 or a traceback), and the status page shows the
schema revision. A real `agent-history web` process over the shared corpus catalogue."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from agent_history.db.migrate import head_revision
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.test_web import KNOWN_UID, Served, _env

NUL = "a\x00b"

# Every route of `web.routes.PAGES` and `web.api.API` with every parameter its handler reads (query and path).
FILTERS = ("agent", "namespace", "since", "until", "project")
ROUTE_PARAMS: dict[str, tuple[str, ...]] = {
    "/search?q=pool": ("class", "in", "mode", *FILTERS),
    "/sessions": ("sort", "page", "health", "host", *FILTERS),
    f"/session/{KNOWN_UID}": ("agent_id", "page"),
    "/usage": ("now", *FILTERS),
    "/api/usage": FILTERS,
    "/status": ("anything",),
    # the JSON routes of `web.api`
    "/api/search?q=pool": ("class", "in", "mode", "limit", *FILTERS),
    "/api/sessions": ("health", "limit", "subagents", *FILTERS),
    "/api/usage/report": ("view", "by", "timezone", "model", *FILTERS),
    "/api/why?sha=6d0e203": ("sha",),
    "/api/touched?pattern=pool.py": ("pattern", "op", "since", "limit", "agent", "namespace"),
}
PATH_PARAMS = [
    f"/search?q={quote(NUL)}",
    f"/session/{quote(NUL)}",
    f"/hit/message/{quote(NUL)}",
    f"/hit/{quote(NUL)}/1",
]


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("web-params"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


def _urls() -> list[str]:
    urls = []
    for route, params in ROUTE_PARAMS.items():
        sep = "&" if "?" in route else "?"
        urls += [f"{route}{sep}{name}={quote(NUL)}" for name in params]
    return urls + PATH_PARAMS


@pytest.mark.parametrize("url", _urls())
def test_a_nul_byte_in_a_url_parameter_is_a_400_saying_so(web, url):
    r = httpx.get(web.url + url, timeout=60)
    assert r.status_code == 400, (url, r.status_code, r.text[:300])
    assert "contains a NUL byte (%00), which no catalogue text holds" in r.text
    assert "Traceback" not in r.text


def test_the_same_routes_without_the_nul_byte_answer(web):
    for route in ROUTE_PARAMS:
        assert httpx.get(web.url + route, timeout=60).status_code == 200, route


def test_the_status_page_shows_the_schema_revision_to_the_reader_role(web):
    r = httpx.get(web.url + "/status", timeout=60)
    assert r.status_code == 200 and r.headers["x-ah-role"] == "ah_reader"
    assert "not readable by this role" not in r.text
    assert f"<td>{head_revision()} (head {head_revision()})</td>" in r.text
