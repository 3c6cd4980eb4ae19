"""Arguments the CLI must refuse, limit or accept (issue 25, items 7 and 8), on the real corpus
in subprocesses: an unknown namespace or issue kind is a usage error (exit 2) everywhere, a
search stops at its time limit (exit 3), an exclusion of a short uid can be restored, `sessions
delete` never deletes unasked, and an `index` that finds nothing says where it looked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.collect import COLLECT_ISSUE_KINDS
from agent_history.model.issues import KINDS
from tests.corpus_db import cli_environment, corpus_db, corpus_resident, corpus_rw_db, served  # noqa: F401 - fixtures
from tests.test_terminal_escapes import run_in_pty

PY = sys.executable
SESSION = "9e953218-585f-4692-89df-9e0747a31c68"


def environment(database, own_tmp: Path) -> dict[str, str]:
    return cli_environment(own_tmp, database.dsn, database.reader_dsn, columns=200)


def cli(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300,
                          input=stdin)  # fmt: skip


@pytest.fixture
def env(corpus_db, own_tmp, corpus_resident):  # noqa: F811
    """The test's own environment over the module's catalogue; its read commands answered by the
    module's resident query process (`served`; tests/test_query_service.py: the in-process output)."""
    return served(environment(corpus_db, own_tmp), corpus_resident)


@pytest.mark.parametrize(
    "args",
    [
        ("usage", "--namespace", "nosuch"),
        ("usage", "blocks", "-N", "nosuch"),
        ("efficiency", "--namespace", "nosuch"),
        ("touched", "**/*.py", "--namespace", "nosuch"),
        ("recall", "tokenizer", "--namespace", "nosuch"),
        ("issues", "--namespace", "nosuch"),
    ],
)
@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_an_unknown_namespace_is_a_usage_error_in_every_command(env, args, json_flag):
    r = cli(env, *args, *json_flag)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == "error: unknown namespace 'nosuch' (indexed: claude-local, codex-local, pi-local)\n"


def test_an_unknown_issue_kind_is_a_usage_error_naming_the_kinds(env):
    r = cli(env, "issues", "--kind", "nosuch")
    assert (r.returncode, r.stdout) == (2, "")
    known = (*KINDS, *COLLECT_ISSUE_KINDS)  # parse issues, then what `collect` could not read
    assert r.stderr == f"error: unknown --kind 'nosuch' (known: {', '.join(known)})\n"
    found = cli(env, "issues", "--kind", "fused_line", "--json")
    assert found.returncode == 0 and [i["kind"] for i in json.loads(found.stdout)] == ["fused_line"]
    none = cli(env, "issues", "--kind", "invalid_json")  # a known kind this catalogue has none of
    assert (none.returncode, none.stdout) == (0, "no parse issues\n")


@pytest.mark.parametrize("command", ["search", "recall"])
def test_a_search_past_its_time_limit_stops_with_one_line_and_exit_3(env, command):
    query = " ".join(f"word{i}" for i in range(5000))  # the report's 5,000-term query (51 s uncapped)
    r = cli(env, command, query, "--timeout", "0.05")
    assert (r.returncode, r.stdout) == (3, ""), r.stderr
    assert r.stderr == (
        f"error: {command} stopped at its time limit (0.05 s): narrow it (fewer words, --since, --agent, "
        "--namespace) or give --timeout more seconds (0: no limit)\n"
    )
    bad = cli(env, command, "tokenizer", "--timeout", "-1")
    assert (
        bad.returncode == 2
        and bad.stderr == "error: --timeout must be 0 (no limit) or up to 2147483 seconds (got -1)\n"
    )
    assert cli(env, command, "tokenizer submodule", "--timeout", "0").returncode == 0  # 0: no limit


def test_an_imported_exclusion_of_a_short_uid_can_be_restored(corpus_rw_db, own_tmp):  # noqa: F811
    env = environment(corpus_rw_db, own_tmp)
    file = own_tmp / "exclusions.json"
    file.write_text(json.dumps([{"agent": "claude", "session_uid": "abc"}, {"agent": "codex", "session_uid": "q1"}]))
    assert cli(env, "sessions", "exclusions", "import", str(file)).stdout == "2 exclusions added, 0 already present\n"
    restored = cli(env, "sessions", "restore", "abc")
    assert (restored.returncode, restored.stdout) == (0, "restored: claude abc\n"), restored.stderr
    again = cli(env, "sessions", "restore", "abc")  # no longer excluded; too short to be a prefix
    assert again.returncode == 2
    assert again.stderr == "error: UID: give a session uid or a prefix of at least 6 characters (got 'abc')\n"
    missing = cli(env, "sessions", "restore", "abcdef99")
    assert (missing.returncode, missing.stderr) == (1, "error: no excluded session 'abcdef99'\n")
    exported = json.loads(cli(env, "sessions", "exclusions", "export").stdout)
    assert [(e["agent"], e["session_uid"]) for e in exported] == [("codex", "q1")]


def _sessions(database) -> int:
    with psycopg.connect(database.dsn) as conn:
        return conn.execute("SELECT count(*) FROM ah.session WHERE session_uid = %s", (SESSION,)).fetchone()[0]


def test_sessions_delete_never_deletes_unasked(corpus_rw_db, own_tmp):  # noqa: F811
    env = environment(corpus_rw_db, own_tmp)
    before = _sessions(corpus_rw_db)
    piped = cli(env, "sessions", "delete", SESSION[:8], stdin="y\n")  # stdin is not a terminal
    assert (piped.returncode, piped.stdout) == (2, "")
    assert piped.stderr == "error: refusing to delete without confirmation: pass --yes\n"
    assert _sessions(corpus_rw_db) == before
    asked = run_in_pty(["sessions", "delete", SESSION[:8]], env, answer=b"n\n").decode()
    assert f"claude session {SESSION}" in asked and "delete it? [y/N]" in asked and "Aborted" in asked
    assert _sessions(corpus_rw_db) == before
    done = cli(env, "sessions", "delete", SESSION[:8], "--yes")
    assert done.returncode == 0 and done.stdout.startswith(f"deleted claude {SESSION}: "), done.stderr
    assert _sessions(corpus_rw_db) == 0


def test_an_index_that_finds_nothing_says_where_it_looked(db, own_tmp):
    env = environment(db, own_tmp)
    home = own_tmp / "home"
    r = cli(env, "index")
    assert r.returncode == 0, r.stderr
    (line,) = r.stderr.splitlines()
    looked = [home / ".claude", home / ".codex", home / ".pi" / "agent", home / ".gemini"]
    assert line.startswith("no transcripts found (looked in ")
    assert all(str(p) in line for p in looked) and "none of them exists" in line
    assert line.endswith(
        "index a copy with --home DIR (laid out like ~) or add homes under [sources] in the config file"
    )
