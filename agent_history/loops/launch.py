"""Launch detection (issue 12, Launch).

A human or queued prompt containing ``You are the root`` and exactly one distinct closeout path
(``…codex/closeout-<YYYY-MM-DD>-loop<N>.md``) launches a loop. The charter is another ``.md``
path in the closeout's directory, and its digest the 64-hex SHA-256 in the prompt; either is
None when the prompt names none or more than one distinct value (the launch still counts, but
its closeout cannot qualify without a digest).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from agent_history.loops import rules


@dataclass(frozen=True, slots=True)
class Launch:
    """What a launch prompt names. Paths are as written (relative or absolute)."""

    closeout_path: str
    loop_number: int
    loop_date: str  # YYYY-MM-DD, from the closeout's name
    charter_path: str | None
    charter_sha256: str | None


def _norm(path: str) -> str:
    return posixpath.normpath(path)


def detect_launch(text: str | None) -> Launch | None:
    """The launch in prompt `text`, or None (no marker, zero or several distinct closeout paths)."""
    if not text or rules.LAUNCH_MARKER not in text:
        return None
    found = {_norm(m["path"]): m for m in rules.CLOSEOUT_PATH.finditer(text)}
    if len(found) != 1:
        return None
    path, m = next(iter(found.items()))
    directory = posixpath.dirname(path)
    charters = {
        _norm(c["path"])
        for c in rules.MD_PATH.finditer(text)
        if posixpath.dirname(_norm(c["path"])) == directory and _norm(c["path"]) != path
    }
    digests = {d["digest"] for d in rules.SHA256_HEX.finditer(text)}
    return Launch(
        closeout_path=path,
        loop_number=int(m["n"]),
        loop_date=m["date"],
        charter_path=next(iter(charters)) if len(charters) == 1 else None,
        charter_sha256=next(iter(digests)) if len(digests) == 1 else None,
    )


def absolute_path(path: str, cwd: str | None) -> str:
    """`path` made absolute against `cwd` (a session's working directory) and normalised; a
    relative path with no known cwd stays relative. Used so a launch's ``codex/closeout-….md``
    and a write of ``/repo/codex/closeout-….md`` name the same file."""
    if not path.startswith("/") and cwd:
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


def repo_label(name: str | None, remote_url: str | None) -> str | None:
    """The root's repository as a closeout names it: ``owner/name`` when the remote is known,
    else the directory name; None when neither is."""
    if remote_url:
        m = rules.REMOTE_OWNER_NAME.search(remote_url.strip())
        if m:
            return f"{m['owner']}/{m['name']}"
    return name or None
