"""A newcomer's findings on messages, warnings and exit codes, each end to end through the CLI:
a configuration mistake is the same one-line error, exit 2, from every command that loads it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.read.catalog import filter_values
from agent_history.session.refs import SessionNotFound, resolve_session, uid_spellings
from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture

PY = sys.executable


def cli(*args: str, env: dict, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "agent_history", *args], env=env, input=stdin, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("command", [("status",), ("index",), ("sessions",), ("status", "--json")])
def test_a_bad_sources_name_is_one_line_exit_2_from_every_command(cli_env, command):
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text('[sources]\n"Bad Name" = "/tmp/x"\n')
    out = cli(*command, env=cli_env)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: config [sources] namespace 'Bad Name' must start with one of aider-, amp-,")
    assert out.stderr.count("\n") == 1


def test_index_names_and_counts_paths_that_are_not_regular_files(cli_env, corpus_home, own_tmp):
    home = own_tmp / "corpus-home"
    shutil.copytree(corpus_home, home)
    n = len([p for p in home.rglob("*.jsonl") if p.is_file()])
    projects = home / ".claude" / "projects" / "-odd"
    projects.mkdir()
    os.mkfifo(projects / "pipe.jsonl")  # a FIFO: opening it would block the pass
    (projects / "dir.jsonl").mkdir()  # a directory named like a transcript
    out = cli("index", "--home", str(home), "--verbose", env=cli_env)
    assert out.returncode == 0, out.stderr
    named = [ln for ln in out.stderr.splitlines() if ln.startswith(f"skipped {home}")]  # not the absent homes
    assert named == [
        f"skipped {projects / 'dir.jsonl'}: a directory, not a transcript (the files in it are searched)",
        f"skipped {projects / 'pipe.jsonl'}: not a regular file (a FIFO)",
    ]
    assert out.stdout.startswith(f"indexed: {n} files scanned, 2 skipped, {n} changed, ")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("search", "build", "--prompts", "--all-classes"),
            "error: --prompts and --all-classes cannot be combined (each chooses the message classes searched)\n",
        ),
        (
            ("search", "build", "--all-classes", "--class", "reasoning"),
            "error: --all-classes and --class cannot be combined (each chooses the message classes searched)\n",
        ),
        (
            ("resume", "29ccd257", "--print", "--exec"),
            "error: --exec and --print cannot be combined (run the command, or print it)\n",
        ),
    ],
)
def test_conflicting_options_are_a_usage_error_naming_both(cli_env, args, line):
    out = cli(*args, env=cli_env)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", line)


UID = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"  # the corpus's claude_p session (with one sub-agent)


def test_a_uid_prefix_resolves_in_any_case(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        for given in ("29CCD257", "29ccD257-68B1", UID.upper()):
            assert resolve_session(conn, given).session_uid == UID, given
        with pytest.raises(SessionNotFound, match="no session '29CCD258'"):
            resolve_session(conn, "29CCD258")
        assert filter_values(conn, "29CCD257")[1] is True
    assert uid_spellings("ses_AbC123") == ["ses_AbC123"]  # not hexadecimal: case-sensitive
    assert uid_spellings("29CCd257") == ["29CCd257", "29ccd257", "29CCD257"]


def test_session_and_search_take_an_upper_case_prefix(corpus_db, own_tmp):  # noqa: F811
    env = cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn)
    upper = cli("session", "29CCD257", "--json", env=env)
    lower = cli("session", "29ccd257", "--json", env=env)
    assert upper.returncode == 0, upper.stderr
    assert upper.stdout == lower.stdout and json.loads(upper.stdout)["session"]["session_uid"] == UID
    hits = json.loads(
        cli(
            "search", "comprehensive understanding", "--session", "29CCD257", "--mode", "keyword", "--json", env=env
        ).stdout
    )
    assert hits["hits"] and {h["session_uid"] for h in hits["hits"]} == {UID}


LISTINGS = ("loops", "tasks", "skills", "closeouts", "permissions")


@pytest.mark.parametrize("command", LISTINGS)
def test_a_listing_that_shows_nothing_exits_1(cli_env, command):
    """README's rule: a lookup or listing that finds nothing exits 1 (reports such as `status` exit 0)."""
    out = cli(command, env=cli_env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert json.loads(cli(command, "--json", env=cli_env).stdout) is not None  # --json: the same rule
    assert cli(command, "--json", env=cli_env).returncode == 1


def test_permissions_with_denials_in_transcripts_shows_them_and_exits_0(corpus_db, own_tmp):  # noqa: F811
    env = cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn)
    out = cli("permissions", "--json", env=env)
    data = json.loads(out.stdout)
    assert (out.returncode, data["rules"]) == (0, []) and data["denials"]  # no rule collected, denials found
    for command in ("loops", "tasks", "skills", "closeouts"):  # nothing collected from repositories
        assert cli(command, env=env).returncode == 1, command
