"""`tasks`, `task ID`, MCP `task` and `why SHA` over collected repositories (issue 30): a real git
repository (`tests/git_repos.py`) and one transcript session that printed one of its commits."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import psycopg
import pytest

from agent_history.ingest.collect import collect
from agent_history.model.rows import GitEventRow
from agent_history.read.tasks import TaskNotFound, list_tasks, task_detail
from tests.catalogue_rows import session, write
from tests.git_repos import ME, at, build_project, git
from tests.mcp_client import call, server_env

MAKER = "maker-session"


@pytest.fixture
def collected(db, own_tmp):
    project = build_project(own_tmp)
    first = git(project, "log", "--format=%H", "--grep=Implement the first task", "main").strip()
    write(
        db.dsn,
        [
            session(MAKER, cwd=str(project), started_at=at(0)),
            GitEventRow(
                agent="claude",
                git_event_uid="g1",
                session_uid=MAKER,
                op="commit",
                sha=first[:7],
                branch="main",
                subject="Implement the first task",
                ts=at(1) - timedelta(seconds=5),
            ),
        ],  # fmt: skip
    )
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        collect(conn, [project], [ME[1]])
    return project, first


def test_tasks_list_and_one_task_with_history_commits_and_the_session_that_made_it(db, collected):
    project, first = collected
    main = git(project, "rev-list", "--first-parent", "--reverse", "main").split()
    with psycopg.connect(db.dsn) as conn:
        rows = list_tasks(conn)
        assert [(r.repository, r.task_id, r.status, r.commits) for r in rows] == [
            ("project", "task-1", "Done", 1), ("project", "task-2", "Done", 1),
        ]  # fmt: skip
        assert list_tasks(conn, status="to do") == [] and list_tasks(conn, repo="elsewhere") == []
        (detail,) = task_detail(conn, "TASK-1")
        with pytest.raises(TaskNotFound, match="no collected task 'task-77'"):
            task_detail(conn, "task-77")
    assert [(h.old, h.new, h.sha) for h in detail.history] == [
        (None, "To Do", main[0]), ("To Do", "In Progress", main[1]), ("In Progress", "Done", main[2]),
    ]  # fmt: skip
    assert [(c.sha, c.sessions, c.reached_default_at, c.authored_by_me) for c in detail.commits] == [
        (first, [MAKER], at(1), True)
    ]
    assert detail.loops == []


def test_a_task_trailer_in_another_case_links_its_commit(db, collected):
    """``Task: TASK-2`` names task-2 as `task TASK-2` does (a newcomer's commit was left out)."""
    project, _ = collected
    (project / "src" / "c.py").write_text("print('c')\n")
    git(project, "add", "src/c.py")
    git(project, "commit", "-q", "-m", "Second task, part two\n\nTask: TASK-2", at=at(9))
    upper = git(project, "rev-parse", "HEAD").strip()
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        collect(conn, [project], [ME[1]])
        counts = {r.task_id: r.commits for r in list_tasks(conn)}
        (detail,) = task_detail(conn, "task-2")
    assert counts == {"task-1": 1, "task-2": 2}
    assert upper in [c.sha for c in detail.commits]


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True)


def test_task_cli_and_why_for_a_commit_no_agent_printed(cli_env, collected):
    project, first = collected
    out = _cli(cli_env, "tasks", "--status", "Done", "--json")
    assert out.returncode == 0, out.stderr
    assert [t["task_id"] for t in json.loads(out.stdout)["tasks"]] == ["task-1", "task-2"]
    none = _cli(cli_env, "tasks", "--status", "bogus")  # collected, but the filter leaves none
    assert none.returncode == 1 and none.stdout.startswith("No task matches --status/--repo"), none.stdout
    one = json.loads(_cli(cli_env, "task", "task-2", "--json").stdout)["tasks"][0]
    assert [(c["subject"], c["sessions"]) for c in one["commits"]] == [("Second task, part one", [])]
    assert one["history"][-1]["new"] == "Done" and one["task"]["folder"] == "tasks"
    text = _cli(cli_env, "task", "task-2").stdout  # styles are styles, never printed as markup
    assert text.splitlines()[0] == f"task-2 · {one['task']['repository']} · Done · tasks"
    missing = _cli(cli_env, "task", "task-77")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "no collected task" in missing.stderr
    # a commit by someone else that no transcript printed
    other = git(project, "log", "--format=%H", "--grep=Finish the second task", "feat").strip()
    why = _cli(cli_env, "why", other[:9])
    assert why.returncode == 0, why.stderr
    assert (
        why.stdout.strip()
        == f"{other[:12]} in {project}, authored by someone else at 2026-11-02 12:00 UTC; no session made it"
    )
    data = json.loads(_cli(cli_env, "why", other, "--json").stdout)
    assert data["matches"] == [] and [(c["sha"], c["authored_by_me"]) for c in data["collected"]] == [(other, False)]
    # the commit a session printed: its origin and the repository's line
    made = _cli(cli_env, "why", first[:7])
    assert f"{first[:12]} in {project}, authored by you at 2026-11-02 10:00 UTC; made in session {MAKER}" in made.stdout
    assert MAKER in made.stdout


def test_mcp_task_tool(db, collected, tmp_path):
    env = server_env(db.dsn, db.reader_dsn, tmp_path)
    data = call(env, "task", {"id": "task-1"}).data
    (task,) = data["tasks"]
    assert task["task"]["title"] == "First" and task["commits"][0]["sessions"] == [MAKER]
    assert [h["new"] for h in task["history"]] == ["To Do", "In Progress", "Done"]
    bad = call(env, "task", {"id": "task-77"})
    assert bad.is_error and "no collected task" in bad.text


def test_task_not_found_says_what_is_true(cli_env, db, own_tmp):
    before = _cli(cli_env, "task", "task-1")  # nothing collected yet
    assert before.returncode == 1 and before.stderr.strip().endswith("no collected task 'task-1' (run `collect`)")
    project = build_project(own_tmp)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        collect(conn, [project], [ME[1]])
    trailer = _cli(cli_env, "task", "task-9")  # only a `Task: task-9` trailer names it
    assert trailer.returncode == 1 and trailer.stderr.count("\n") == 1
    assert trailer.stderr.strip().endswith(
        "no collected task 'task-9': named in commit trailers but no task file found"
    )
    broken = _cli(cli_env, "task", "TASK-3")  # its file's frontmatter is not YAML
    assert broken.returncode == 1
    assert "no collected task 'TASK-3': its file could not be read (backlog/tasks/task-3 - Broken.md: " in broken.stderr
    assert "frontmatter is not YAML at line 4" in broken.stderr and broken.stderr.count("\n") == 1
    unknown = _cli(cli_env, "task", "task-77")
    assert unknown.returncode == 1 and unknown.stderr.strip().endswith("no collected task 'task-77'")
    elsewhere = _cli(cli_env, "task", "task-9", "--repo", "elsewhere")
    assert elsewhere.stderr.strip().endswith("no collected task 'task-9' in elsewhere (run `collect`)")


def test_mcp_why_says_what_the_cli_says_for_collected_commits(db, collected, tmp_path, cli_env):
    project, first = collected
    env = server_env(db.dsn, db.reader_dsn, tmp_path)
    other = git(project, "log", "--format=%H", "--grep=Finish the second task", "feat").strip()
    data = call(env, "why", {"sha": other[:9]}).data
    assert data["origins"] == []
    (c,) = data["collected"]
    assert (c["sha"], c["authored_by_me"], c["repository"]) == (other, False, str(project))
    cli_line = _cli(cli_env, "why", other[:9]).stdout.strip()
    assert cli_line == f"{other[:12]} {c['sentence']}"
    assert c["sentence"] == f"in {project}, authored by someone else at 2026-11-02 12:00 UTC; no session made it"
    made = call(env, "why", {"sha": first}).data
    assert [o["session"]["session_uid"] for o in made["origins"]] == [MAKER]
    assert made["collected"][0]["sentence"].endswith(
        f"authored by you at 2026-11-02 10:00 UTC; made in session {MAKER}"
    )
