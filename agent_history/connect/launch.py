"""What the agent should run to start our MCP server: an absolute executable path plus ``mcp``.

Resolution (first that exists): the running ``agent-history`` script (``sys.argv[0]``), the
``agent-history`` next to this Python (a venv's ``bin/``), ``agent-history`` on ``PATH``; else
this Python with ``-m agent_history mcp``. Agents start servers with a reduced environment, so
the variables that locate the catalogue are passed explicitly when set (``AGENT_HISTORY_CONFIG``,
``AGENT_HISTORY_DATA_DIR``, ``AGENT_HISTORY_READER_DSN``, ``AGENT_HISTORY_DSN``) — except a DSN
holding a password, which is left out with a warning (secrets belong in the agent-history config
file, not in every agent's config).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from agent_history.connect.targets import Launch

EXECUTABLE = "agent-history"
PASSED_ENV = ("AGENT_HISTORY_CONFIG", "AGENT_HISTORY_DATA_DIR", "AGENT_HISTORY_READER_DSN", "AGENT_HISTORY_DSN")
_PASSWORD = re.compile(r"(://[^/@:]+:[^@]+@)|(\bpassword\s*=)", re.IGNORECASE)


def _executable() -> str | None:
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    candidates = []
    if argv0 is not None and argv0.name == EXECUTABLE:
        candidates.append(argv0)
    candidates.append(Path(sys.executable).parent / EXECUTABLE)
    found = shutil.which(EXECUTABLE)
    if found:
        candidates.append(Path(found))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.absolute())
    return None


def server_launch(environ: dict[str, str] | None = None) -> tuple[Launch, list[str]]:
    """The `Launch` for this installation and warnings (one line each)."""
    environ = dict(os.environ if environ is None else environ)
    warnings: list[str] = []
    env: dict[str, str] = {}
    for name in PASSED_ENV:
        value = environ.get(name)
        if not value:
            continue
        if name.endswith("_DSN") and _PASSWORD.search(value):
            warnings.append(
                f"{name} holds a password and is not written into the agent's config; "
                "put the reader DSN and password in the agent-history config file instead"
            )
            continue
        env[name] = value
    exe = _executable()
    if exe:
        return Launch(exe, ("mcp",), env), warnings
    warnings.append(f"no `{EXECUTABLE}` executable found; the entry runs {sys.executable} -m agent_history mcp")
    return Launch(sys.executable, ("-m", "agent_history", "mcp"), env), warnings
