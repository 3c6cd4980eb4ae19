"""`agent-history resume UID`: the harness's own resume / fork command from its registry row, run
in the session's working directory — CLI subprocesses on a home indexed by the real loader."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys

import pytest

from agent_history.harnesses import HARNESSES
from tests.homes import cli
from tests.recall_home import UIDS, write_recall_home

C1, C2, P1, P2 = UIDS["C1"], UIDS["C2"], UIDS["P1"], UIDS["P2"]


@pytest.fixture
def indexed(cli_env, own_tmp) -> dict:
    """The recall home indexed; C1's (and C3's) working directory is a real directory here,
    C2's (/work/api) does not exist."""
    home = own_tmp / "home"
    files = write_recall_home(home)
    project = own_tmp / "web project"  # a space: the printed command must quote it
    project.mkdir()
    for path in files.values():
        path.write_text(path.read_text().replace('"/work/web"', json.dumps(str(project))))
    out = cli("index", "--home", str(home), env=cli_env)
    assert out.returncode == 0, out.stderr
    return {"project": project, "files": files}


def test_print_gives_the_command_in_the_session_directory(cli_env, indexed):
    out = cli("resume", C1, env=cli_env)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == f"cd {shlex.quote(str(indexed['project']))} && claude --resume {C1}\n"
    fork = cli("resume", C1, "--fork", "--print", env=cli_env)
    assert fork.stdout == f"cd {shlex.quote(str(indexed['project']))} && claude --resume {C1} --fork-session\n"
    data = json.loads(cli("resume", C1, "--json", env=cli_env).stdout)
    assert data["argv"] == ["claude", "--resume", C1]
    assert (data["cwd"], data["cwd_exists"], data["why"]) == (str(indexed["project"]), True, None)


def test_a_working_directory_that_is_gone_is_said_and_exec_refuses(cli_env, indexed):
    out = cli("resume", C2, env=cli_env)
    assert out.returncode == 0
    assert out.stdout == f"claude --resume {C2}\n"
    assert out.stderr.strip() == "warning: the session's working directory /work/api no longer exists"
    run = cli("resume", C2, "--exec", env=cli_env)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "/work/api no longer exists" in run.stderr


def test_an_ambiguous_prefix_is_one_line_listing_the_candidates(cli_env, indexed):
    out = cli("resume", "0a1b2c", env=cli_env)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1, out.stderr
    assert P1 in out.stderr and P2 in out.stderr
    assert cli("resume", "ffffffff", env=cli_env).returncode == 1
    short = cli("resume", "0a", env=cli_env)  # looked up as a whole uid only: say a prefix is longer
    assert short.returncode == 2
    assert short.stderr.strip() == "error: UID: give a session uid or a prefix of at least 6 characters (got '0a')"


def test_a_harness_that_resumes_by_file_and_has_no_fork(cli_env, indexed):
    pi_file = str(indexed["files"]["P1"])
    out = cli("resume", P1, "--json", env=cli_env)
    assert json.loads(out.stdout)["argv"] == ["pi", "--session", pi_file]
    fork = cli("resume", P1, "--fork", env=cli_env)
    assert fork.returncode == 1
    assert fork.stderr.strip() == "error: no fork command: pi has no fork command"


def test_exec_runs_the_agent_in_the_session_directory(cli_env, indexed, own_tmp):
    bin_dir = own_tmp / "bin"
    bin_dir.mkdir()
    record = own_tmp / "claude-ran.json"
    fake = bin_dir / "claude"  # a stand-in for the external program: records argv and cwd
    fake.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'cwd': os.getcwd()}}, open({str(record)!r}, 'w'))\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**cli_env, "PATH": f"{bin_dir}{os.pathsep}{cli_env['PATH']}"}
    out = cli("resume", C1, "--exec", "--fork", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(record.read_text()) == {
        "argv": ["--resume", C1, "--fork-session"],
        "cwd": str(indexed["project"]),
    }
    missing = cli("resume", C1, "--exec", env={**cli_env, "PATH": str(own_tmp / "empty")})
    assert missing.returncode == 1 and "claude is not on PATH" in missing.stderr


def test_every_resume_template_names_the_session():
    for h in HARNESSES:
        for tpl in (h.resume, h.fork):
            if tpl is not None:
                assert "{uid}" in tpl or "{path}" in tpl, h.name
        if h.fork is not None:
            assert h.resume is not None, h.name
    assert {h.name for h in HARNESSES if h.fork} >= {"claude", "codex", "opencode"}
