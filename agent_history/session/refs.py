"""A session named by its uid or a unique uid prefix, and the `SessionRef` that names it back.

Every read function takes an open connection (owner or the read-only ``ah_reader``) and returns
plain dataclasses; ``as_dict()`` gives JSON-ready dicts for the CLI's ``--json`` and the MCP
server. Nothing here writes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import psycopg

from agent_history.session.filters import like_prefix

MIN_UID_PREFIX = 6
"""A session may be named by a unique prefix of its uid of at least this many characters
(`session`, `search --session`, the MCP tools): long enough to be unique in practice, short
enough to type."""

_HEX_UID = re.compile(r"[0-9A-Fa-f-]+")


def uid_spellings(uid: str) -> list[str]:
    """The spellings a uid (or uid prefix) is looked up under, in order: as given, then — when it
    is hexadecimal (a UUID and the like: case carries no meaning) — in lower and upper case, so
    ``29CCD257`` names ``29ccd257-…``. Other uids (``ses_AbC…``) are case-sensitive: as given only."""
    if not _HEX_UID.fullmatch(uid):
        return [uid]
    return list(dict.fromkeys([uid, uid.lower(), uid.upper()]))


class SessionNotFound(LookupError):
    """No session matches the given uid (or prefix)."""


class AmbiguousSession(LookupError):
    """A uid prefix matches more than one session; `candidates` lists some of them."""

    def __init__(self, message: str, candidates: list[str]):
        super().__init__(message)
        self.candidates = candidates


AMBIGUOUS_SHOWN = 5
"""Uids an ambiguous-prefix message lists (the count it gives is whole)."""


def ambiguous_message(prefix: str, uids: list[str], total: int, what: str = "sessions") -> str:
    """``'0fae00' matches 60 sessions: a, b, c, d, e, … (5 of 60 shown)``: the true count `total`
    of `what` whose uid starts with `prefix`, the first `AMBIGUOUS_SHOWN` of the sorted `uids`,
    and a mark when the list is partial."""
    shown = sorted(uids)[:AMBIGUOUS_SHOWN]
    more = f", … ({len(shown)} of {total:,} shown)" if total > len(shown) else ""
    return f"{prefix!r} matches {total:,} {what}: " + ", ".join(shown) + more


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
    """The thread's own transcript file (see `SESSION_REF_JOINS`); None when unknown."""

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
    "LEFT JOIN ah.session AS r ON r.id = s.root_session_id LEFT JOIN ah.source_file AS sf ON sf.id = "
    "CASE WHEN s.agent_id <> '' THEN coalesce((SELECT min(m.source_id) FROM ah.message AS m "
    "WHERE m.session_id = s.id), s.source_id) ELSE s.source_id END"
)
"""Joins for `SESSION_REF_COLUMNS`. ``sf`` is the session's own file: ``ah.session.source_id`` (the
file the thread was first seen in) for a main thread; for a sub-agent thread (``agent_id`` ≠ '')
the file of its first message in file order (lowest source id), which is where its timeline's
"line 1, byte 0" is — a record of the parent's file names a Claude sub-agent before its own
``subagents/agent-<id>.jsonl`` is read, so ``source_id`` alone would name the parent's file
(newcomer finding). A thread without messages falls back to ``source_id``."""


def session_ref(row) -> SessionRef:
    """A `SessionRef` from the first ten columns of a row selected with SESSION_REF_COLUMNS."""
    return SessionRef(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8], row[9])


def resolve_session(conn: psycopg.Connection, uid: str, agent_id: str | None = None) -> SessionRef:
    """The session named by `uid` — exact, else a unique prefix of ≥ `MIN_UID_PREFIX` characters,
    a hexadecimal one in any case (`uid_spellings`) — and
    `agent_id` ('' = the main thread; None = the main thread when there is one, else the only
    sub-agent thread). Raises SessionNotFound or AmbiguousSession."""
    given = uid = uid.strip()
    base = f"SELECT {SESSION_REF_COLUMNS} FROM ah.session AS s {SESSION_REF_JOINS} WHERE "
    rows = []
    for uid in uid_spellings(given):  # exact in any spelling before a prefix in any
        rows = conn.execute(base + "s.session_uid = %s ORDER BY s.agent_id, s.id", (uid,)).fetchall()
        if rows:
            break
    if not rows and len(given) >= MIN_UID_PREFIX:
        for uid in uid_spellings(given):
            rows = conn.execute(
                base + "s.session_uid LIKE %s ORDER BY s.session_uid, s.agent_id, s.id LIMIT 50", (like_prefix(uid),)
            ).fetchall()
            if rows:
                break
    if not rows:
        raise SessionNotFound(f"no session {given!r}")
    uids = sorted({r[2] for r in rows})
    if len(uids) > 1:  # the rows stop at 50 threads: count the sessions whole
        total = conn.execute(
            "SELECT count(DISTINCT session_uid) FROM ah.session WHERE session_uid LIKE %s", (like_prefix(uid),)
        ).fetchone()[0]
        raise AmbiguousSession(ambiguous_message(uid, uids, total), uids)
    if agent_id is not None:
        rows = [r for r in rows if r[3] == agent_id]
        if not rows:
            raise SessionNotFound(f"session {uids[0]} has no thread with agent id {agent_id!r}")
    return session_ref(rows[0])
