"""The repository collector's tables (migration 0019): ``ah.repository``, ``ah.repo_commit`` /
``ah.repo_commit_file``, ``ah.repo_push``, ``ah.backlog_task``, ``ah.backlog_status_change``,
``ah.ci_run``, ``ah.loop_state_line``, ``ah.collect_issue`` and ``ah.collect_run``.

`ingest.collect` reads the checkouts and builds the rows; the functions here write them, one
statement per row where the collector wrote one (the row counts are what `RepoResult.changed`
adds up). Every upsert is guarded by ``IS DISTINCT FROM`` or ``DO NOTHING``, so a second run over
an unchanged repository writes 0 rows. Nothing here opens or commits a transaction: `collect`
runs one per repository. Writes need the ``ah_collector`` role (or the schema owner); the
temporary staging tables (``collect_commit``, ``collect_file``, ``collect_reach``) are dropped at
commit.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb


# -- repositories ------------------------------------------------------------------------------
def collector_tables_exist(conn: psycopg.Connection) -> bool:
    """Whether the collector's tables exist (migration 0019 applied)."""
    return conn.execute("SELECT to_regclass('ah.repository')").fetchone()[0] is not None


def linked_repository_paths(conn: psycopg.Connection) -> list[str]:
    """Top-level paths the catalogue links sessions to (``ah.repo.root_path``) and the paths of
    repositories collected before and not gone, sorted, without repeats."""
    rows = conn.execute(
        "SELECT root_path FROM ah.repo UNION SELECT path FROM ah.repository WHERE NOT gone ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def repository_known(conn: psycopg.Connection, path: str) -> bool:
    """Whether `path` (a top-level path) was collected before (gone or not)."""
    return conn.execute("SELECT 1 FROM ah.repository WHERE path = %s", (path,)).fetchone() is not None


def live_repository_paths(conn: psycopg.Connection) -> list[str]:
    """Paths of the collected repositories not marked gone, sorted."""
    return [path for (path,) in conn.execute("SELECT path FROM ah.repository WHERE NOT gone ORDER BY path").fetchall()]


def mark_repositories_gone(conn: psycopg.Connection, paths: list[str]) -> None:
    """Mark the repositories at `paths` gone (their rows are kept)."""
    conn.execute("UPDATE ah.repository SET gone = true WHERE path = ANY (%s)", (paths,))


def upsert_repository(
    conn: psycopg.Connection, path: str, name: str, default_branch: str | None, shallow: bool
) -> tuple[int, int]:
    """Insert or update the repository at top-level `path` (not gone any more); returns (its id,
    rows written: 1 when inserted or changed, else 0)."""
    repo_id = conn.execute(
        """
        INSERT INTO ah.repository AS r (path, name, default_branch, is_shallow, gone)
        VALUES (%s, %s, %s, %s, false)
        ON CONFLICT (path) DO UPDATE SET name = EXCLUDED.name, default_branch = EXCLUDED.default_branch,
            is_shallow = EXCLUDED.is_shallow, gone = false
        WHERE (r.name, r.default_branch, r.is_shallow, r.gone)
              IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.default_branch, EXCLUDED.is_shallow, false)
        RETURNING id
        """,
        (path, name, default_branch, shallow),
    ).fetchone()
    changed = int(repo_id is not None)
    if repo_id is None:
        repo_id = conn.execute("SELECT id FROM ah.repository WHERE path = %s", (path,)).fetchone()
    return repo_id[0], changed


def history_cursor(conn: psycopg.Connection, repo_id: int) -> dict | None:
    """The branch tips read last (``{"refs": {ref: sha}, "default": branch}``; None: never read)."""
    return conn.execute("SELECT history_cursor FROM ah.repository WHERE id = %s", (repo_id,)).fetchone()[0]


def set_history_cursor(conn: psycopg.Connection, repo_id: int, cursor: dict) -> int:
    """Store `cursor` (shape of `history_cursor`); returns rows written (0: unchanged)."""
    new_cursor = Jsonb(cursor)
    return conn.execute(
        "UPDATE ah.repository SET history_cursor = %s WHERE id = %s AND history_cursor IS DISTINCT FROM %s",
        (new_cursor, repo_id, new_cursor),
    ).rowcount


def mark_repository_changed(conn: psycopg.Connection, repo_id: int) -> None:
    """Move ``changed_at`` to now (the loop post-pass recomputes the loops of a repository changed
    after their last refresh)."""
    conn.execute("UPDATE ah.repository SET changed_at = clock_timestamp() WHERE id = %s", (repo_id,))


# -- commits -----------------------------------------------------------------------------------
COMMIT_COLUMNS: tuple[str, ...] = (
    "sha", "parents", "authored_at", "committed_at", "subject", "trailers", "task_ids", "authored_by_me",
    "files_changed", "lines_added", "lines_deleted", "on_default_branch", "reached_default_at",
)  # fmt: skip
"""The order of a commit row given to `write_commits` (``trailers``: a list of [key, value])."""


def write_commits(
    conn: psycopg.Connection, repo_id: int, commits: Iterable[tuple], files: Iterable[tuple]
) -> tuple[int, int]:
    """Upsert `commits` (rows in `COMMIT_COLUMNS` order) and their `files` ((sha, path, lines
    added, lines deleted); a file row is never rewritten); returns (commits that were new, rows
    written)."""
    conn.execute(
        """
        CREATE TEMP TABLE IF NOT EXISTS collect_commit (
            sha text, parents text[], authored_at timestamptz, committed_at timestamptz, subject text,
            trailers jsonb, task_ids text[], authored_by_me boolean, files_changed integer, lines_added integer,
            lines_deleted integer, on_default_branch boolean, reached_default_at timestamptz
        ) ON COMMIT DROP;
        CREATE TEMP TABLE IF NOT EXISTS collect_file (
            sha text, path text, lines_added integer, lines_deleted integer
        ) ON COMMIT DROP
        """
    )
    with conn.cursor().copy("COPY collect_commit FROM STDIN") as copy:
        for row in commits:
            copy.write_row((*row[:5], Jsonb(row[5]), *row[6:]))
    with conn.cursor().copy("COPY collect_file FROM STDIN") as copy:
        for row in files:
            copy.write_row(row)
    new = conn.execute(
        "SELECT count(*) FROM collect_commit AS s "
        "WHERE NOT EXISTS (SELECT 1 FROM ah.repo_commit AS c WHERE c.repository_id = %s AND c.sha = s.sha)",
        (repo_id,),
    ).fetchone()[0]
    written = conn.execute(
        """
        INSERT INTO ah.repo_commit AS c (repository_id, sha, parents, authored_at, committed_at, subject, trailers,
            task_ids, authored_by_me, files_changed, lines_added, lines_deleted, on_default_branch, reached_default_at)
        SELECT %s, sha, parents, authored_at, committed_at, subject, trailers, task_ids, authored_by_me,
               files_changed, lines_added, lines_deleted, on_default_branch, reached_default_at
        FROM collect_commit
        ON CONFLICT (repository_id, sha) DO UPDATE SET
            trailers = EXCLUDED.trailers, task_ids = EXCLUDED.task_ids, authored_by_me = EXCLUDED.authored_by_me,
            files_changed = EXCLUDED.files_changed, lines_added = EXCLUDED.lines_added,
            lines_deleted = EXCLUDED.lines_deleted, on_default_branch = EXCLUDED.on_default_branch,
            reached_default_at = EXCLUDED.reached_default_at
        WHERE (c.trailers, c.task_ids, c.authored_by_me, c.files_changed, c.lines_added, c.lines_deleted,
               c.on_default_branch, c.reached_default_at)
              IS DISTINCT FROM (EXCLUDED.trailers, EXCLUDED.task_ids, EXCLUDED.authored_by_me, EXCLUDED.files_changed,
               EXCLUDED.lines_added, EXCLUDED.lines_deleted, EXCLUDED.on_default_branch, EXCLUDED.reached_default_at)
        """,
        (repo_id,),
    ).rowcount
    written += conn.execute(
        """
        INSERT INTO ah.repo_commit_file (commit_id, path, lines_added, lines_deleted)
        SELECT c.id, f.path, f.lines_added, f.lines_deleted
        FROM collect_file AS f JOIN ah.repo_commit AS c ON c.repository_id = %s AND c.sha = f.sha
        ON CONFLICT (commit_id, path) DO NOTHING
        """,
        (repo_id,),
    ).rowcount
    conn.execute("TRUNCATE collect_commit, collect_file")
    return new, written


def stored_commit_graph(conn: psycopg.Connection, repo_id: int) -> list[tuple[str, list[str], datetime]]:
    """(sha, parent shas, committed_at) of every stored commit of the repository."""
    return conn.execute(
        "SELECT sha, parents, committed_at FROM ah.repo_commit WHERE repository_id = %s", (repo_id,)
    ).fetchall()


def update_commit_reach(conn: psycopg.Connection, repo_id: int, reach: Iterable[tuple]) -> int:
    """Bring stored commits to `reach` — (sha, authored_by_me, on_default_branch,
    reached_default_at) rows, one per commit still on a branch; returns rows written."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS collect_reach (sha text, authored_by_me boolean, "
        "on_default_branch boolean, reached_default_at timestamptz) ON COMMIT DROP"
    )
    with conn.cursor().copy("COPY collect_reach FROM STDIN") as copy:
        for row in reach:
            copy.write_row(row)
    written = conn.execute(
        """
        UPDATE ah.repo_commit AS c SET authored_by_me = r.authored_by_me, on_default_branch = r.on_default_branch,
            reached_default_at = r.reached_default_at
        FROM collect_reach AS r
        WHERE c.repository_id = %s AND c.sha = r.sha
          AND (c.authored_by_me, c.on_default_branch, c.reached_default_at)
              IS DISTINCT FROM (r.authored_by_me, r.on_default_branch, r.reached_default_at)
        """,
        (repo_id,),
    ).rowcount
    conn.execute("TRUNCATE collect_reach")
    return written


def insert_pushes(conn: psycopg.Connection, repo_id: int, pushes: Iterable[tuple[str, str, datetime]]) -> int:
    """Insert `pushes` ((ref, sha, pushed_at) rows; one already stored is skipped); returns rows
    written."""
    written = 0
    for ref, sha, pushed_at in pushes:
        written += conn.execute(
            "INSERT INTO ah.repo_push (repository_id, ref, sha, pushed_at) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (repository_id, ref, sha, pushed_at) DO NOTHING",
            (repo_id, ref, sha, pushed_at),
        ).rowcount
    return written


# -- CI runs, Backlog tasks, loop state logs ---------------------------------------------------
def _upsert_statement(table: str, key: tuple[str, ...], columns: tuple[str, ...]) -> str:
    """The upsert of one row ``(repository_id, *key, *columns)`` of ``ah.<table>``: on a conflict
    over ``(repository_id, *key)`` the `columns` are overwritten only when one of them differs
    (``IS DISTINCT FROM``), so an unchanged row writes nothing (rowcount 0)."""
    names = ("repository_id", *key, *columns)
    return (
        f"INSERT INTO ah.{table} AS cur ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))}) "
        f"ON CONFLICT (repository_id, {', '.join(key)}) DO UPDATE SET "
        + ", ".join(f"{c} = EXCLUDED.{c}" for c in columns)
        + f" WHERE ({', '.join(f'cur.{c}' for c in columns)}) "
        f"IS DISTINCT FROM ({', '.join(f'EXCLUDED.{c}' for c in columns)})"
    )


def _upsert_each(conn: psycopg.Connection, statement: str, repo_id: int, rows: Iterable[tuple]) -> int:
    """Run `statement` (an `_upsert_statement`) once per row of `rows` of repository `repo_id`;
    returns rows written."""
    return sum(conn.execute(statement, (repo_id, *row)).rowcount for row in rows)


_CI_RUN = _upsert_statement(
    "ci_run",
    ("run_id",),
    ("workflow", "event", "branch", "head_sha", "status", "conclusion", "created_at", "updated_at", "url"),
)
_BACKLOG_TASK = _upsert_statement(
    "backlog_task",
    ("task_id",),
    ("path", "folder", "title", "status", "labels", "assignee", "created_date", "updated_date", "dependencies"),
)
_STATUS_CHANGE = _upsert_statement(
    "backlog_status_change", ("task_id", "sha"), ("changed_at", "old_status", "new_status")
)
_STATE_LINE = _upsert_statement("loop_state_line", ("path", "line_number"), ("ts", "event", "task", "lane", "loop"))


def upsert_ci_runs(conn: psycopg.Connection, repo_id: int, runs: Iterable[tuple]) -> int:
    """Upsert GitHub Actions runs — (run_id, workflow, event, branch, head_sha, status,
    conclusion, created_at, updated_at, url) rows; returns rows written."""
    return _upsert_each(conn, _CI_RUN, repo_id, runs)


def upsert_backlog_tasks(conn: psycopg.Connection, repo_id: int, tasks: Iterable[tuple]) -> int:
    """Upsert Backlog.md tasks — (task_id, path, folder, title, status, labels, assignee,
    created_date, updated_date, dependencies) rows; returns rows written. A task whose file is gone
    keeps its row."""
    return _upsert_each(conn, _BACKLOG_TASK, repo_id, tasks)


def last_task_statuses(conn: psycopg.Connection, repo_id: int) -> list[tuple[str, datetime, str]]:
    """(task_id, changed_at, new_status) of each task's last stored status change (the seeds of
    an incremental read of the status history)."""
    return conn.execute(
        "SELECT DISTINCT ON (task_id) task_id, changed_at, new_status FROM ah.backlog_status_change "
        "WHERE repository_id = %s ORDER BY task_id, changed_at DESC, id DESC",
        (repo_id,),
    ).fetchall()


def upsert_status_changes(conn: psycopg.Connection, repo_id: int, changes: Iterable[tuple]) -> int:
    """Upsert task status changes — (task_id, sha, changed_at, old_status, new_status) rows;
    returns rows written."""
    return _upsert_each(conn, _STATUS_CHANGE, repo_id, changes)


def count_status_changes(conn: psycopg.Connection, repo_id: int) -> int:
    """Status changes stored for the repository."""
    return conn.execute(
        "SELECT count(*) FROM ah.backlog_status_change WHERE repository_id = %s", (repo_id,)
    ).fetchone()[0]


def upsert_state_lines(conn: psycopg.Connection, repo_id: int, lines: Iterable[tuple]) -> int:
    """Upsert loop state log lines — (path relative to the repository, line number, ts, event,
    task, lane, loop) rows; returns rows written. A line no longer in its file keeps its row."""
    return _upsert_each(conn, _STATE_LINE, repo_id, lines)


# -- issues and runs ---------------------------------------------------------------------------
def upsert_collect_issue(conn: psycopg.Connection, repo_id: int | None, path: str, kind: str, detail: str) -> int:
    """Record what `collect` could not read (`repo_id` None: a path or file outside any
    repository); returns rows written (0: the same issue was recorded before)."""
    return conn.execute(
        """
        INSERT INTO ah.collect_issue AS i (repository_id, path, kind, detail) VALUES (%s, %s, %s, %s)
        ON CONFLICT (repository_id, path, kind) DO UPDATE SET detail = EXCLUDED.detail
        WHERE i.detail IS DISTINCT FROM EXCLUDED.detail
        """,
        (repo_id, path, kind, detail),
    ).rowcount


def clear_user_config_issues(conn: psycopg.Connection, still_bad: list[str]) -> None:
    """Drop the ``unreadable_config`` issues of the harness homes whose path is not in
    `still_bad` (read fine this run)."""
    conn.execute(
        "DELETE FROM ah.collect_issue WHERE repository_id IS NULL AND kind = 'unreadable_config' "
        "AND NOT (path = ANY (%s))",
        (still_bad,),
    )


def clear_repository_issues(conn: psycopg.Connection, repo_id: int, still_bad: list[str]) -> int:
    """Drop the repository's file issues (``bad_frontmatter``, ``bad_state_line``,
    ``unreadable_config``) whose relative path is not in `still_bad`; returns rows deleted."""
    return conn.execute(
        "DELETE FROM ah.collect_issue WHERE repository_id = %s "
        "AND kind IN ('bad_frontmatter', 'bad_state_line', 'unreadable_config') AND NOT (path = ANY (%s))",
        (repo_id, still_bad),
    ).rowcount


def record_collect_run(
    conn: psycopg.Connection,
    started: datetime,
    repositories: int,
    failed: int,
    commits_new: int,
    rows_written: int,
    ok: bool,
) -> None:
    """One ``ah.collect_run`` row (finished now; the ``run="collect"`` metrics read them)."""
    conn.execute(
        "INSERT INTO ah.collect_run (started_at, finished_at, repositories, failed, commits_new, rows_written, ok) "
        "VALUES (%s, clock_timestamp(), %s, %s, %s, %s, %s)",
        (started, repositories, failed, commits_new, rows_written, ok),
    )


# -- what `status` and `issues` show -----------------------------------------------------------
def collect_issues(conn: psycopg.Connection, kind: str | None, limit: int) -> list[tuple]:
    """(absolute path, kind, detail, seen_at) of the collect issues (of `kind` when given), by
    path then kind, at most `limit`; [] before migration 0019."""
    if conn.execute("SELECT to_regclass('ah.collect_issue')").fetchone()[0] is None:
        return []
    return conn.execute(
        """
        SELECT CASE WHEN r.path IS NULL OR i.path LIKE '/%%' THEN i.path ELSE r.path || '/' || i.path END,
               i.kind, i.detail, i.seen_at
        FROM ah.collect_issue AS i LEFT JOIN ah.repository AS r ON r.id = i.repository_id
        WHERE %(kind)s::text IS NULL OR i.kind = %(kind)s
        ORDER BY 1, i.kind LIMIT %(limit)s
        """,
        {"kind": kind, "limit": limit},
    ).fetchall()


def collector_counts(conn: psycopg.Connection) -> dict[str, int] | None:
    """``{"repositories", "gone", "commits", "tasks", "issues"}`` row counts; None before
    migration 0019."""
    if not collector_tables_exist(conn):
        return None
    repos, gone = conn.execute("SELECT count(*), count(*) FILTER (WHERE gone) FROM ah.repository").fetchone()
    commits = conn.execute("SELECT count(*) FROM ah.repo_commit").fetchone()[0]
    tasks = conn.execute("SELECT count(*) FROM ah.backlog_task").fetchone()[0]
    issues = conn.execute("SELECT count(*) FROM ah.collect_issue").fetchone()[0]
    return {"repositories": repos, "gone": gone, "commits": commits, "tasks": tasks, "issues": issues}
