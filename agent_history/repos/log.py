"""Commits and pushes from `repos.git` output — pure.

- `parse_log(raw, my_emails)`: `git.LOG_FORMAT` records → `Commit` values. The author's address
  only decides `authored_by_me` (compared case-insensitively with the configured identities; None
  when none are configured) and is dropped; trailers that name a person (`PERSON_TRAILERS`, or
  any value holding an e-mail address) are dropped too, so nothing stored identifies anyone.
  `task_ids` are the values of ``Task:`` trailers (key compared case-insensitively; a value may
  list several ids separated by commas or blanks; kept as written, matched to task files
  case-insensitively, as Backlog.md ids are: ``TASK-1`` is ``task-1``). Line counts: numstat's ``-`` (binary) is None;
  a commit's totals are None when none of its files has a count.
- `reached_default(first_parent, parents, committed_at)`: when each commit reached the default
  branch — the commit time of the first-parent commit that brought it (itself, or the merge).
- `parse_pushes(ref, raw)`: reflog entries whose subject is git's ``update by push``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

PERSON_TRAILERS: frozenset[str] = frozenset(
    {"signed-off-by", "co-authored-by", "reviewed-by", "acked-by", "tested-by", "reported-by", "helped-by",
     "suggested-by", "cc", "author", "committer"}
)  # fmt: skip
"""Trailer keys (lower case) whose value names a person: never stored (the git trailer
conventions of the Linux kernel's SubmittingPatches and GitHub's ``Co-authored-by``)."""

TASK_TRAILER = "task"
"""The trailer naming the Backlog task a commit lands (``Task: task-12``), compared lower case."""

EMAIL = re.compile(r"[^\s<>@]+@[^\s<>@]+")
TASK_SPLIT = re.compile(r"[,\s]+")
PUSH_SUBJECT = "update by push"
"""The reflog subject git writes on a remote-tracking ref when `git push` updated it."""


@dataclass
class FileChange:
    """One file a commit changed: lines added/deleted (None: binary)."""

    path: str
    added: int | None
    deleted: int | None


@dataclass
class Commit:
    """One commit as stored: no address, no name."""

    sha: str
    parents: list[str]
    authored_at: datetime
    committed_at: datetime
    subject: str
    trailers: list[tuple[str, str]]
    task_ids: list[str]
    authored_by_me: bool | None
    files: list[FileChange] = field(default_factory=list)

    @property
    def lines_added(self) -> int | None:
        counts = [f.added for f in self.files if f.added is not None]
        return sum(counts) if counts else None

    @property
    def lines_deleted(self) -> int | None:
        counts = [f.deleted for f in self.files if f.deleted is not None]
        return sum(counts) if counts else None


@dataclass(frozen=True)
class Push:
    """A remote-tracking ref updated by `git push`: the ref, the pushed sha, when (reflog time)."""

    ref: str
    sha: str
    pushed_at: datetime


def from_unix(text: str) -> datetime:
    """A Unix time in seconds (as git prints it) → an aware UTC datetime."""
    return datetime.fromtimestamp(int(text), UTC)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def kept_trailers(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The trailers that may be stored: none whose key names a person or whose value holds an
    e-mail address."""
    return [(k, v) for k, v in pairs if k.lower() not in PERSON_TRAILERS and not EMAIL.search(v)]


def task_ids(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Distinct ``Task:`` trailer values in order (``Task: task-1, task-2`` names two)."""
    out: list[str] = []
    for key, value in pairs:
        if key.strip().lower() == TASK_TRAILER:
            out.extend(t for t in TASK_SPLIT.split(value.strip()) if t and t not in out)
    return out


def parse_log(raw: bytes, my_emails: Iterable[str]) -> list[Commit]:
    """`git.log_branches` output → commits, newest first (git's order). `my_emails` empty →
    `authored_by_me` None."""
    mine = {e.strip().lower() for e in my_emails if e.strip()}
    commits: list[Commit] = []
    for chunk in raw.split(b"\x1e")[1:]:
        header, _, rest = chunk.partition(b"\0")
        fields = _decode(header).split("\x1f")
        sha, parents, at, ct, email, subject, trailer_text = fields[:7]
        pairs = []
        for item in trailer_text.split("\x1d"):
            key, sep, value = item.partition("\x1c")
            if sep:
                pairs.append((key.strip(), value.strip()))
        files = []
        for entry in rest.split(b"\0"):
            entry = entry.lstrip(b"\n")
            if not entry:
                continue
            added, deleted, path = _decode(entry).split("\t", 2)
            files.append(
                FileChange(path, None if added == "-" else int(added), None if deleted == "-" else int(deleted))
            )
        commits.append(
            Commit(
                sha=sha,
                parents=parents.split(),
                authored_at=from_unix(at),
                committed_at=from_unix(ct),
                subject=subject,
                trailers=kept_trailers(pairs),
                task_ids=task_ids(pairs),
                authored_by_me=(email.strip().lower() in mine) if mine else None,
                files=files,
            )
        )
    return commits


def reached_default(
    first_parent: list[str], parents: dict[str, list[str]], committed_at: dict[str, datetime]
) -> dict[str, datetime]:
    """sha → when it reached the default branch: walking the first-parent chain oldest first,
    each mainline commit brings itself and every ancestor not brought before, at its commit time.
    Ancestors missing from `parents` (beyond a shallow boundary) are skipped."""
    reached: dict[str, datetime] = {}
    for mainline in first_parent:
        at = committed_at.get(mainline)
        if at is None:
            continue
        stack = [mainline]
        while stack:
            sha = stack.pop()
            if sha in reached or sha not in parents:
                continue
            reached[sha] = at
            stack.extend(parents[sha])
    return reached


def parse_pushes(ref: str, raw: bytes) -> list[Push]:
    """Pushes in `git.reflog` output of remote-tracking `ref` (subject ``update by push``)."""
    pushes = []
    for line in _decode(raw).splitlines():
        parts = line.split("\x1f")
        if len(parts) != 3 or parts[2].strip() != PUSH_SUBJECT:
            continue
        sha, selector, _ = parts
        m = re.search(r"@\{(\d+)\}$", selector)
        if m:
            pushes.append(Push(ref, sha, from_unix(m.group(1))))
    return pushes


def authorship(raw: bytes, my_emails: Iterable[str]) -> dict[str, bool | None]:
    """`git.branch_authors` output → sha → `authored_by_me` (the rule of `parse_log`: None when no
    identity is configured); the addresses are dropped."""
    mine = {e.strip().lower() for e in my_emails if e.strip()}
    out: dict[str, bool | None] = {}
    for line in _decode(raw).splitlines():
        sha, sep, email = line.partition("\x1f")
        if sep:
            out[sha] = (email.strip().lower() in mine) if mine else None
    return out
