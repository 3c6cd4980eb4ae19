"""A newcomer's findings at stop 38 (installed from the README into a fresh venv, the shared
corpus as HOME, then every command with odd input), each fixed and asserted with its exact value:

- ``search``/``recall --timeout inf`` (or ``1e10``) was a traceback (OverflowError; PostgreSQL
  refusing a ``statement_timeout`` past 2³¹ − 1 ms): now a usage error, exit 2.
- ``session UID --page 99999999999999999999`` was a traceback (bigint out of range): now "has 1
  page of 200 events, not …", exit 2, as any page past the last.
- ``/sessions?page=99999999999999999999`` was a 500 (bigint out of range): now a 400 naming the
  highest page.
- ``sessions exclusions import`` of an entry holding a NUL character was a traceback, a ``reason``
  object a psycopg message, an unknown agent (``vim``) was stored, and a product name
  (``claude-code``) was stored as written — an exclusion that matched no session, so the session
  it named stayed searchable. Now each is one line naming the entry (exit 2, nothing imported),
  and a product name is stored as its harness (``claude``) and excludes the session.
- ``sql "SELECT sum(output) …"`` printed ``267317.0`` (numeric as a float): a whole number is now
  printed and returned as one (``267317``), in the table, ``--csv`` and ``--json`` (the MCP tool's
  shape) alike.
- ``/api/search?q=build&mode=bogus`` answered "'bogus' is not a valid Mode" (an enum's message):
  now the CLI's line, "unknown search mode 'bogus' (known: keyword, vector, hybrid)".
- ``parse DIR --json`` over a file whose name is not valid UTF-8 was a TypeError traceback
  (orjson refuses the name's lone surrogates): the name is now written ``\\udcff…``, as `index`
  names it when it skips one.
- ``agent-history sql … | head -1`` (and any command whose reader went away) exited 1, the code
  that says a lookup found nothing: rich's and click's answer to EPIPE. Now 141 (128 + SIGPIPE,
  what ``git log | head`` gives under ``set -o pipefail``), with nothing on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.corpus_db import corpus_db, corpus_rw_db  # noqa: F401 - fixtures
from tests.test_cli_arguments import SESSION, cli, environment
from tests.test_web import Served, _env


@pytest.mark.parametrize("command", ["search", "recall"])
@pytest.mark.parametrize("timeout", ["inf", "1e10", "2147484"])
def test_a_timeout_past_the_servers_limit_is_a_usage_error(corpus_db, own_tmp, command, timeout):  # noqa: F811
    r = cli(environment(corpus_db, own_tmp), command, "tokenizer", "--timeout", timeout)
    shown = f"{float(timeout):.15g}"  # the value in full (stop 42: 99999999 was shown as 1e+08)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == f"error: --timeout must be 0 (no limit) or up to 2147483 seconds (got {shown})\n"


def test_the_longest_timeout_is_accepted(corpus_db, own_tmp):  # noqa: F811
    r = cli(environment(corpus_db, own_tmp), "search", "tokenizer", "--timeout", "2147483", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["query"] == "tokenizer"


@pytest.mark.parametrize("page", ["99999999999999999999", str(2**63 - 1), "46116860184273904"])
def test_a_page_past_a_bigint_of_events_says_how_many_pages_there_are(corpus_db, own_tmp, page):  # noqa: F811
    r = cli(environment(corpus_db, own_tmp), "session", SESSION[:8], "--page", page)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == f"error: session {SESSION} has 1 page of 200 events, not {page}\n"


@pytest.fixture(scope="module")
def web(corpus_db, tmp_path_factory):  # noqa: F811 - the imported fixture
    s = Served(_env(tmp_path_factory.mktemp("web-nc38"), corpus_db.dsn, corpus_db.reader_dsn))
    yield s
    err = s.stop()
    assert "Traceback" not in err, err


def test_a_sessions_page_past_a_bigint_offset_is_a_400_naming_the_highest(web):
    r = httpx.get(web.url + "/sessions?page=99999999999999999999", timeout=60)
    assert r.status_code == 400, r.text[:300]
    assert "page must be at most 184467440737095516, got 99999999999999999999" in r.text
    last = httpx.get(web.url + "/sessions?page=184467440737095516", timeout=60)  # the highest: empty, no error
    assert last.status_code == 200, last.text[:300]


def test_an_unknown_search_mode_in_the_api_is_the_clis_line(web):
    r = httpx.get(web.url + "/api/search?q=build&mode=bogus", timeout=60)
    assert (r.status_code, r.json()) == (400, {"error": "unknown search mode 'bogus' (known: keyword, vector, hybrid)"})


def _import(env, own_tmp, entries) -> tuple[int, str, str]:
    file = own_tmp / "exclusions.json"
    file.write_text(json.dumps(entries))
    r = cli(env, "sessions", "exclusions", "import", str(file))
    return r.returncode, r.stdout, r.stderr.replace(str(file), "FILE")


def _exclusions(database) -> list[tuple[str, str]]:
    with psycopg.connect(database.dsn) as conn:
        return conn.execute("SELECT agent, session_uid FROM ah.session_exclusion ORDER BY 1, 2").fetchall()


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ({"agent": "claude", "session_uid": "a\x00b"}, "entry 2: session_uid holds a NUL character (no session uid does)"),
        ({"agent": "claude", "session_uid": "abcdef", "reason": {"x": 1}}, "entry 2: reason must be a string or null (got {'x': 1})"),
        ({"agent": "claude", "session_uid": "abcdef", "reason": 5}, "entry 2: reason must be a string or null (got 5)"),
        ({"agent": "vim", "session_uid": "abcdef"}, "entry 2: unknown agent 'vim' (accepted: claude, codex, pi,"),
    ],
)  # fmt: skip
def test_a_bad_exclusion_entry_is_one_line_and_nothing_is_imported(corpus_rw_db, own_tmp, entry, error):  # noqa: F811
    env = environment(corpus_rw_db, own_tmp)
    code, out, err = _import(env, own_tmp, [{"agent": "codex", "session_uid": "q1"}, entry])
    assert (code, out) == (2, "")
    assert err.startswith(f"error: FILE: exclusions file: {error}") and err.count("\n") == 1, err
    assert _exclusions(corpus_rw_db) == []


def test_an_exclusion_by_product_name_is_stored_as_the_harness_and_excludes(corpus_rw_db, own_tmp):  # noqa: F811
    env = environment(corpus_rw_db, own_tmp)
    before = json.loads(cli(env, "search", "build", "--session", SESSION[:8], "--json").stdout)
    assert len(before["hits"]) > 0
    assert _import(env, own_tmp, [{"agent": "claude-code", "session_uid": SESSION}]) == (
        0,
        "1 exclusion added, 0 already present\n",
        "",
    )
    assert _exclusions(corpus_rw_db) == [("claude", SESSION)]
    after = cli(env, "search", "build", "--json")
    assert after.returncode in (0, 1), after.stderr
    assert SESSION not in {h["session_uid"] for h in json.loads(after.stdout)["hits"]}


SUM = "SELECT sum(output) AS s, avg(output) AS a, 10::numeric AS t FROM ah.model_call"


def test_sql_prints_a_whole_numeric_as_a_whole_number(corpus_db, own_tmp):  # noqa: F811
    env = environment(corpus_db, own_tmp)
    data = json.loads(cli(env, "sql", SUM, "--json").stdout)
    assert [c["type"] for c in data["columns"]] == ["numeric", "numeric", "numeric"]
    assert data["rows"] == [[267317, 178.68783422459893, 10]]
    assert isinstance(data["rows"][0][0], int) and isinstance(data["rows"][0][1], float)
    # CSV keeps PostgreSQL's digits of the numeric (tests/test_sql_numbers.py)
    assert cli(env, "sql", SUM, "--csv").stdout == "s,a,t\n267317,178.6878342245989305,10\n"
    table = cli(env, "sql", SUM).stdout
    assert "267317" in table and "267317.0" not in table


@pytest.mark.parametrize(
    "args",
    [
        ("sql", "SELECT * FROM ah.tool_call"),  # a rich table (2.4 MB): rich ended it with 1
        ("sql", "SELECT * FROM ah.message", "--json"),  # a plain write (218 kB): click ended it with 1
        ("search", "build", "--limit", "1000", "--json"),  # 89 kB
    ],
)
def test_a_reader_that_goes_away_is_exit_141_not_found_nothing(corpus_db, own_tmp, args):  # noqa: F811
    env = environment(corpus_db, own_tmp)
    p = subprocess.Popen([sys.executable, "-m", "agent_history", *args], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)  # fmt: skip
    assert p.stdout.read(10)  # `| head -c 10`: read a little, then go away
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141, err
    assert err == "" or err.startswith("note: showing the first 200 rows"), err
    full = cli(env, *args)  # more than a pipe holds (64 kB): the writer meets the closed pipe
    assert full.returncode == 0 and len(full.stdout.encode()) > 65_536


def test_parse_json_names_a_file_whose_name_is_not_utf8(corpus_home, own_tmp):
    source = (
        corpus_home
        / ".claude/projects/-Users-user1-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
    )
    folder = own_tmp / "odd"
    folder.mkdir()
    (folder / "good.jsonl").write_bytes(source.read_bytes())
    with open(os.fsencode(folder) + b"/\xff\xfe-bad.jsonl", "wb") as f:  # a name no UTF-8 decoder reads
        f.write(source.read_bytes())
    env = {**os.environ, "HOME": str(own_tmp), "AGENT_HISTORY_QUERY_IDLE_S": "0"}
    r = subprocess.run([sys.executable, "-m", "agent_history", "parse", str(folder), "--json"], env=env,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert (r.returncode, r.stderr) == (0, ""), r.stderr  # was a TypeError traceback from orjson
    files = {Path(f["path"]).name: f for f in json.loads(r.stdout)["files"]}
    assert sorted(files) == ["\\udcff\\udcfe-bad.jsonl", "good.jsonl"]  # as `index` names it when it skips one
    assert files["\\udcff\\udcfe-bad.jsonl"]["messages"] == files["good.jsonl"]["messages"] == 59
    assert files["\\udcff\\udcfe-bad.jsonl"]["tool_calls"] == files["good.jsonl"]["tool_calls"] == 71
