"""The `git` commands the collector runs, each with a fixed machine format.

Field separators are ASCII control characters (US ``\\x1f`` between fields, RS ``\\x1e`` before
each commit, GS ``\\x1d`` between trailers, FS ``\\x1c`` between a trailer's key and value) that
git does not put in hashes, times or e-mail addresses; a subject holding one of them would be cut
there (git itself strips most control characters from subjects). Paths come NUL-separated
(``-z``). Every function raises `GitError` (one line: the command and git's first stderr line)
when git exits non-zero or is not installed; `TIMEOUT_S` bounds each call.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 300
"""Seconds one git command may take (a very large history is read in one `git log`)."""

LOG_FORMAT = (
    "%x1e%H%x1f%P%x1f%at%x1f%ct%x1f%ae%x1f%s%x1f%(trailers:only,unfold,separator=%x1d,key_value_separator=%x1c)"
)
"""`git log --format`: sha, parents, author time, commit time (Unix s), author address (compared,
never stored), subject, trailers. Followed (``--numstat -z``) by ``added\\tdeleted\\tpath\\0``."""

REFLOG_FORMAT = "%H%x1f%gd%x1f%gs"
"""`git reflog show --date=unix --format`: new sha, ``ref@{unix time}``, reflog subject."""

DEFAULT_BRANCH_CANDIDATES: tuple[str, ...] = ("main", "master", "trunk", "develop")
"""Local branches taken as the default branch, in this order, when the remote's HEAD is not
recorded (``refs/remotes/origin/HEAD``, set by `git clone`) — the common names of hosting
services' default branches."""


class GitError(Exception):
    """A git command failed (or git is missing); the message is one line."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Plumbing output must not depend on the user's locale, pager or configured formats.
    env.update(LC_ALL="C", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    return env


def run(repo: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    """stdout of ``git -C repo <args>`` (bytes). Raises GitError when git exits non-zero (unless
    `check` is false: then b'' is returned), is missing, or times out."""
    cmd = ["git", "-C", str(repo), "-c", "core.quotepath=off", *args]
    try:
        done = subprocess.run(cmd, input=input, capture_output=True, timeout=TIMEOUT_S, env=_env())
    except FileNotFoundError as exc:
        raise GitError("git is not installed (not on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} took longer than {TIMEOUT_S} s in {repo}") from exc
    if done.returncode != 0:
        if not check:
            return b""
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["(no message)"])[0]
        raise GitError(f"git {args[0]} failed in {repo}: {first}")
    return done.stdout


def toplevel(path: Path) -> Path | None:
    """The work tree's top-level directory containing `path`, or None when `path` is not in a
    git work tree (or does not exist)."""
    if not path.is_dir():
        return None
    try:
        out = run(path, "rev-parse", "--show-toplevel", check=False)
    except GitError:
        return None
    text = out.decode("utf-8", "surrogateescape").strip()
    return Path(text) if text else None


@dataclass(frozen=True, slots=True)
class WorkTree:
    """Where a path lies in git: `top`, the top level of the work tree holding it, and `main`,
    the top level of its repository's main work tree — the same directory, except in a linked
    worktree (`git worktree add`), whose history, branches and reflogs are its main repository's
    (one ``.git`` directory: ``git rev-parse --git-common-dir``). The collector keys a
    repository by `top` (a worktree's own files are its own) and names `main` beside a linked
    one; `read.why` says a commit both hold once, in `main`."""

    top: Path
    main: Path

    @property
    def linked(self) -> bool:
        """Whether `top` is a linked worktree of the repository at `main`."""
        return self.top != self.main


def work_tree(path: Path) -> WorkTree | None:
    """The work tree holding `path` (a directory, or a file: its directory) and its repository's
    main work tree, both resolved (symbolic links followed); None when `path` is not in a git
    work tree or does not exist. A linked worktree's main work tree is the first entry of
    ``git worktree list --porcelain`` (git lists the main one first), taken when it exists and
    shares the worktree's common directory; a bare main repository (no main work tree) or a
    main work tree moved without ``git worktree repair`` leaves the worktree its own `main`."""
    folder = path if path.is_dir() else path.parent if path.is_file() else None
    if folder is None:
        return None
    try:
        out = run(folder, "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir", check=False)
    except GitError:
        return None
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != 3:
        return None  # outside a work tree (inside a .git directory, a bare repository)
    # the directories may be printed relative to `folder` (git's working directory)
    top, git_dir, common = ((folder / x).resolve() for x in lines)
    if git_dir == common:
        return WorkTree(top, top)
    return WorkTree(top, _main_work_tree(top, common) or top)


def _main_work_tree(top: Path, common: Path) -> Path | None:
    """The main work tree of the linked worktree `top` whose common directory is `common`, or
    None (a bare main repository, or one that is no longer where git recorded it)."""
    out = run(top, "worktree", "list", "--porcelain", "-z", check=False)
    first = out.decode("utf-8", "surrogateescape").split("\0\0", 1)[0].split("\0")
    if not first[0].startswith("worktree ") or "bare" in first[1:]:
        return None
    main = Path(first[0].removeprefix("worktree "))
    if not main.is_dir():
        return None
    shared = run(main, "rev-parse", "--git-common-dir", check=False)
    text = shared.decode("utf-8", "surrogateescape").strip()
    return main.resolve() if text and (main / text).resolve() == common else None


def is_shallow(repo: Path) -> bool:
    """Whether `repo` is a shallow clone (history cut at a grafted boundary)."""
    return run(repo, "rev-parse", "--is-shallow-repository").strip() == b"true"


def local_branches(repo: Path) -> list[str]:
    """Short names of the local branches."""
    out = run(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads")
    return [b for b in out.decode("utf-8", "surrogateescape").splitlines() if b]


def default_branch(repo: Path) -> str | None:
    """The default branch: the remote's HEAD as recorded (`origin/HEAD` → its branch name when a
    local branch of that name exists), else the first of `DEFAULT_BRANCH_CANDIDATES` that exists
    locally, else the branch HEAD is on; None for a repository without branches."""
    branches = local_branches(repo)
    remote_head = run(repo, "symbolic-ref", "-q", "refs/remotes/origin/HEAD", check=False).decode().strip()
    if remote_head:
        name = remote_head.removeprefix("refs/remotes/origin/")
        if name in branches:
            return name
    for name in DEFAULT_BRANCH_CANDIDATES:
        if name in branches:
            return name
    head = run(repo, "symbolic-ref", "-q", "--short", "HEAD", check=False).decode().strip()
    return head if head in branches else None


def log_branches(repo: Path, exclude: list[str] | tuple[str, ...] = ()) -> bytes:
    """`LOG_FORMAT` records (with ``--numstat -z``, renames off, merges diffed against their first
    parent) of every commit reachable from a local branch and not from a commit of `exclude`
    (the tips a previous run read); b'' when there are none."""
    if not local_branches(repo):
        return b""
    return run(
        repo, "log", "--branches", "-z", "--no-renames", "--diff-merges=first-parent", "--numstat",
        f"--format={LOG_FORMAT}", *(["--not", *exclude] if exclude else []), "--",
    )  # fmt: skip


AUTHOR_FORMAT = "%H%x1f%ae"
"""`git log --format` of `branch_authors`: sha and author address (compared, never stored)."""


def branch_authors(repo: Path) -> bytes:
    """``sha US address`` lines of every commit reachable from a local branch (no diffs: cheap);
    b'' when there are none."""
    if not local_branches(repo):
        return b""
    return run(repo, "log", "--branches", f"--format={AUTHOR_FORMAT}", "--")


def branch_tips(repo: Path) -> dict[str, str]:
    """Full ref name → sha of every local branch (``refs/heads/…``)."""
    out = run(repo, "for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads")
    tips = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        name, _, sha = line.partition("\0")
        if name and sha:
            tips[name] = sha
    return tips


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """Whether commit `older` is an ancestor of (or equal to) `newer`; False too when `older` no
    longer exists (a rewritten and pruned history)."""
    cmd = ["git", "-C", str(repo), "merge-base", "--is-ancestor", older, newer]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S, env=_env())
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git merge-base failed in {repo}: {exc}") from exc
    return done.returncode == 0


def commit_exists(repo: Path, sha: str) -> bool:
    """Whether `sha` names a commit in `repo`'s object store."""
    return bool(run(repo, "rev-parse", "-q", "--verify", f"{sha}^{{commit}}", check=False).strip())


def first_parent_shas(repo: Path, branch: str) -> list[str]:
    """The default branch's first-parent chain, oldest first."""
    out = run(repo, "rev-list", "--first-parent", "--reverse", f"refs/heads/{branch}", "--")
    return out.decode().split()


def remote_refs(repo: Path) -> list[str]:
    """Full names of the remote-tracking refs (``refs/remotes/…``), symbolic ones left out."""
    out = run(repo, "for-each-ref", "--format=%(refname)%00%(symref)", "refs/remotes")
    refs = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        name, _, symref = line.partition("\0")
        if name and not symref:
            refs.append(name)
    return refs


def reflog(repo: Path, ref: str) -> bytes:
    """`REFLOG_FORMAT` lines of `ref`'s reflog (newest first); b'' when it has none."""
    return run(repo, "reflog", "show", "--date=unix", f"--format={REFLOG_FORMAT}", ref, "--", check=False)


def backlog_history(repo: Path, branch: str, folders: tuple[str, ...], since: str | None = None) -> bytes:
    """The default branch's first-parent commits touching `folders` (after commit `since` when
    given), oldest first, each as ``\\x1e<sha>\\x1f<commit time>\\0`` then ``<status letter>\\0<path>\\0``
    pairs (merges diffed against their first parent, renames off)."""
    rev = f"{since}..refs/heads/{branch}" if since else f"refs/heads/{branch}"
    return run(
        repo, "log", "--first-parent", "--reverse", "-z", "--no-renames", "--diff-merges=first-parent",
        "--name-status", "--format=%x1e%H%x1f%ct", rev, "--", *folders,
    )  # fmt: skip


def read_blobs(repo: Path, specs: list[str]) -> list[bytes | None]:
    """Contents of ``<sha>:<path>`` specs in one `git cat-file --batch` call, in order; None for
    a spec git reports missing. Paths holding a newline cannot be asked for (None)."""
    if not specs:
        return []
    asked = [s for s in specs if "\n" not in s]
    out = run(repo, "cat-file", "--batch", input="".join(s + "\n" for s in asked).encode("utf-8", "surrogateescape"))
    found: dict[str, bytes | None] = {}
    pos = 0
    for spec in asked:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split(b" ")
        pos = eol + 1
        if header[-1] in (b"missing", b"ambiguous") or len(header) < 3:
            found[spec] = None
            continue
        size = int(header[2])
        found[spec] = out[pos : pos + size]
        pos += size + 1  # the content is followed by a newline
    return [found.get(s) for s in specs]


STATE_LOG_PATHSPEC = ":(glob)**/codex/state-*-loop*.jsonl"
"""Loop state logs anywhere in the work tree (`agent_history.loops.statelog`)."""


def state_log_files(repo: Path) -> list[str]:
    """Relative paths of loop state logs in the work tree, tracked or not (ignored ones too)."""
    out = run(repo, "ls-files", "-z", "--cached", "--others", "--", STATE_LOG_PATHSPEC)
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


def remote_urls(repo: Path) -> list[str]:
    """The configured remotes' URLs (``remote.<name>.url``)."""
    out = run(repo, "config", "-z", "--get-regexp", r"^remote\..*\.url$", check=False)
    urls = []
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        _, _, url = entry.partition("\n")
        if url:
            urls.append(url)
    return urls


def is_tracked(repo: Path, rel: str) -> bool:
    """Whether `rel` (relative to `repo`) is in the index (a file git can blame)."""
    return bool(run(repo, "ls-files", "-z", "--", f":(literal){rel}", check=False).strip(b"\0"))


def blame(repo: Path, rel: str, first: int | None = None, last: int | None = None) -> bytes:
    """``git blame --porcelain`` of the work-tree file `rel` (uncommitted lines carry the all-zero
    sha), lines `first`..`last` (1-based, inclusive) when given. Raises GitError (e.g. a line
    range past the end)."""
    span = ["-L", f"{first},{last}"] if first is not None and last is not None else []
    return run(repo, "blame", "--porcelain", *span, "--", rel)


LOOP_FILES_PATHSPEC = ":(glob)**/codex/*.md"
"""Closeouts and charters anywhere in the work tree (`repos.installed.loop_files` sorts them)."""


def loop_md_files(repo: Path) -> list[str]:
    """Relative paths of ``codex/*.md`` files in the work tree, tracked or not (ignored ones too)."""
    out = run(repo, "ls-files", "-z", "--cached", "--others", "--", LOOP_FILES_PATHSPEC)
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p and (repo / p).is_file()})
