"""`ingest.pass_locks.PassLocks` (docs/design.md §7 "Many machines"): a pass takes its advisory
locks in one statement and lets them go in one, whatever the number of namespaces (a loop of
single tries was one round trip per namespace each way: 2 × 20 for twenty configured homes, most
of them absent), with the same semantics — which locks are held, and what a refused pass says.
Real server: the locks are read back from ``pg_locks`` by another session."""

from __future__ import annotations

import psycopg
import pytest

from agent_history.ingest.pass_locks import BULK_LOCK, INDEX_LOCK, NAMESPACE_LOCK, AnotherPassRunning, PassLocks

NAMESPACES = [f"home-{i:02d}" for i in range(20)]
"""Twenty configured homes (namespace names only: a lock needs no directory)."""


class Counting:
    """A connection that records each statement it sends (one `execute`, one round trip)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.statements: list[str] = []

    def execute(self, query, params=None):
        self.statements.append(query)
        return self.conn.execute(query, params)


def advisory_locks(db, pid: int) -> list[tuple[str, str]]:
    """What session `pid` holds, seen from another session: ("index", mode), ("bulk", mode) or
    (namespace, mode) per advisory lock, sorted (``pg_locks`` shows a bigint key as (high, low 32
    bits) with objsubid 1, an (int4, int4) key with objsubid 2)."""
    with db.connect(autocommit=True) as other:
        rows = other.execute(
            """
            SELECT CASE WHEN l.objsubid = 2 THEN n.ns
                        WHEN (l.classid::bigint << 32) + l.objid::bigint = %(index)s THEN 'index'
                        WHEN (l.classid::bigint << 32) + l.objid::bigint = %(bulk)s THEN 'bulk' END,
                   l.mode
            FROM pg_locks AS l
            LEFT JOIN unnest(%(ns)s::text[]) AS n(ns)
              ON l.objsubid = 2 AND l.classid = %(space)s::oid AND l.objid = hashtext(n.ns)::oid
            WHERE l.locktype = 'advisory' AND l.granted AND l.pid = %(pid)s
            """,
            {"index": INDEX_LOCK, "bulk": BULK_LOCK, "space": NAMESPACE_LOCK, "ns": NAMESPACES, "pid": pid},
        ).fetchall()
    return sorted(tuple(r) for r in rows)


@pytest.fixture
def conn(db):
    with db.connect(autocommit=True) as conn:
        yield conn


def test_a_pass_takes_twenty_namespace_locks_in_one_statement_and_releases_them_in_one(db, conn):
    counting = Counting(conn)
    locks = PassLocks(counting)
    locks.take([*reversed(NAMESPACES), "home-03"])  # any order, a repeat: taken once, sorted
    assert len(counting.statements) == 1
    assert locks.namespaces == NAMESPACES and locks.shared
    held = advisory_locks(db, conn.info.backend_pid)
    assert held == sorted([*((ns, "ExclusiveLock") for ns in NAMESPACES), ("index", "ShareLock")])
    locks.release()
    assert len(counting.statements) == 2
    assert advisory_locks(db, conn.info.backend_pid) == []
    assert (locks.namespaces, locks.shared, locks.exclusive, locks.bulk) == ([], False, False, False)


def test_a_pass_refused_a_namespace_names_the_first_one_held_and_holds_nothing(db, conn):
    with db.connect(autocommit=True) as other:
        for ns in ("home-12", "home-07"):
            other.execute("SELECT pg_advisory_lock(%s::int, hashtext(%s))", (NAMESPACE_LOCK, ns))
        counting = Counting(conn)
        locks = PassLocks(counting)
        with pytest.raises(AnotherPassRunning) as refused:
            locks.take(NAMESPACES)
        assert str(refused.value) == "another index pass is running (it is indexing home-07)"
        assert advisory_locks(db, conn.info.backend_pid) == []
        assert locks.namespaces == [] and not locks.shared
        # the try, the release of the seven namespaces and the index lock taken, the holder's query
        assert len(counting.statements) == 3
        # the other session still holds its two (the refused pass let go only of its own)
        assert advisory_locks(db, other.info.backend_pid) == [
            ("home-07", "ExclusiveLock"),
            ("home-12", "ExclusiveLock"),
        ]


def test_a_pass_refused_the_index_lock_tries_no_namespace(db, conn):
    with db.connect(autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (INDEX_LOCK,))  # a whole-catalogue rebuild
        counting = Counting(conn)
        with pytest.raises(AnotherPassRunning) as refused:
            PassLocks(counting).take(NAMESPACES)
        assert str(refused.value) == "another index pass is running (a bulk load or rebuild holds every namespace)"
        assert advisory_locks(db, conn.info.backend_pid) == []
        assert len(counting.statements) == 2  # the try, the holder's query


def test_a_pass_without_namespaces_holds_the_index_lock_shared(db, conn):
    locks = PassLocks(conn)
    locks.take([])
    assert advisory_locks(db, conn.info.backend_pid) == [("index", "ShareLock")]
    locks.release()
    assert advisory_locks(db, conn.info.backend_pid) == []


def test_release_lets_go_of_the_bulk_and_exclusive_locks_in_the_same_statement(db, conn):
    counting = Counting(conn)
    locks = PassLocks(counting)
    locks.take(NAMESPACES[:2])
    assert locks.take_all() and locks.take_bulk()
    assert advisory_locks(db, conn.info.backend_pid) == [
        ("bulk", "ExclusiveLock"),
        ("home-00", "ExclusiveLock"),
        ("home-01", "ExclusiveLock"),
        ("index", "ExclusiveLock"),
        ("index", "ShareLock"),
    ]
    before = len(counting.statements)
    locks.release()
    assert len(counting.statements) == before + 1
    assert advisory_locks(db, conn.info.backend_pid) == []


def test_release_after_the_connection_is_lost_raises_nothing(db):
    conn = db.connect(autocommit=True)
    locks = PassLocks(conn)
    locks.take(NAMESPACES[:3])
    conn.close()
    locks.release()
    assert (locks.namespaces, locks.shared) == ([], False)
