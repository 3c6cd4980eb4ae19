"""`collect` (issue 30): a real repository built with git → the collector tables, with counts
asserted independently from `git`; a second run changes nothing; bad input is one line each."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import psycopg
import pytest

from agent_history.db.roles import COLLECTOR, COLLECTOR_TABLES
from agent_history.ingest.collect import collect
from tests.git_repos import ME, OTHER, at, build_project, git


@pytest.fixture
def project(own_tmp: Path) -> Path:
    return build_project(own_tmp)


def _run(conn: psycopg.Connection, *paths: Path, emails=(ME[1],)):
    return collect(conn, list(paths), list(emails))


def _snapshot(conn: psycopg.Connection) -> dict[str, list[str]]:
    return {
        t: [r[0] for r in conn.execute(f"SELECT x::text FROM ah.{t} AS x ORDER BY x::text").fetchall()]
        for t in COLLECTOR_TABLES
        if t != "collect_run"  # a log of runs: one more row per run, by design
    }


def _shas(repo: Path, *args: str) -> list[str]:
    return git(repo, "rev-list", *args).split()


def _ct(repo: Path, rev: str) -> datetime:
    return datetime.fromisoformat(git(repo, "show", "-s", "--format=%cI", rev).strip())


def test_commits_files_and_default_branch_match_git(db, project):
    with db.connect(autocommit=True) as conn:
        summary = _run(conn, project)
        assert summary.lines == [
            f"bad task file {project}/backlog/tasks/task-3 - Broken.md: frontmatter is not YAML at line 4: "
            "expected ',' or ']', but got ':' (the other tasks are collected)"
        ]
        rows = conn.execute(
            "SELECT sha, parents, on_default_branch, reached_default_at, authored_by_me, files_changed, "
            "lines_added, lines_deleted, task_ids, subject FROM ah.repo_commit ORDER BY committed_at"
        ).fetchall()
        files = conn.execute(
            "SELECT c.sha, f.path, f.lines_added, f.lines_deleted FROM ah.repo_commit_file AS f "
            "JOIN ah.repo_commit AS c ON c.id = f.commit_id"
        ).fetchall()
        repo = conn.execute("SELECT path, name, default_branch, is_shallow, gone FROM ah.repository").fetchall()
    assert repo == [(str(project), "project", "main", False, False)]
    every = set(_shas(project, "--branches"))
    on_main = set(_shas(project, "main"))
    assert {r[0] for r in rows} == every and len(rows) == 7
    assert {r[0] for r in rows if r[2]} == on_main and len(on_main) == 6
    assert all(r[1] == git(project, "show", "-s", "--format=%P", r[0]).split() for r in rows)
    mine = set(git(project, "log", "--branches", f"--author={ME[1]}", "--format=%H").split())
    assert {r[0] for r in rows if r[4]} == mine and len(mine) == 5
    # feat's commits reached main with the merge, at the merge's commit time; wip's never did
    merge = git(project, "rev-parse", "main").strip()
    feat_only = set(_shas(project, "feat", "^main~1"))
    for sha, _p, on_default, reached, *_ in rows:
        if sha in feat_only or sha == merge:
            assert reached == _ct(project, merge)
        elif on_default:
            assert reached == _ct(project, sha)
        else:
            assert reached is None and sha == git(project, "rev-parse", "wip").strip()
    # files and line counts: git diff-tree per commit (merges against their first parent)
    expected = set()
    parents = {r[0]: r[1] for r in rows}
    for sha in every:
        against = parents[sha][:1]  # a merge against its first parent; the root commit against nothing
        out = git(project, "diff-tree", "-r", "--no-renames", "--numstat", "--root", "--no-commit-id", *against, sha)
        for line in out.splitlines():
            a, d, path = line.split("\t", 2)
            expected.add((sha, path, None if a == "-" else int(a), None if d == "-" else int(d)))
    assert set(files) == expected
    by_sha = {r[0]: r for r in rows}
    assert {p for s, p, *_ in files if s == merge} == {"backlog/tasks/task-2 - Second.md", "src/b.py"}
    binary = [f for f in files if f[1] == "logo.bin"]
    assert binary == [(binary[0][0], "logo.bin", None, None)]
    assert by_sha[binary[0][0]][5:8] == (3, 3, 1)  # 3 files; the binary one has no line counts
    tasks = {r[9]: r[8] for r in rows if r[8]}
    assert tasks == {
        "Implement the first task": ["task-1"], "Second task, part one": ["task-2"], "Work in progress": ["task-9"],
    }  # fmt: skip


def test_pushes_tasks_and_status_changes(db, project):
    with db.connect(autocommit=True) as conn:
        _run(conn, project)
        pushes = conn.execute("SELECT ref, sha FROM ah.repo_push ORDER BY ref").fetchall()
        tasks = conn.execute(
            "SELECT task_id, folder, title, status, labels, assignee, created_date, dependencies "
            "FROM ah.backlog_task ORDER BY task_id"
        ).fetchall()
        changes = conn.execute(
            "SELECT task_id, old_status, new_status, changed_at, sha FROM ah.backlog_status_change "
            "ORDER BY changed_at, task_id"
        ).fetchall()
        issues = conn.execute("SELECT path, kind FROM ah.collect_issue").fetchall()
    reflog = {
        ref: git(project, "reflog", "show", "--format=%H %gs", ref).splitlines()
        for ref in ("refs/remotes/origin/feat", "refs/remotes/origin/main")
    }
    assert pushes == [
        (ref, line.split()[0]) for ref, lines in sorted(reflog.items()) for line in lines if "update by push" in line
    ]
    assert len(pushes) == 2
    assert tasks == [
        ("task-1", "completed", "First", "Done", ["core", "cli"], ["@codex"], "2026-11-02 09:00", []),
        ("task-2", "tasks", "Second", "Done", [], ["@codex"], "2026-11-02 09:00", []),
    ]
    assert issues == [("backlog/tasks/task-3 - Broken.md", "bad_frontmatter")]
    main = git(project, "rev-list", "--first-parent", "--reverse", "main").split()
    assert changes == [
        ("task-1", None, "To Do", at(0), main[0]),
        ("task-2", None, "To Do", at(0), main[0]),
        ("task-1", "To Do", "In Progress", at(1), main[1]),
        ("task-1", "In Progress", "Done", at(4), main[2]),
        ("task-2", "To Do", "Done", at(5), main[3]),  # the Done flip reached main with the merge
    ]


def test_a_second_run_changes_nothing_and_rebuild_keeps_the_tables(db, project):
    from agent_history.ingest.rebuild import truncate_derived

    with db.connect(autocommit=True) as conn:
        first = _run(conn, project)
        before = _snapshot(conn)
        second = _run(conn, project)
        assert _snapshot(conn) == before
        assert [r.commits_new for r in first.repositories] == [7]
        assert [r.commits_new for r in second.repositories] == [0]
        truncate_derived(conn)
        assert _snapshot(conn) == before


def test_no_address_name_or_hash_of_one_is_stored(db, project):
    with db.connect(autocommit=True) as conn:
        _run(conn, project)
        dump = "\n".join(line for rows in _snapshot(conn).values() for line in rows)
    assert len(dump) > 1000
    secrets = [ME[0], ME[1], OTHER[0], OTHER[1], "example.org", "example.com", "Signed-off-by"]
    for s in (ME[1], OTHER[1]):
        secrets += [hashlib.sha256(s.encode()).hexdigest(), hashlib.md5(s.encode()).hexdigest()]
    found = [s for s in secrets if s.lower() in dump.lower()]
    assert found == []


def test_authored_by_me_is_unknown_without_identities(db, project):
    with db.connect(autocommit=True) as conn:
        _run(conn, project, emails=())
        assert conn.execute("SELECT count(*), count(authored_by_me) FROM ah.repo_commit").fetchone() == (7, 0)


def test_shallow_clone_is_collected_and_said_once(db, project, own_tmp):
    clone = own_tmp / "shallow"
    git(own_tmp, "clone", "-q", "--depth", "1", f"file://{project}", str(clone))
    with db.connect(autocommit=True) as conn:
        summary = _run(conn, clone)
        assert summary.lines == [
            f"shallow clone: {clone}: history before its boundary is missing (commits, Done flips incomplete)"
        ]
        assert conn.execute("SELECT is_shallow FROM ah.repository").fetchone() == (True,)
        assert conn.execute("SELECT count(*) FROM ah.repo_commit").fetchone() == (len(_shas(clone, "--branches")),)
        assert conn.execute("SELECT kind FROM ah.collect_issue").fetchall() == [("shallow_clone",)]


def test_a_deleted_repository_keeps_its_rows_marked_gone(db, project):
    with db.connect(autocommit=True) as conn:
        _run(conn, project)
        before = conn.execute("SELECT count(*) FROM ah.repo_commit").fetchone()
        shutil.rmtree(project)
        summary = _run(conn, project)
        assert summary.lines == [f"repository gone: {project} (its rows are kept, marked gone)"]
        assert conn.execute("SELECT gone FROM ah.repository").fetchone() == (True,)
        assert conn.execute("SELECT count(*) FROM ah.repo_commit").fetchone() == before
        assert _run(conn, project).lines == []  # said once


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_cli_collects_configured_globs_and_says_what_is_not_a_repository(cli_env, own_tmp, db):
    build_project(own_tmp / "src", remote=own_tmp / "remote.git")
    (own_tmp / "src" / "notes").mkdir()
    (own_tmp / "config.toml").write_text(
        f'[repos]\npaths = ["{own_tmp}/src/*"]\n[identity]\nemails = ["{ME[1].upper()}"]\n'
    )
    out = _cli(cli_env, "collect", "--json")
    assert out.returncode == 1, out.stderr
    assert out.stderr.splitlines() == [
        f"not a git repository: {own_tmp}/src/notes",
        f"bad task file {own_tmp}/src/project/backlog/tasks/task-3 - Broken.md: frontmatter is not YAML at line 4: "
        "expected ',' or ']', but got ':' (the other tasks are collected)",
    ]
    data = json.loads(out.stdout)
    assert [(r["state"], r["commits"], r["tasks"]) for r in data["repositories"]] == [
        ("not_a_repository", 0, 0),
        ("collected", 7, 2),
    ]
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FILTER (WHERE authored_by_me) FROM ah.repo_commit").fetchone() == (5,)
    again = _cli(cli_env, "collect", f"{own_tmp}/src/project")
    assert again.returncode == 0, again.stderr
    assert "7 commits (0 new, 6 on main), 2 pushes, 2 tasks, 5 status changes" in again.stdout
    status = _cli(cli_env, "status", "--json")
    assert json.loads(status.stdout)["collector"] == {
        "repositories": 1, "gone": 0, "commits": 7, "tasks": 2, "issues": 2,
        "runs_as": "ah_collector (or the schema owner)",
    }  # fmt: skip
    line = "collector: 1 repository, 7 commits, 2 Backlog tasks, 2 issues; `collect` runs as ah_collector"
    assert line in " ".join(_cli(cli_env, "status").stdout.split())  # wrapped at 80 columns


def test_the_collector_role_writes_only_the_collector_tables(cli_env, db, own_tmp):
    repo = build_project(own_tmp / "r")
    with psycopg.connect(db.server.dsn(db.name, user=COLLECTOR), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM ah.session").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO ah.repo (root_path, name) VALUES ('/x', 'x')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM ah.session")
    env = dict(cli_env, AGENT_HISTORY_DSN=db.server.dsn(db.name, user=COLLECTOR))
    out = _cli(env, "collect", str(repo))
    assert out.returncode == 0 and "7 commits (7 new, 6 on main)" in out.stdout, out.stderr
    refused = _cli(dict(cli_env, AGENT_HISTORY_DSN=db.reader_dsn), "collect", str(repo))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("error: collect runs as ah_collector or as the schema owner")
    assert len(refused.stderr.splitlines()) == 1


def test_the_default_set_skips_session_directories_that_are_not_repositories(cli_env, own_tmp, db):
    project = build_project(own_tmp / "src")
    plain, gone = own_tmp / "scratch", own_tmp / "was-a-repo"
    plain.mkdir()
    gone.mkdir()  # a session directory whose .git was removed
    with db.connect() as conn:  # what index links sessions to: their working directories
        for p in (project, plain, gone):
            conn.execute("INSERT INTO ah.repo (root_path, name) VALUES (%s, %s)", (str(p), p.name))
        conn.commit()
    out = _cli(cli_env, "collect", "--json")
    assert out.returncode == 0, out.stderr
    assert "skipped 2 session directories that are not in a git repository" in out.stderr.splitlines()
    assert "not a git repository" not in out.stderr
    data = json.loads(out.stdout)
    assert data["not_repositories"] == 2
    assert [(r["path"], r["state"]) for r in data["repositories"]] == [(str(project), "collected")]
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ah.collect_issue WHERE kind = 'not_a_repository'").fetchone() == (0,)
    named = _cli(cli_env, "collect", str(plain))  # named explicitly: a bad argument, a usage error
    assert named.returncode == 2
    assert named.stderr.splitlines() == [f"not a git repository: {plain}"]
