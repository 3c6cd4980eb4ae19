"""`blame FILE[:LINE]`: for each line of a work-tree file, the commit and the session behind it.

- A **committed** line: its commit from ``git blame --porcelain`` (`repos.git.blame`, parsed by
  `repos.blame.parse_porcelain`); the session and git event that made the commit (`read.why.why`:
  the first *commit* event whose printed sha names it, so pushes never count), the tool call
  that ran it and the last human prompt before it; and, when `collect` read the work tree (or,
  for a linked worktree not collected, its main work tree: `repos.git.work_tree`), whether you
  authored it (`read.why.collected_commits`).
- An **uncommitted** line (git's all-zero sha, or every line of an untracked file): the newest
  Edit / MultiEdit / Write / apply_patch call (a create or edit `ah.file_touch` of the file, not
  failed) whose written content (`repos.blame.lines_written`) holds the line, compared without
  trailing blanks; blank lines are attributed to nothing (any call could have written one). A
  committed line whose commit no session printed (a person committed an agent's edit) gets the
  same rule among the calls at or before the commit time.
  Touch paths name the file when equal to its absolute path, or relative and a suffix of it at a
  directory boundary from a session whose working directory lies in the repository.
- The prompt: the last human prompt before the event in its session, or for a sub-agent the
  parent's prompt before the spawn plus the brief (`read.why.prompt_and_brief`).

Sessions curated out (`session.exclusions`) never answer. Errors (`BlameError`, one line): the
file is missing or not a regular file, not in a git work tree, a line range outside the file,
or git failing.
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import psycopg

from agent_history.db.tables.merges import key_match
from agent_history.model.rows import ToolCallRow
from agent_history.read.why import Excerpt, collected_commits, prompt_and_brief, why
from agent_history.repos import blame as porcelain
from agent_history.repos import git
from agent_history.session.exclusions import not_excluded
from agent_history.session.refs import SESSION_REF_COLUMNS, SESSION_REF_JOINS, SessionRef, session_ref

WRITE_OPS: tuple[str, ...] = ("create", "edit")
"""`ah.file_touch.op` values of calls that can have put a line into a file."""
MAX_CALLS = 500
"""Newest file-writing calls of one file examined for uncommitted lines."""
COMMAND_CHARS = 400


class BlameError(ValueError):
    """The file cannot be blamed; the message is one line."""


@dataclass(slots=True)
class LineOrigin:
    """The transcript event behind a line: `kind` ``commit`` (a session's git commit event) or
    ``tool_call`` (the call whose content put an uncommitted line there)."""

    kind: str
    session: SessionRef
    tool_name: str | None
    tool_call_uid: str | None
    ts: datetime | None
    byte_offset: int | None
    command: str | None
    prompt: Excerpt | None
    brief: Excerpt | None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["session"] = self.session.as_dict()
        return d


@dataclass(slots=True)
class BlameLine:
    """One line: its text, its commit (None: uncommitted) and the event behind it (None: none
    found). `authored_by_me` is None unless `collect` read the commit with identities set."""

    line: int
    text: str
    sha: str | None
    subject: str | None
    committed_at: datetime | None
    authored_by_me: bool | None
    origin: LineOrigin | None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["origin"] = self.origin.as_dict() if self.origin else None
        return d


@dataclass(slots=True)
class Blame:
    """A file's blame: its absolute path, the repository's top level, the lines asked for."""

    path: str
    repository: str
    lines: list[BlameLine]

    def as_dict(self) -> dict:
        return {"path": self.path, "repository": self.repository, "lines": [x.as_dict() for x in self.lines]}


def parse_target(target: str) -> tuple[str, int | None, int | None]:
    """``FILE``, ``FILE:LINE`` or ``FILE:FIRST-LAST`` → (file, first, last). A name that exists as
    written is a file even with a colon in it. Raises BlameError for a bad line number."""
    if os.path.exists(target) or ":" not in target:  # os.path: False, not raising, for a name too long
        return target, None, None
    name, _, span = target.rpartition(":")
    first, sep, last = span.partition("-")
    if not first.isdigit() or (sep and not last.isdigit()):
        return target, None, None
    a, b = int(first), int(last) if sep else int(first)
    if a < 1 or b < a:
        raise BlameError(f"bad line range {span!r}: lines are numbered from 1, first ≤ last")
    return name, a, b


def _lines_of(path: Path) -> list[str]:
    return [x.removesuffix("\r") for x in path.read_bytes().decode("utf-8", "replace").split("\n")]


def _git_lines(top: Path, path: Path, first: int | None, last: int | None) -> list[porcelain.BlamedLine]:
    text = _lines_of(path)
    count = len(text) - 1 if text and text[-1] == "" else len(text)
    if first is not None and (last is None or last > count):
        raise BlameError(f"{path} has {count} line{'s' if count != 1 else ''}; asked for line(s) {first}–{last}")
    rel = str(path.relative_to(top))
    tracked = git.is_tracked(top, rel) and git.run(top, "rev-parse", "-q", "--verify", "HEAD", check=False)
    if not tracked:  # untracked (or no commit yet): every line is uncommitted
        numbered = list(enumerate(text[:count], 1))
        lo, hi = (first, last) if first is not None else (1, count)
        return [porcelain.BlamedLine(n, t, None, None, None) for n, t in numbered[lo - 1 : hi]]
    try:
        return porcelain.parse_porcelain(git.blame(top, rel, first, last))
    except git.GitError as exc:
        raise BlameError(str(exc)) from exc


def _commit_origin(conn: psycopg.Connection, sha: str) -> LineOrigin | None:
    for o in why(conn, sha):
        if o.op == "commit":
            return LineOrigin("commit", o.session, o.tool_name, None, o.ts, o.byte_offset, o.command, o.prompt, o.brief)
    return None


def _suffixes(path: str) -> list[str]:
    """``/a/b/c.py`` → ``[/a/b/c.py, a/b/c.py, b/c.py, c.py]``: the names a touch may give it."""
    parts = path.strip("/").split("/")
    return [path] + ["/".join(parts[i:]) for i in range(len(parts))]


_TOOL_CALL_OF_TOUCH = key_match(ToolCallRow, "t", lambda c: f"f.{c}")
"""Join condition: tool call ``t`` is the one file touch ``f`` names (digests compared too, so the
lookup uses the natural key's index: `merges.KEY_DIGESTS`)."""


def _writing_calls(conn: psycopg.Connection, paths: list[str], tops: list[str]) -> list[tuple]:
    """File-writing calls of the file named by `paths` (as given, and with symlinks resolved),
    newest first: (name, input, ts, byte_offset, source_id, tool_call_uid, *session ref columns)."""
    names = sorted({n for p in paths for n in _suffixes(p)})
    return conn.execute(
        f"""
        SELECT t.name, t.input, coalesce(t.started_at, f.ts), t.byte_offset, t.source_id, t.tool_call_uid,
               {SESSION_REF_COLUMNS}
        FROM ah.file_touch AS f
        JOIN ah.tool_call AS t ON {_TOOL_CALL_OF_TOUCH}
        JOIN ah.session AS s ON s.id = f.session_id
        {SESSION_REF_JOINS}
        WHERE f.path = ANY (%(names)s) AND f.op = ANY (%(ops)s) AND t.is_error IS NOT TRUE
          AND (f.path = ANY (%(paths)s) OR s.cwd = ANY (%(tops)s)
               OR EXISTS (SELECT 1 FROM unnest(%(tops)s::text[]) AS top WHERE starts_with(s.cwd, top || '/')))
          AND {not_excluded("s")}
        ORDER BY coalesce(t.started_at, f.ts) DESC NULLS LAST, t.id DESC
        LIMIT %(limit)s
        """,
        {"names": names, "ops": list(WRITE_OPS), "paths": paths, "tops": tops, "limit": MAX_CALLS},
    ).fetchall()


def _written(input_text: str | None, paths: list[str]) -> list[str] | None:
    for p in paths:
        lines = porcelain.lines_written(input_text, p)
        if lines is not None:
            return lines
    return None


Query = tuple[str, datetime | None]
"""A line to attribute: its text (trailing blanks off) and the latest time a call may have
written it (the commit time for a committed line; None: any time, for an uncommitted one)."""


def _call_origins(
    conn: psycopg.Connection, paths: list[str], tops: list[str], queries: set[Query]
) -> dict[Query, LineOrigin]:
    """Each query → the newest call (at or before its time limit) whose written content holds the
    line; queries no call answers are left out."""
    found: dict[Query, LineOrigin] = {}
    if not queries:
        return found
    seen: set[str] = set()
    origins: dict[str, LineOrigin] = {}  # one prompt lookup per call
    for row in _writing_calls(conn, paths, tops):
        name, input_text, ts, offset, source_id, uid = row[:6]
        if uid in seen:  # one call touching the file under two names
            continue
        seen.add(uid)
        open_queries = [q for q in queries - found.keys() if q[1] is None or (ts is not None and ts <= q[1])]
        if not open_queries:
            continue
        written = _written(input_text, paths)
        if not written:
            continue
        lines = {w.rstrip() for w in written}
        for q in open_queries:
            if q[0] not in lines:
                continue
            if uid not in origins:
                ref = session_ref(row[6:])
                prompt, brief, _ = prompt_and_brief(conn, ref, offset, source_id)
                origins[uid] = LineOrigin("tool_call", ref, name, uid, ts, offset, None, prompt, brief)
            found[q] = origins[uid]
        if found.keys() >= queries:
            break
    return found


def _query(x: porcelain.BlamedLine) -> Query:
    return x.text.rstrip(), x.committed_at if x.sha else None


def blame(conn: psycopg.Connection, target: Path, first: int | None = None, last: int | None = None) -> Blame:
    """The blame of file `target` (lines `first`..`last`, 1-based inclusive, when given): see the
    module docstring. Raises BlameError."""
    given = target.expanduser().absolute()
    try:
        mode = given.stat().st_mode
    except FileNotFoundError:
        raise BlameError(f"no such file: {target}") from None
    except OSError as exc:  # a name too long, a symlink loop, a component that is a file
        raise BlameError(f"cannot read {target}: {exc.strerror}") from None
    except ValueError:  # a NUL in the name (an MCP argument can hold one)
        raise BlameError(f"no such file: {target!r}") from None
    if not stat.S_ISREG(mode):
        raise BlameError(f"not a regular file: {target}")
    path = given.resolve()
    where = git.work_tree(path)
    if where is None:
        raise BlameError(f"not in a git work tree: {target}")
    top = where.top
    paths = list(dict.fromkeys([str(given), str(path)]))
    tops = list(dict.fromkeys([str(top), *(str(p) for p in given.parents if p.resolve() == top)]))
    raw = _git_lines(top, path, first, last)
    commits: dict[str, tuple[LineOrigin | None, bool | None]] = {}
    for sha in {x.sha for x in raw if x.sha}:
        held = {c.repository: c.authored_by_me for c in collected_commits(conn, sha)}
        mine = next((held[p] for p in (str(where.top), str(where.main)) if p in held), None)
        commits[sha] = (_commit_origin(conn, sha), mine)
    queries = {_query(x) for x in raw if x.text.strip() and not (x.sha and commits[x.sha][0])}
    by_call = _call_origins(conn, paths, tops, queries)
    lines = []
    for x in raw:
        origin, mine = commits[x.sha] if x.sha else (None, None)
        if origin is None and x.text.strip():
            origin = by_call.get(_query(x))
        lines.append(BlameLine(x.line, x.text, x.sha, x.subject, x.committed_at, mine, origin))
    return Blame(str(path), str(top), lines)
