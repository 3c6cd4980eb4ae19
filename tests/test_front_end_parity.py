"""The three front ends give the same answer to the same question (issue 26, one query layer): the
CLI's ``--json``, the MCP server (the SDK client over stdio) and the web UI's JSON routes (a real
``agent-history web`` process on loopback) build one request object (`read.requests`) and answer
it with one read function — for search, sessions, usage, why and touched on the shared corpus
catalogue — and
a bad request gets the same one-line error from each, naming the parameter as that front end
names it (``--since`` on the command line, ``since`` for a tool argument or a GET parameter)."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from agent_history.config import default_host
from agent_history.harnesses import ACCEPTED_NAMES
from tests.corpus_db import cli_environment, corpus_db, resident_environment  # noqa: F401 - fixture
from tests.mcp_client import call_tools, server_env
from tests.test_web import Served, _env

TOKENIZER_SESSION = "9e953218-585f-4692-89df-9e0747a31c68"  # claude-local: the tokenizer/submodule session
REVIEW_SESSION = "0fae0449-64d3-4788-8622-d3a47d82c14b"  # claude-local: committed and pushed 6d0e203


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("parity-web"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


@pytest.fixture(scope="module")
def cli_env(corpus_db, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    """The CLI's environment over the module's catalogue; its read commands answered by a resident
    query process (`resident_environment`)."""
    plain = cli_environment(tmp_path_factory.mktemp("parity-cli"), corpus_db.dsn, corpus_db.reader_dsn)
    with resident_environment(plain) as env:
        yield env


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
    )


def cli_json(env: dict, *args: str):
    r = cli(env, *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def web_json(web, path: str, params: list[tuple[str, str]]):
    r = httpx.get(web.url + path, params=params, timeout=120)
    assert r.status_code == 200, r.text[:300]
    return r.json()


# Each question asked three ways: CLI arguments, MCP tool and arguments, web route and parameters.
SEARCH = (
    ("search", "tokenizer", "--agent", "claude-code", "--limit", "10", "--mode", "keyword"),
    ("search", {"query": "tokenizer", "agents": ["claude-code"], "limit": 10, "mode": "keyword"}),
    ("/api/search", [("q", "tokenizer"), ("agent", "claude-code"), ("limit", "10"), ("mode", "keyword")]),
)
SESSIONS = (
    ("sessions", "--agent", "claude", "--since", "2025-01-01", "--limit", "8"),
    ("sessions", {"agents": ["claude"], "since": "2025-01-01", "limit": 8}),
    ("/api/sessions", [("agent", "claude"), ("since", "2025-01-01"), ("limit", "8")]),
)
USAGE = (
    ("usage", "monthly", "--timezone", "UTC", "--since", "2025-01-01"),
    ("usage", {"view": "monthly", "timezone": "UTC", "since": "2025-01-01"}),
    ("/api/usage/report", [("view", "monthly"), ("timezone", "UTC"), ("since", "2025-01-01")]),
)
WHY = (
    ("why", "6D0E203"),
    ("why", {"sha": "6D0E203"}),
    ("/api/why", [("sha", "6D0E203")]),
)
TOUCHED = (
    ("touched", "public/tokenizer.css", "--limit", "10"),
    ("touched", {"pattern": "public/tokenizer.css", "limit": 10, "touches_per_session": 20}),
    ("/api/touched", [("pattern", "public/tokenizer.css"), ("limit", "10")]),
)
BAD = {  # the same mistake through each front end → the same line, naming the parameter as each names it
    "{since}: not a time: 'yesterday' (use 7d, 12h, 30m, 2w, YYYY-MM-DD or an ISO timestamp)": (
        ("sessions", "--since", "yesterday"),
        ("sessions", {"since": "yesterday"}),
        ("/api/sessions", [("since", "yesterday")]),
    ),
    "{since} 2025-12-01 is after {until} 2025-11-01": (
        ("search", "pool", "--since", "2025-12-01", "--until", "2025-11-01"),
        ("search", {"query": "pool", "since": "2025-12-01", "until": "2025-11-01"}),
        ("/api/search", [("q", "pool"), ("since", "2025-12-01"), ("until", "2025-11-01")]),
    ),
    "{timezone}: unknown time zone 'Mars/Olympus' (an IANA name such as UTC or Europe/Berlin)": (
        ("usage", "--timezone", "Mars/Olympus"),
        ("usage", {"timezone": "Mars/Olympus"}),
        ("/api/usage/report", [("timezone", "Mars/Olympus")]),
    ),
    "{host} nosuch: no session was indexed by it (hosts: {hosts})": (
        ("sessions", "--host", "nosuch"),
        ("sessions", {"hosts": ["nosuch"]}),
        ("/api/sessions", [("host", "nosuch")]),
    ),
    "unknown agent 'vim' (accepted: {accepted})": (
        ("sessions", "--agent", "vim"),
        None,  # the MCP tools' JSON schema lists the accepted names: 'vim' never reaches a request
        ("/api/sessions", [("agent", "vim")]),
    ),
    "not a commit sha: 'xyz-not-hex' (7–40 hex digits)": (
        ("why", "xyz-not-hex"),
        ("why", {"sha": "xyz-not-hex"}),
        ("/api/why", [("sha", "xyz-not-hex")]),
    ),
    "not a commit sha: '6d0e20' (7–40 hex digits)": (  # six digits: too short to name a commit
        ("why", "6d0e20"),
        ("why", {"sha": "6d0e20"}),
        ("/api/why", [("sha", "6d0e20")]),
    ),
    "{since}: not a time: 'lately' (use 7d, 12h, 30m, 2w, YYYY-MM-DD or an ISO timestamp)": (
        ("touched", "pool.py", "--since", "lately"),
        ("touched", {"pattern": "pool.py", "since": "lately"}),
        ("/api/touched", [("pattern", "pool.py"), ("since", "lately")]),
    ),
    "{limit} must be between 1 and 1000 (got 0)": (
        ("touched", "pool.py", "--limit", "0"),
        None,  # the tool's JSON schema bounds its limit (1–50): 0 never reaches a request
        ("/api/touched", [("pattern", "pool.py"), ("limit", "0")]),
    ),
    "unknown {op} 'burn' (known: read, create, edit, delete, move)": (
        ("touched", "pool.py", "--op", "burn"),
        None,  # the tool's JSON schema lists the operations
        ("/api/touched", [("pattern", "pool.py"), ("op", "burn")]),
    ),
}
FIND_SESSIONS = (  # the last three MCP calls: find_sessions by host, without, and with an unknown host
    ("find_sessions", {"query": "tokenizer", "mode": "keyword", "hosts": [default_host() or "none"]}),
    ("find_sessions", {"query": "tokenizer", "mode": "keyword"}),
    ("find_sessions", {"query": "tokenizer", "mode": "keyword", "hosts": ["nosuch"]}),
)
CLI_NAMES = {"since": "--since", "until": "--until", "timezone": "--timezone", "host": "--host", "limit": "--limit",
             "op": "--op"}  # fmt: skip
KEY_NAMES = {"since": "since", "until": "until", "timezone": "timezone", "host": "host", "limit": "limit", "op": "op"}


@pytest.fixture(scope="module")
def mcp_answers(corpus_db, tmp_path_factory):  # noqa: F811
    """Every MCP call of this module, made through one server process: tool → result."""
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, tmp_path_factory.mktemp("parity-mcp"),
                     AGENT_HISTORY_QUERY_IDLE_S="0")  # fmt: skip
    calls = [SEARCH[1], SESSIONS[1], USAGE[1], WHY[1], TOUCHED[1], *(ways[1] for ways in BAD.values() if ways[1]),
             *FIND_SESSIONS]  # fmt: skip
    _tools, results = call_tools(env, calls)
    return results


def _mcp(result) -> dict:
    data = result.data
    data.pop("scope")
    return data


def test_search_gives_the_same_hits_everywhere(cli_env, web, mcp_answers):
    def key(h: dict) -> tuple:
        return (h["session_uid"], h["agent_id"], h["kind"], h["source_path"], h["byte_offset"], h["score"])

    got_cli = cli_json(cli_env, *SEARCH[0])
    got_mcp = _mcp(mcp_answers[0])
    got_web = web_json(web, *SEARCH[2])
    hits = [key(h) for h in got_cli["hits"]]
    assert len(hits) == 10 and hits[0][0] == TOKENIZER_SESSION
    assert [key(h) for h in got_mcp["hits"]] == hits
    assert [key(h) for h in got_web["hits"]] == hits
    assert got_cli["mode"] == got_mcp["mode"] == got_web["mode"] == "keyword"
    # the CLI's and the web's hits are the same objects, snippet and highlight spans included
    assert got_web["hits"] == got_cli["hits"]


def test_sessions_gives_the_same_rows_everywhere(cli_env, web, mcp_answers):
    got_cli = cli_json(cli_env, *SESSIONS[0])
    rows = [(r["session_uid"], r["agent"]) for r in got_cli]
    assert len(rows) == 8 and {agent for _uid, agent in rows} == {"claude"}
    assert _mcp(mcp_answers[1]) == {"sessions": got_cli}
    assert web_json(web, *SESSIONS[2]) == {"sessions": got_cli}


def test_usage_gives_the_same_report_everywhere(cli_env, web, mcp_answers):
    got_cli = cli_json(cli_env, *USAGE[0])
    assert got_cli["timezone"] == "UTC" and got_cli["monthly"]
    assert got_cli["totals"]["totalTokens"] == sum(m["totalTokens"] for m in got_cli["monthly"]) > 0
    assert _mcp(mcp_answers[2]) == got_cli
    assert web_json(web, *USAGE[2]) == got_cli


def test_why_gives_the_same_origins_everywhere(cli_env, web, mcp_answers):
    got_cli = cli_json(cli_env, *WHY[0])
    assert [(m["op"], m["sha"], m["session"]["session_uid"]) for m in got_cli["matches"]] == [
        ("commit", "6d0e203", REVIEW_SESSION),
        ("push", "6d0e203", REVIEW_SESSION),
    ]
    assert got_cli["sha"] == "6D0E203" and got_cli["collected"] == []
    got_mcp = _mcp(mcp_answers[3])
    assert got_mcp == {"sha": "6D0E203", "origins": got_cli["matches"], "collected": []}
    assert web_json(web, *WHY[2]) == got_cli


def test_touched_gives_the_same_sessions_everywhere(cli_env, web, mcp_answers):
    got_cli = cli_json(cli_env, *TOUCHED[0])
    assert [(s["session"]["session_uid"], s["ops"]) for s in got_cli["sessions"]] == [
        (TOKENIZER_SESSION, {"delete": 1, "read": 2}),
        ("b25638d7-b104-4f06-a797-70ac33d069ed", {"edit": 1, "read": 1}),
    ]
    assert _mcp(mcp_answers[4]) == got_cli
    assert web_json(web, *TOUCHED[2]) == got_cli


@pytest.mark.parametrize("n", range(len(BAD)))
def test_a_bad_request_reads_the_same_everywhere(cli_env, web, mcp_answers, n):
    template, (argv, tool, (path, params)) = list(BAD.items())[n]
    accepted = ", ".join(ACCEPTED_NAMES)
    hosts = default_host() or "none recorded"  # the corpus catalogue was indexed on this machine
    r = cli(cli_env, *argv, "--json")
    assert (r.returncode, r.stderr) == (
        2,
        "error: " + template.format(**CLI_NAMES, accepted=accepted, hosts=hosts) + "\n",
    )
    message = template.format(**KEY_NAMES, accepted=accepted, hosts=hosts)
    if tool is not None:
        mcp = mcp_answers[5 + sum(1 for ways in list(BAD.values())[:n] if ways[1])]
        assert (mcp.is_error, mcp.text) == (True, message)
    w = httpx.get(web.url + path, params=params, timeout=60)
    assert (w.status_code, w.json()) == (400, {"error": message})


def test_find_sessions_filters_by_host_through_the_sessions_builder(corpus_db, mcp_answers):  # noqa: F811
    by_host, everywhere, unknown = mcp_answers[-3:]
    host = default_host()
    with corpus_db.connect() as conn:
        origin = dict(conn.execute("SELECT session_uid, origin_host FROM ah.session WHERE agent_id = ''").fetchall())
    found = [s["session_uid"] for s in _mcp(everywhere)["sessions"]]
    kept = [s["session_uid"] for s in _mcp(by_host)["sessions"]]
    assert found[0] == kept[0] == TOKENIZER_SESSION and len(found) == len(kept) == 10
    assert {origin[uid] for uid in kept} == {host}  # only roots this machine indexed …
    # … in the unfiltered order; a root not in the catalogue (a sub-agent's parent never indexed) is left out
    assert [uid for uid in found if origin.get(uid) == host] == kept[: sum(origin.get(uid) == host for uid in found)]
    assert any(origin.get(uid) != host for uid in found)
    assert (unknown.is_error, unknown.text) == (True, f"host nosuch: no session was indexed by it (hosts: {host})")


@pytest.mark.parametrize(
    ("path", "params", "template"),
    [
        ("/sessions", [("host", "nosuch")], "{host} nosuch: no session was indexed by it (hosts: {hosts})"),
        ("/sessions", [("agent", "vim")], "unknown agent 'vim' (accepted: {accepted})"),
        ("/usage", [("since", "yesterday")], list(BAD)[0]),
        ("/api/usage", [("since", "yesterday")], list(BAD)[0]),
    ],
)
def test_the_sessions_and_usage_pages_refuse_as_the_api_does(web, path, params, template):
    """The pages build the same request objects: the same mistake is a 400 with the same line."""
    import html

    message = template.format(**KEY_NAMES, accepted=", ".join(ACCEPTED_NAMES), hosts=default_host() or "none recorded")
    r = httpx.get(web.url + path, params=params, timeout=60)
    body = r.json()["error"] if path.startswith("/api/") else html.unescape(r.text)
    assert r.status_code == 400 and message in body, body[:500]
