"""`resume UID`: the harness's own command resuming (or forking) a catalogued session.

The command comes from the session's harness row (`harnesses.resume`), filled in with the root
session's uid (a sub-agent thread resumes its root) and, where the harness resumes by file, its
transcript path. It is run in the session's working directory; whether that directory still
exists is part of the answer. Raises `SessionNotFound` / `AmbiguousSession` for the uid.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import psycopg

from agent_history.harnesses import BY_NAME
from agent_history.harnesses.resume import resume_argv, shell_line, template
from agent_history.session.refs import resolve_session


@dataclass(frozen=True, slots=True)
class Resume:
    """How to resume one session: ``argv``/``command`` None when there is none (``why`` says
    why); ``cwd_exists`` None when the working directory is unknown."""

    agent: str
    product: str
    session_uid: str
    fork: bool
    cwd: str | None
    cwd_exists: bool | None
    argv: list[str] | None
    command: str | None
    why: str | None

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)


def resume_of(agent: str, uid: str, cwd: str | None, path: str | None, *, fork: bool = False) -> Resume:
    """The `Resume` of root session `uid` of harness `agent` (working directory `cwd`, transcript
    `path`) — no database: the MCP and web pages call it with what they already read."""
    row = BY_NAME.get(agent)
    product = row.product if row else agent
    argv = resume_argv(agent, uid, path, fork=fork)
    why = None
    if argv is None:
        if template(agent, fork=fork) is None:
            why = f"{product} has no {'fork' if fork else 'resume'} command"
        else:
            why = f"{product} resumes by transcript file, and this session's file is not known"
    elif path and "{path}" in (template(agent, fork=fork) or "") and not os.path.isfile(path):
        why = f"the transcript {path} no longer exists (it is kept in the catalogue and archive only)"
    exists = None if not cwd else os.path.isdir(cwd)
    return Resume(agent, product, uid, fork, cwd, exists, argv, shell_line(argv) if argv else None, why)


def resume_dict(agent: str, uid: str, cwd: str | None, path: str | None) -> dict:
    """What the MCP tools and the web page show of a root session's resume: ``session_uid``,
    ``agent``, ``cwd``, ``cwd_exists``, ``command`` and ``fork_command`` (each only when the
    harness has one), ``why`` when there is no resume command."""
    r, f = resume_of(agent, uid, cwd, path), resume_of(agent, uid, cwd, path, fork=True)
    out: dict = {"session_uid": uid, "agent": agent, "cwd": cwd, "cwd_exists": r.cwd_exists}
    if r.command:
        out["command"] = r.command
    if f.command:
        out["fork_command"] = f.command
    if r.why:
        out["why"] = r.why
    return out


def resume_of_ref(conn: psycopg.Connection, ref) -> dict:
    """`resume_dict` of the session `ref` (a `session.refs.SessionRef`) names — of its root when
    `ref` is a sub-agent thread with a root of another uid (the root is what the agent resumes)."""
    if ref.is_subagent and ref.root_session_uid and ref.root_session_uid != ref.session_uid:
        ref = resolve_session(conn, ref.root_session_uid, "")
    return resume_dict(ref.agent, ref.session_uid, ref.cwd, ref.source_path)


def resume_session(conn: psycopg.Connection, uid: str, *, fork: bool = False) -> Resume:
    """The `Resume` of the session named by `uid` (exact or unique prefix; a sub-agent thread's uid
    resumes its root). Raises SessionNotFound / AmbiguousSession."""
    ref = resolve_session(conn, uid)
    if ref.is_subagent and ref.root_session_uid and ref.root_session_uid != ref.session_uid:
        ref = resolve_session(conn, ref.root_session_uid, "")
    return resume_of(ref.agent, ref.session_uid, ref.cwd, ref.source_path, fork=fork)
