"""CI runs in `collect` (issue 30): the shape `gh run list --json` prints, parsed; gh absent or
failing is one line and the rest is collected; runs gh reports are stored and shown by `task`.

gh is not installed on the test machine and the tests download nothing, so a run is driven by a
stand-in `gh` on PATH that prints a recorded output (or fails as gh does without credentials)."""

from __future__ import annotations

import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.collect import collect
from agent_history.read.tasks import task_detail
from agent_history.repos.ci import CiOutputError, CiRun, parse_runs
from tests.git_repos import ME, build_project, git

RECORDED = """[
  {"conclusion":"success","createdAt":"2026-11-02T10:01:02Z","databaseId":11751234567,"event":"push",
   "headBranch":"main","headSha":"%(sha)s","status":"completed","updatedAt":"2026-11-02T10:04:40Z",
   "url":"https://github.com/example/project/actions/runs/11751234567","workflowName":"CI"},
  {"conclusion":"","createdAt":"2026-11-02T11:00:00Z","databaseId":11751234999,"event":"pull_request",
   "headBranch":"feat","headSha":"%(other)s","status":"in_progress","updatedAt":"2026-11-02T11:00:09Z",
   "url":"https://github.com/example/project/actions/runs/11751234999","workflowName":"CI"}
]"""


def test_the_recorded_gh_run_list_shape_parses_exactly():
    runs = parse_runs(RECORDED % {"sha": "A" * 40, "other": "b" * 40})
    assert runs[0] == CiRun(
        11751234567, "CI", "push", "main", "a" * 40, "completed", "success",
        datetime(2026, 11, 2, 10, 1, 2, tzinfo=UTC), datetime(2026, 11, 2, 10, 4, 40, tzinfo=UTC),
        "https://github.com/example/project/actions/runs/11751234567",
    )  # fmt: skip
    assert (runs[1].conclusion, runs[1].status) == (None, "in_progress")
    for bad in ("not json", '{"runs": []}', '[{"databaseId": "x"}]'):
        with pytest.raises(CiOutputError):
            parse_runs(bad)


def _bin(own_tmp: Path, gh_script: str | None) -> str:
    """A PATH holding git and, when given, a `gh` shell script."""
    d = own_tmp / "bin"
    d.mkdir(exist_ok=True)
    (d / "git").symlink_to(shutil.which("git"))
    if gh_script is not None:
        (d / "gh").write_text("#!/bin/sh\n" + gh_script)
        (d / "gh").chmod((d / "gh").stat().st_mode | stat.S_IEXEC)
    return str(d)


@pytest.fixture
def github_project(own_tmp):
    project = build_project(own_tmp)
    git(project, "remote", "add", "github", "https://github.com/example/project.git")  # never contacted
    return project


def _collect(db, project, path: str, monkeypatch):
    monkeypatch.setenv("PATH", path)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = collect(conn, [project], [ME[1]])
        runs = conn.execute("SELECT run_id, head_sha, conclusion FROM ah.ci_run ORDER BY run_id").fetchall()
        commits = conn.execute("SELECT count(*) FROM ah.repo_commit").fetchone()[0]
    return summary, runs, commits


def test_gh_absent_is_one_line_and_everything_else_is_collected(db, github_project, own_tmp, monkeypatch):
    summary, runs, commits = _collect(db, github_project, _bin(own_tmp, None), monkeypatch)
    assert summary.lines[-1] == "CI runs not collected (1 repository): gh is not installed (not on PATH)"
    assert (runs, commits, summary.repositories[0].ci_runs) == ([], 7, None)


def test_gh_failing_is_one_line(db, github_project, own_tmp, monkeypatch):
    script = "echo 'HTTP 401: Bad credentials (https://api.github.com/graphql)' >&2\necho 'Try authenticating with:  gh auth login' >&2\nexit 1\n"
    summary, runs, commits = _collect(db, github_project, _bin(own_tmp, script), monkeypatch)
    assert summary.lines[-1] == (
        "CI runs not collected (1 repository): gh run list failed: HTTP 401: Bad credentials "
        "(https://api.github.com/graphql)"
    )
    assert (runs, commits) == ([], 7)


def test_runs_gh_reports_are_stored_once_and_shown_with_the_task(db, github_project, own_tmp, monkeypatch):
    first = git(github_project, "log", "--format=%H", "--grep=Implement the first task", "main").strip()
    other = git(github_project, "rev-parse", "feat").strip()
    out = own_tmp / "recorded.json"
    out.write_text(RECORDED % {"sha": first, "other": other})
    path = _bin(own_tmp, f"exec {shutil.which('cat')} '{out}'\n")  # PATH holds only git and gh
    summary, runs, _ = _collect(db, github_project, path, monkeypatch)
    assert not any(line.startswith("CI runs") for line in summary.lines)
    assert runs == [(11751234567, first, "success"), (11751234999, other, None)]
    again, _, _ = _collect(db, github_project, path, monkeypatch)
    assert again.repositories[0].changed == 0
    with psycopg.connect(db.dsn) as conn:
        (detail,) = task_detail(conn, "task-1")
    assert detail.commits[0].ci == [
        {"workflow": "CI", "status": "completed", "conclusion": "success",
         "url": "https://github.com/example/project/actions/runs/11751234567"}
    ]  # fmt: skip
