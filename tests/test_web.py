"""`agent-history web` in a real browser (issue 20): Debian's chromium, driven by Playwright,
against one real server subprocess over a catalogue of ``../shared/corpus/home`` plus one
synthetic Claude session whose prompt is an XSS payload.

Screenshots and page timings go to ``test-artifacts/web/`` (gitignored); their paths are printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from tests.conftest import TEMPLATE, TestDatabase

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "web"
XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"
XSS_UID = "7e57c0de-0000-4000-8000-000000000001"
# A real corpus prompt (../shared/corpus/home/.claude/projects/-src-experiments-claude_p/94604a7b-….jsonl)
KNOWN_UID = "94604a7b-062f-4369-bdf0-da948381c3e5"
KNOWN_PROMPT = "What are the tools that are available to you (allowed or not)?"


def _xss_home(root: Path) -> Path:
    """A Claude home with one session: the XSS prompt and a one-line reply."""
    project = root / ".claude" / "projects" / "-tmp-xss"
    project.mkdir(parents=True)
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/tmp/xss",
        "sessionId": XSS_UID,
        "version": "2.1.17",
        "gitBranch": "",
    }
    lines = [
        {
            **base,
            "parentUuid": None,
            "type": "user",
            "uuid": "u-1",
            "timestamp": "2026-01-23T17:30:15.190Z",
            "message": {"role": "user", "content": XSS},
        },
        {
            **base,
            "parentUuid": "u-1",
            "type": "assistant",
            "uuid": "a-1",
            "timestamp": "2026-01-23T17:30:20.000Z",
            "message": {
                "model": "claude-opus-4-5-20251101",
                "id": "msg_xss1",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "That prompt holds markup: </pre><b>bold?</b>"}],
                "stop_reason": "end_turn",
                "usage": {
                    "input_tokens": 10,
                    "output_tokens": 5,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
            },
        },
    ]
    (project / f"{XSS_UID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root / ".claude"


@pytest.fixture(scope="module")
def web_db(pg_server, corpus_home, tmp_path_factory) -> TestDatabase:
    """The corpus plus the XSS session, indexed once for this module."""
    from agent_history.db.roles import READER

    name = f"w_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    db = TestDatabase(name, pg_server.dsn(name), pg_server.dsn(name, user=READER), pg_server)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home).items()]
    sources.append(Source("claude-xss", "claude", _xss_home(tmp_path_factory.mktemp("xss"))))
    # the synthetic loop homes (fixtures/loops/build.py), under their own namespaces: loop badges
    loops_home = Path(__file__).resolve().parents[1] / "fixtures" / "loops" / "home"
    sources += [
        Source(ns.replace("-local", "-loops"), agent_of_namespace(ns), p) for ns, p in home_layout(loops_home).items()
    ]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert Loader(conn).run(sources).files_failed == 0
    yield db
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _env(tmp: Path, dsn: str, reader_dsn: str, **extra: str) -> dict[str, str]:
    (tmp / "config.toml").touch()
    env = {
        k: v for k, v in os.environ.items() if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
    }
    env.update(
        AGENT_HISTORY_DSN=dsn,
        AGENT_HISTORY_READER_DSN=reader_dsn,
        AGENT_HISTORY_CONFIG=str(tmp / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(tmp / "data"),
        HOME=str(tmp / "home"),
        **extra,
    )
    return env


class Served:
    """A running `agent-history web` subprocess and its URL."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_history", "web", "--port", "0", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()  # blocks until the socket is bound (or the process ends)
        if not line.startswith("serving "):
            self.proc.kill()
            raise AssertionError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.url = line.split()[1].rstrip("/")

    def stop(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=30)
        return err


@pytest.fixture(scope="module")
def server(web_db, tmp_path_factory):
    s = Served(_env(tmp_path_factory.mktemp("web"), web_db.dsn, web_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (see .ci/run)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page recording dialogs, console errors and page errors."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    p = ctx.new_page()
    p.dialogs, p.errors = [], []
    p.on("dialog", lambda d: (p.dialogs.append(d.message), d.dismiss()))
    p.on("console", lambda m: p.errors.append(m.text) if m.type == "error" else None)
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    yield p
    ctx.close()


def _shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))  # the viewport: full-page shots of long timelines are slow
    print(f"screenshot: {path}")
    return path


def test_search_finds_a_known_session_and_opens_it_at_the_hit(server, page):
    page.goto(f"{server.url}/search")
    page.fill("input[name=q]", "tools available to you allowed")
    with page.expect_navigation():  # the form is a plain GET: wait for the results page
        page.click("button[type=submit]")
    hit = page.locator(f".hit[data-session='{KNOWN_UID}']").first
    assert hit.count() == 1
    assert page.locator(".hit .snippet mark").count() > 0
    _shot(page, "search")
    with page.expect_navigation(url=f"**/session/{KNOWN_UID}?**"):  # through the /hit redirect
        hit.locator("a.open").click()
    assert f"/session/{KNOWN_UID}" in page.url
    anchor = page.url.split("#", 1)[1]
    target = page.locator(f"#{anchor}")
    assert target.get_attribute("data-class") == "human_prompt"
    assert KNOWN_PROMPT in target.inner_text()
    assert page.errors == [] and page.dialogs == []


def test_session_page_shows_the_catalogues_prompt_and_tool_call_counts(server, page, web_db):
    with psycopg.connect(web_db.dsn) as conn:
        sid, uid, agent_id = conn.execute(
            "SELECT s.id, s.session_uid, s.agent_id FROM ah.session s "
            "WHERE (SELECT count(*) FROM ah.message m WHERE m.session_id = s.id) "
            "    + (SELECT count(*) FROM ah.tool_call t WHERE t.session_id = s.id) < 200 "
            "ORDER BY (SELECT count(*) FROM ah.tool_call t WHERE t.session_id = s.id) DESC, s.session_uid LIMIT 1"
        ).fetchone()
        prompts = conn.execute(
            "SELECT count(*) FROM ah.message WHERE session_id = %s AND message_class = 'human_prompt'", (sid,)
        ).fetchone()[0]
        tools = conn.execute("SELECT count(*) FROM ah.tool_call WHERE session_id = %s", (sid,)).fetchone()[0]
    assert tools > 0
    page.goto(f"{server.url}/session/{uid}?agent_id={agent_id}")
    assert page.inner_text("#prompt-count") == str(prompts)
    assert page.inner_text("#tool-call-count") == str(tools)
    assert page.locator("#timeline [data-kind=tool_call]").count() == tools
    assert page.locator("#timeline [data-class=human_prompt]").count() == prompts
    _shot(page, "session")
    assert page.errors == []


def test_session_page_shows_the_resume_command_with_a_copy_button(server, page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    page.goto(f"{server.url}/session/{KNOWN_UID}")
    assert page.inner_text("#resume-command") == f"claude --resume {KNOWN_UID}"
    assert page.inner_text("#fork-command") == f"claude --resume {KNOWN_UID} --fork-session"
    page.click("button[data-copy=resume-command]")
    page.wait_for_function("document.querySelector('button[data-copy=resume-command]').textContent === 'copied'")
    assert page.evaluate("navigator.clipboard.readText()") == f"claude --resume {KNOWN_UID}"
    assert page.errors == []


def test_an_exported_html_file_shows_the_xss_prompt_as_text_offline(server, page, web_db, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    out = tmp / "xss.html"
    done = subprocess.run(
        [sys.executable, "-m", "agent_history", "export", XSS_UID, "--format", "html", "--out", str(out)],
        env=_env(tmp, web_db.dsn, web_db.reader_dsn),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    assert XSS in page.inner_text("body")  # the payload is text
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert requests == [out.as_uri()]  # self-contained: nothing else is loaded
    assert page.dialogs == [] and page.errors == []
    # the web session page offers the same export, as a download
    got = httpx.get(f"{server.url}/session/{XSS_UID}/export?format=html")
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/html")
    assert got.headers["content-disposition"] == f'attachment; filename="{XSS_UID}.html"'
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in got.text and "<script>" not in got.text
    page.goto(f"{server.url}/session/{XSS_UID}")
    assert page.locator("#export a").count() == 3
    assert httpx.get(f"{server.url}/session/{XSS_UID}/export?format=pdf").status_code == 400


def test_secrets_page_lists_the_last_scans_findings(server, page, web_db, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("secrets")
    done = subprocess.run(
        [sys.executable, "-m", "agent_history", "secrets", "--json"],
        env=_env(tmp, web_db.dsn, web_db.reader_dsn),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    with psycopg.connect(web_db.dsn) as conn:
        n = conn.execute("SELECT count(*) FROM ah.secret_finding").fetchone()[0]
    page.goto(f"{server.url}/secrets")
    assert page.locator("#secrets tbody tr").count() == min(n, 500)
    if n:
        assert "[REDACTED]" in page.inner_text("#secrets")
    assert page.errors == []


def test_usage_chart_renders_the_days_with_calls(server, page, web_db):
    with psycopg.connect(web_db.dsn) as conn:
        agent_days = conn.execute(
            "SELECT count(DISTINCT (s.agent, (mc.ts AT TIME ZONE 'UTC')::date)) FROM ah.model_call mc "
            "JOIN ah.session s ON s.id = mc.session_id WHERE mc.ts IS NOT NULL AND NOT coalesce(mc.is_api_error, false) "
            "AND num_nonnulls(mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.cache_write_1h, mc.output) > 0"
        ).fetchone()[0]
    page.goto(f"{server.url}/usage")
    page.wait_for_selector("#chart-tokens[data-points]")
    page.wait_for_selector("#chart-cost[data-points]")
    assert page.get_attribute("#chart-tokens", "data-points") == str(agent_days)
    assert page.locator("#chart-tokens canvas").count() == 1
    assert page.locator("#chart-cost canvas").count() == 1
    _shot(page, "usage")
    assert page.errors == []


def test_sessions_and_status_pages_render(server, page, web_db):
    page.goto(f"{server.url}/sessions?sort=tokens")
    with psycopg.connect(web_db.dsn) as conn:
        kids = conn.execute(
            "SELECT count(*) FROM ah.session WHERE root_session_id IS NOT NULL AND root_session_id <> id"
        ).fetchone()[0]
    assert kids > 0
    # every sub-agent thread is listed under its root (the corpus fits on one page)
    assert page.locator("#sessions tr.child").count() == kids
    _shot(page, "sessions")
    page.goto(f"{server.url}/status")
    assert "claude-xss" in page.inner_text("#namespaces")
    _shot(page, "status")
    assert page.errors == []


def test_a_transcripts_markup_is_shown_as_text_and_never_runs(server, page):
    page.goto(f"{server.url}/search?q=alert+onerror&namespace=claude-xss")
    assert page.locator(".hit").count() >= 1
    page.goto(f"{server.url}/session/{XSS_UID}")
    prompt = page.locator("#timeline [data-class=human_prompt] pre")
    assert prompt.inner_text() == XSS
    assert page.locator("#timeline script, #timeline img, #timeline b").count() == 0
    _shot(page, "xss")
    assert page.dialogs == []
    assert page.errors == []


def test_every_route_reads_as_the_reader_role_in_a_read_only_transaction(server):
    timings = {}
    routes = ["/search?q=pool", "/sessions", f"/session/{KNOWN_UID}", "/usage", "/api/usage", "/status"]
    for route in routes:
        r = httpx.get(server.url + route)
        assert r.status_code == 200, (route, r.text[:300])
        assert r.headers["x-ah-role"] == "ah_reader"
        assert r.headers["x-ah-read-only"] == "on"
        assert "script-src 'self'" in r.headers["content-security-policy"]
        timings[route] = float(r.headers["server-timing"].split("dur=")[1])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / "timings.txt"
    out.write_text("".join(f"{ms:8.1f} ms  {route}\n" for route, ms in timings.items()))
    print(f"page timings (server ms): {out}\n" + out.read_text())


def test_a_dns_rebinding_host_header_is_refused(server):
    r = httpx.get(server.url + "/status", headers={"Host": "attacker.example"})
    assert r.status_code == 421


def test_non_loopback_bind_without_token_is_refused(web_db, tmp_path):
    # (the other refusals are pure: tests/test_web_pure.py)
    r = subprocess.run(
        [sys.executable, "-m", "agent_history", "web", "--host", "0.0.0.0"],
        env=_env(tmp_path, web_db.dsn, web_db.reader_dsn),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r
    assert "refusing to serve on non-loopback host '0.0.0.0'" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_remote_mode_needs_the_token_and_the_guard_refuses_an_owner_role(web_db, tmp_path):
    token = "t0ken-" + uuid.uuid4().hex
    # the "reader" here is the owner: the role guard must refuse it, whatever the page
    s = Served(
        _env(tmp_path, web_db.dsn, web_db.dsn, AGENT_HISTORY_WEB_TOKEN=token), "--host", "127.0.0.1", "--allow-remote"
    )
    try:
        assert httpx.get(s.url + "/status").status_code == 401
        assert httpx.get(s.url + "/status", headers={"Authorization": "Bearer wrong"}).status_code == 401
        r = httpx.get(s.url + "/status", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 503, r.text[-600:]
        assert "refused by the role guard" in r.text
        r = httpx.get(s.url + f"/status?token={token}")
        assert r.status_code == 303 and r.headers["location"] == "/status"
        assert "ah_web_token" in r.headers["set-cookie"]
    finally:
        s.stop()


def test_a_hit_deep_in_a_long_session_opens_the_page_holding_it(server, web_db):
    from agent_history.read.timeline_pages import PAGE_EVENTS

    with psycopg.connect(web_db.dsn) as conn:
        # the corpus session with the most messages; its last prompt-or-reply lies past page 1
        sid, uid, agent_id, n = conn.execute(
            "SELECT s.id, s.session_uid, s.agent_id, count(*) FROM ah.session s JOIN ah.message m ON m.session_id = s.id "
            "GROUP BY s.id ORDER BY 4 DESC, s.session_uid LIMIT 1"
        ).fetchone()
        (mid,) = conn.execute(
            "SELECT id FROM ah.message WHERE session_id = %s ORDER BY source_id DESC, byte_offset DESC, id DESC LIMIT 1",
            (sid,),
        ).fetchone()
    assert n > PAGE_EVENTS
    r = httpx.get(f"{server.url}/hit/message/{mid}")
    assert r.status_code == 303
    location = r.headers["location"]
    path, anchor = location.split("#")
    assert path.startswith(f"/session/{uid}?") and "page=1" not in path
    page_html = httpx.get(server.url + path).text
    assert f'id="{anchor}"' in page_html
    assert httpx.get(f"{server.url}/hit/message/999999999").status_code == 404


def test_a_spawn_links_to_its_sub_agent(server, page, web_db):
    with psycopg.connect(web_db.dsn) as conn:
        parent_uid, parent_agent_id, child_uid, child_agent_id = conn.execute(
            "SELECT p.session_uid, p.agent_id, c.session_uid, c.agent_id FROM ah.subagent_spawn sp "
            "JOIN ah.session p ON p.id = sp.session_id JOIN ah.session c ON c.id = sp.child_session_id "
            "ORDER BY p.session_uid, sp.id LIMIT 1"
        ).fetchone()
    page.goto(f"{server.url}/session/{parent_uid}?agent_id={parent_agent_id}&page=1")
    link = page.locator(f"a.child[href*='{child_uid}']").first
    with page.expect_navigation(url=f"**/session/{child_uid}?**"):
        link.click()
    assert f"/session/{child_uid}" in page.url
    assert (f"sub-agent {child_agent_id}" if child_agent_id else child_uid) in page.inner_text("main p.muted")
    assert page.errors == []


def test_loop_roots_and_lanes_carry_a_loop_badge_and_the_usage_page_lists_the_loops(server, page, web_db):
    with psycopg.connect(web_db.dsn) as conn:
        loops = conn.execute("SELECT count(*) FROM ah.loops").fetchone()[0]
        memberships = conn.execute(
            "SELECT count(*) FROM (SELECT root_session_id, id FROM ah.loops UNION SELECT session_id, loop_id FROM ah.lane) m"
        ).fetchone()[0]
        mains = conn.execute(
            "SELECT count(*) FROM ah.session WHERE agent_id = '' AND NOT coalesce(is_subagent, false)"
        ).fetchone()[0]
    assert loops > 0 and mains <= 50  # every thread is on the first sessions page
    page.goto(f"{server.url}/sessions")
    assert page.locator("#sessions .badge.loop").count() == memberships
    page.goto(f"{server.url}/usage")
    assert page.locator("#loops tbody tr").count() == loops
    assert page.errors == []


def test_session_health_on_the_list_and_the_page(server):
    listed = httpx.get(server.url + "/sessions", params={"health": "C-F"})
    assert listed.status_code == 200, listed.text[:300]
    assert listed.text.count('<span class="badge grade-C">C</span>') == 2
    assert "0d3a8e6f-290f-4105-a327-a2496e5e2a83" in listed.text and KNOWN_UID not in listed.text
    page = httpx.get(server.url + "/session/0d3a8e6f-290f-4105-a327-a2496e5e2a83")
    assert "interrupts 3 ≥ 3 (−15); tool failures 21.4% ≥ 10% (−10)" in page.text
    assert httpx.get(server.url + "/sessions", params={"health": "Z"}).status_code == 400
