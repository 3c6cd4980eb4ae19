"""A harness's own command to resume or fork a session, from its registry row (pure).

A row's ``resume`` / ``fork`` template names ``{uid}`` (the session uid) and/or ``{path}`` (its
transcript file). `resume_argv` fills it in word by word (a value with spaces stays one argument)
and `shell_line` quotes it for a person to paste. Rows without a template have no such command.
"""

from __future__ import annotations

import shlex

from agent_history.harnesses import BY_NAME


def template(agent: str, *, fork: bool = False) -> str | None:
    """The resume (or fork) template of harness `agent`, or None when it has none."""
    row = BY_NAME.get(agent)
    if row is None:
        return None
    return row.fork if fork else row.resume


def resume_argv(agent: str, uid: str, path: str | None, *, fork: bool = False) -> list[str] | None:
    """The argv resuming (forking) session `uid` of `agent`, or None when the harness has no such
    command or its template needs the transcript `path` and there is none."""
    tpl = template(agent, fork=fork)
    if tpl is None or ("{path}" in tpl and not path):
        return None
    return [word.format(uid=uid, path=path or "") for word in shlex.split(tpl)]


def shell_line(argv: list[str]) -> str:
    """`argv` as one shell command line (each word quoted when it needs to be)."""
    return shlex.join(argv)
