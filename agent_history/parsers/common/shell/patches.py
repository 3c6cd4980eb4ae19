"""Files a patch creates, edits, deletes or moves (`touches_from_patch`): Codex apply_patch
envelopes and unified diffs, git or plain (rules in the package docstring). Pure; never raises."""

from __future__ import annotations

import re

from agent_history.parsers.common.shell.touch import Touch

_BEGIN = re.compile(r"^(?:.*\s)?\*\*\* Begin Patch\s*$")
_BEGIN_TEXT = "*** Begin Patch"
"""The literal every `_BEGIN` line holds: a line without it is not tried (the pattern's ``.*\\s``
backtracks over the whole line)."""
_ENVELOPE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git (\"?a/.+?\"?) (\"?b/.+?\"?)\s*$")


def _envelope(lines: list[str], out: list[Touch]) -> None:
    inside = False
    pending_update: str | None = None
    for line in lines:
        if _BEGIN_TEXT in line and _BEGIN.match(line):
            inside = True
            continue
        if line.startswith("*** End Patch"):
            inside = False
            continue
        if not inside:
            continue
        m = _ENVELOPE.match(line)
        if m is None:
            continue
        kind, path = m.group(1), m.group(2)
        if kind == "Move to" and pending_update is not None:
            if ("edit", pending_update) in out:
                out.remove(("edit", pending_update))
            _put(out, "move", pending_update)
            _put(out, "create", path)
            pending_update = None
            continue
        pending_update = path if kind == "Update File" else None
        _put(out, {"Add File": "create", "Update File": "edit", "Delete File": "delete"}.get(kind, "edit"), path)


def _put(out: list[Touch], op: str, path: str) -> None:
    if path and (op, path) not in out:
        out.append((op, path))


def _diff_path(raw: str) -> str:
    p = raw.split("\t", 1)[0].rstrip()
    if len(p) >= 2 and p[0] == p[-1] == '"':
        p = p[1:-1]
    return p


def _strip_ab(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    def has(p: str | None, prefix: str) -> bool:
        return p is None or p == "/dev/null" or p.startswith(prefix)

    if has(old, "a/") and has(new, "b/") and (old not in (None, "/dev/null") or new not in (None, "/dev/null")):
        old = old[2:] if old and old.startswith("a/") else old
        new = new[2:] if new and new.startswith("b/") else new
    return old, new


def _emit_file(out: list[Touch], old: str | None, new: str | None, created: bool, deleted: bool) -> None:
    old, new = _strip_ab(old, new)
    if created or old == "/dev/null":
        if new and new != "/dev/null":
            _put(out, "create", new)
    elif deleted or new == "/dev/null":
        if old and old != "/dev/null":
            _put(out, "delete", old)
    elif old and new and old != new:
        _put(out, "move", old)
        _put(out, "create", new)
    elif new or old:
        _put(out, "edit", new or old or "")


def _unified(lines: list[str], out: list[Touch]) -> None:
    old: str | None = None
    new: str | None = None
    created = deleted = in_file = seen_plus = False
    remaining_old = remaining_new = 0

    def flush() -> None:
        nonlocal old, new, created, deleted, in_file, seen_plus
        if in_file:
            _emit_file(out, old, new, created, deleted)
        old = new = None
        created = deleted = in_file = seen_plus = False

    for line in lines:
        if remaining_old > 0 or remaining_new > 0:  # inside a hunk body
            tag = line[:1]
            if tag == "\\":
                continue
            if tag in (" ", ""):
                remaining_old, remaining_new = remaining_old - 1, remaining_new - 1
                continue
            if tag == "-":
                remaining_old -= 1
                continue
            if tag == "+":
                remaining_new -= 1
                continue
            remaining_old = remaining_new = 0  # malformed hunk: fall through to headers
        g = _GIT_HEADER.match(line)
        if g is not None:
            flush()
            in_file = True
            old, new = _diff_path(g.group(1)), _diff_path(g.group(2))
            continue
        if line.startswith("--- "):
            if in_file and seen_plus:  # a plain diff's next file
                flush()
            in_file = True
            old = _diff_path(line[4:])
            continue
        if line.startswith("+++ ") and in_file:
            new = _diff_path(line[4:])
            seen_plus = True
            continue
        if line.startswith("new file mode"):
            created = True
        elif line.startswith("deleted file mode"):
            deleted = True
        elif line.startswith("rename from "):
            old = line[len("rename from ") :].strip()
        elif line.startswith("rename to "):
            new = line[len("rename to ") :].strip()
        else:
            h = _HUNK.match(line)
            if h is not None:
                remaining_old = int(h.group(1)) if h.group(1) is not None else 1
                remaining_new = int(h.group(2)) if h.group(2) is not None else 1
    flush()


def touches_from_patch(patch: str) -> list[Touch]:
    """Files a patch creates, edits, deletes or moves → ``[(op, path)]`` (module docstring).

    Accepts a Codex apply_patch envelope or a unified diff (git or plain). Returns ``[]`` for
    non-str input; never raises.
    """
    if not isinstance(patch, str):
        return []
    out: list[Touch] = []
    try:
        lines = patch.replace("\r\n", "\n").split("\n")
        if _BEGIN_TEXT in patch and any(_BEGIN_TEXT in line and _BEGIN.match(line) for line in lines):
            _envelope(lines, out)
        else:
            _unified(lines, out)
    except Exception:  # noqa: BLE001 — contract: never raise on odd input
        pass
    return out
