"""The advisory locks of an index pass (docs/design.md §7 "Many machines: one pass per
namespace"): `INDEX_LOCK` shared by every pass and exclusive for a whole-catalogue rebuild,
one lock per namespace, `BULK_LOCK` for the one pass on the bulk path, `REBUILD_LOCK` held by a
`rebuild` from start to end (while it is held, the catalogue's rebuild mark means "under way",
not "interrupted"). A pass refused names what holds the lock it needs (`busy_line`). The lock per
``ah.index_run`` row, by which a killed pass is told from another host's live one, is the run
row's (`db.tables.runs.RUN_LOCK`).
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

from agent_history.db.tables import purge

INDEX_LOCK = 0x61685F696478  # 'ah_idx'
"""Every pass holds it *shared*; a `rebuild` that empties the whole catalogue holds it
*exclusive* (docs/design.md §7 "Many machines")."""
BULK_LOCK = 0x61685F626C6B  # 'ah_blk'
"""Held by the one pass on the bulk path (its ``ah.meta`` mark, trigger and index DDL are every
namespace's); the passes that start meanwhile load incrementally beside it."""
NAMESPACE_LOCK = 0x61686E73  # 'ahns': (NAMESPACE_LOCK, hashtext(namespace)), one per namespace
REBUILD_LOCK = 0x61685F726264  # 'ah_rbd'
"""Held by a `rebuild` (its connection) from before it takes the pass locks until its re-read
ends: the one lock that says a rebuild is running, through the window between its truncation
(pass locks released) and its re-read (pass locks taken again)."""

_WORD = 0xFFFFFFFF
# Who holds, in another session, the lock a pass was refused: ``(rebuild, bulk)``, whether a
# holder of it also holds `REBUILD_LOCK` / `BULK_LOCK`. pg_locks shows a bigint advisory key as
# (classid, objid) = (high, low 32 bits) with objsubid 1, a pair of int4 keys with objsubid 2
# (the int4 reinterpreted as oid). Only exclusive holders refuse a pass.
_HOLDER = """
SELECT coalesce(bool_or(o.classid = %(rc)s::oid AND o.objid = %(ro)s::oid), false),
       coalesce(bool_or(o.classid = %(bc)s::oid AND o.objid = %(bo)s::oid), false)
FROM pg_locks h
JOIN pg_locks o ON o.pid = h.pid AND o.locktype = 'advisory' AND o.granted AND o.objsubid = 1
WHERE h.locktype = 'advisory' AND h.granted AND h.mode = 'ExclusiveLock' AND h.pid <> pg_backend_pid()
  AND h.classid = %(hc)s::oid AND h.objsubid = %(hs)s
  AND h.objid = CASE WHEN %(ns)s::text IS NULL THEN %(ho)s::oid ELSE hashtext(%(ns)s::text)::oid END
"""


# A pass's locks in one round trip: step 0 tries `INDEX_LOCK` shared, step k the k-th namespace
# of the sorted array %(ns)s, each step only when the one before was granted — the recursive term
# filters on the previous row before it calls the function, so nothing past the first refusal is
# tried (a lock taken and let go again could refuse another host's pass for nothing). The answer:
# one boolean per lock tried, in that order; a false one is the last.
_TAKE = """
WITH RECURSIVE step(k, got) AS (
    SELECT 0, pg_try_advisory_lock_shared(%(index)s)
    UNION ALL
    SELECT s.k + 1, pg_try_advisory_lock(%(space)s::int, hashtext((%(ns)s::text[])[s.k + 1]))
    FROM step AS s
    WHERE s.got AND s.k < cardinality(%(ns)s::text[])
)
SELECT array_agg(got ORDER BY k) FROM step
"""

# Every lock of a pass let go in one round trip: the namespaces' (the array), then `BULK_LOCK`,
# `INDEX_LOCK` exclusive and shared, each only when held (CASE evaluates a branch only when its
# condition holds).
_RELEASE = """
SELECT (SELECT count(*) FROM unnest(%(ns)s::text[]) AS n(ns) WHERE pg_advisory_unlock(%(space)s::int, hashtext(n.ns))),
       CASE WHEN %(bulk)s THEN pg_advisory_unlock(%(bulk_key)s) END,
       CASE WHEN %(exclusive)s THEN pg_advisory_unlock(%(index)s) END,
       CASE WHEN %(shared)s THEN pg_advisory_unlock_shared(%(index)s) END
"""


def _halves(key: int) -> tuple[int, int]:
    return key >> 32, key & _WORD


def busy_line(conn: psycopg.Connection, namespace: str | None) -> str:
    """The one line saying why a pass cannot start: what holds `namespace`'s lock (None:
    `INDEX_LOCK` held exclusively) — "a rebuild is running (started at <ISO 8601 UTC>)" (the
    time from the rebuild's ``ah.meta`` mark, left out before it empties anything), "a bulk
    load is running", else another pass ("… (it is indexing <namespace>)")."""
    rc, ro = _halves(REBUILD_LOCK)
    bc, bo = _halves(BULK_LOCK)
    if namespace is None:
        hc, ho, hs = *_halves(INDEX_LOCK), 1
    else:
        hc, ho, hs = NAMESPACE_LOCK, 0, 2
    params = {"rc": rc, "ro": ro, "bc": bc, "bo": bo, "hc": hc, "ho": ho, "hs": hs, "ns": namespace}
    rebuild, bulk = conn.execute(_HOLDER, params).fetchone()
    if rebuild:
        at = purge.started_at_any(conn)
        return f"a rebuild is running (started at {at})" if at else "a rebuild is running"
    if bulk:
        return "a bulk load is running"
    if namespace is None:
        return "another index pass is running (a bulk load or rebuild holds every namespace)"
    return f"another index pass is running (it is indexing {namespace})"


def rebuild_running(conn: psycopg.Connection) -> bool:
    """Whether another session holds `REBUILD_LOCK` (a rebuild is running now)."""
    rc, ro = _halves(REBUILD_LOCK)
    return bool(
        conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
            "AND classid = %s::oid AND objid = %s::oid AND pid <> pg_backend_pid())",
            (rc, ro),
        ).fetchone()[0]
    )


def hold_rebuild(conn: psycopg.Connection) -> None:
    """Take `REBUILD_LOCK` on `conn` without waiting; raises AnotherPassRunning (with
    `busy_line`'s "a rebuild is running …") when another rebuild holds it."""
    if not conn.execute("SELECT pg_try_advisory_lock(%s)", (REBUILD_LOCK,)).fetchone()[0]:
        rebuild_at = purge.started_at_any(conn)
        raise AnotherPassRunning(
            f"a rebuild is running (started at {rebuild_at})" if rebuild_at else "a rebuild is running"
        )


def release_rebuild(conn: psycopg.Connection) -> None:
    """Release `REBUILD_LOCK` (a lost connection has released it already)."""
    try:
        conn.execute("SELECT pg_advisory_unlock(%s)", (REBUILD_LOCK,))
    except psycopg.Error:
        pass


class AnotherPassRunning(Exception):
    """Another index pass holds the advisory lock of a namespace this pass needs (or every
    namespace's: a bulk load or a whole-catalogue `rebuild`)."""


class PassLocks:
    """The advisory locks of one pass on `conn` (docs/design.md §7 "Many machines"): `INDEX_LOCK`
    shared plus one exclusive `NAMESPACE_LOCK` per namespace it reads, taken without waiting
    (a second pass over a namespace exits saying so; passes over disjoint namespaces — two
    hosts' — run at once). `take_all` upgrades to `INDEX_LOCK` exclusive when no other pass
    holds it (a whole-catalogue rebuild); `take_bulk` takes `BULK_LOCK` for the bulk path.
    Session locks: they die with the connection."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.namespaces: list[str] = []
        self.shared = False
        self.exclusive = False
        self.bulk = False

    def take(self, namespaces: Iterable[str]) -> None:
        """Take `INDEX_LOCK` shared and each namespace's lock (sorted), in one statement
        (`_TAKE`: it stops at the first lock refused, as a loop of single tries would). Raises
        AnotherPassRunning (holding nothing; its text `busy_line`'s) when any is held by another
        session."""
        conn = self.conn
        wanted = sorted(set(namespaces))
        got = conn.execute(_TAKE, {"index": INDEX_LOCK, "space": NAMESPACE_LOCK, "ns": wanted}).fetchone()[0]
        if not got[0]:
            raise AnotherPassRunning(busy_line(conn, None))
        self.shared = True
        self.namespaces = wanted[: len(got) - 1]
        if not got[-1]:  # the last one tried was refused: it is not held
            refused = self.namespaces.pop()
            self.release()
            raise AnotherPassRunning(busy_line(conn, refused))

    def take_all(self) -> bool:
        """Hold `INDEX_LOCK` exclusive too, if no other session holds it (shared or exclusive):
        True when this pass is now the only one."""
        if not self.exclusive:
            self.exclusive = bool(self.conn.execute("SELECT pg_try_advisory_lock(%s)", (INDEX_LOCK,)).fetchone()[0])
        return self.exclusive

    def take_bulk(self) -> bool:
        """Hold `BULK_LOCK` if no other pass holds it: True when this pass may take (or end)
        the bulk path."""
        if not self.bulk:
            self.bulk = bool(self.conn.execute("SELECT pg_try_advisory_lock(%s)", (BULK_LOCK,)).fetchone()[0])
        return self.bulk

    def release(self) -> None:
        """Release every lock taken, in one statement (`_RELEASE`; a lost connection has
        released them already)."""
        if self.namespaces or self.shared or self.exclusive or self.bulk:
            params = {"space": NAMESPACE_LOCK, "ns": self.namespaces, "bulk": self.bulk, "bulk_key": BULK_LOCK}
            params |= {"exclusive": self.exclusive, "shared": self.shared, "index": INDEX_LOCK}
            try:
                self.conn.execute(_RELEASE, params)
            except psycopg.Error:
                pass  # connection lost: the locks died with the session
        self.namespaces, self.shared, self.exclusive, self.bulk = [], False, False, False
