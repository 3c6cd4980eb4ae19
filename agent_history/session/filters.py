"""The filters of a session listing: agents, namespaces, a time range and a project directory.

`session_filter` gives SQL conditions shared by the session listings (`read.sessions`,
`read.efficiency`, the web pages); `like_prefix` escapes a LIKE prefix; `empty_namespaces`
names the namespaces of a scope that have nothing in the catalogue.
"""

from __future__ import annotations

from datetime import datetime

import psycopg
from psycopg import sql


def like_prefix(prefix: str) -> str:
    """A LIKE pattern matching strings that start with `prefix` (metacharacters escaped)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def project_part(project: str) -> str:
    """The ILIKE pattern of a ``project`` given as text a working directory contains (``usage``,
    ``efficiency``, ``loops``): ``%<project>%`` with metacharacters escaped and trailing slashes
    dropped — a tab-completed ``~/src/app/`` matches the cwd ``~/src/app`` as ``sessions
    --project`` does (``/`` stays ``/``)."""
    return "%" + like_prefix(project.rstrip("/") or "/")


def empty_namespaces(conn: psycopg.Connection, namespaces: list[str] | tuple[str, ...]) -> list[str]:
    """Those of `namespaces` (in their order) with no indexed source file in the catalogue — a
    misspelt or never-indexed namespace in a context, which would otherwise just find nothing."""
    if not namespaces:
        return []
    present = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT namespace FROM ah.source_file WHERE namespace = ANY(%s)", (list(namespaces),)
        ).fetchall()
    }
    return [n for n in dict.fromkeys(namespaces) if n not in present]


def session_filter(
    *,
    agents: tuple[str, ...] | list[str] = (),
    namespaces: tuple[str, ...] | list[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    project: str | None = None,
    alias: str = "s",
    time: str | None = None,
    hosts: tuple[str, ...] | list[str] = (),
) -> tuple[list[sql.Composable], dict]:
    """The filter conditions shared by the session listings (`read.sessions`, `read.efficiency`,
    the web pages): ``(conditions, params)`` to AND into a WHERE over a row `alias` with ``agent``,
    ``namespace`` and ``cwd`` columns. `since` is inclusive, `until` exclusive, both on the SQL
    expression `time` (default: the session's start, else its end); `project` is a cwd and
    everything below it; `hosts` the machines that indexed the session (``origin_host``).
    Parameter names: agents, namespaces, since, until, project, project_like, hosts."""
    time = time or f"coalesce({alias}.started_at, {alias}.ended_at)"
    conds: list[sql.Composable] = []
    params: dict = {}
    if agents:
        conds.append(sql.SQL(f"{alias}.agent = ANY(%(agents)s)"))
        params["agents"] = list(agents)
    if namespaces:
        conds.append(sql.SQL(f"{alias}.namespace = ANY(%(namespaces)s)"))
        params["namespaces"] = list(namespaces)
    if hosts:
        conds.append(sql.SQL(f"{alias}.origin_host = ANY(%(hosts)s)"))
        params["hosts"] = list(hosts)
    if since is not None:
        conds.append(sql.SQL(f"{time} >= %(since)s"))
        params["since"] = since
    if until is not None:
        conds.append(sql.SQL(f"{time} < %(until)s"))
        params["until"] = until
    if project:
        conds.append(sql.SQL(f"({alias}.cwd = %(project)s OR {alias}.cwd LIKE %(project_like)s)"))
        params["project"] = project.rstrip("/") or "/"
        params["project_like"] = like_prefix(project.rstrip("/") + "/")
    return conds, params
