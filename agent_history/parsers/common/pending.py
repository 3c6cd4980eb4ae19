"""Tool calls waiting for their result across JSONL records, for parsers whose call and result
are separate lines (Qwen Code, Kimi Code, Factory Droid). Pure; bounded; JSON-able.

A parser remembers, per unanswered call id, only what the result's rows need and the call's
record cannot give later: the tool name (touches, spawns) and whether its shell command runs a
git commit-making or push subcommand (so `gitout.git_event_rows` can trust digit-only shas and
header-less push lines) — never the command or any message text (`parsers.base`: bounded state).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from agent_history.parsers.common.coerce import as_list, as_nonempty_str

__all__ = ["MAX_PENDING", "PendingCalls", "git_flags", "git_hint"]

MAX_PENDING = 512
"""Unanswered calls remembered; the oldest is forgotten first."""

_GIT_COMMITTING = re.compile(r"\bgit\b[^|;&\n]*?\b(?:commit|cherry-pick|revert|rebase|merge|am|pull)\b")
_GIT_PUSH = re.compile(r"\bgit\b[^|;&\n]*?\bpush\b")


def git_flags(command: str | None) -> str:
    """``c`` when `command` runs a git commit-making subcommand, ``p`` when it pushes (both: ``cp``)."""
    text = command or ""
    return ("c" if _GIT_COMMITTING.search(text) else "") + ("p" if _GIT_PUSH.search(text) else "")


def git_hint(flags: str) -> str | None:
    """A stand-in command for `gitout.git_event_rows` from `git_flags` (None when neither)."""
    parts = (["git commit"] if "c" in flags else []) + (["git push"] if "p" in flags else [])
    return "; ".join(parts) or None


class PendingCalls:
    """Unanswered calls: id → (tool name, git flags), insertion-ordered, at most `MAX_PENDING`."""

    def __init__(self, saved: Any = None) -> None:
        self.calls: dict[str, tuple[str | None, str]] = {}
        for item in as_list(saved):
            if isinstance(item, list) and len(item) == 3 and isinstance(item[0], str):
                self.calls[item[0]] = (as_nonempty_str(item[1]), as_nonempty_str(item[2]) or "")

    def add(self, call_id: str, name: str | None, flags: str = "") -> None:
        """Remember a call (its name cut to 80 characters); the oldest beyond the cap is dropped."""
        self.calls.pop(call_id, None)
        self.calls[call_id] = (name[:80] if name else None, flags)
        while len(self.calls) > MAX_PENDING:
            del self.calls[next(iter(self.calls))]

    def pop(self, call_id: str) -> tuple[str | None, str]:
        """Forget an answered call → (tool name, git flags); (None, '') when unknown."""
        return self.calls.pop(call_id, (None, ""))

    def dump(self) -> list[list]:
        """State form ``[[id, name, flags], …]`` in insertion order."""
        return [[cid, name, flags] for cid, (name, flags) in self.calls.items()]


class SavedFields:
    """Mixin for a JSONL parser whose resumable state is a few JSON scalars plus `PendingCalls`.

    The class declares ``STATE_FIELDS`` (attribute names); `restore` sets each from the saved
    state (None when absent: a fresh file) and ``self.pending`` from its ``"pending"`` list, and
    `state` returns ``{field: value, …, "pending": [[id, name, flags], …]}`` — the shape the
    loader saves in ``ah.source_file.parser_state`` after every batch (docs/design.md §7).
    """

    STATE_FIELDS: ClassVar[tuple[str, ...]] = ()
    pending: PendingCalls

    def restore(self, state: dict | None) -> None:
        """Set the declared fields and the pending calls from `state` (None → all unset)."""
        st = state or {}
        for name in self.STATE_FIELDS:
            setattr(self, name, st.get(name))
        self.pending = PendingCalls(st.get("pending"))

    def state(self) -> dict:
        """``{field: value for each STATE_FIELDS} | {"pending": PendingCalls.dump()}``."""
        out = {name: getattr(self, name) for name in self.STATE_FIELDS}
        out["pending"] = self.pending.dump()
        return out
