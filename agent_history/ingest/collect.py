"""The repository collector (issue 30): checkouts → the collector tables (migration 0019).

`collect(conn, paths, emails)` reads each checkout with `repos.git` and writes (the statements:
`db.tables.repos`), one transaction per repository:

1. ``ah.repository``: the top-level path, name, default branch (`git.default_branch`), shallow flag.
   A repository is a work tree's top level (`git.work_tree`): a directory or file inside one is
   collected as the work tree it is in (a file given is said in one line). A linked worktree
   (`git worktree add`) is a repository of its own — its work-tree files (Backlog tasks, loop
   state logs, charters and closeouts, project skills) are its own, so a loop whose lane lives
   there finds it — and its result's ``worktree_of`` names its main work tree. The two rows
   hold the same commits (one shared history); `read.why` prints such a commit on one line.
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
6. ``ah.ci_run``: GitHub Actions runs through `repos.ci` (`gh run list --json`) for a repository
   with a GitHub remote; gh absent, unauthenticated, failing or slow → one line per reason for
   the whole run (a repository without a GitHub remote is silent), the rest collected.
7. ``ah.loop_state_line``: lines of loop state logs (`loops.statelog`); a bad line is an issue.
   When any row of the repository changed, ``ah.repository.changed_at`` moves, and the loop
   post-pass recomputes the loops whose closeout lies in it (`ingest.loops`); `collect` run by
   the owner refreshes them at once, run as ``ah_collector`` the next index pass does.

8. ``ah.installed_skill`` / ``ah.permission_rule`` / ``ah.loop_run_metadata`` (migration 0022):
   project skills, settings' permission rules and loop charters/closeouts
   (`collect_installed.write_project_level`); with `homes`, the harness homes' skills, plugins and
   rules too (`collect_installed.write_user_level`).

Commits are read incrementally (`history_mode`): ``ah.repository.history_cursor`` keeps the branch
tips read last; the next run reads only commits not reachable from them and the default branch's
status history after its old tip, and brings the stored commits to what a full read gives; a tip
no longer an ancestor of its branch (a rewritten history) makes it read everything again.

Then every known repository whose path is no longer a work tree's top level is marked ``gone``
(its rows kept; a linked worktree is never gone for being one). Bad input is one line in
`CollectSummary.lines` and never an exception: a path
that is not a repository, a shallow clone (collected, history incomplete), a git failure in one
repository (that repository's transaction rolled back, the others go on). Every write is an
upsert guarded by ``IS DISTINCT FROM`` or ``DO NOTHING``, so a second run changes nothing.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from agent_history.db.roles import COLLECTOR
from agent_history.db.tables import loops as loop_rows
from agent_history.db.tables import repos as repo_rows
from agent_history.ingest.collect_installed import write_project_level, write_user_level
from agent_history.ingest.loops import refresh_loops
from agent_history.loops import statelog
from agent_history.repos import backlog, ci, git, log

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
    state_lines: int = 0
    ci_runs: int | None = None
    """Runs read with gh (None: not read — `ci_skipped` says why)."""
    ci_skipped: str | None = None
    skills: int = 0
    """Project skills (``.claude/skills``, ``.codex/skills``, ``.pi/skills``)."""
    permission_rules: int = 0
    loop_files: int = 0
    """Loop charters and closeouts (metadata in ``ah.loop_run_metadata``)."""
    history: str | None = None
    """How the commit history was read: full | incremental | rewritten (re-read: a branch tip
    read before is no longer an ancestor of its ref)."""
    shallow: bool = False
    worktree_of: str | None = None
    """When this repository is a linked worktree (`git worktree add`): its main work tree's path
    (`git.WorkTree.main`); None for a main work tree."""
    changed: int = 0
    """Rows inserted or updated by this run (0 on a second run over an unchanged repository)."""

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class CollectSummary:
    """A run over several paths: per-repository results and the one-line events to show."""

    repositories: list[RepoResult] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    not_repositories: int = 0
    """Paths skipped, not being (or no longer being) a repository, with `skip_not_repositories`."""
    loops_refreshed: int | None = None
    """Loops recomputed after collecting (None: this role may not write them; the next index pass does)."""
    user_skills: int | None = None
    """User-level skills and plugins of the harness homes (None: homes not read)."""
    user_permission_rules: int | None = None

    def as_dict(self) -> dict:
        return {
            "repositories": [r.as_dict() for r in self.repositories],
            "lines": self.lines,
            "not_repositories": self.not_repositories,
            "loops_refreshed": self.loops_refreshed,
            "user_skills": self.user_skills,
            "user_permission_rules": self.user_permission_rules,
        }


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
    return [Path(p) for p in repo_rows.linked_repository_paths(conn) if Path(p).is_dir()]


def collect(
    conn: psycopg.Connection,
    paths: list[Path],
    emails: list[str],
    *,
    skip_not_repositories: bool = False,
    homes: Mapping[str, Path] | None = None,
) -> CollectSummary:
    """Collect every path in `paths`, then mark gone repositories. `conn` must not be inside a
    transaction (each repository commits its own). A path that is not a repository is a
    ``not_a_repository`` result and issue — or, with `skip_not_repositories` (the default set,
    `linked_paths`: a session's working directory need not be one), only counted in
    `CollectSummary.not_repositories` and one summary line. `homes` (harness → home directory,
    `collect_installed.default_homes` for this machine's) adds the user-level skills, plugins and
    permission rules; None reads no home. Returns the summary; raises only psycopg errors of the
    database itself."""
    summary = CollectSummary()
    started = datetime.now(UTC)
    if homes is not None:
        with conn.transaction():
            summary.user_skills, summary.user_permission_rules, problems, _ = write_user_level(conn, homes)
        for p in problems:
            summary.lines.append(f"unreadable {p.path}: {p.detail} (the rest is collected)")
            _issue(conn, None, p.path, "unreadable_config", p.detail)
        repo_rows.clear_user_config_issues(conn, [p.path for p in problems])
    seen: dict[Path, RepoResult] = {}
    for path in paths:
        where = git.work_tree(path)
        if where is None:
            if repo_rows.repository_known(conn, str(path)):
                continue  # reported below as gone
            if skip_not_repositories:
                summary.not_repositories += 1
                continue
            summary.repositories.append(RepoResult(str(path), "not_a_repository"))
            missing = not path.exists()
            summary.lines.append(f"does not exist: {path}" if missing else f"not a git repository: {path}")
            _issue(
                conn, None, str(path), "not_a_repository", "does not exist" if missing else "not inside a git work tree"
            )
            continue
        top = where.top
        if path.is_file():
            summary.lines.append(f"{path} is a file: collecting the repository it is in, {top}")
        if top in seen:
            continue
        try:
            with conn.transaction():
                seen[top] = _collect_one(conn, top, emails, summary.lines)
        except git.GitError as exc:
            seen[top] = RepoResult(str(top), "failed")
            summary.lines.append(f"skipped {top}: {exc}")
        if where.linked:
            seen[top].worktree_of = str(where.main)
        summary.repositories.append(seen[top])
    skipped: dict[str, int] = {}
    for r in summary.repositories:
        if r.ci_skipped and r.ci_skipped != NO_GITHUB_REMOTE:
            skipped[r.ci_skipped] = skipped.get(r.ci_skipped, 0) + 1
    if summary.not_repositories:
        n = summary.not_repositories
        summary.lines.append(
            f"skipped {n} session director{'y that is' if n == 1 else 'ies that are'} not in a git repository"
        )
    for reason, n in skipped.items():
        summary.lines.append(f"CI runs not collected ({n} repositor{'y' if n == 1 else 'ies'}): {reason}")
    for path in _newly_gone(conn):
        summary.repositories.append(RepoResult(path, "gone"))
        summary.lines.append(f"repository gone: {path} (its rows are kept, marked gone)")
    if loop_rows.may_update_loops(conn):
        with conn.transaction():
            summary.loops_refreshed = refresh_loops(conn, [])
    _record_run(conn, started, summary)
    return summary


def _record_run(conn: psycopg.Connection, started: datetime, summary: CollectSummary) -> None:
    """One ``ah.collect_run`` row for this run (the ``run="collect"`` metrics)."""
    rs = summary.repositories
    failed = sum(r.state in ("not_a_repository", "failed") for r in rs)
    with conn.transaction():
        repo_rows.record_collect_run(
            conn, started, sum(r.state == "collected" for r in rs), failed, sum(r.commits_new for r in rs),
            sum(r.changed for r in rs), failed == 0,
        )  # fmt: skip


def _newly_gone(conn: psycopg.Connection) -> list[str]:
    gone = [path for path in repo_rows.live_repository_paths(conn) if _top_of(Path(path)) != Path(path)]
    if gone:
        with conn.transaction():
            repo_rows.mark_repositories_gone(conn, gone)
    return gone


def _top_of(path: Path) -> Path | None:
    """The top level of the work tree `path` is in (`git.work_tree`; a linked worktree's is its
    own), None outside one: a collected path that is no longer a top level is gone."""
    where = git.work_tree(path)
    return where.top if where else None


def _issue(conn: psycopg.Connection, repo_id: int | None, path: str, kind: str, detail: str) -> int:
    with conn.transaction():
        return repo_rows.upsert_collect_issue(conn, repo_id, path, kind, detail)


def _collect_one(conn: psycopg.Connection, top: Path, emails: list[str], lines: list[str]) -> RepoResult:
    shallow = git.is_shallow(top)
    branch = git.default_branch(top)
    repo_id, changed = repo_rows.upsert_repository(conn, str(top), top.name, branch, shallow)
    result = RepoResult(str(top), "collected", default_branch=branch, shallow=shallow)
    result.changed = changed
    if shallow:
        lines.append(f"shallow clone: {top}: history before its boundary is missing (commits, Done flips incomplete)")
        result.changed += repo_rows.upsert_collect_issue(
            conn, repo_id, str(top), "shallow_clone", "history before the shallow boundary is not collected"
        )
    cursor = repo_rows.history_cursor(conn, repo_id)
    tips = git.branch_tips(top)
    result.history = history_mode(top, cursor, tips, branch, shallow)
    if result.history == "incremental":
        since_default = cursor["refs"].get(f"refs/heads/{branch}")
        result.changed += _write_commits_incremental(conn, repo_id, top, branch, emails, cursor, tips, result)
    else:
        since_default = None
        commits = log.parse_log(git.log_branches(top), emails)
        first_parent = git.first_parent_shas(top, branch) if branch else []
        reached = log.reached_default(
            first_parent, {c.sha: c.parents for c in commits}, {c.sha: c.committed_at for c in commits}
        )
        result.commits = len(commits)
        result.on_default_branch = len(reached)
        result.commits_new, n = _write_commits(conn, repo_id, commits, reached)
        result.changed += n
    result.changed += repo_rows.set_history_cursor(conn, repo_id, {"refs": tips, "default": branch})
    result.pushes, n = _write_pushes(conn, repo_id, top)
    result.changed += n
    result.tasks, bad, n = _write_tasks(conn, repo_id, top)
    result.changed += n
    result.state_lines, bad_lines, n = _write_state_logs(conn, repo_id, top)
    result.changed += n
    result.skills, result.permission_rules, result.loop_files, problems, n = write_project_level(conn, repo_id, top)
    result.changed += n
    bad_config = [(str(Path(p.path).relative_to(top)), p.detail) for p in problems]
    for rel, detail in bad_config:
        lines.append(f"unreadable {top / rel}: {detail} (the rest is collected)")
        result.changed += repo_rows.upsert_collect_issue(conn, repo_id, rel, "unreadable_config", detail)
    for rel, detail in bad:
        lines.append(f"bad task file {top / rel}: {detail} (the other tasks are collected)")
        result.changed += repo_rows.upsert_collect_issue(conn, repo_id, rel, "bad_frontmatter", detail)
    for rel, detail in bad_lines:
        lines.append(f"bad state log line {top / rel}: {detail} (the other lines are collected)")
        result.changed += repo_rows.upsert_collect_issue(conn, repo_id, rel, "bad_state_line", detail)
    result.changed += repo_rows.clear_repository_issues(conn, repo_id, [rel for rel, _ in bad + bad_lines + bad_config])
    result.issues = len(bad) + len(bad_lines) + len(bad_config) + int(shallow)
    if branch:
        result.status_changes, n = _write_status_history(conn, repo_id, top, branch, since_default)
        result.changed += n
    try:
        result.ci_runs, n = _write_ci_runs(conn, repo_id, top)
        result.changed += n
    except ci.CiUnavailable as exc:
        result.ci_skipped = str(exc)
    except ci.CiOutputError as exc:
        result.ci_skipped = f"gh printed an unexpected shape: {exc}"
    if result.changed:
        # the loop post-pass recomputes the loops of a repository changed after their last refresh
        repo_rows.mark_repository_changed(conn, repo_id)
    return result


def _write_commits(conn: psycopg.Connection, repo_id: int, commits: list[log.Commit], reached: dict) -> tuple[int, int]:
    """Upsert commits and their files; returns (commits that were new, rows written)."""
    return repo_rows.write_commits(
        conn,
        repo_id,
        (
            (c.sha, c.parents, c.authored_at, c.committed_at, c.subject, [list(t) for t in c.trailers], c.task_ids,
             c.authored_by_me, len(c.files), c.lines_added, c.lines_deleted, c.sha in reached, reached.get(c.sha))
            for c in commits
        ),
        ((c.sha, f.path, f.added, f.deleted) for c in commits for f in c.files),
    )  # fmt: skip


def _write_pushes(conn: psycopg.Connection, repo_id: int, top: Path) -> tuple[int, int]:
    pushes = [p for ref in git.remote_refs(top) for p in log.parse_pushes(ref, git.reflog(top, ref))]
    return len(pushes), repo_rows.insert_pushes(conn, repo_id, ((p.ref, p.sha, p.pushed_at) for p in pushes))


NO_GITHUB_REMOTE = "no GitHub remote"
"""A repository without one has no CI runs to read: not worth a line."""


def _write_ci_runs(conn: psycopg.Connection, repo_id: int, top: Path) -> tuple[int, int]:
    """Upsert the repository's GitHub Actions runs; returns (runs read, rows written). Raises
    ci.CiUnavailable / ci.CiOutputError."""
    if not any("github" in url for url in git.remote_urls(top)):
        raise ci.CiUnavailable(NO_GITHUB_REMOTE)
    runs = ci.parse_runs(ci.run_list(top))
    written = repo_rows.upsert_ci_runs(
        conn,
        repo_id,
        ((r.run_id, r.workflow, r.event, r.branch, r.head_sha, r.status, r.conclusion, r.created_at, r.updated_at,
          r.url) for r in runs),
    )  # fmt: skip
    return len(runs), written


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


def _write_tasks(conn: psycopg.Connection, repo_id: int, top: Path) -> tuple[int, list[tuple[str, str]], int]:
    """Upsert the work tree's tasks; returns (tasks read, [(relative path, problem)], rows written)."""
    bad: list[tuple[str, str]] = []
    tasks: list[tuple] = []
    for rel in _task_files(top):
        try:
            task = backlog.parse_task((top / rel).read_text(encoding="utf-8", errors="replace"), rel)
        except (backlog.TaskFileError, OSError) as exc:
            bad.append((rel, str(exc)))
            continue
        tasks.append((
            task.task_id, rel, backlog.folder_of(rel), task.title, task.status, list(task.labels),
            list(task.assignee), task.created_date, task.updated_date, list(task.dependencies),
        ))  # fmt: skip
    return len(tasks), bad, repo_rows.upsert_backlog_tasks(conn, repo_id, tasks)


def _write_status_history(
    conn: psycopg.Connection, repo_id: int, top: Path, branch: str, since: str | None = None
) -> tuple[int, int]:
    """Status changes of task files along the default branch (only its commits after `since`,
    the tip a previous run read, when given: each task's last stored status seeds the
    comparison); returns (changes stored for the repository, rows written)."""
    if since is not None and since == git.branch_tips(top).get(f"refs/heads/{branch}"):
        return repo_rows.count_status_changes(conn, repo_id), 0
    raw = git.backlog_history(top, branch, BACKLOG_DIRS, since)
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
    if since is not None:
        seeds = repo_rows.last_task_statuses(conn, repo_id)
        observations = [(t, SEED, at, status) for t, at, status in seeds] + observations
    changes = [ch for ch in backlog.status_changes(observations) if ch.sha != SEED]
    written = repo_rows.upsert_status_changes(
        conn, repo_id, ((ch.task_id, ch.sha, ch.changed_at, ch.old, ch.new) for ch in changes)
    )
    return (repo_rows.count_status_changes(conn, repo_id) if since is not None else len(changes)), written


SEED = "seed"
"""The sha of the stored last statuses that seed an incremental read (never written)."""


def history_mode(top: Path, cursor: dict | None, tips: dict[str, str], branch: str | None, shallow: bool) -> str:
    """How to read the commit history: ``full`` (never read, a shallow clone, or another default
    branch than last time), ``rewritten`` (a branch tip read last time is no longer an ancestor
    of that branch: force-push, rebase, reset — everything is read again), else ``incremental``."""
    if not cursor or shallow or cursor.get("default") != branch or not isinstance(cursor.get("refs"), dict):
        return "full"
    for ref, old in cursor["refs"].items():
        new = tips.get(ref)
        if new is not None and new != old and not git.is_ancestor(top, old, new):
            return "rewritten"
    return "incremental"


def _write_commits_incremental(
    conn: psycopg.Connection,
    repo_id: int,
    top: Path,
    branch: str | None,
    emails: list[str],
    cursor: dict,
    tips: dict[str, str],
    result: RepoResult,
) -> int:
    """Read only the commits not reachable from the tips read last time, and bring the stored
    commits still on a branch to what a full read gives (whether they reached the default branch
    and when — a merge may bring old commits —, `authored_by_me` — the identities may have
    changed); returns rows written. Sets `result`'s commit counts."""
    old_tips = sorted({sha for sha in cursor["refs"].values() if git.commit_exists(top, sha)})
    new = log.parse_log(git.log_branches(top, old_tips), emails) if tips != cursor["refs"] else []
    authors = log.authorship(git.branch_authors(top), emails)
    parents: dict[str, list[str]] = {}
    times: dict = {}
    for sha, ps, ct in repo_rows.stored_commit_graph(conn, repo_id):
        parents[sha], times[sha] = ps, ct
    for c in new:
        parents[c.sha], times[c.sha] = c.parents, c.committed_at
    first_parent = git.first_parent_shas(top, branch) if branch else []
    reached = log.reached_default(first_parent, parents, times)
    result.commits = len(authors)
    result.on_default_branch = len(reached)
    result.commits_new, written = _write_commits(conn, repo_id, new, reached)
    written += repo_rows.update_commit_reach(
        conn, repo_id, ((sha, mine, sha in reached, reached.get(sha)) for sha, mine in authors.items())
    )
    return written


def _write_state_logs(conn: psycopg.Connection, repo_id: int, top: Path) -> tuple[int, list[tuple[str, str]], int]:
    """Upsert the lines of the work tree's loop state logs; returns (lines read, [(relative path,
    problem)] — the first bad line of each file —, rows written). A line that is no longer in its
    file keeps its row (append-only logs: nothing lost)."""
    bad: list[tuple[str, str]] = []
    lines: list[tuple] = []
    for rel in git.state_log_files(top):
        try:
            text = (top / rel).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            bad.append((rel, f"unreadable: {exc.strerror}"))
            continue
        said = False
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = statelog.parse_line(raw)
            except statelog.StateLogError as exc:
                if not said:
                    bad.append((rel, f"line {number}: {exc}"))
                    said = True
                continue
            lines.append((rel, number, line.ts, line.event, line.task, line.lane, line.loop))
    return len(lines), bad, repo_rows.upsert_state_lines(conn, repo_id, lines)


COLLECT_ISSUE_KINDS: tuple[str, ...] = (
    "not_a_repository", "shallow_clone", "bad_frontmatter", "bad_state_line", "unreadable_config",
)  # fmt: skip
"""The ``ah.collect_issue`` kinds `collect` records."""


def list_collect_issues(conn: psycopg.Connection, *, kind: str | None = None, limit: int = 100) -> list[dict]:
    """Collect issues in the shape of `ingest.status.list_issues` rows (namespace, byte offset and
    line None; path absolute: a repository's relative path joined to it), by path; [] before
    migration 0019."""
    found = repo_rows.collect_issues(conn, kind, limit)
    return [
        {"namespace": None, "path": path, "kind": k, "byte_offset": None, "line_number": None, "detail": detail,
         "created_at": seen}
        for path, k, detail, seen in found
    ]  # fmt: skip


def collector_status(conn: psycopg.Connection, *, embedded: bool) -> dict | None:
    """The collector part of `status`: ``{"repositories", "gone", "commits", "tasks", "issues",
    "runs_as"}``; ``runs_as`` says who may run `collect` — the owner on the embedded default,
    else the ``ah_collector`` role. None before migration 0019."""
    counts = repo_rows.collector_counts(conn)
    if counts is None:
        return None
    runs_as = "the owner (embedded default)" if embedded else f"{COLLECTOR} (or the schema owner)"
    return {**counts, "runs_as": runs_as}


def status_line(data: dict | None) -> str:
    """One line for `status`: what the collector holds and which role runs it."""
    if data is None:
        return "collector: schema too old (run `agent-history db migrate`)"
    gone = f" ({data['gone']:,} gone)" if data["gone"] else ""
    n = {k: f"{data[k]:,} {word if data[k] == 1 else plural}" for k, word, plural in _STATUS_WORDS}
    return (
        f"collector: {n['repositories']}{gone}, {n['commits']}, {n['tasks']}, {n['issues']}; "
        f"`collect` runs as {data['runs_as']}"
    )


_STATUS_WORDS = (
    ("repositories", "repository", "repositories"),
    ("commits", "commit", "commits"),
    ("tasks", "Backlog task", "Backlog tasks"),
    ("issues", "issue", "issues"),
)
"""`status_line`'s counts: (key, singular, plural)."""
