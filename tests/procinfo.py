"""What a test's child process is doing, read from /proc (Linux): for waiting until it blocks
where the test expects it, and for saying why it did not end when a signal was sent."""

from __future__ import annotations

import platform
from pathlib import Path

READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())
"""read(2)'s number on this machine (None: unknown here — `reading_stdin` then says True at once)."""


def reading_stdin(pid: int) -> bool:
    """True when process `pid`'s main thread is blocked in read(2) on fd 0 (/proc/PID/syscall:
    the syscall's number, first argument 0x0); False otherwise or when unreadable."""
    if READ_SYSCALL is None:
        return True
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(fields) > 1 and fields[0] == READ_SYSCALL and fields[1] == "0x0"


def signal_state(pid: int) -> str:
    """One line for an assertion message: the state, the kernel function it waits in and the
    signal masks (SigPnd/ShdPnd pending, SigBlk blocked, SigIgn ignored, SigCgt caught) of `pid`."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError as exc:
        return f"pid {pid}: {exc}"
    keep = ("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "Threads")
    return f"pid {pid}: " + ", ".join(line for line in status if line.split(":")[0] in keep) + f", wchan {wchan}"
