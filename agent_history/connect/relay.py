"""The hook's detached child: ``python -m agent_history.connect.relay AGENT LOG CMD...`` runs
``CMD`` (``agent-history index --file PATH``) with its stderr piped and appends each line to
``LOG`` (``<data dir>/hook.log``) as ``<UTC ISO timestamp> hook <agent>: <line>`` — the form of the
hook's own lines (`hook.log_line`), so every line of the log says when and for which agent.
Standard library only: it runs after every agent turn. Exits with the command's status."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime


def relay(agent: str, log_path: str, command: list[str]) -> int:
    """Run `command` (stdin and stdout closed), relaying its stderr lines to `log_path`; returns
    its exit status. A line that cannot be written is dropped (best effort, like the hook)."""
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
        if not text:
            continue
        try:
            with open(log_path, "a") as fh:
                fh.write(f"{datetime.now(UTC).isoformat(timespec='seconds')} hook {agent}: {text}\n")
        except OSError:
            pass
    return proc.wait()


if __name__ == "__main__":
    sys.exit(relay(sys.argv[1], sys.argv[2], sys.argv[3:]))
