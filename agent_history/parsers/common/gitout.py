"""Git commits and pushes sighted in tool output (docs/design.md §6 "Git events"). Pure; never raises.

What git prints, and what we read from it (ANSI escapes stripped, ``\\r`` treated as a line
break so rebase progress "Rebasing (5/22)\\r[detached HEAD 2996bb8] …" splits):

Commit (``git commit``, ``--amend``, ``cherry-pick``, ``revert``, each pick of a rebase), at a
line start::

    [main abc1234] subject                      → branch "main"
    [main (root-commit) abc1234] subject        → first commit of a repository
    [detached HEAD 2996bb8] subject             → branch "detached HEAD"
    [feature/x 1a2b3c4d] subject

  The sha must be 7–40 lowercase hex. Lookalikes are rejected: ``[INFO 2024] …`` (too short),
  ``[1/3]`` (no sha), ``[text](url)`` (no space after ``]``), ``[CI/test-2] ⭐ …``. A sha made of
  digits only (``[build 2024061] …``: a date or build number, 3.7 % of real 7-char shas) counts
  only when it is plausibly git: the next line is a diffstat (`` 2 files changed``, ``Date:``,
  `` create mode``) or `command` runs a git commit-making subcommand.

Push (``git push`` ref status lines, porcelain " <flag> <summary> <from> -> <to> (<reason>)")::

       ef8b447..030d80d  main -> main           → push, old_sha ef8b447, sha 030d80d
     + 4bdbf8f...190d0db streaming -> streaming (forced update)
     * [new branch]      feat -> feat           → push, sha None, branch "feat"

  Read only inside a ``To <url>`` section, or when there is no section header and `command`
  contains ``git … push``. Lines under ``From <url>`` are fetch/pull output
  (``acf21f1..42b4429  main -> origin/main``) and are ignored. Not pushes, ignored:
  ``! [rejected]``, ``! [remote rejected]``, ``= [up to date]``, ``- [deleted]``, and tags
  (``* [new tag] v0.27.5 -> v0.27.5``: a tag is not a branch; GitEventRow.op is commit|push).
  ``branch`` is the local side (``from``) unless that is ``HEAD`` or a sha, then the remote side;
  ``remote_ref`` is the remote side as printed.

Sightings come back in output order, de-duplicated (an identical sighting twice in one output,
e.g. a Claude result that repeats its stdout, is reported once). `git_event_rows` turns the
sightings of one tool call's output into GitEventRows keyed by `git_event_uid`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from agent_history.model.rows import GitEventRow
from agent_history.parsers.base import Pos
from agent_history.parsers.common.errors import strip_ansi

__all__ = ["GitSighting", "git_event_rows", "git_event_uid", "git_sightings"]


@dataclass(frozen=True)
class GitSighting:
    """One commit or push read from tool output.

    ``op``: ``commit`` | ``push``. ``sha``: the commit (for a push, the new remote tip), as printed
    (7–40 hex), None for a new branch push. ``old_sha``: the previous remote tip of a push.
    ``branch``: the branch committed on / pushed. ``remote_ref``: the remote side of a push.
    ``subject``: the commit's first message line.
    """

    op: str
    sha: str | None
    old_sha: str | None = None
    branch: str | None = None
    remote_ref: str | None = None
    subject: str | None = None


_COMMIT = re.compile(
    r"^\[(?P<branch>detached HEAD|[^\s\[\]~^:?*\\]+)"
    r"(?: \((?P<root>root-commit)\))?"
    r" (?P<sha>[0-9a-f]{7,40})\]"
    r"(?: (?P<subject>.*))?$"
)
_DIFFSTAT = re.compile(r"^\s*(?:\d+ files? changed|Date:|Author:|(?:create|delete) mode |rename )")
_GIT_COMMITTING = re.compile(r"\bgit\b[^|;&\n]*?\b(?:commit|cherry-pick|revert|rebase|merge|am|pull)\b")
_GIT_PUSH = re.compile(r"\bgit\b[^|;&\n]*?\bpush\b")
_SECTION = re.compile(r"^(?P<kind>To|From) \S+\s*$")
_REF_LINE = re.compile(
    r"^\s?(?P<flag>[ +*!=-])?\s*"
    r"(?P<summary>\[[^\]\n]+\]|[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40})"
    r"\s+(?P<src>\S+)\s+->\s+(?P<dst>\S+)"
    r"(?:\s+\((?P<reason>[^)\n]*)\))?\s*$"
)
_RANGE = re.compile(r"^(?P<old>[0-9a-f]{7,40})\.\.\.?(?P<new>[0-9a-f]{7,40})$")
_SHA_ONLY = re.compile(r"^[0-9a-f]{7,40}$")


def _commit(lines: list[str], i: int, committing: bool) -> GitSighting | None:
    m = _COMMIT.match(lines[i])
    if m is None:
        return None
    sha = m["sha"]
    if sha.isdigit() and not committing:
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not _DIFFSTAT.match(nxt):
            return None
    subject = (m["subject"] or "").strip() or None
    return GitSighting(op="commit", sha=sha, branch=m["branch"], subject=subject)


def _push(line: str) -> GitSighting | None:
    m = _REF_LINE.match(line)
    if m is None:
        return None
    flag, summary, src, dst = m["flag"] or " ", m["summary"], m["src"], m["dst"]
    branch = dst if src == "HEAD" or _SHA_ONLY.match(src) else src
    if summary.startswith("["):
        if flag == "*" and summary == "[new branch]":
            return GitSighting(op="push", sha=None, branch=branch, remote_ref=dst)
        return None  # [new tag], [rejected], [up to date], [deleted], ...
    if flag not in " +":
        return None
    r = _RANGE.match(summary)
    if r is None:  # pragma: no cover - _REF_LINE admits only ranges besides brackets
        return None
    return GitSighting(op="push", sha=r["new"], old_sha=r["old"], branch=branch, remote_ref=dst)


def git_sightings(output: str, command: str | None = None) -> list[GitSighting]:
    """Commits and pushes printed by git in one tool output (rules in the module docstring).

    `output` is the tool's text output (stdout and stderr, as the harness stored them);
    `command` the shell command when known (it only makes ambiguous lines acceptable). Returns
    sightings in output order without duplicates; ``[]`` for non-str input. Never raises.
    """
    if not isinstance(output, str) or ("]" not in output and "->" not in output):
        return []
    try:
        cmd = command if isinstance(command, str) else ""
        committing = bool(_GIT_COMMITTING.search(cmd))
        pushing = bool(_GIT_PUSH.search(cmd))
        text = strip_ansi(output).replace("\r\n", "\n").replace("\r", "\n")
        may_commit = text.startswith("[") or "\n[" in text  # a commit line starts with `[`
        may_push = "->" in text and (pushing or text.startswith("To ") or "\nTo " in text)  # see `_SECTION`
        if not may_commit and not may_push:  # most outputs: code with `]` or `->`, no git line
            return []
        lines = text.split("\n")
        found: list[GitSighting] = []
        section: str | None = None
        for i, line in enumerate(lines):
            if line.startswith("["):
                s = _commit(lines, i, committing)
                if s is not None and s not in found:
                    found.append(s)
                continue
            sec = _SECTION.match(line)
            if sec is not None:
                section = sec["kind"]
                continue
            if "->" in line and (section == "To" or (section is None and pushing)):
                s = _push(line)
                if s is not None and s not in found:
                    found.append(s)
        return found
    except Exception:  # noqa: BLE001 — contract: never raise on odd input
        return []


def git_event_uid(tool_call_uid: str, s: GitSighting) -> str:
    """Merge key of a git event: ``"{tool_call_uid}:{op}:{sha or branch}"``.

    One key per (call, op, sha/branch), so the same commit seen twice for one call (the result
    text and the structured result, or a replayed record) merges into one row (docs/design.md §6). A
    push is keyed by its new tip sha, a new-branch push (no sha) by its branch. Consequence: the
    same sha pushed to two refs in one call is one event.
    """
    return f"{tool_call_uid}:{s.op}:{s.sha or s.branch or ''}"


def git_event_rows(
    *,
    agent: str,
    tool_call_uid: str,
    session_uid: str,
    agent_id: str,
    output: str | None,
    command: str | None,
    ts: datetime | None,
    pos: Pos,
) -> list[GitEventRow]:
    """GitEventRows for the commits and pushes in one tool call's `output` (`git_sightings`).

    `command` is the call's shell command or a hint naming its git subcommands (None when
    unknown); `ts` and `pos` (byte offset, line number) are those of the record holding the
    output. One row per sighting, in output order, keyed by `git_event_uid`; ``[]`` when
    `output` is None, empty or shows no git. Never raises.
    """
    return [
        GitEventRow(
            agent=agent,
            git_event_uid=git_event_uid(tool_call_uid, s),
            session_uid=session_uid,
            agent_id=agent_id,
            tool_call_uid=tool_call_uid,
            op=s.op,
            sha=s.sha,
            old_sha=s.old_sha,
            branch=s.branch,
            remote_ref=s.remote_ref,
            subject=s.subject,
            ts=ts,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
        )
        for s in git_sightings(output, command)
    ]
