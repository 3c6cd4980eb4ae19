"""A test's child process on a pseudo-terminal (`read_until_closed`, `cli_on_pty`), and what it
is doing, read from /proc (Linux): for waiting until it blocks where the test expects it, and for
saying why it did not end when a signal was sent."""

from __future__ import annotations

import fcntl
import os
import platform
import struct
import subprocess
import sys
import termios
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


def read_until_closed(leader: int) -> bytes:
    """Every byte the leader side `leader` of a pty receives until every process holding its
    follower side has closed it (Linux: EIO; elsewhere an empty read). The caller closes its own
    copy of the follower first, and `leader` afterwards."""
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the follower side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def cli_on_pty(args: tuple[str, ...], env: dict, *, columns: int, timeout: float = 120) -> tuple[int, bytes]:
    """Run ``agent-history ARGS`` with stdin from /dev/null and stdout and stderr on a new pty of
    40 rows × `columns` columns; (exit code, every byte the terminal received). Raises
    subprocess.TimeoutExpired when it has not exited `timeout` seconds after closing the terminal."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "agent_history", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower)  # fmt: skip
    os.close(follower)
    out = read_until_closed(leader)
    os.close(leader)
    return proc.wait(timeout=timeout), out
