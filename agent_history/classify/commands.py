"""Shell commands → trigger (`rules.COMMAND_RULES`), and the command a tool call ran.

Pure: no I/O. The SQL twin is ``ah.eff_command`` / ``ah.eff_command_text`` in
``sql/35_efficiency.sql``.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from agent_history.classify import rules

_REDIRECTION = re.compile(rules.REDIRECTION)
_SPLIT = re.compile(rules.SEGMENT_SPLIT)
_PREFIX = re.compile(rules.SEGMENT_PREFIX)
_SUFFIX = re.compile(rules.SEGMENT_SUFFIX)
_RULES = tuple((cls, re.compile(rx)) for cls, rx in rules.COMMAND_RULES)
_SPACES = re.compile(r"[ \t\r]+")


def parse_object(text: str | None) -> dict[str, Any] | None:
    """A tool call's stored input (JSON text) → its object; None when absent, not JSON or not an
    object (SQL: ``ah.eff_input``)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def command_text(args: dict[str, Any]) -> str | None:
    """The shell text of a shell tool's arguments: ``command`` (string, or an argv list whose
    ``["bash", "-lc", script]`` wrapper is unwrapped, else joined by spaces), else ``cmd``;
    None when neither is there."""
    command = args.get("command")
    if isinstance(command, str):
        return command
    if isinstance(command, list):
        argv = [a if isinstance(a, str) else json.dumps(a) for a in command]
        prog = argv[0].rsplit("/", 1)[-1] if argv else ""
        if len(argv) >= 3 and prog in rules.SHELL_PROGRAMS and argv[1] in rules.SHELL_FLAGS:
            return argv[2]
        return " ".join(argv)
    cmd = args.get("cmd")
    return cmd if isinstance(cmd, str) else None


def segment_class(segment: str) -> str:
    """One segment (no `&&`, `;` …) → neutral | wait | status | noop | work."""
    head = segment.split("|", 1)[0]
    head = _SPACES.sub(" ", head).strip(" ")
    head = _PREFIX.sub("", head, count=1).strip(" ")
    head = _SUFFIX.sub("", head, count=1)
    for cls, rx in _RULES:
        if rx.search(head):
            return cls
    return "work"


@functools.lru_cache(maxsize=4096)
def command_trigger(command: str | None) -> str:
    """A shell command line → work | wait | status | noop (rules in `rules.COMMAND_RULES`).

    An empty or missing command is ``noop``.
    """
    if command is None:
        return "noop"
    text = _REDIRECTION.sub(" ", command)
    seen = {segment_class(seg) for seg in _SPLIT.split(text)}
    for trigger in ("work", "wait", "status"):
        if trigger in seen:
            return trigger
    return "noop"
