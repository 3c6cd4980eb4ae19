"""MCP `task` (issue 30): a Backlog.md task as collected — status history, the commits carrying its
``Task:`` trailer with the sessions that made them (only sessions in the scope's namespaces), and
the loops that attribute it. Read through `read.tasks`."""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.mcp.scope import Scope
from agent_history.mcp.tools import ToolEnv, ToolFailure, ToolSpec
from agent_history.read.tasks import TaskNotFound, task_detail


def _in_scope(conn: psycopg.Connection, scope: Scope, uids: list[str]) -> list[str]:
    if scope.namespaces is None or not uids:
        return uids
    rows = conn.execute(
        "SELECT DISTINCT session_uid FROM ah.session WHERE session_uid = ANY (%s) AND namespace = ANY (%s)",
        (uids, list(scope.searched)),
    ).fetchall()
    keep = {r[0] for r in rows}
    return [u for u in uids if u in keep]


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

TOOLS = (TASK,)
