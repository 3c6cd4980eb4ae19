"""`blame FILE[:LINE]`, MCP `blame` (issue 30): a real git repository (`tests/git_repos.py`), a
transcript session that committed part of a file and an Edit call that wrote an uncommitted line;
the expected commits come from `git` itself, never from the code under test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta

import psycopg
import pytest

from agent_history.ingest.collect import collect
from agent_history.model.rows import FileTouchRow, GitEventRow
from agent_history.read.blame import BlameError, blame, parse_target
from tests.catalogue_rows import message, session, tool_call, write
from tests.git_repos import ME, at, build_project, git
from tests.mcp_client import call, server_env

MAKER = "maker-session"
EDITOR = "editor-session"
CODEX = "codex-session"
ESCAPE = "title = '\x1b]0;pwned\x07'"
AFTER_ALL = 2 * 365 * 24 * 60  # minutes after tests.catalogue_rows.T0 (2025-06-01): after every commit


@pytest.fixture
def edited(db, own_tmp):
    """The project, src/a.py with one uncommitted line an Edit call wrote and one nobody did, an
    untracked file a Codex apply_patch created; the commit that made src/a.py printed by MAKER."""
    project = build_project(own_tmp)
    a = project / "src" / "a.py"
    a.write_text("a = 1\nb = 2\nc = 3\n" + ESCAPE + "\nby hand\n")
    (project / "src" / "new.py").write_text("def f():\n    return 42\n")
    first = git(project, "log", "-1", "--format=%H", "main", "--", "src/a.py").strip()
    edit_input = json.dumps({"file_path": str(a), "old_string": "b = 2", "new_string": "b = 2\nc = 3\n" + ESCAPE})
    readme = project / "README.md"
    readme_input = json.dumps({"file_path": str(readme), "content": readme.read_text()})
    patch = "*** Begin Patch\n*** Add File: src/new.py\n+def f():\n+    return 42\n*** End Patch\n"
    write(
        db.dsn,
        [
            session(MAKER, cwd=str(project), started_at=at(0)),
            message("m1", MAKER, "please implement the first task", cls="human_prompt", offset=100),
            tool_call("t1", MAKER, "Bash", '{"command": "git commit -m x"}', "[main abc] x", offset=200),
            GitEventRow(
                agent="claude",
                git_event_uid="g1",
                session_uid=MAKER,
                tool_call_uid="t1",
                op="commit",
                sha=first[:8],
                branch="main",
                ts=at(1) - timedelta(seconds=5),
                byte_offset=200,
            ),
            message("m2", MAKER, "now add c", cls="human_prompt", offset=300),
            tool_call("t2", MAKER, "Edit", edit_input, "ok", offset=400, minutes=60 * 24 * 30),
            FileTouchRow(
                agent="claude",
                touch_uid="f2",
                session_uid=MAKER,
                tool_call_uid="t2",
                path=str(a),
                op="edit",
                ts=at(24 * 30),
                byte_offset=400,
            ),
            # README.md: written by a Write call before its commit (which no session printed), and
            # again after it (a call after the commit cannot have made the committed line)
            message("m3", MAKER, "start a readme", cls="human_prompt", offset=500),
            tool_call("w1", MAKER, "Write", readme_input, "ok", offset=600, minutes=10),
            FileTouchRow(
                agent="claude",
                touch_uid="fw1",
                session_uid=MAKER,
                tool_call_uid="w1",
                path=str(readme),
                op="create",
                byte_offset=600,
            ),
            message("m4", MAKER, "rewrite the readme", cls="human_prompt", offset=700),
            tool_call("w2", MAKER, "Write", readme_input, "ok", offset=800, minutes=AFTER_ALL),
            FileTouchRow(
                agent="claude",
                touch_uid="fw2",
                session_uid=MAKER,
                tool_call_uid="w2",
                path=str(readme),
                op="create",
                byte_offset=800,
            ),
        ],  # fmt: skip
    )
    write(
        db.dsn,
        [
            session(CODEX, agent="codex", cwd=str(project), started_at=at(2)),
            message("c1", CODEX, "add a function f", cls="human_prompt", agent="codex", offset=10),
            tool_call("p1", CODEX, "apply_patch", patch, "Success", agent="codex", offset=50),
            FileTouchRow(
                agent="codex",
                touch_uid="pf",
                session_uid=CODEX,
                tool_call_uid="p1",
                path="src/new.py",
                op="create",
                ts=at(24 * 30),
                byte_offset=50,
            ),
        ],  # fmt: skip
        path="/t/codex.jsonl",
        namespace="codex-local",
        agent="codex",
    )
    return project, first


def test_committed_lines_name_the_commit_session_and_prompt_uncommitted_the_edit(db, edited):
    project, first = edited
    blamed_by_git = git(project, "blame", "--line-porcelain", "--", "src/a.py")
    shas = [line.split()[0] for line in blamed_by_git.splitlines() if len(line.split()[0]) == 40 and " " in line]
    with psycopg.connect(db.dsn) as conn:
        b = blame(conn, project / "src" / "a.py")
    assert [(x.line, x.sha) for x in b.lines] == [(n, None if s == "0" * 40 else s) for n, s in enumerate(shas, 1)]
    assert [x.sha for x in b.lines] == [first, first, None, None, None]
    assert b.lines[0].subject == "Implement the first task" and b.lines[0].committed_at == at(1)
    assert b.lines[0].authored_by_me is None  # not collected yet
    o = b.lines[0].origin
    assert (o.kind, o.session.session_uid, o.tool_name, o.prompt.text) == (
        "commit", MAKER, "Bash", "please implement the first task",
    )  # fmt: skip
    for x in b.lines[2:4]:  # c = 3 and the escape line: the Edit call, with the prompt before it
        assert (x.origin.kind, x.origin.tool_name, x.origin.tool_call_uid, x.origin.prompt.text) == (
            "tool_call", "Edit", "t2", "now add c",
        )  # fmt: skip
    assert b.lines[3].text == ESCAPE and b.lines[4].origin is None  # "by hand": no call wrote it
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        collect(conn, [project], [ME[1]])
        assert blame(conn, project / "src" / "a.py", 2, 2).lines[0].authored_by_me is True


def test_an_untracked_file_is_attributed_to_the_apply_patch_that_created_it(db, edited):
    project, _ = edited
    assert git(project, "ls-files", "src/new.py") == ""  # untracked, by git's own account
    with psycopg.connect(db.dsn) as conn:
        b = blame(conn, project / "src" / "new.py")
    assert [(x.line, x.text, x.sha) for x in b.lines] == [(1, "def f():", None), (2, "    return 42", None)]
    assert {(x.origin.session.session_uid, x.origin.tool_name, x.origin.prompt.text) for x in b.lines} == {
        (CODEX, "apply_patch", "add a function f")
    }


def test_bad_targets_are_one_line_errors(db, edited, own_tmp):
    project, _ = edited
    (own_tmp / "loose.txt").write_text("x\n")
    assert parse_target(f"{project}/src/a.py:3") == (f"{project}/src/a.py", 3, 3)
    assert parse_target(f"{project}/src/a.py:2-4") == (f"{project}/src/a.py", 2, 4)
    with psycopg.connect(db.dsn) as conn:
        for target, first, last, said in [
            (own_tmp / "missing.py", None, None, "no such file"),
            (own_tmp / "loose.txt", None, None, "not in a git work tree"),
            (project / "src", None, None, "not a regular file"),
            (project / "src" / "a.py", 5, 9, "has 5 lines"),
        ]:
            with pytest.raises(BlameError, match=said) as err:
                blame(conn, target, first, last)
            assert "\n" not in str(err.value)
    with pytest.raises(BlameError, match="bad line range"):
        parse_target(f"{project}/src/a.py:4-2")


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True)


def test_cli_blame_fits_80_columns_escapes_controls_and_prints_json(cli_env, edited):
    project, first = edited
    env = dict(cli_env, COLUMNS="80")
    out = _cli(env, "blame", str(project / "src" / "a.py"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "^[]0;pwned^G" in out.stdout
    assert lines[0].startswith(f"1-2 {first[:10]} 2026-11-02 10:00  Implement the first task")
    assert lines[1].startswith(f"  committed in {MAKER} (claude-local)")
    assert lines[2] == "  prompt  please implement the first task"
    assert lines[5] == "3-4 uncommitted" and lines[6].startswith(f"  Edit in {MAKER}")
    assert "  no tool call in the catalogue wrote it" in lines
    data = json.loads(_cli(env, "blame", f"{project}/src/a.py:3", "--json").stdout)
    (line,) = data["lines"]
    assert (line["line"], line["sha"], line["origin"]["tool_call_uid"]) == (3, None, "t2")
    bad = _cli(env, "blame", f"{project}/src/a.py:7")
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1


def test_mcp_blame_tool(db, edited, tmp_path):
    project, first = edited
    env = server_env(db.dsn, db.reader_dsn, tmp_path)
    data = call(env, "blame", {"path": str(project / "src" / "a.py"), "line": 1, "last_line": 3}).data
    assert [(x["sha"], x["origin"]["session"]["session_uid"]) for x in data["lines"]] == [
        (first, MAKER), (first, MAKER), (None, MAKER),
    ]  # fmt: skip
    assert data["origins_outside_scope"] == 0
    bad = call(env, "blame", {"path": str(project / "nope.py")})
    assert bad.is_error and "no such file" in bad.text
    assert os.path.isabs(data["path"])


def test_a_committed_line_no_session_printed_goes_to_the_call_that_wrote_it_before_the_commit(db, edited):
    project, _ = edited
    start = git(project, "log", "--format=%H", "--grep=Start the backlog", "main").strip()
    with psycopg.connect(db.dsn) as conn:
        (line,) = blame(conn, project / "README.md", 1, 1).lines
    assert (line.text, line.sha) == ("# project", start)
    assert (line.origin.kind, line.origin.tool_call_uid, line.origin.prompt.text) == (
        "tool_call",
        "w1",
        "start a readme",
    )
