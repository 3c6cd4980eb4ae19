"""Newcomer stop 42: what stop 41's trial left at the edges of the CLI, the MCP server and the web UI.
Each finding is pinned with its exact output:

- typer's/click's own usage errors echoed a value whole (a 100 kB argument to an int option, an
  unknown command or option): now cut past 200 characters with its size, as our own error lines
  (`echo.clip_echoes`, routed in `cli.app`'s root click group).
- The MCP server cut an error after 1,000 characters by a rule of its own: now the same rule as the
  CLI (`echo`, moved to the ground floor so the MCP server and the web UI share it without
  importing the CLI); the web UI's error lines follow it too.
- ``parse ""``, ``export --out ""``, ``archive --home ""``, ``collect ""``, ``blame ""``,
  ``--project ""`` … (an unset shell variable) were taken as ``.`` or as no filter: now a usage
  error, as ``index --file ""``.
- ``touched`` with a pattern too complex for PostgreSQL was one line in the CLI only: the MCP tool
  said "touched failed: …" and the web UI answered 500 "internal error": now the one line of
  `read.touched.touched_of` everywhere (a tool error, a 400).
- ``disconnect cursor|vscode --hook`` left ``{"version": 1}`` and ``.bak`` files: now the home is
  left as `connect --hook` found it (tests/test_newcomer_stop41.py, tests/test_hooks_cursor_vscode.py).
"""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from agent_history.connect import connect, disconnect
from agent_history.connect import hook as connect_hook
from agent_history.echo import ECHO_LIMIT, clip_echoes
from agent_history.web.app import WebSettings, create_app
from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture
from tests.mcp_client import call, server_env
from tests.test_newcomer_stop41 import cli, fresh_env, home, tree  # noqa: F401 - fixture

HUGE = "x" * 100_000
"""A pasted value: 100,000 characters (argv holds up to 128 kB in one argument)."""
CUT = "x" * ECHO_LIMIT


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("search", "q", "--limit", HUGE),
         f"Error: Invalid value for '--limit' / '-n': '{CUT[1:]}…' (100,000 bytes) is not a valid int."),
        ((HUGE,), f"Error: No such command '{CUT[1:]}…' (100,000 bytes)."),
        (("search", "q", "--" + HUGE), f"Error: No such option: --{CUT[2:]}… (100,002 bytes)"),
        (("--dsn", "x", "--" + HUGE), f"Error: No such option: --{CUT[2:]}… (100,002 bytes)"),
        (("search", "q", "extra", HUGE), f"Error: Got unexpected extra argument(s) (extra {CUT}… (100,000 bytes))"),
    ],
)  # fmt: skip
def test_a_click_usage_error_cuts_the_value_it_echoes(tmp_path, args, said):
    r = cli(fresh_env(tmp_path), *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines()[-1] == said
    assert len(r.stderr) < 1_000
    assert not (tmp_path / "data").exists()


def test_a_parenthesis_the_value_did_not_open_stays_with_the_sentence():
    assert clip_echoes(f"(extra {'y' * 300})") == f"(extra {'y' * ECHO_LIMIT}… (300 bytes))"
    assert clip_echoes(f"call f({'y' * 300})") == f"call f({'y' * (ECHO_LIMIT - 2)}… (303 bytes)"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("parse", ""), "PATHS: an empty path (give a file or directory)"),
        (("parse", "README.md", ""), "PATHS: an empty path (give a file or directory)"),
        (("collect", ""), "PATHS: an empty path (give a file or directory)"),
        (("export", "abcdef", "--out", ""), "--out: an empty path (give a file, or - for stdout)"),
        (("archive", "--home", ""), "--home: an empty path (give a directory)"),
        (("rebuild", "--home", ""), "--home: an empty path (give a directory)"),
        (("sessions", "exclusions", "export", ""), "FILE: an empty path (give a file)"),
        (("sessions", "exclusions", "import", ""), "FILE: an empty path (give a file)"),
        (("blame", ""), "TARGET: an empty path (give a file, FILE:LINE or FILE:FIRST-LAST)"),
        (("blame", ":3"), "TARGET: an empty path (give a file, FILE:LINE or FILE:FIRST-LAST)"),
        (("search", "x", "--project", ""), "--project: an empty path (give a directory)"),
        (("recall", "x", "-p", ""), "--project: an empty path (give a directory)"),
        (("sessions", "--project", ""), "--project: an empty path (give a directory)"),
        (("usage", "--project", ""), "--project: an empty path (give a directory)"),
    ],
)  # fmt: skip
def test_an_empty_path_is_a_usage_error_everywhere(tmp_path, args, said):
    r = cli(fresh_env(tmp_path), *args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: {said}\n")
    assert not (tmp_path / "data").exists()  # refused before the embedded server was created


TOO_COMPLEX = (
    "touched: the pattern cannot be matched (invalid regular expression: regular expression is too complex); "
    "give a shorter one"
)


def test_the_mcp_touched_tool_says_a_pattern_too_complex_in_the_clis_words(corpus_db, tmp_path):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, tmp_path)
    bad = call(env, "touched", {"pattern": HUGE})
    assert (bad.is_error, bad.text) == (True, TOO_COMPLEX)


@pytest.fixture(scope="module")
def web(corpus_db):  # noqa: F811 - the imported fixture
    """The web UI's app in this process (Starlette's test client): a 60 kB URL reaches it, where
    `agent-history web`'s HTTP server (h11) refuses a request line over 16 kB before the app."""
    with TestClient(create_app(WebSettings(reader_dsn=lambda: corpus_db.reader_dsn)), base_url="http://127.0.0.1") as c:
        yield c


def test_the_web_touched_route_answers_a_pattern_too_complex_with_a_400(web):
    r = web.get("/api/touched", params={"pattern": "x" * 60_000})  # httpx: a URL part ≤ 64 kB
    assert (r.status_code, r.json()) == (400, {"error": TOO_COMPLEX})
    ok = web.get("/api/touched", params={"pattern": "README.md"})
    assert ok.status_code == 200  # the app goes on answering


def test_a_web_error_line_cuts_the_value_it_echoes(web):
    r = web.get("/api/search", params={"q": "x", "mode": "m" * 5_000})
    assert r.status_code == 400
    assert r.json() == {"error": clip_echoes(f"unknown search mode {'m' * 5_000!r} (known: keyword, vector, hybrid)")}
    assert f"'{'m' * (ECHO_LIMIT - 1)}…' (5,000 bytes)" in r.json()["error"]


def test_disconnect_cursor_hook_restores_a_users_hooks_json_without_our_entry(home):  # noqa: F811
    path = home / ".cursor" / "hooks.json"
    path.parent.mkdir()
    original = json.dumps({"version": 1}) + "\n"  # the user's own, empty, before connect
    path.write_text(original)
    assert connect_hook.install("cursor").action == "updated"
    assert connect_hook.uninstall("cursor").action == "removed"
    assert json.loads(path.read_text()) == {"version": 1}  # kept: the user had it


def test_disconnect_vscode_hook_keeps_a_backup_of_a_hook_file_connect_did_not_create(home):  # noqa: F811
    path = home / ".copilot" / "hooks" / "agent-history.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")  # our file's name, but not of this connect's making (an earlier install)
    assert connect_hook.install("vscode").action == "updated"
    change = connect_hook.uninstall("vscode")
    assert (change.action, change.backup) == ("removed", path.with_name("agent-history.json.bak.1"))  # .bak: "{}"
    assert not path.exists() and json.loads(change.backup.read_text())["hooks"]["Stop"]  # a copy, never lost


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "qwen-code"])
@pytest.mark.parametrize("hook_first", [False, True])
def test_connect_and_connect_hook_then_both_disconnects_leave_a_fresh_home_as_found(home, agent, hook_first):  # noqa: F811
    """Both write one config file `connect` created: its edits back up nothing of the user's, so no
    ``.bak`` of our own text is left behind (trial 42: ``config.toml.bak`` + ``.bak.1`` were)."""
    steps = [lambda: connect(agent), lambda: connect_hook.install(agent)]
    for step in steps[::-1] if hook_first else steps:
        step()
    assert not [p for p in tree(home) if ".bak" in p]
    disconnect(agent)
    connect_hook.uninstall(agent)
    assert tree(home) == []


def test_a_users_config_keeps_its_backup_through_both_connects(home):  # noqa: F811
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n')
    connect("codex")
    connect_hook.install("codex")
    disconnect("codex")
    connect_hook.uninstall("codex")
    assert config.read_text() == 'model = "o3"\n'
    assert (home / ".codex" / "config.toml.bak").read_text() == 'model = "o3"\n'  # the user's, kept


def test_hook_log_shows_control_characters_and_cuts_a_long_agent_name(tmp_path):
    env = fresh_env(tmp_path)
    for name in ("\x1b]0;pwned\x07\x1b[2J", "a" * 3_000):
        r = cli(env, "hook", name, stdin="")
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    lines = (tmp_path / "data" / "hook.log").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "hook ^[]0;pwned^G^[[2J: no after-turn hook for agent '\\x1b]0;pwned\\x07\\x1b[2J' (known: claude, codex, "
        "gemini, cursor, vscode, qwen-code, droid)",
        f"hook {'a' * ECHO_LIMIT}… (3,000 bytes): no after-turn hook for agent '{'a' * (ECHO_LIMIT - 1)}…' "
        "(3,000 bytes) (known: claude, codex, gemini, cursor, vscode, qwen-code, droid)",
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("loop", ""), "loop: give a loop id or its closeout path (got '')"),
        (("task", " "), "task: give a Backlog.md task id, e.g. task-12 (got ' ')"),
        (("search", "x", "--timeout", "99999999"),
         "--timeout must be 0 (no limit) or up to 2147483 seconds (got 99999999)"),
    ],
)  # fmt: skip
def test_trial42_usage_lines(tmp_path, args, said):
    r = cli(fresh_env(tmp_path), *args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: {said}\n")
    assert not (tmp_path / "data").exists()


def test_touched_nothing_found_cuts_a_pasted_pattern(corpus_db, tmp_path):  # noqa: F811
    r = cli(cli_environment(tmp_path, corpus_db.dsn), "touched", "a/" * 3_000)
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout == f"no session touched {('a/' * 100)}… (6,000 bytes)\n"


def test_the_retention_warning_does_not_name_a_settings_file_that_is_not_there(tmp_path):
    from agent_history.ingest.archive.retention import retention_warnings
    from agent_history.ingest.discovery import Source

    claude = tmp_path / ".claude"
    (claude / "projects").mkdir(parents=True)
    [missing] = retention_warnings([Source("claude-local", "claude", claude)])
    assert "cleanupPeriodDays is unset (there is no " + str(claude / "settings.json") + ") (default 30 days)" in (
        missing.line()
    )
    (claude / "settings.json").write_text("{}")
    [unset] = retention_warnings([Source("claude-local", "claude", claude)])
    assert f"cleanupPeriodDays is unset in {claude / 'settings.json'} (default 30 days)" in unset.line()


def test_the_mcp_sql_tool_refuses_a_nul_in_one_line(corpus_db, tmp_path):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, tmp_path)
    for statement in ("select \u0000", "select 'a\u0000b' as x"):  # were: no rows / "unterminated quoted string"
        bad = call(env, "sql", {"statement": statement})
        assert (bad.is_error, bad.text) == (
            True,
            "statement holds a NUL character (no SQL text or catalogue text does)",
        )


def test_exclusions_export_into_a_missing_directory_is_one_plain_line(corpus_db, tmp_path):  # noqa: F811
    target = tmp_path / "missing" / "x.json"
    r = cli(cli_environment(tmp_path, corpus_db.dsn), "sessions", "exclusions", "export", str(target))
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: cannot write {target}: No such file or directory\n")


def test_index_file_names_a_fifo_for_what_it_is(tmp_path):
    """`index --file` on a FIFO where a transcript would be: a pass skips it as "not a regular
    file (a FIFO)"; --file said no discovery rule matched (trial 42), though one does."""
    import os

    fifo = tmp_path / "home" / ".claude" / "projects" / "-x" / "ffffffff-1111-2222-3333-444444444444.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    r = cli(fresh_env(tmp_path), "index", "--file", str(fifo))
    assert (r.returncode, r.stdout, r.stderr) == (
        2,
        "",
        f"error: --file {fifo} is not a regular file (a FIFO, a socket or a device)\n",
    )
