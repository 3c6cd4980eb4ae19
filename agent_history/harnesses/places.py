"""Resolve a `Place` to a path on this machine (pure: the environment, the user's home and the
OS are arguments, so a directory laid out like ``~`` resolves as laid out).

Alternatives are tried in order; the first whose ``${VARIABLES}`` are all set and non-empty in
`env` wins (a variable's value is expanded with ``~`` like a path); ``~`` at the start is `home`.
The last alternative of every place has no variable, so resolution never fails.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from agent_history.harnesses.spec import Place, vscode_family

_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


def resolve(
    place: Place, *, home: Path | None = None, env: Mapping[str, str] | None = None, platform: str | None = None
) -> Path:
    """The path `place` names: `home` defaults to ``Path.home()``, `env` to ``os.environ``,
    `platform` to ``sys.platform``. Raises ValueError only for a place whose every alternative
    needs an unset variable (a bad row; the registry test rules it out)."""
    home = Path.home() if home is None else home
    env = os.environ if env is None else env
    for alt in place.for_platform(platform or sys.platform):
        names = _VAR.findall(alt)
        if any(not env.get(n) for n in names):
            continue
        text = _VAR.sub(lambda m: str(Path(env[m.group(1)]).expanduser()), alt)
        if text == "~" or text.startswith("~/"):
            return home / text[2:] if len(text) > 1 else home
        return Path(text)
    raise ValueError(f"no alternative of {place} can be resolved")


def describe(place: Place, platform: str | None = None) -> str:
    """The alternatives for `platform` as a person reads them: ``$CODEX_HOME or ~/.codex``."""
    alts = place.for_platform(platform or sys.platform)
    return " or ".join(_VAR.sub(lambda m: "$" + m.group(1), a) for a in alts)


def vscode_user_dir(home: Path | None = None, env: Mapping[str, str] | None = None, app: str = "Code") -> Path:
    """VS Code's user directory for this OS under `home` (default ``~``): Linux
    ``$XDG_CONFIG_HOME/Code/User`` (default ``~/.config/Code/User``), macOS
    ``~/Library/Application Support/Code/User``, Windows ``%APPDATA%/Code/User``. `env` defaults
    to the process environment (pass ``{}`` for a home copy laid out like ``~``); `app` is the
    product directory (``Cursor`` for Cursor, a VS Code fork with the same layout)."""
    return resolve(vscode_family(app), home=home, env=env)
