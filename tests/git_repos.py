"""Real git repositories for the collector's tests, built with `git` in a temporary directory.

`build_project(base)` makes ``base/project`` (and the bare remote ``base/remote.git``):

    c1  main  me     "Start the backlog"           task-1, task-2 (To Do), README
    c2  main  me     "Implement the first task"    Task: task-1; task-1 → In Progress; src/a.py; a binary file
    c3  feat  other  "Second task, part one"       Task: task-2; Signed-off-by: Other Human <…>; src/b.py
    c4  feat  other  "Finish the second task"      task-2 → Done
    c5  main  me     "Land the first task"         task-1 → Done, moved to backlog/completed/
    m   main  me     "Merge branch 'feat'"         brings c3, c4 (task-2 → Done on main)
    w1  wip   me     "Work in progress"            Task: task-9; on no default branch
    then main and feat pushed to the bare remote at T0 + 7 h; an uncommitted task file with bad frontmatter.

Times are fixed (one hour apart from `T0`), so expectations are exact. The identities below must
never appear in the database: tests grep for them.
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

ME = ("Me Person", "me@example.org")
OTHER = ("Other Human", "other@example.com")
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def git(repo: Path, *args: str, author: tuple[str, str] = ME, at: datetime | None = None) -> str:
    """Run git in `repo` with `author` as author and committer at `at`; returns stdout (text)."""
    env = dict(os.environ)
    when = (at or T0).isoformat()
    env.update(
        GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1], GIT_COMMITTER_NAME=author[0],
        GIT_COMMITTER_EMAIL=author[1], GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when,
        GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
    )  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True)
    return done.stdout


def task_file(task_id: str, title: str, status: str, *, labels: str = "[]") -> str:
    """A Backlog.md task file as the tool writes it."""
    return (
        f"---\nid: {task_id}\ntitle: {title}\nstatus: {status}\nassignee: ['@codex']\n"
        f"created_date: '2026-11-02 09:00'\nlabels: {labels}\ndependencies: []\n---\n\n## Description\n\n{title}.\n"
    )


def at(hours: int) -> datetime:
    """`T0` plus `hours` hours."""
    return T0 + timedelta(hours=hours)


def build_project(base: Path, remote: Path | None = None) -> Path:
    """The repository described in the module docstring (its bare remote at `remote`, default
    ``base/remote.git``); returns its path."""
    repo = base / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    tasks = repo / "backlog" / "tasks"
    tasks.mkdir(parents=True)
    (repo / "README.md").write_text("# project\n")
    (tasks / "task-1 - First.md").write_text(task_file("task-1", "First", "To Do", labels="[core, cli]"))
    (tasks / "task-2 - Second.md").write_text(task_file("task-2", "Second", "To Do"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Start the backlog", at=at(0))

    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("a = 1\nb = 2\n")
    (repo / "logo.bin").write_bytes(bytes(range(256)))
    (tasks / "task-1 - First.md").write_text(task_file("task-1", "First", "In Progress", labels="[core, cli]"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Implement the first task\n\nBody text.\n\nTask: task-1", at=at(1))

    git(repo, "checkout", "-q", "-b", "feat")
    (repo / "src" / "b.py").write_text("b = 1\n")
    git(repo, "add", "-A")
    git(
        repo, "commit", "-q", "-m",
        "Second task, part one\n\nTask: task-2\nSigned-off-by: Other Human <other@example.com>",
        author=OTHER, at=at(2),
    )  # fmt: skip
    (tasks / "task-2 - Second.md").write_text(task_file("task-2", "Second", "Done"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Finish the second task", author=OTHER, at=at(3))

    git(repo, "checkout", "-q", "main")
    (repo / "backlog" / "completed").mkdir()
    git(repo, "mv", "backlog/tasks/task-1 - First.md", "backlog/completed/task-1 - First.md")
    (repo / "backlog" / "completed" / "task-1 - First.md").write_text(
        task_file("task-1", "First", "Done", labels="[core, cli]")
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Land the first task", at=at(4))
    git(repo, "merge", "-q", "--no-ff", "feat", "-m", "Merge branch 'feat'", at=at(5))

    git(repo, "checkout", "-q", "-b", "wip")
    (repo / "src" / "a.py").write_text("a = 1\n")
    git(repo, "commit", "-q", "-am", "Work in progress\n\nTask: task-9", at=at(6))
    git(repo, "checkout", "-q", "main")

    remote = remote or base / "remote.git"
    git(base, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main", "feat", at=at(7))  # the reflog records the committer date

    (tasks / "task-3 - Broken.md").write_text("---\nid: task-3\ntitle: [unclosed\nstatus: To Do\n---\nbody\n")
    return repo
