"""Is process N still the process that wrote a file? A pid alone does not say: a server killed
with SIGKILL leaves its files behind, and its pid may stay a zombie (no parent reaps it in a
container without an init) or be given to another process later.

A file that names a process records its pid and its **start time** (`start_ticks`: field 22 of
``/proc/<pid>/stat``, clock ticks after boot — fixed for a process's life, different for the next
process given the pid); `is_same_process` then checks the pid is alive, not a zombie and started
at that time. Without ``/proc`` (macOS) only the pid's liveness can be checked.
"""

from __future__ import annotations

import os

STARTTIME_FIELD = 22
"""``starttime`` in proc(5)'s ``/proc/<pid>/stat`` (1-based); ``state`` is field 3."""


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` from ``state`` (field 3) on — the command name before
    them may hold spaces and parentheses, so the text is split after its last ``)`` — or None
    when unreadable (no such process, no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return None


def start_ticks(pid: int) -> int | None:
    """Process `pid`'s start time in clock ticks after boot, or None when it cannot be read."""
    fields = _stat_fields(pid)
    try:
        return int(fields[STARTTIME_FIELD - 3]) if fields else None
    except (IndexError, ValueError):
        return None


def is_same_process(pid: int, started: int | None) -> bool:
    """True when process `pid` exists, is not a zombie and — when `started` (its `start_ticks`
    as recorded) and ``/proc`` are known — started at that time: the process that wrote the
    record, not a later one given the same pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    fields = _stat_fields(pid)
    if fields is None:
        return True  # no /proc (macOS), or it just went: signal 0 answered
    if fields[0] in (b"Z", b"X"):
        return False  # killed, not yet reaped
    return started is None or start_ticks(pid) == started
