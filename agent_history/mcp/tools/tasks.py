"""MCP `task` and `blame` (issue 30), the repository tools.

- `task`: a Backlog.md task as collected — status history, the commits carrying its ``Task:``
  trailer with the sessions that made them (only sessions in the scope's namespaces), and the loops
  that attribute it. Read through `read.tasks`.
- `blame`: each line of a work-tree file (on the server's machine) with its commit, the session
  and event that made it and the last prompt before it (`read.blame`); an origin in a session
  outside the scope's namespaces is left out and counted in ``origins_outside_scope``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import ToolEnv, ToolFailure, ToolSpec
from agent_history.read.blame import BlameError, blame
from agent_history.read.sessions import uids_in_namespaces
from agent_history.read.tasks import TaskNotFound, task_detail


def _in_scope(conn: psycopg.Connection, scope: Scope, uids: list[str]) -> list[str]:
    if scope.namespaces is None:
        return uids
    return uids_in_namespaces(conn, uids, list(scope.searched))


def task_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`task` tool: ``{"tasks": [task detail, one per repository holding the id]}``."""
    try:
        details = task_detail(conn, args["id"], repo=args.get("repo"))
    except TaskNotFound as exc:
        raise ToolFailure(str(exc)) from exc
    out = []
    for d in details:
        for c in d.commits:
            c.sessions = _in_scope(conn, scope, c.sessions)
        out.append(d.as_dict())
    return {"tasks": out}


TASK = ToolSpec(
    name="task",
    title="Backlog task",
    description=(
        "A Backlog.md task read from a repository by `agent-history collect`: title, status, labels, "
        "assignee, dependencies, every status change with its commit and time, the commits whose `Task:` "
        "trailer names it (whether they reached the default branch, and the sessions that made them), and the "
        "loops that landed it."
    ),
    properties={
        "id": {"type": "string", "description": "Backlog.md task id, e.g. task-12 (case-insensitive)."},
        "repo": {"type": "string", "description": "Only this repository (its directory name)."},
    },
    handler=task_handler,
    required=("id",),
)


def blame_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`blame` tool: ``{"path", "repository", "lines": [{line, text, sha, subject, committed_at,
    authored_by_me, origin}], "origins_outside_scope"}`` (`read.blame.Blame.as_dict`)."""
    first = args.get("line")
    last = args.get("last_line", first) if first is not None else None
    try:
        result = blame(conn, Path(args["path"]), first, last).as_dict()
    except BlameError as exc:
        raise ToolFailure(str(exc)) from exc
    hidden = 0
    for line in result["lines"]:
        o = line["origin"]
        if o and scope.namespaces is not None and o["session"].get("namespace") not in scope.searched:
            line["origin"], hidden = None, hidden + 1
    result["origins_outside_scope"] = hidden
    return result


BLAME = ToolSpec(
    name="blame",
    title="Who made these lines",
    description=(
        "For each line of a file in a git work tree on this machine: the commit (git blame), the session and "
        "event that made it (the git commit event; for uncommitted lines, or a commit no session printed, the "
        "Edit/Write/apply_patch call whose content put the line there) and the last human prompt before it. Give an absolute path; "
        "`line` (and `last_line`) narrow it."
    ),
    properties={
        "path": {"type": "string", "minLength": 1, "description": "Absolute path of the file."},
        "line": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
        "last_line": {"type": "integer", "minimum": 1, "description": "Last line (default: `line`)."},
    },
    handler=blame_handler,
    required=("path",),
)

TOOLS = (TASK, BLAME)
