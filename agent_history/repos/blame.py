"""`git blame --porcelain` output and the lines a file-writing tool call put into a file — pure.

- `parse_porcelain(raw)`: ``git blame --porcelain`` (git's machine format, documented in
  git-blame(1) "THE PORCELAIN FORMAT") → one `BlamedLine` per line of the file: the final line
  number, the commit (None for a line not committed yet, git's all-zero sha), its subject and
  commit time. Author names and addresses are read past and never kept.
- `lines_written(input_text, path)`: the lines an Edit / MultiEdit / Write / apply_patch call
  wrote into `path`, from the call's stored input (`ah.tool_call.input`): Claude Code's JSON
  ``content`` (Write), the lines of ``new_string`` not in ``old_string`` (Edit; MultiEdit per
  ``edits[]``); a Codex
  ``*** Begin Patch`` envelope or a unified diff (raw, or in a JSON ``input`` / ``patch``
  field, or fed by a shell ``command``): the added lines of the sections naming `path` (a relative section path names every
  file whose path ends with it). None when the input is none of these.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from datetime import datetime

from agent_history.repos.log import from_unix

UNCOMMITTED = "0" * 40
"""The sha git blame gives lines not committed yet."""

_HEADER = re.compile(r"^([0-9a-f]{40}) (\d+) (\d+)(?: (\d+))?$")
_SECTION = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$")
_OTHER_SECTION = re.compile(r"^\*\*\* (?:Delete File|End Patch|Move to)")
_DIFF_NEW = re.compile(r"^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$")


@dataclass(frozen=True, slots=True)
class BlamedLine:
    """One line of the file as git blame gives it (`sha` None: not committed yet)."""

    line: int
    text: str
    sha: str | None
    subject: str | None
    committed_at: datetime | None


def parse_porcelain(raw: bytes) -> list[BlamedLine]:
    """`git blame --porcelain` output → lines in file order. Text is decoded as UTF-8 (bad bytes
    replaced); a trailing CR is kept off."""
    meta: dict[str, dict[str, str]] = {}
    out: list[BlamedLine] = []
    sha = None
    final = 0
    for raw_line in raw.split(b"\n"):
        if raw_line.startswith(b"\t"):
            if sha is None:
                continue
            text = raw_line[1:].decode("utf-8", "replace").removesuffix("\r")
            m = meta.get(sha, {})
            committed = sha != UNCOMMITTED
            ct = m.get("committer-time")
            out.append(
                BlamedLine(
                    final,
                    text,
                    sha if committed else None,
                    m.get("summary") if committed else None,
                    from_unix(ct) if committed and ct and ct.isdigit() else None,
                )
            )
            continue
        line = raw_line.decode("utf-8", "replace")
        h = _HEADER.match(line)
        if h:
            sha, final = h.group(1), int(h.group(3))
            meta.setdefault(sha, {})
            continue
        if sha is not None:
            key, _, value = line.partition(" ")
            if key in ("summary", "committer-time"):
                meta[sha][key] = value
    return out


def _patch_lines(patch: str, path: str) -> list[str] | None:
    """Added lines of the sections of `patch` (envelope or unified diff) naming `path`."""
    lines = patch.replace("\r\n", "\n").split("\n")
    if not any(line.startswith("*** Begin Patch") or line.startswith("+++ ") for line in lines):
        return None
    out: list[str] = []
    taking = False
    for line in lines:
        m = _SECTION.match(line) or _DIFF_NEW.match(line)
        if m:
            taking = _names(m.group(1).strip(), path)
            continue
        if _OTHER_SECTION.match(line) or line.startswith("diff --git"):
            taking = False
            continue
        if taking and line.startswith("+"):
            out.append(line[1:])
    return out


def _names(section_path: str, path: str) -> bool:
    """Whether a path written in a tool call names `path` (absolute): equal, or relative and a
    suffix of it at a directory boundary."""
    if section_path.startswith("/"):
        return section_path == path
    return path == section_path or path.endswith("/" + section_path.removeprefix("./"))


def lines_written(input_text: str | None, path: str) -> list[str] | None:
    """The lines a file-writing call put into `path` (absolute), from its stored input; None
    when the input holds no content it could have written (see the module docstring)."""
    if not input_text:
        return None
    try:
        data = json.loads(input_text)
    except ValueError:
        data = input_text
    if isinstance(data, str):
        return _patch_lines(data, path)
    if not isinstance(data, dict):
        return None
    for key in ("input", "patch"):
        if isinstance(data.get(key), str):
            return _patch_lines(data[key], path)
    for key in ("command", "cmd"):  # an envelope fed to apply_patch by a shell heredoc
        command = data.get(key)
        command = "\n".join(c for c in command if isinstance(c, str)) if isinstance(command, list) else command
        if isinstance(command, str) and "*** Begin Patch" in command:
            return _patch_lines(command, path)
    target = data.get("file_path") or data.get("path")
    if isinstance(target, str) and not _names(target, path):
        return None
    out: list[str] = []
    found = False
    if isinstance(data.get("content"), str):  # Write: every line
        out += _split(data["content"])
        found = True
    for edit in [data, *(e for e in data.get("edits") or [] if isinstance(e, dict))]:
        if isinstance(edit.get("new_string"), str):  # Edit: the lines it added, not its context
            out += _edit_added(edit.get("old_string"), edit["new_string"])
            found = True
    return out if found else None


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def _edit_added(old: str | None, new: str) -> list[str]:
    """The lines of an Edit's `new` text that are not its `old` text's (inserted or replaced, by
    difflib's line matching): the lines the edit put there. An Edit repeats the lines around its
    change in both strings to locate it; those were in the file already (a newcomer's break-it run
    found a human's line attributed to the Edit that merely quoted it)."""
    new_lines = _split(new)
    if not isinstance(old, str) or not old:
        return new_lines
    matcher = difflib.SequenceMatcher(a=_split(old), b=new_lines, autojunk=False)
    return [
        line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("insert", "replace") for line in new_lines[j1:j2]
    ]
