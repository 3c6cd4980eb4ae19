"""The hook's detached child: ``python -m agent_history.connect.relay AGENT LOG CMD...`` runs
``CMD`` (``agent-history index --file PATH``) with its stderr piped and appends each line to
``LOG`` (``<data dir>/hook.log``) as ``<UTC ISO timestamp> hook <agent>: <line>`` — the form of the
hook's own lines (`hook.log_line`), so every line of the log says when and for which agent.
Standard library only: it runs after every agent turn. Exits with the command's status.

A command that exits `BUSY_EXIT` (another pass holds the namespace: two agents' turns ending
together, or an ``index --every`` pass) did nothing and said so on stdout, which nobody reads:
that turn stayed out of the catalogue until the session's next turn — never, for its last one.
It is run again after each of `BUSY_RETRY_S`; still busy after them, one line in the log says
so (the turn waits for the session's next turn or the next ``index``)."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime

BUSY_EXIT = 75
"""`index`'s exit status when another pass holds the namespace: nothing was done (`cli.loop.BUSY_EXIT`)."""
BUSY_RETRY_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""Seconds waited before each new try of a busy command (≈ 1 min in all: an incremental pass of
another turn takes about a second; a cold bulk pass, minutes, is waited for by no hook)."""


def relay(agent: str, log_path: str, command: list[str], waits: tuple[float, ...] = BUSY_RETRY_S) -> int:
    """Run `command` (stdin and stdout closed), relaying its stderr lines to `log_path`, again
    after each of `waits` while it exits `BUSY_EXIT`; returns its last exit status. A line that
    cannot be written is dropped (best effort, like the hook)."""
    status = _run(agent, log_path, command)
    for wait in waits:
        if status != BUSY_EXIT:
            return status
        time.sleep(wait)
        status = _run(agent, log_path, command)
    if status == BUSY_EXIT:
        _log(agent, log_path, f"another index pass kept the namespace busy for {sum(waits):g} s: {command[-1]} "
             "not indexed now (the session's next turn or the next `index` indexes it)")  # fmt: skip
    return status


def _log(agent: str, log_path: str, text: str) -> None:
    try:
        with open(log_path, "a") as fh:
            fh.write(f"{datetime.now(UTC).isoformat(timespec='seconds')} hook {agent}: {text}\n")
    except OSError:
        pass


def _run(agent: str, log_path: str, command: list[str]) -> int:
    """`command` once, its stderr lines relayed to `log_path`; its exit status."""
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        text = " ".join(line.split())
        if text:
            _log(agent, log_path, text)
    return proc.wait()


if __name__ == "__main__":
    sys.exit(relay(sys.argv[1], sys.argv[2], sys.argv[3:]))
