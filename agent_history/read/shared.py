"""Rows a session's transcript holds that another session owns (docs/design.md §7 "Owner of a
shared row"; `db.tables.claims`).

A transcript copied under another session id (a copied project directory, a Claude Code resume or
fork) keeps its message uuids, ``message.id`` (the model call's key) and tool-use ids, so its rows
merge with the original's and belong to one session by the owner rule: started first, ended first,
then the smaller uid. Totals are right (each row counted once), but the other session shows fewer
messages and calls than its file holds — none at all for a whole copy. `shared_elsewhere` names
where they are counted, so `session` (text, ``--json``), the web session page and `usage` can say
so instead of "0 model calls" or "no usage recorded". Only messages and model calls are named:
the counts a reader checks a session by.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import psycopg

from agent_history.db.tables.claims import shared_phrase

_SHARED_SQL = """
WITH mine AS (
    SELECT session_id AS sid, row_table, row_id FROM ah.row_claim
    WHERE session_id = ANY(%(sids)s) AND row_table IN ('message', 'model_call')
), owners AS (
    SELECT mine.sid, 'message' AS row_table, m.session_id FROM mine JOIN ah.message AS m ON m.id = mine.row_id
    WHERE mine.row_table = 'message' AND m.session_id <> mine.sid
    UNION ALL
    SELECT mine.sid, 'model_call', c.session_id FROM mine JOIN ah.model_call AS c ON c.id = mine.row_id
    WHERE mine.row_table = 'model_call' AND c.session_id <> mine.sid
)
SELECT o.sid, s.session_uid, s.agent_id,
       count(*) FILTER (WHERE o.row_table = 'model_call'), count(*) FILTER (WHERE o.row_table = 'message')
FROM owners AS o JOIN ah.session AS s ON s.id = o.session_id
GROUP BY o.sid, s.id, s.session_uid, s.agent_id
ORDER BY 1, 4 DESC, 5 DESC, 2, 3
"""
# ah.row_claim holds only the rows two sessions share (`db.tables.claims`), read by its session
# index: cheap for a page of sessions.


@dataclass(frozen=True, slots=True)
class SharedRows:
    """The rows of one session's transcript that session ``session_uid``/``agent_id`` owns:
    `model_calls` and `messages` (counts of rows, each counted in the owner's figures)."""

    session_uid: str
    agent_id: str
    model_calls: int
    messages: int

    def as_dict(self) -> dict:
        """JSON-ready form: ``{session_uid, agent_id, model_calls, messages}``."""
        return asdict(self)

    def phrase(self) -> str:
        """``36 model calls / 59 messages shared with session <uid>[/<agent id>] (counted there)``
        (`db.tables.claims.shared_phrase`: the ``rows_shared`` parse issue says the same)."""
        return shared_phrase(
            self.model_calls, self.messages, self.session_uid + (f"/{self.agent_id}" if self.agent_id else "")
        )


def shared_elsewhere(conn: psycopg.Connection, session_id: int) -> list[SharedRows]:
    """The messages and model calls session `session_id` (``ah.session.id``) claims — its
    transcript holds a copy — that another session owns, one `SharedRows` per owner (most calls
    first); [] when it owns every row it holds (always, for a session that shares nothing).
    Reads ``ah.row_claim`` by its session index; a catalogue before migration 0026 has none."""
    return shared_by_session(conn, [session_id]).get(session_id, [])


def shared_by_session(conn: psycopg.Connection, session_ids: list[int]) -> dict[int, list[SharedRows]]:
    """`shared_elsewhere` for several sessions in one statement: ``{session id: [SharedRows…]}``,
    only the sessions that hold rows another session owns (the `sessions` listing's note)."""
    if not session_ids or conn.execute("SELECT to_regclass('ah.row_claim') IS NULL").fetchone()[0]:
        return {}
    out: dict[int, list[SharedRows]] = {}
    for sid, uid, agent_id, calls, msgs in conn.execute(_SHARED_SQL, {"sids": list(session_ids)}):
        out.setdefault(sid, []).append(SharedRows(uid, agent_id, int(calls), int(msgs)))
    return out
