"""What the catalogue holds, as the front ends' filters need it: the namespaces with an indexed
source file, the agents with a session, and a check of explicit filter values (a namespace no
file has, a session uid or prefix no session has) that would otherwise just find nothing.
Read-only.
"""

from __future__ import annotations

import psycopg

from agent_history.session.filters import like_prefix
from agent_history.session.refs import MIN_UID_PREFIX, uid_spellings


def catalogue_namespaces(conn: psycopg.Connection) -> list[str]:
    """Namespaces that have at least one indexed source file, sorted."""
    return [r[0] for r in conn.execute("SELECT DISTINCT namespace FROM ah.source_file ORDER BY 1").fetchall()]


def catalogue_agents(conn: psycopg.Connection) -> list[str]:
    """Harness names that have at least one session, sorted."""
    return [r[0] for r in conn.execute("SELECT DISTINCT agent FROM ah.session ORDER BY 1").fetchall()]


def filter_values(conn: psycopg.Connection, session: str | None) -> tuple[list[str], bool]:
    """``(indexed namespaces, sorted; whether `session` names a session)`` in one query: `session`
    is looked up as an exact uid, or as a uid prefix when it has at least
    `session.refs.MIN_UID_PREFIX` characters (a hexadecimal one in any case:
    `session.refs.uid_spellings`); None counts as found."""
    known, found = conn.execute(
        "SELECT ARRAY(SELECT DISTINCT namespace FROM ah.source_file ORDER BY 1),"
        " %(s)s::text[] IS NULL OR EXISTS (SELECT 1 FROM ah.session"
        " WHERE session_uid = ANY(%(s)s) OR (%(len)s >= %(n)s AND session_uid LIKE ANY(%(like)s)))",
        {
            "s": uid_spellings(session) if session is not None else None,
            "len": len(session or ""),
            "n": MIN_UID_PREFIX,
            "like": [like_prefix(u) for u in uid_spellings(session)] if session else None,
        },
    ).fetchone()
    return list(known), bool(found)


def check_filter_values(
    conn: psycopg.Connection, namespaces, session: str | None = None, *, flags: bool = True
) -> None:
    """Raise `read.requests.RequestError` (one line) naming an explicit namespace that has no
    indexed file, or a session uid/prefix that names no session — values that would otherwise
    just find nothing; nothing when neither is given (no query then, else one: `filter_values`).
    `flags` names the parameters as the CLI's options (``--session``), else as the MCP
    arguments and web GET parameters (``session``). Shared by the CLI and ``/api/search``."""
    if not namespaces and not session:
        return
    from agent_history.read.requests import RequestError, name_of

    known, found = filter_values(conn, session)
    unknown = [n for n in dict.fromkeys(namespaces or ()) if n not in known]
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        raise RequestError(f"unknown namespace {names} (indexed: {', '.join(known) or 'none'})")
    if not found:
        option = name_of("session", flags)
        if len(session) < MIN_UID_PREFIX:
            raise RequestError(
                f"{option}: give a session uid or a prefix of at least {MIN_UID_PREFIX} characters (got {session!r})"
            )
        raise RequestError(f"{option}: no session {session!r} in the catalogue")
