"""Backlog.md tasks as collected (issue 30): `tasks` lists them, `task ID` tells one's story.

A task is named by its Backlog.md id (``task-12``), matched case-insensitively; the same id in two
repositories gives two tasks (each names its repository). For one task:
- its status history on the default branch (``ah.backlog_status_change``, oldest first);
- the commits carrying its id in a ``Task:`` trailer, with whether and when each reached the
  default branch, and the transcript sessions whose git events name the commit (a sha prefix
  match either way, as `why` matches);
- the loops that attribute it: a state-log line naming it, or a trailer commit that reached the
  default branch inside the loop's window, in the repository holding the loop's closeout.
and the CI runs of those commits (``ah.ci_run``). Readers never write; tables from migration 0019.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

import psycopg

from agent_history.read.common import iso
from agent_history.session.exclusions import not_excluded


class TaskNotFound(LookupError):
    """No collected task has this id."""


@dataclass
class TaskSummary:
    """One task: where it lives and what it says now."""

    repository: str
    task_id: str
    title: str | None
    status: str | None
    folder: str
    labels: list[str]
    assignee: list[str]
    created_date: str | None
    updated_date: str | None
    dependencies: list[str]
    commits: int
    """Commits whose ``Task:`` trailer names it."""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class StatusStep:
    """The task's status changed to `new` in commit `sha` (the default branch) at `changed_at`."""

    sha: str
    changed_at: datetime
    old: str | None
    new: str | None


@dataclass
class TaskCommit:
    """A commit naming the task in a ``Task:`` trailer, and the sessions that made it."""

    sha: str
    subject: str
    committed_at: datetime
    reached_default_at: datetime | None
    authored_by_me: bool | None
    sessions: list[str] = field(default_factory=list)
    """uids of transcript sessions whose git events name this commit."""
    ci: list[dict] = field(default_factory=list)
    """CI runs of this commit: workflow, status, conclusion, url (``ah.ci_run``)."""


@dataclass
class TaskLoop:
    """A loop that attributes the task, and how (``state_log`` | ``task_trailer``)."""

    loop_id: int
    repo: str | None
    loop_number: int
    root_session_uid: str
    how: str


@dataclass
class TaskDetail:
    """One task with its history, commits and loops."""

    task: TaskSummary
    history: list[StatusStep]
    commits: list[TaskCommit]
    loops: list[TaskLoop]

    def as_dict(self) -> dict:
        d = asdict(self)
        for step in d["history"]:
            step["changed_at"] = iso(step["changed_at"])
        for c in d["commits"]:
            c["committed_at"], c["reached_default_at"] = iso(c["committed_at"]), iso(c["reached_default_at"])
        return d


_SUMMARY_SQL = """
SELECT t.repository_id, r.name, t.task_id, t.title, t.status, t.folder, t.labels, t.assignee, t.created_date, t.updated_date,
       t.dependencies,
       (SELECT count(*) FROM ah.repo_commit AS c WHERE c.repository_id = t.repository_id AND lower(t.task_id) IN (SELECT lower(x) FROM unnest(c.task_ids) AS x))
FROM ah.backlog_task AS t JOIN ah.repository AS r ON r.id = t.repository_id
"""


def list_tasks(
    conn: psycopg.Connection, *, status: str | None = None, repo: str | None = None, limit: int = 200
) -> list[TaskSummary]:
    """Tasks ordered by repository and id (natural order of the number), filtered by status
    (case-insensitive) and repository (its directory name)."""
    rows = conn.execute(
        _SUMMARY_SQL
        + """
        WHERE (%(status)s::text IS NULL OR lower(t.status) = lower(%(status)s))
          AND (%(repo)s::text IS NULL OR r.name = %(repo)s)
        ORDER BY r.name, substring(t.task_id FROM '^\\D*'), nullif(substring(t.task_id FROM '\\d+'), '')::numeric,
                 t.task_id
        LIMIT %(limit)s
        """,
        {"status": status, "repo": repo, "limit": limit},
    ).fetchall()
    return [TaskSummary(*r[1:]) for r in rows]


def task_detail(conn: psycopg.Connection, task_id: str, *, repo: str | None = None) -> list[TaskDetail]:
    """Every collected task with this id (one per repository). Raises TaskNotFound."""
    found = conn.execute(
        _SUMMARY_SQL + "WHERE lower(t.task_id) = lower(%s) AND (%s::text IS NULL OR r.name = %s) ORDER BY r.name",
        (task_id, repo, repo),
    ).fetchall()
    if not found:
        raise TaskNotFound(
            f"no collected task {task_id!r}" + (f" in {repo}" if repo else "") + _why_not_found(conn, task_id, repo)
        )
    return [_detail(conn, row[0], TaskSummary(*row[1:])) for row in found]


def _why_not_found(conn: psycopg.Connection, task_id: str, repo: str | None) -> str:
    """What is true of a task id no collected task file has (the tail of `TaskNotFound`): its file
    was skipped (a ``bad_frontmatter`` collect issue: its path and why), or only commit trailers name it, or nothing
    was collected yet (in `repo`)."""
    from agent_history.repos.backlog import id_from_name

    issues = conn.execute(
        "SELECT i.path, i.detail FROM ah.collect_issue AS i JOIN ah.repository AS r ON r.id = i.repository_id "
        "WHERE i.kind = 'bad_frontmatter' AND (%s::text IS NULL OR r.name = %s) ORDER BY i.path",
        (repo, repo),
    ).fetchall()
    for path, detail in issues:  # `issues` lists parse issues only: the collect issue is told here
        if (id_from_name(path) or "").lower() == task_id.lower():
            return f": its file could not be read ({path}: {detail or 'bad frontmatter'})"
    named = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM ah.repo_commit AS c JOIN ah.repository AS r ON r.id = c.repository_id, "
        "unnest(c.task_ids) AS t(id) WHERE lower(t.id) = lower(%s) AND (%s::text IS NULL OR r.name = %s))",
        (task_id, repo, repo),
    ).fetchone()[0]
    if named:
        return ": named in commit trailers but no task file found"
    collected = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM ah.repository WHERE %s::text IS NULL OR name = %s)", (repo, repo)
    ).fetchone()[0]
    return "" if collected else " (run `collect`)"


def _detail(conn: psycopg.Connection, repo_id: int, task: TaskSummary) -> TaskDetail:
    history = [
        StatusStep(*r)
        for r in conn.execute(
            "SELECT sha, changed_at, old_status, new_status FROM ah.backlog_status_change "
            "WHERE repository_id = %s AND task_id = %s ORDER BY changed_at, id",
            (repo_id, task.task_id),
        )
    ]
    commits = []
    for sha, subject, committed, reached, mine in conn.execute(
        "SELECT sha, subject, committed_at, reached_default_at, authored_by_me FROM ah.repo_commit "
        "WHERE repository_id = %s AND lower(%s) IN (SELECT lower(x) FROM unnest(task_ids) AS x) ORDER BY committed_at, sha",
        (repo_id, task.task_id),
    ):
        runs = [
            {"workflow": w, "status": st, "conclusion": co, "url": u}
            for w, st, co, u in conn.execute(
                "SELECT workflow, status, conclusion, url FROM ah.ci_run WHERE repository_id = %s AND head_sha = %s "
                "ORDER BY created_at, run_id",
                (repo_id, sha),
            )
        ]
        commits.append(TaskCommit(sha, subject, committed, reached, mine, sessions_of_commit(conn, sha), runs))
    loops = [
        TaskLoop(*r)
        for r in conn.execute(
            """
            WITH repo AS (SELECT path FROM ah.repository WHERE id = %(repo)s),
            mine AS (
                SELECT l.* FROM ah.loops AS l, repo WHERE starts_with(l.closeout_abspath, repo.path || '/')
            ),
            by_log AS (
                SELECT DISTINCT m.id, 'state_log' AS how FROM mine AS m, repo
                JOIN ah.loop_state_line AS x ON x.repository_id = %(repo)s
                WHERE x.task = %(task)s AND x.event = 'landed'
                  AND repo.path || '/' || x.path = regexp_replace(m.closeout_abspath,
                      'closeout-(\\d{4}-\\d{2}-\\d{2})-loop(\\d+)\\.md$', 'state-\\1-loop\\2.jsonl')
                  AND x.ts >= m.started_at AND (m.window_end_at IS NULL OR x.ts < m.window_end_at)
            ),
            by_trailer AS (
                SELECT DISTINCT m.id, 'task_trailer' AS how FROM mine AS m
                JOIN ah.repo_commit AS c ON c.repository_id = %(repo)s AND lower(%(task)s) IN (SELECT lower(x) FROM unnest(c.task_ids) AS x)
                WHERE c.reached_default_at >= m.started_at
                  AND (m.window_end_at IS NULL OR c.reached_default_at < m.window_end_at)
            )
            SELECT l.id, l.repo, l.loop_number, s.session_uid, min(a.how)
            FROM (SELECT * FROM by_log UNION ALL SELECT * FROM by_trailer) AS a
            JOIN ah.loops AS l ON l.id = a.id JOIN ah.session AS s ON s.id = l.root_session_id
            GROUP BY l.id, l.repo, l.loop_number, s.session_uid
            ORDER BY l.started_at, l.id
            """,
            {"repo": repo_id, "task": task.task_id},
        )
    ]
    return TaskDetail(task, history, commits, loops)


def sessions_of_commit(conn: psycopg.Connection, sha: str) -> list[str]:
    """uids of the (not excluded) sessions that made collected commit `sha` (full sha), first
    printed first (view ``ah.repo_commit_session``, sql/60_collector.sql)."""
    rows = conn.execute(
        f"""
        SELECT s.session_uid, min(x.printed_at) FROM ah.repo_commit_session AS x
        JOIN ah.session AS s ON s.id = x.session_id
        WHERE x.sha = %s AND {not_excluded("s")}
        GROUP BY s.session_uid ORDER BY 2 NULLS LAST, 1
        """,
        (sha.lower(),),
    ).fetchall()
    return [r[0] for r in rows]
