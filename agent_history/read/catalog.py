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
