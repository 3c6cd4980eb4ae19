"""The loop rules as data (issue 12, "The rules"): every pattern the loop post-pass applies.

Each constant names the sentence of issue 12 it implements. Nothing here does I/O; the functions
in `launch`, `closeout`, `returns` and `status` apply these patterns to values.
"""

from __future__ import annotations

import re

LAUNCH_MARKER = "You are the root"
"""A launch prompt contains this phrase, case-sensitive (issue 12, Launch)."""

LAUNCH_CLASSES: tuple[str, ...] = ("human_prompt", "queued_prompt")
"""Message classes that can launch a loop: "a human or queued prompt" (issue 12, Launch)."""

CLOSEOUT_PATH = re.compile(
    r"(?<![\w./~-])(?P<path>(?:[\w.~-]+/|/)*codex/closeout-(?P<date>\d{4}-\d{2}-\d{2})-loop(?P<n>\d+)\.md)(?![\w/-]|\.[\w/])"
)
"""A closeout path: ``codex/closeout-<YYYY-MM-DD>-loop<N>.md`` with any directory prefix
(issue 12, Launch). Delimited so ``xcodex/…`` or ``…loop3.md.bak`` do not match; a sentence's
final period after the path is not part of it."""

MD_PATH = re.compile(r"(?<![\w./~-])(?P<path>(?:[\w.~-]+/|/)*[\w.~-]+\.md)(?![\w/-]|\.[\w/])")
"""Any ``.md`` path; the charter is the one in the closeout's directory that is not the
closeout (issue 12, Launch: "another `.md` path in the same directory as the closeout")."""

SHA256_HEX = re.compile(r"(?<![0-9A-Fa-f])(?P<digest>[0-9a-f]{64})(?![0-9A-Fa-f])")
"""The charter's SHA-256: 64 lower-case hex digits (issue 12, Launch; `sha256sum` prints lower case)."""

CLOSEOUT_FIRST_LINE = "# Closeout: {repo} loop{n} · Charter: {digest}"
"""Line 1 of a qualified closeout, exactly (issue 12, "A closeout qualifies")."""

CLOSEOUT_FIRST_LINE_SHAPE = re.compile(r"^# Closeout: (?P<repo>\S+) loop(?P<n>\d+) · Charter: (?P<digest>\S+)$")
"""The same line with its three fields captured, to say which one disagrees."""

WAITING_LINE = re.compile(r"^WAITING: (?P<what>.+?) until (?P<until>\S.*?)\s*$")
"""The root's last assistant line when it waits (issue 12, Status: ``WAITING: <what> until <UTC time>``)."""

UTC_TIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<hm>\d{2}:\d{2})(?::(?P<s>\d{2}))?(?:\.\d+)?\s*(?:Z|UTC|\+00:?00)?$"
)
"""The `<UTC time>` of a WAITING line: ISO 8601 date and time, optionally marked ``Z``/``UTC``/
``+00:00`` (a time in another zone is not UTC and does not parse, so the loop is not waiting)."""

PAUSED_LINE = re.compile(r"^PAUSED: (?P<reason>.+?)\s*$")
"""The root's last assistant line when it paused (issue 12, Status: ``PAUSED: <reason>``)."""

STALE_AFTER_HOURS = 24
"""No root activity for this long makes a non-finished loop stale (issue 12, Status)."""

STATUSES: tuple[str, ...] = ("finished", "waiting", "paused", "running", "stale")
"""The five statuses (issue 12, Status); only `finished` is terminal."""
TERMINAL: frozenset[str] = frozenset({"finished"})

LANDED_HEADING = re.compile(r"^##\s+Landed\s*$", re.IGNORECASE)
PARKED_HEADING = re.compile(r"^##\s+Parked\s*$", re.IGNORECASE)
"""The closeout's two task sections (issue 12, Progress: "under its `## Landed` / `## Parked` headings")."""
SECTION_HEADING = re.compile(r"^#{1,2}\s")
"""A section ends at the next heading of level 1 or 2."""

LIST_ENTRY_TASK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?[*_`]*(?P<task>task-\d+)\b", re.IGNORECASE)
"""A list entry opened by a task id (``- task-123 …``, ``1. **TASK-7** …``, ``- [x] task-3``):
issue 12, Progress. Ids compare case-insensitively, so ``task-12`` and ``TASK-12`` are one task."""

LANE_RETURN_BLOCK = re.compile(r"^[ \t]*```lane-return[ \t]*\r?\n(?P<body>.*?)^[ \t]*```[ \t]*\r?$", re.S | re.M)
"""A fenced ```` ```lane-return ```` block (issue 12, Lanes); CRLF line ends are accepted."""

LANE_RETURN_STATUSES: frozenset[str] = frozenset({"complete", "partial", "blocked", "failed"})
"""The `status` values a lane return may carry (issue 12, Lanes); any other value is kept in
`returns` but not stored as the lane's status."""

WHOLE_WRITE_TOOLS: dict[str, dict[str, tuple[str, str]]] = {
    # Claude Code `Write` input: {"file_path", "content"} (corpus: .claude/projects/*/9e953218….jsonl)
    "claude": {"Write": ("file_path", "content")},
    # pi `write` arguments: {"path", "content"} (corpus: .pi/agent/sessions/--Users-user2-…/2025-12-24….jsonl)
    "pi": {"write": ("path", "content")},
}
"""Tools whose input is a whole file's content, per agent: tool name → (path key, content key)."""

PATCH_TOOLS: dict[str, frozenset[str]] = {
    # Codex `apply_patch` custom tool / function call: the patch envelope is the input
    # (corpus: samples/codex/…rollout-2026-01-02T03-04-05-1111….jsonl, `*** Add File: gamma.txt`)
    "codex": frozenset({"apply_patch"}),
}
"""Tools whose input is a patch envelope; only an ``*** Add File:`` hunk is a whole-file write."""

PARTIAL_EDIT_TOOLS: dict[str, frozenset[str]] = {
    "claude": frozenset({"Edit", "MultiEdit", "NotebookEdit"}),
    "pi": frozenset({"edit"}),
    "codex": frozenset({"apply_patch"}),  # an `*** Update File:` hunk
}
"""Tools that change part of a file: evidence of nothing (issue 12: "a partial edit … proves nothing")."""

PATCH_ADD_FILE = re.compile(r"^\*\*\* Add File: (?P<path>.+?)\s*$")
PATCH_OTHER_FILE = re.compile(r"^\*\*\* (?:Update|Delete) File: (?P<path>.+?)\s*$")
PATCH_END = "*** End Patch"
PATCH_BEGIN = "*** Begin Patch"
"""Codex apply_patch envelope markers (as read by `parsers.shell`: between `*** Begin Patch` and `*** End Patch`)."""

SHELL_TOOLS: dict[str, frozenset[str]] = {
    "claude": frozenset({"Bash"}),
    "codex": frozenset({"shell", "exec_command", "local_shell", "exec", "shell_command"}),
    "pi": frozenset({"bash"}),
}
"""Shell tools, per agent (corpus tool names), for the Codex-lane heuristic."""

CODEX_COMMAND = re.compile(r"(?:^|[\s;&|(`])(?:\S*/)?codex(?:\s+(?P<args>[^;&|\n]*))?(?=$|[;&|\n)])")
"""A `codex` command in a shell script (issue 12, Lanes: "a `codex` command the root ran")."""
CODEX_CD_FLAG = re.compile(r"(?:^|\s)(?:-C|--cd)(?:\s+|=)(?P<dir>\"[^\"]+\"|'[^']+'|\S+)")
"""``codex -C DIR`` / ``--cd DIR``: the working tree the exec session runs in."""
SHELL_CD = re.compile(r"(?:^|[;&|]\s*)cd\s+(?P<dir>\"[^\"]+\"|'[^']+'|[^\s;&|]+)\s*&&")
"""``cd DIR && codex …``: the same, set by the script."""

REMOTE_OWNER_NAME = re.compile(r"[:/](?P<owner>[^/:]+)/(?P<name>[^/:]+?)(?:\.git)?/?$")
"""``owner/name`` from a remote URL (``git@github.com:owner/name.git``, ``https://host/owner/name``):
the loop's repo when the remote is known (issue 12, "A closeout qualifies")."""
