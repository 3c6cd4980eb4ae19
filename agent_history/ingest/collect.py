"""The repository collector (issue 30): checkouts → the collector tables (migration 0019).

`collect(conn, paths, emails)` reads each checkout with `repos.git` and writes, one transaction
per repository:

1. ``ah.repository``: the top-level path, name, default branch (`git.default_branch`), shallow flag.
2. ``ah.repo_commit`` / ``ah.repo_commit_file``: every commit on a local branch (`repos.log`),
   whether and when it reached the default branch (`log.reached_default` over the first-parent
   chain); ``authored_by_me`` from `emails` (never an address). Commits no branch holds any more
   keep their rows (nothing lost).
3. ``ah.repo_push``: pushes from the remote-tracking refs' reflogs.
4. ``ah.backlog_task``: Backlog.md task files of the work tree; a file whose frontmatter cannot be
   read is an ``ah.collect_issue`` (``bad_frontmatter``) and the rest are collected. Tasks whose
   file is gone keep their rows.
5. ``ah.backlog_status_change``: each task file's statuses along the default branch's first-parent
   history (blobs read in one `git cat-file --batch`), as changes with commit and time.

Then every known repository whose path is no longer a repository's top level is marked ``gone``
(its rows kept). Bad input is one line in `CollectSummary.lines` and never an exception: a path
that is not a repository, a shallow clone (collected, history incomplete), a git failure in one
repository (that repository's transaction rolled back, the others go on). Every write is an
upsert guarded by ``IS DISTINCT FROM`` or ``DO NOTHING``, so a second run changes nothing.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from agent_history.repos import backlog, git, log

BACKLOG_DIRS: tuple[str, ...] = ("backlog/tasks", "backlog/completed", "backlog/archive")
"""Where Backlog.md keeps task files (archive holds ``archive/tasks``)."""


@dataclass
class RepoResult:
    """What one path gave: `state` collected | gone | not_a_repository | failed."""

    path: str
    state: str
    default_branch: str | None = None
    commits: int = 0
    commits_new: int = 0
    on_default_branch: int = 0
    pushes: int = 0
    tasks: int = 0
    status_changes: int = 0
    issues: int = 0
    shallow: bool = False

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class CollectSummary:
    """A run over several paths: per-repository results and the one-line events to show."""

    repositories: list[RepoResult] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"repositories": [r.as_dict() for r in self.repositories], "lines": self.lines}


def expand_paths(patterns: list[str]) -> list[Path]:
    """`[repos] paths` entries (``~`` and globs expanded) → directories, in order, without
    repeats. A pattern matching nothing is kept as written (so it is reported as missing)."""
    out: list[Path] = []
    for pattern in patterns:
        expanded = os.path.expanduser(pattern)
        matches = sorted(glob.glob(expanded)) if glob.has_magic(expanded) else [expanded]
        for m in matches or [expanded]:
            p = Path(m).absolute()
            if p not in out:
                out.append(p)
    return out


def linked_paths(conn: psycopg.Connection) -> list[Path]:
    """The default `[repos] paths`: repositories the catalogue links sessions to (``ah.repo``)
    that exist on this machine, and repositories collected before."""
    rows = conn.execute(
        "SELECT root_path FROM ah.repo UNION SELECT path FROM ah.repository WHERE NOT gone ORDER BY 1"
    ).fetchall()
    return [Path(r[0]) for r in rows if Path(r[0]).is_dir()]


def collect(conn: psycopg.Connection, paths: list[Path], emails: list[str]) -> CollectSummary:
    """Collect every path in `paths`, then mark gone repositories. `conn` must not be inside a
    transaction (each repository commits its own). Returns the summary; raises only
    psycopg errors of the database itself."""
    summary = CollectSummary()
    seen: set[str] = set()
    for path in paths:
        top = git.toplevel(path)
        if top is None:
            if _known(conn, str(path)):
                continue  # reported below as gone
            summary.repositories.append(RepoResult(str(path), "not_a_repository"))
            summary.lines.append(f"not a git repository: {path}")
            _issue(conn, None, str(path), "not_a_repository", "not inside a git work tree")
            continue
        if str(top) in seen:
            continue
        seen.add(str(top))
        try:
            with conn.transaction():
                result = _collect_one(conn, top, emails, summary.lines)
        except git.GitError as exc:
            result = RepoResult(str(top), "failed")
            summary.lines.append(f"skipped {top}: {exc}")
        summary.repositories.append(result)
    for path in _newly_gone(conn):
        summary.repositories.append(RepoResult(path, "gone"))
        summary.lines.append(f"repository gone: {path} (its rows are kept, marked gone)")
    return summary


def _known(conn: psycopg.Connection, path: str) -> bool:
    return conn.execute("SELECT 1 FROM ah.repository WHERE path = %s", (path,)).fetchone() is not None


def _newly_gone(conn: psycopg.Connection) -> list[str]:
    gone = [
        path
        for (path,) in conn.execute("SELECT path FROM ah.repository WHERE NOT gone ORDER BY path").fetchall()
        if git.toplevel(Path(path)) != Path(path)
    ]
    if gone:
        with conn.transaction():
            conn.execute("UPDATE ah.repository SET gone = true WHERE path = ANY (%s)", (gone,))
    return gone


def _issue(conn: psycopg.Connection, repo_id: int | None, path: str, kind: str, detail: str) -> int:
    with conn.transaction():
        cur = conn.execute(
            """
            INSERT INTO ah.collect_issue AS i (repository_id, path, kind, detail) VALUES (%s, %s, %s, %s)
            ON CONFLICT (repository_id, path, kind) DO UPDATE SET detail = EXCLUDED.detail
            WHERE i.detail IS DISTINCT FROM EXCLUDED.detail
            """,
            (repo_id, path, kind, detail),
        )
    return cur.rowcount


def _collect_one(conn: psycopg.Connection, top: Path, emails: list[str], lines: list[str]) -> RepoResult:
    shallow = git.is_shallow(top)
    branch = git.default_branch(top)
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
        (str(top), top.name, branch, shallow),
    ).fetchone()
    if repo_id is None:
        repo_id = conn.execute("SELECT id FROM ah.repository WHERE path = %s", (str(top),)).fetchone()
    repo_id = repo_id[0]
    result = RepoResult(str(top), "collected", default_branch=branch, shallow=shallow)
    if shallow:
        lines.append(f"shallow clone: {top}: history before its boundary is missing (commits, Done flips incomplete)")
        _issue_in_tx(conn, repo_id, str(top), "shallow_clone", "history before the shallow boundary is not collected")
    commits = log.parse_log(git.log_branches(top), emails)
    first_parent = git.first_parent_shas(top, branch) if branch else []
    reached = log.reached_default(
        first_parent, {c.sha: c.parents for c in commits}, {c.sha: c.committed_at for c in commits}
    )
    result.commits = len(commits)
    result.on_default_branch = len(reached)
    result.commits_new = _write_commits(conn, repo_id, commits, reached)
    result.pushes = _write_pushes(conn, repo_id, top)
    result.tasks, bad = _write_tasks(conn, repo_id, top)
    for rel, detail in bad:
        lines.append(f"bad task file {top / rel}: {detail} (the other tasks are collected)")
        _issue_in_tx(conn, repo_id, rel, "bad_frontmatter", detail)
    conn.execute(
        "DELETE FROM ah.collect_issue WHERE repository_id = %s AND kind = 'bad_frontmatter' AND NOT (path = ANY (%s))",
        (repo_id, [rel for rel, _ in bad]),
    )
    result.issues = len(bad) + int(shallow)
    result.status_changes = _write_status_history(conn, repo_id, top, branch) if branch else 0
    return result


def _issue_in_tx(conn: psycopg.Connection, repo_id: int, path: str, kind: str, detail: str) -> None:
    conn.execute(
        """
        INSERT INTO ah.collect_issue AS i (repository_id, path, kind, detail) VALUES (%s, %s, %s, %s)
        ON CONFLICT (repository_id, path, kind) DO UPDATE SET detail = EXCLUDED.detail
        WHERE i.detail IS DISTINCT FROM EXCLUDED.detail
        """,
        (repo_id, path, kind, detail),
    )


def _write_commits(conn: psycopg.Connection, repo_id: int, commits: list[log.Commit], reached: dict) -> int:
    """Upsert commits and their files; returns how many commits were new."""
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
        for c in commits:
            copy.write_row((
                c.sha, c.parents, c.authored_at, c.committed_at, c.subject, Jsonb([list(t) for t in c.trailers]),
                c.task_ids, c.authored_by_me, len(c.files),
                c.lines_added, c.lines_deleted, c.sha in reached, reached.get(c.sha),
            ))  # fmt: skip
    with conn.cursor().copy("COPY collect_file FROM STDIN") as copy:
        for c in commits:
            for f in c.files:
                copy.write_row((c.sha, f.path, f.added, f.deleted))
    new = conn.execute(
        "SELECT count(*) FROM collect_commit AS s "
        "WHERE NOT EXISTS (SELECT 1 FROM ah.repo_commit AS c WHERE c.repository_id = %s AND c.sha = s.sha)",
        (repo_id,),
    ).fetchone()[0]
    conn.execute(
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
    )
    conn.execute(
        """
        INSERT INTO ah.repo_commit_file (commit_id, path, lines_added, lines_deleted)
        SELECT c.id, f.path, f.lines_added, f.lines_deleted
        FROM collect_file AS f JOIN ah.repo_commit AS c ON c.repository_id = %s AND c.sha = f.sha
        ON CONFLICT (commit_id, path) DO NOTHING
        """,
        (repo_id,),
    )
    conn.execute("TRUNCATE collect_commit, collect_file")
    return new


def _write_pushes(conn: psycopg.Connection, repo_id: int, top: Path) -> int:
    pushes = [p for ref in git.remote_refs(top) for p in log.parse_pushes(ref, git.reflog(top, ref))]
    for p in pushes:
        conn.execute(
            "INSERT INTO ah.repo_push (repository_id, ref, sha, pushed_at) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (repository_id, ref, sha, pushed_at) DO NOTHING",
            (repo_id, p.ref, p.sha, p.pushed_at),
        )
    return len(pushes)


def _task_files(top: Path) -> list[str]:
    """Backlog.md task files of the work tree, relative to `top`, sorted."""
    out = []
    for d in BACKLOG_DIRS:
        base = top / d
        if base.is_dir():
            for p in base.rglob("*.md"):
                rel = p.relative_to(top).as_posix()
                if p.is_file() and backlog.folder_of(rel):
                    out.append(rel)
    return sorted(out)


def _write_tasks(conn: psycopg.Connection, repo_id: int, top: Path) -> tuple[int, list[tuple[str, str]]]:
    """Upsert the work tree's tasks; returns (tasks read, [(relative path, problem)])."""
    bad: list[tuple[str, str]] = []
    n = 0
    for rel in _task_files(top):
        try:
            task = backlog.parse_task((top / rel).read_text(encoding="utf-8", errors="replace"), rel)
        except (backlog.TaskFileError, OSError) as exc:
            bad.append((rel, str(exc)))
            continue
        n += 1
        conn.execute(
            """
            INSERT INTO ah.backlog_task AS t (repository_id, task_id, path, folder, title, status, labels, assignee,
                created_date, updated_date, dependencies)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (repository_id, task_id) DO UPDATE SET path = EXCLUDED.path, folder = EXCLUDED.folder,
                title = EXCLUDED.title, status = EXCLUDED.status, labels = EXCLUDED.labels,
                assignee = EXCLUDED.assignee, created_date = EXCLUDED.created_date,
                updated_date = EXCLUDED.updated_date, dependencies = EXCLUDED.dependencies
            WHERE (t.path, t.folder, t.title, t.status, t.labels, t.assignee, t.created_date, t.updated_date,
                   t.dependencies)
                  IS DISTINCT FROM (EXCLUDED.path, EXCLUDED.folder, EXCLUDED.title, EXCLUDED.status, EXCLUDED.labels,
                   EXCLUDED.assignee, EXCLUDED.created_date, EXCLUDED.updated_date, EXCLUDED.dependencies)
            """,
            (
                repo_id, task.task_id, rel, backlog.folder_of(rel), task.title, task.status, list(task.labels),
                list(task.assignee), task.created_date, task.updated_date, list(task.dependencies),
            ),
        )  # fmt: skip
    return n, bad


def _write_status_history(conn: psycopg.Connection, repo_id: int, top: Path, branch: str) -> int:
    """Status changes of task files along the default branch; returns how many there are."""
    raw = git.backlog_history(top, branch, BACKLOG_DIRS)
    wanted: list[tuple[str, str, object]] = []  # (sha, path, commit time)
    for chunk in raw.split(b"\x1e")[1:]:
        header, _, rest = chunk.partition(b"\0")
        sha, ct = header.decode().split("\x1f")
        parts = rest.lstrip(b"\n").split(b"\0")
        for letter, path in zip(parts[0::2], parts[1::2], strict=False):
            rel = path.decode("utf-8", "surrogateescape")
            if letter[:1] in (b"A", b"M") and backlog.folder_of(rel):
                wanted.append((sha, rel, log.from_unix(ct)))
    blobs = git.read_blobs(top, [f"{sha}:{rel}" for sha, rel, _ in wanted])
    observations = []
    for (sha, rel, at), blob in zip(wanted, blobs, strict=True):
        if blob is None:
            continue
        try:
            task = backlog.parse_task(blob.decode("utf-8", "replace"), rel)
        except backlog.TaskFileError:
            continue  # an unreadable past version says nothing about the status then
        observations.append((task.task_id, sha, at, task.status))
    changes = backlog.status_changes(observations)
    for ch in changes:
        conn.execute(
            """
            INSERT INTO ah.backlog_status_change AS s (repository_id, task_id, sha, changed_at, old_status, new_status)
            VALUES (%s, %s, %s, %s, %s, %s)
            ON CONFLICT (repository_id, task_id, sha) DO UPDATE SET changed_at = EXCLUDED.changed_at,
                old_status = EXCLUDED.old_status, new_status = EXCLUDED.new_status
            WHERE (s.changed_at, s.old_status, s.new_status)
                  IS DISTINCT FROM (EXCLUDED.changed_at, EXCLUDED.old_status, EXCLUDED.new_status)
            """,
            (repo_id, ch.task_id, ch.sha, ch.changed_at, ch.old, ch.new),
        )
    return len(changes)
