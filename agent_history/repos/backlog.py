"""Backlog.md task files — pure.

Format (Backlog.md, `backlog/tasks/<id> - <title>.md`; finished tasks move to
`backlog/completed/`, dropped ones to `backlog/archive/tasks/`): a YAML frontmatter block between
``---`` lines, then Markdown. Keys read: ``id``, ``title``, ``status`` (e.g. ``To Do``,
``In Progress``, ``Done``), ``assignee`` and ``labels`` and ``dependencies`` (lists, or one
string), ``created_date`` / ``updated_date`` (kept as written). Other keys (``reporter``, which
names a person, among them) are not read. The id falls back to the file name's part before
`` - `` when the frontmatter has none. A file whose frontmatter is missing or not a YAML mapping
raises `TaskFileError` (one line): the collector records it as an issue and goes on.

`status_changes(observations)` turns a task's statuses at successive commits into changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

import yaml

FOLDERS: dict[str, str] = {
    "backlog/tasks": "tasks",
    "backlog/completed": "completed",
    "backlog/archive/tasks": "archive",
    "backlog/archive": "archive",
}
"""Directory (relative to the repository) → the folder a task is in. Longest prefix wins."""

DONE_STATUSES: frozenset[str] = frozenset({"done"})
"""Statuses (lower case) that mean a task landed: Backlog.md's default final status ``Done``."""

FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$", re.DOTALL | re.MULTILINE)


class TaskFileError(ValueError):
    """A task file whose frontmatter cannot be read; the message is one line."""


@dataclass(frozen=True)
class Task:
    """One Backlog.md task as its file says."""

    task_id: str
    title: str | None
    status: str | None
    labels: tuple[str, ...]
    assignee: tuple[str, ...]
    created_date: str | None
    updated_date: str | None
    dependencies: tuple[str, ...]


@dataclass(frozen=True)
class StatusChange:
    """A task's status moved from `old` (None: first seen) to `new` at commit `sha`."""

    task_id: str
    sha: str
    changed_at: datetime
    old: str | None
    new: str | None


def folder_of(path: str) -> str | None:
    """'tasks' | 'completed' | 'archive' for a Markdown file under a Backlog.md folder, else None."""
    if not path.endswith(".md"):
        return None
    for prefix in sorted(FOLDERS, key=len, reverse=True):
        if path.startswith(prefix + "/"):
            return FOLDERS[prefix]
    return None


def is_done(status: str | None) -> bool:
    """Whether `status` is a final, landed status (`DONE_STATUSES`)."""
    return status is not None and status.strip().lower() in DONE_STATUSES


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    return str(value).strip() or None


def _list(value) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(t for t in (_text(i) for i in items) if t)


def parse_task(text: str, file_name: str) -> Task:
    """The task in a file's `text` (`file_name` only for the id fallback). Raises TaskFileError."""
    m = FRONTMATTER.match(text)
    if not m:
        raise TaskFileError("no frontmatter (a '---' line, YAML, a '---' line)")
    try:
        data = yaml.safe_load(m.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise TaskFileError(f"frontmatter is not YAML{where}: {getattr(exc, 'problem', None) or exc}") from exc
    if not isinstance(data, dict):
        raise TaskFileError("frontmatter is not a mapping of keys")
    task_id = _text(data.get("id")) or id_from_name(file_name)
    if not task_id:
        raise TaskFileError("no id in the frontmatter or the file name")
    return Task(
        task_id=task_id,
        title=_text(data.get("title")),
        status=_text(data.get("status")),
        labels=_list(data.get("labels")),
        assignee=_list(data.get("assignee")),
        created_date=_text(data.get("created_date")),
        updated_date=_text(data.get("updated_date")),
        dependencies=_list(data.get("dependencies")),
    )


def id_from_name(file_name: str) -> str | None:
    """The task id a Backlog.md file name gives (``task-3 - Title.md`` → ``task-3``); None if none."""
    stem = file_name.rsplit("/", 1)[-1].removesuffix(".md")
    head = stem.split(" - ", 1)[0].strip()
    return head or None


def status_changes(observations: list[tuple[str, str, datetime, str | None]]) -> list[StatusChange]:
    """(task id, sha, commit time, status) observations in commit order → the changes: a task's
    first observation, then each observation whose status differs from the task's previous one."""
    last: dict[str, str | None] = {}
    out: list[StatusChange] = []
    for task_id, sha, at, status in observations:
        if task_id in last and last[task_id] == status:
            continue
        out.append(StatusChange(task_id, sha, at, last.get(task_id), status))
        last[task_id] = status
    return out
