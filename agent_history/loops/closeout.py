"""Closeout evidence and qualification (issue 12, "A closeout qualifies"; Progress).

Evidence is a complete, successful whole-file write captured in a transcript: Claude ``Write``
(``{"file_path", "content"}``), pi ``write`` (``{"path", "content"}``), Codex ``apply_patch``
with an ``*** Add File:`` hunk (the file's lines are the hunk's ``+`` lines). A partial edit
(``Edit``, ``edit``, an ``*** Update File:`` hunk), a failed or unanswered write, or the path
in shell text proves nothing. Only the content's SHA-256 and first line leave this module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson

from agent_history.loops import rules


@dataclass(frozen=True, slots=True)
class FileWrite:
    """A tool call's claim about one file: a whole `content` (None for a partial edit)."""

    path: str
    content: str | None

    @property
    def whole(self) -> bool:
        return self.content is not None


def _patch_files(patch: str) -> list[FileWrite]:
    """Files an apply_patch envelope writes: Add File hunks whole, Update/Delete as partial."""
    out: list[FileWrite] = []
    current: str | None = None
    lines: list[str] = []

    def close() -> None:
        if current is not None:
            # apply_patch writes each added line followed by a newline
            out.append(FileWrite(current, "".join(line + "\n" for line in lines)))

    for raw in patch.replace("\r\n", "\n").split("\n"):
        add = rules.PATCH_ADD_FILE.match(raw)
        other = rules.PATCH_OTHER_FILE.match(raw)
        if add or other or raw.strip() in (rules.PATCH_END, rules.PATCH_BEGIN):
            close()
            current, lines = None, []
            if add:
                current = add["path"]
            elif other:
                out.append(FileWrite(other["path"], None))
            continue
        if current is not None:
            if raw.startswith("+"):
                lines.append(raw[1:])
            elif raw:  # anything else inside an Add File hunk: not a well-formed envelope
                return [FileWrite(current, None)]
    close()
    return out


def file_writes(agent: str, tool: str | None, tool_input: str | None) -> list[FileWrite]:
    """The files tool call (`agent`, `tool`, `tool_input` as stored in ``tool_call.input``)
    writes, whole or partially; [] for any other tool or an unreadable input. Never raises."""
    if not tool or tool_input is None:
        return []
    keys = rules.WHOLE_WRITE_TOOLS.get(agent, {}).get(tool)
    if keys is not None:
        try:
            args = orjson.loads(tool_input)
        except orjson.JSONDecodeError:
            return []
        if isinstance(args, dict) and isinstance(args.get(keys[0]), str):
            content = args.get(keys[1])
            return [FileWrite(args[keys[0]], content if isinstance(content, str) else None)]
        return []
    if tool in rules.PATCH_TOOLS.get(agent, ()):
        patch = tool_input
        if tool_input.lstrip().startswith("{"):  # function_call form: {"input": "*** Begin Patch…"}
            try:
                args = orjson.loads(tool_input)
            except orjson.JSONDecodeError:
                return []
            patch = args.get("input") if isinstance(args, dict) else None
            if not isinstance(patch, str):
                return []
        return _patch_files(patch)
    if tool in rules.PARTIAL_EDIT_TOOLS.get(agent, ()):
        try:
            args = orjson.loads(tool_input)
        except orjson.JSONDecodeError:
            return []
        if isinstance(args, dict):
            path = args.get("file_path") or args.get("path") or args.get("notebook_path")
            if isinstance(path, str):
                return [FileWrite(path, None)]
    return []


def write_succeeded(outcome: str | None, is_error: bool | None) -> bool:
    """A write counts only with a captured, successful result: outcome ``ok`` and no error flag."""
    return outcome == "ok" and not is_error


def digest(content: str) -> str:
    """SHA-256 (hex) of `content` encoded as UTF-8."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def first_line(content: str) -> str:
    """Line 1 of `content`, without its line end (``\\n`` or ``\\r\\n``)."""
    return content.split("\n", 1)[0].removesuffix("\r")


def expected_first_line(repo: str, loop_number: int, charter_sha256: str) -> str:
    """The line 1 a qualified closeout must have (`rules.CLOSEOUT_FIRST_LINE`)."""
    return rules.CLOSEOUT_FIRST_LINE.format(repo=repo, n=loop_number, digest=charter_sha256)


def first_line_problem(line: str, repo: str | None, loop_number: int, charter_sha256: str | None) -> str | None:
    """Why `line` does not qualify the closeout of (repo, loop N, digest); None when it does."""
    if charter_sha256 is None:
        return "the launch names no charter digest"
    if repo is None:
        return "the root session's repository is unknown"
    if line == expected_first_line(repo, loop_number, charter_sha256):
        return None
    m = rules.CLOSEOUT_FIRST_LINE_SHAPE.match(line)
    if not m:
        return "line 1 is not '# Closeout: <repo> loop<N> · Charter: <digest>'"
    if m["digest"] != charter_sha256:
        return "wrong charter digest"
    if int(m["n"]) != loop_number:
        return f"wrong loop number (loop{m['n']}, launch says loop{loop_number})"
    if m["repo"] != repo:
        return f"wrong repository ({m['repo']}, root is {repo})"
    return "line 1 differs from the expected text"


def count_tasks(content: str) -> tuple[int | None, int | None]:
    """(landed, parked): distinct task ids opening a list entry under ``## Landed`` / ``## Parked``;
    None for a section the closeout does not have (unknown, not zero)."""
    sections: dict[str, set[str] | None] = {"landed": None, "parked": None}
    current: str | None = None
    for raw in content.replace("\r\n", "\n").split("\n"):
        if rules.LANDED_HEADING.match(raw):
            current = "landed"
            sections[current] = sections[current] or set()
            continue
        if rules.PARKED_HEADING.match(raw):
            current = "parked"
            sections[current] = sections[current] or set()
            continue
        if rules.SECTION_HEADING.match(raw):
            current = None
            continue
        if current is not None:
            m = rules.LIST_ENTRY_TASK.match(raw)
            if m:
                sections[current].add(m["task"].upper())  # type: ignore[union-attr]
    return tuple(None if s is None else len(s) for s in (sections["landed"], sections["parked"]))  # type: ignore[return-value]
