"""The collector's metrics (issue 30): ``run="collect"`` passes from ``ah.collect_run`` and the
``ah_repo_*`` families from the collected tables, on a real repository (`tests/git_repos.py`),
counts from `git`; and `issues` listing what `collect` could not read beside parse issues."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg

from agent_history.config import Settings
from agent_history.ingest.collect import collect
from agent_history.telemetry.collectors import CollectContext, collect_catalogue, collect_runs
from agent_history.telemetry.policy import LabelGuard, ModelLabels, Sample, resolve_label_values
from tests.git_repos import ME, OTHER, build_project, git


def _by_labels(samples: list[Sample], family: str) -> dict[tuple, float]:
    return {s.labels: s.value for s in samples if s.family == family}


def test_collect_runs_and_repository_families(db, own_tmp):
    project = build_project(own_tmp)
    (own_tmp / "plain").mkdir()
    ctx = CollectContext(Settings(), [], [], ModelLabels(()), runs=("collect",))
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert _by_labels(collect_runs(conn, ctx), "ah_runs_total") == {
            (("outcome", "success"), ("run", "collect")): 0, (("outcome", "failure"), ("run", "collect")): 0,
        }  # fmt: skip
        first = collect(conn, [project], [ME[1]]).repositories[0]
        collect(conn, [project, own_tmp / "plain"], [ME[1]])  # a path that is not a repository: a failed run
        runs = collect_runs(conn, ctx)
        samples = collect_catalogue(conn, ctx)
    assert _by_labels(runs, "ah_runs_total") == {
        (("outcome", "success"), ("run", "collect")): 1, (("outcome", "failure"), ("run", "collect")): 1,
    }  # fmt: skip
    assert _by_labels(runs, "ah_run_success") == {(("run", "collect"),): 0}
    assert _by_labels(runs, "ah_run_rows_written") == {(("run", "collect"),): 0}  # nothing changed the 2nd time
    assert first.changed > 0 and set(_by_labels(runs, "ah_run_last_success_timestamp_seconds")) == {
        (("run", "collect"),)
    }
    mine = len(git(project, "log", "--branches", f"--author={ME[1]}", "--format=%H").split())
    others = len(git(project, "log", "--branches", f"--author={OTHER[1]}", "--format=%H").split())
    assert _by_labels(samples, "ah_repo_commits") == {
        (("author", "me"),): mine, (("author", "other"),): others, (("author", "unknown"),): 0,
    }  # fmt: skip
    assert _by_labels(samples, "ah_repo_repositories") == {
        (("repo_state", "collected"),): 1,
        (("repo_state", "gone"),): 0,
    }
    assert _by_labels(samples, "ah_repo_backlog_tasks") == {(): 2}
    issues = _by_labels(samples, "ah_repo_collect_issues")
    assert {k[0][1]: v for k, v in issues.items() if v} == {"bad_frontmatter": 1, "not_a_repository": 1}
    assert _by_labels(samples, "ah_repo_ci_runs")[(("ci_conclusion", "running"),)] == 0
    guard = LabelGuard(resolve_label_values(set(), ModelLabels(())))
    assert [s for s in runs + samples if s.family.startswith(("ah_repo", "ah_run")) and not guard.ok(s)] == []


def test_issues_lists_what_collect_could_not_read(cli_env, db, own_tmp):
    project = build_project(own_tmp)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        collect(conn, [project], [ME[1]])
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "issues", "--kind", "bad_frontmatter", "--json"],
        env=cli_env, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert (row["path"], row["kind"], row["namespace"], row["byte_offset"]) == (
        f"{project}/backlog/tasks/task-3 - Broken.md", "bad_frontmatter", None, None,
    )  # fmt: skip
    text = subprocess.run(
        [sys.executable, "-m", "agent_history", "issues"], env=cli_env, capture_output=True, text=True
    )
    assert "bad_frontmatter" in text.stdout and "None" not in text.stdout
