"""User-facing leftovers from stop 38's notes, each asserted with its exact value. The CLI is the
reference: the web API and the MCP server refuse the same inputs with the same one-line message
(parameters named as the front end names them: ``--session`` on the command line, ``session``
in a GET parameter or a tool argument).

- ``/api/search?session=ab`` answered 200 with no hits where ``search --session ab`` exits 2:
  now a 400 with that line (`read.catalog.check_filter_values`, shared); the MCP ``search`` tool
  refuses it too.
- ``/api/sessions?subagents=maybe`` was taken as false: a yes/no GET parameter is now
  true/false, 1/0, yes/no or on/off (any case, empty false), anything else a 400 naming it.
- MCP ``search`` with a NUL in the query answered psycopg's message: every request builder now
  refuses a NUL in any text parameter with one line (a command-line argument cannot hold one).
- MCP ``sql`` named a column's type by its oid (``"2278"`` for void): now PostgreSQL's name.
- ``sessions exclusions import`` read an ``excluded_at`` without an offset in the database
  session's zone: now UTC, as ``--since`` reads a naive timestamp.
- ``collect /tmp`` (not a repository) exited 1, the code for "found nothing": a PATH argument
  that is not a repository is now a usage error, exit 2 (one line each, the others collected).
- ``disconnect`` left ``"mcpServers": {}`` or an empty file that ``connect`` had created: what
  connect created is recorded (`connect.created`) and removed once nothing else is in it.
- ``sessions`` showed 0 messages for a whole copy without saying why (tests/test_shared_rows.py).
- The web usage page's by-role and loops tables ignored ``project`` (tests/test_web_usage_project.py,
  tests/test_loops.py).
- ``usage`` counted the sessions it cannot count in two statements: now one (`sessions_uncounted`).
- A SIGKILLed stopping resident server left ``service.stopping`` behind and ``service status``
  said "stopping" while its pid lived on (a zombie, or reused): the file records the process's
  start time, and status checks it (`cli.process_identity`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest

from agent_history.cli.process_identity import is_same_process, start_ticks
from agent_history.cli.resident_control import STOPPING_FILE, paths_of, service_status
from agent_history.connect import connect, disconnect
from agent_history.connect.created import record_path
from agent_history.mcp.sqltool import type_names
from agent_history.read.requests import RequestError, search_request, sessions_request
from tests.corpus_db import corpus_db, corpus_rw_db  # noqa: F401 - fixtures
from tests.mcp_client import call, server_env
from tests.test_cli_arguments import SESSION, cli, environment
from tests.test_web import Served, _env

SHORT = "error: --session: give a session uid or a prefix of at least 6 characters (got 'ab')\n"


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("web-left39"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


def test_a_short_session_prefix_is_the_same_error_from_the_cli_and_the_web_api(corpus_db, own_tmp, web):  # noqa: F811
    r = cli(environment(corpus_db, own_tmp), "search", "build", "--session", "ab")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", SHORT)
    api = httpx.get(web.url + "/api/search?q=build&session=ab", timeout=60)
    assert (api.status_code, api.json()) == (
        400,
        {"error": "session: give a session uid or a prefix of at least 6 characters (got 'ab')"},
    )


def test_a_session_naming_none_and_an_unknown_namespace_are_400s_in_the_web_api(corpus_db, web):  # noqa: F811
    api = httpx.get(web.url + "/api/search?q=build&session=abcdef01", timeout=60)
    assert (api.status_code, api.json()) == (400, {"error": "session: no session 'abcdef01' in the catalogue"})
    api = httpx.get(web.url + "/api/search?q=build&namespace=nowhere", timeout=60)
    assert api.status_code == 400
    assert api.json()["error"].startswith("unknown namespace 'nowhere' (indexed: ")
    ok = httpx.get(web.url + f"/api/search?q=build&session={SESSION[:8]}&mode=keyword", timeout=60)
    assert ok.status_code == 200, ok.text[:300]
    assert {h["session_uid"] for h in ok.json()["hits"]} == {SESSION}


@pytest.mark.parametrize("value", ["maybe", "2", "tru", "none"])
def test_a_boolean_get_parameter_spelled_otherwise_is_a_400_naming_it(web, value):
    r = httpx.get(web.url + f"/api/sessions?subagents={value}", timeout=60)
    assert (r.status_code, r.json()) == (
        400,
        {"error": f"subagents must be true or false (also 1/0, yes/no, on/off), got {value!r}"},
    )
    page = httpx.get(web.url + f"/sessions?subagents={value}", timeout=60)
    assert page.status_code == 400
    assert f"subagents must be true or false (also 1/0, yes/no, on/off), got &#39;{value}&#39;" in page.text


def test_the_boolean_spellings_list_the_same_sessions(web):
    def uids(value: str) -> list[str]:
        r = httpx.get(web.url + f"/api/sessions?limit=200&subagents={value}", timeout=60)
        assert r.status_code == 200, r.text[:300]
        return [(s["session_uid"], s.get("agent_id")) for s in r.json()["sessions"]]

    with_subagents, without = uids("true"), uids("false")
    assert len(with_subagents) > len(without) > 0
    assert [uids(v) for v in ("1", "YES", "on")] == [with_subagents] * 3
    assert [uids(v) for v in ("0", "No", "off", "")] == [without] * 4


@pytest.mark.parametrize(
    ("params", "flags", "error"),
    [
        ({"query": "a\x00b"}, False, "query holds a NUL character (no catalogue text does)"),
        ({"query": "a\x00b"}, True, "QUERY holds a NUL character (no catalogue text does)"),
        ({"query": "a", "project": "/x\x00"}, True, "--project holds a NUL character (no catalogue text does)"),
        ({"query": "a", "agents": ["claude", "co\x00dex"]}, False, "agents holds a NUL character (no catalogue text does)"),
    ],
)  # fmt: skip
def test_a_nul_in_any_text_parameter_is_one_line_from_the_builder(params, flags, error):
    with pytest.raises(RequestError) as exc:
        search_request(params, flags=flags)
    assert str(exc.value) == error


def test_a_nul_in_a_sessions_filter_is_refused_too():
    with pytest.raises(RequestError) as exc:
        sessions_request({"project": "a\x00"}, flags=False)
    assert str(exc.value) == "project holds a NUL character (no catalogue text does)"


def test_the_mcp_search_tool_answers_a_nul_and_a_short_session_with_the_request_line(corpus_db, own_tmp):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, own_tmp)
    nul = call(env, "search", {"query": "a\x00b"})
    assert nul.is_error
    assert "query holds a NUL character (no catalogue text does)" in nul.text
    assert "psycopg" not in nul.text and "0x00" not in nul.text
    short = call(env, "search", {"query": "build", "session": "ab"})
    assert short.is_error
    assert "session: give a session uid or a prefix of at least 6 characters (got 'ab')" in short.text


def test_type_names_are_postgresqls_own(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        vector = conn.execute("SELECT 'vector'::regtype::oid::int").fetchone()[0]
        names = type_names(conn, [2278, 1700, 25, 23, 1007, 1184, vector, 4_000_000_000])
    assert names == ["void", "numeric", "text", "int4", "int4[]", "timestamptz", "vector", "unknown (oid 4000000000)"]


def test_the_mcp_sql_tool_names_void_by_name(corpus_db, own_tmp):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, own_tmp)
    data = call(env, "sql", {"statement": "SELECT pg_sleep(0) AS v, 1.5::numeric AS n, 'x'::text AS t"}).data
    assert data["columns"] == [
        {"name": "v", "type": "void"},
        {"name": "n", "type": "numeric"},
        {"name": "t", "type": "text"},
    ]


@pytest.mark.parametrize(
    ("excluded_at", "stored"),
    [
        ("2025-01-02T03:04:05", datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),  # naive: UTC, as --since
        ("2025-01-02T03:04:05+02:00", datetime(2025, 1, 2, 1, 4, 5, tzinfo=UTC)),  # an offset is kept
    ],
)
def test_an_excluded_at_without_an_offset_is_utc_not_the_servers_zone(corpus_rw_db, own_tmp, excluded_at, stored):  # noqa: F811
    env = {**environment(corpus_rw_db, own_tmp), "PGTZ": "America/New_York"}  # the session's zone: not UTC
    file = own_tmp / "exclusions.json"
    file.write_text(json.dumps([{"agent": "claude", "session_uid": SESSION, "excluded_at": excluded_at}]))
    r = cli(env, "sessions", "exclusions", "import", str(file))
    assert (r.returncode, r.stdout, r.stderr) == (0, "1 exclusion added, 0 already present\n", "")
    with psycopg.connect(corpus_rw_db.dsn) as conn:
        assert conn.execute("SELECT excluded_at FROM ah.session_exclusion").fetchall() == [(stored,)]


def test_collect_of_a_path_that_is_not_a_repository_is_a_usage_error(cli_env, own_tmp):
    plain, missing = own_tmp / "plain", own_tmp / "missing"
    plain.mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "agent_history", "collect", str(plain), str(missing)],
        env=cli_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"not a git repository: {plain}", f"does not exist: {missing}"]


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_HISTORY_DATA_DIR", str(tmp_path / "data"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "AGENT_HISTORY_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.mark.parametrize(("agent", "rel"), [("cursor", ".cursor/mcp.json"), ("codex", ".codex/config.toml")])
def test_disconnect_removes_the_config_file_connect_created(home, agent, rel):
    config = home / rel
    assert connect(agent).config.action == "created"
    assert json.loads(record_path().read_text()) == {
        str(config): {"file": True, "key": ["mcp_servers" if agent == "codex" else "mcpServers"]}
    }
    gone = disconnect(agent)
    assert (gone.config.action, gone.config.backup) == ("removed", None)
    assert not config.exists()
    assert not record_path().exists()  # nothing left to remember


def test_disconnect_removes_the_servers_object_connect_added_and_keeps_the_rest(home):
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "Dracula"}\n')
    connect("gemini")
    assert set(json.loads(settings.read_text())) == {"theme", "mcpServers"}
    assert disconnect("gemini").config.action == "removed"
    assert json.loads(settings.read_text()) == {"theme": "Dracula"}


def test_disconnect_keeps_an_empty_servers_object_the_user_had(home):
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"mcpServers": {}}\n')
    connect("gemini")
    assert not record_path().exists()  # connect created nothing here
    disconnect("gemini")
    assert json.loads(settings.read_text()) == {"mcpServers": {}}


def test_disconnect_keeps_a_created_file_the_user_has_written_to_since(home):
    config = home / ".cursor" / "mcp.json"
    connect("cursor")
    data = json.loads(config.read_text())
    data["mcpServers"]["playwright"] = {"command": "npx"}
    data["theme"] = "light"
    config.write_text(json.dumps(data))
    disconnect("cursor")
    assert json.loads(config.read_text()) == {"mcpServers": {"playwright": {"command": "npx"}}, "theme": "light"}


# The two statements `sessions_uncounted` replaces (stop 38's), kept here as the specification.
_CLAIMS = "EXISTS (SELECT 1 FROM ah.row_claim AS c WHERE c.session_id = s.id AND c.row_table = 'model_call')"
_WITHOUT_USAGE = f"s.model_call_count IS NULL AND NOT {_CLAIMS}"
_ELSEWHERE = f"{_CLAIMS} AND NOT EXISTS (SELECT 1 FROM ah.model_call AS mc WHERE mc.session_id = s.id)"


def _per_agent(conn, kind: str, project: str | None) -> dict[str, int]:
    where = kind + (" AND s.cwd ILIKE %(p)s" if project else "")
    rows = conn.execute(
        f"SELECT s.agent, count(*) FROM ah.session AS s WHERE {where} GROUP BY 1 ORDER BY 1", {"p": f"%{project}%"}
    )
    return {agent: int(n) for agent, n in rows}


@pytest.mark.parametrize("project", [None, "jssoundrecorder", "no-such-project"])
def test_one_statement_counts_the_sessions_usage_cannot_count_as_the_two_did(corpus_db, project):  # noqa: F811
    from agent_history.read.usage import SESSION_COLUMNS, sessions_uncounted

    assert SESSION_COLUMNS["project"] == "s.cwd"  # the filter the specification repeats
    with psycopg.connect(corpus_db.dsn) as conn:
        got = sessions_uncounted(conn, project=project)
        expected = (_per_agent(conn, _WITHOUT_USAGE, project), _per_agent(conn, _ELSEWHERE, project))
    assert got == expected
    if project is None:
        assert got[0] and all(n > 0 for n in got[0].values())  # the corpus has sessions without usage


def test_a_process_is_known_by_its_pid_and_its_start_time():
    me = os.getpid()
    started = start_ticks(me)
    assert isinstance(started, int) and started > 0
    assert is_same_process(me, started) and is_same_process(me, None)
    assert not is_same_process(me, started + 1)  # the pid given to a later process
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    while _state(zombie.pid) != "Z":  # exited, not yet reaped: signal 0 still reaches it
        time.sleep(0.01)
    assert not is_same_process(zombie.pid, None)
    zombie.wait()
    assert not is_same_process(zombie.pid, None)  # reaped: gone


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0].decode()


def _stopping_file(data_dir: Path, pid: int, started: int | None) -> None:
    d = paths_of(data_dir).dir
    d.mkdir(parents=True, exist_ok=True)
    info = {"pid": pid, "commands": ["index"], "reason": "stopped by service stop"}
    (d / STOPPING_FILE).write_text(json.dumps(info | ({"started": started} if started is not None else {})))


def test_service_status_says_stopping_only_while_the_writer_of_the_file_runs(tmp_path):
    me = os.getpid()
    _stopping_file(tmp_path, me, start_ticks(me))  # a live stopping server (this process stands in)
    assert service_status(tmp_path)["stopping"] == {
        "pid": me,
        "commands": ["index"],
        "reason": "stopped by service stop",
    }
    _stopping_file(tmp_path, me, start_ticks(me) - 1)  # a SIGKILLed server's file, its pid reused since
    assert "stopping" not in service_status(tmp_path)
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    _stopping_file(tmp_path, killed.pid, start_ticks(killed.pid))
    assert service_status(tmp_path)["stopping"]["pid"] == killed.pid
    killed.kill()  # SIGKILL: the file stays behind
    while _state(killed.pid) != "Z":
        time.sleep(0.01)
    assert "stopping" not in service_status(tmp_path)  # a zombie is not stopping
    killed.wait()
    assert "stopping" not in service_status(tmp_path)
    assert (paths_of(tmp_path).dir / STOPPING_FILE).exists()  # left as it was: status only reads


def test_disconnect_hook_removes_the_settings_file_connect_hook_created(home):
    from agent_history.connect import hook

    settings = home / ".claude" / "settings.json"
    assert hook.install("claude").action == "created"
    assert list(json.loads(settings.read_text())) == ["hooks"]
    assert hook.uninstall("claude").action == "removed"
    assert not settings.exists()
    assert not record_path().exists()


def test_a_file_holding_the_mcp_entry_and_the_hook_goes_with_the_last_of_them(home):
    from agent_history.connect import hook

    settings = home / ".gemini" / "settings.json"
    connect("gemini")  # creates settings.json with mcpServers
    hook.install("gemini")  # adds hooks beside it
    disconnect("gemini")
    assert list(json.loads(settings.read_text())) == ["hooks"]  # the hook stays, mcpServers went
    assert json.loads(record_path().read_text()) == {str(settings): {"file": True, "key": None}}
    hook.uninstall("gemini")
    assert not settings.exists()


def test_disconnect_hook_keeps_a_settings_file_the_user_had(home):
    from agent_history.connect import hook

    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{}\n")
    hook.install("claude")
    hook.uninstall("claude")
    assert json.loads(settings.read_text()) == {}
