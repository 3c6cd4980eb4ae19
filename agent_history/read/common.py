"""Shared pieces of the read API: a session reference and session-uid resolution.

Every read function takes an open connection (owner or the read-only ``ah_reader``) and returns
plain dataclasses; ``as_dict()`` gives JSON-ready dicts for the CLI's ``--json`` and the MCP
server. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

import psycopg
from psycopg import sql

MIN_UID_PREFIX = 6
"""A session may be named by a unique prefix of its uid of at least this many characters
(`session`, `search --session`, the MCP tools): long enough to be unique in practice, short
enough to type."""


class SessionNotFound(LookupError):
    """No session matches the given uid (or prefix)."""


class AmbiguousSession(LookupError):
    """A uid prefix matches more than one session; `candidates` lists some of them."""

    def __init__(self, message: str, candidates: list[str]):
        super().__init__(message)
        self.candidates = candidates


@dataclass(frozen=True, slots=True)
class SessionRef:
    """Enough of a session to name it: natural key, where it ran, what it is called."""

    id: int
    agent: str
    session_uid: str
    agent_id: str
    namespace: str | None
    title: str | None
    cwd: str | None
    is_subagent: bool
    root_session_uid: str | None
    source_path: str | None

    def as_dict(self) -> dict:
        """JSON-ready form (the surrogate id is left out: it changes on rebuild)."""
        d = asdict(self)
        del d["id"]
        return d


SESSION_REF_COLUMNS = (
    "s.id, s.agent, s.session_uid, s.agent_id, s.namespace, coalesce(s.title, r.title), s.cwd, "
    "(s.agent_id <> '' OR coalesce(s.is_subagent, false)), r.session_uid, sf.path"
)
"""Columns for `SessionRef` given aliases ``s`` (session), ``r`` (root), ``sf`` (source file)."""
SESSION_REF_JOINS = (
    "LEFT JOIN ah.session AS r ON r.id = s.root_session_id LEFT JOIN ah.source_file AS sf ON sf.id = s.source_id"
)


def session_ref(row) -> SessionRef:
    """A `SessionRef` from the first ten columns of a row selected with SESSION_REF_COLUMNS."""
    return SessionRef(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8], row[9])


def resolve_session(conn: psycopg.Connection, uid: str, agent_id: str | None = None) -> SessionRef:
    """The session named by `uid` — exact, else a unique prefix of ≥ `MIN_UID_PREFIX` characters — and
    `agent_id` ('' = the main thread; None = the main thread when there is one, else the only
    sub-agent thread). Raises SessionNotFound or AmbiguousSession."""
    uid = uid.strip()
    base = f"SELECT {SESSION_REF_COLUMNS} FROM ah.session AS s {SESSION_REF_JOINS} WHERE "
    rows = conn.execute(base + "s.session_uid = %s ORDER BY s.agent_id, s.id", (uid,)).fetchall()
    if not rows and len(uid) >= MIN_UID_PREFIX:
        pattern = uid.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = conn.execute(
            base + "s.session_uid LIKE %s ORDER BY s.session_uid, s.agent_id, s.id LIMIT 50", (pattern,)
        ).fetchall()
    if not rows:
        raise SessionNotFound(f"no session {uid!r}")
    uids = sorted({r[2] for r in rows})
    if len(uids) > 1:
        raise AmbiguousSession(f"{uid!r} matches {len(uids)} sessions: " + ", ".join(uids[:5]), uids)
    if agent_id is not None:
        rows = [r for r in rows if r[3] == agent_id]
        if not rows:
            raise SessionNotFound(f"session {uids[0]} has no thread with agent id {agent_id!r}")
    return session_ref(rows[0])


def iso(ts: datetime | None) -> str | None:
    """ISO 8601 text of a timestamp (None stays None)."""
    return ts.isoformat() if ts else None


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
) -> tuple[list[sql.Composable], dict]:
    """The filter conditions shared by the session listings (`read.sessions`, `read.efficiency`,
    the web pages): ``(conditions, params)`` to AND into a WHERE over a row `alias` with ``agent``,
    ``namespace`` and ``cwd`` columns. `since` is inclusive, `until` exclusive, both on the SQL
    expression `time` (default: the session's start, else its end); `project` is a cwd and
    everything below it. Parameter names: agents, namespaces, since, until, project, project_like."""
    from agent_history.search.filters import like_prefix

    time = time or f"coalesce({alias}.started_at, {alias}.ended_at)"
    conds: list[sql.Composable] = []
    params: dict = {}
    if agents:
        conds.append(sql.SQL(f"{alias}.agent = ANY(%(agents)s)"))
        params["agents"] = list(agents)
    if namespaces:
        conds.append(sql.SQL(f"{alias}.namespace = ANY(%(namespaces)s)"))
        params["namespaces"] = list(namespaces)
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
