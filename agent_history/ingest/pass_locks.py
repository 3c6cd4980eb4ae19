"""The advisory locks of an index pass (docs/design.md §7 "Many machines: one pass per
namespace"): `INDEX_LOCK` shared by every pass and exclusive for a whole-catalogue rebuild,
one lock per namespace, `BULK_LOCK` for the one pass on the bulk path. The lock per
``ah.index_run`` row, by which a killed pass is told from another host's live one, is the run
row's (`db.tables.runs.RUN_LOCK`).
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

INDEX_LOCK = 0x61685F696478  # 'ah_idx'
"""Every pass holds it *shared*; a `rebuild` that empties the whole catalogue holds it
*exclusive* (docs/design.md §7 "Many machines")."""
BULK_LOCK = 0x61685F626C6B  # 'ah_blk'
"""Held by the one pass on the bulk path (its ``ah.meta`` mark, trigger and index DDL are every
namespace's); the passes that start meanwhile load incrementally beside it."""
NAMESPACE_LOCK = 0x61686E73  # 'ahns': (NAMESPACE_LOCK, hashtext(namespace)), one per namespace


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
        """Take `INDEX_LOCK` shared and each namespace's lock (sorted). Raises AnotherPassRunning
        (holding nothing) when any is held by another session."""
        conn = self.conn
        if not conn.execute("SELECT pg_try_advisory_lock_shared(%s)", (INDEX_LOCK,)).fetchone()[0]:
            raise AnotherPassRunning("another index pass is running (a bulk load or rebuild holds every namespace)")
        self.shared = True
        for namespace in sorted(set(namespaces)):
            got = conn.execute(
                "SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (NAMESPACE_LOCK, namespace)
            ).fetchone()[0]
            if not got:
                self.release()
                raise AnotherPassRunning(f"another index pass is running (it is indexing {namespace})")
            self.namespaces.append(namespace)

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
        """Release every lock taken (a lost connection has released them already)."""
        try:
            for namespace in self.namespaces:
                self.conn.execute("SELECT pg_advisory_unlock(%s::int, hashtext(%s))", (NAMESPACE_LOCK, namespace))
            if self.bulk:
                self.conn.execute("SELECT pg_advisory_unlock(%s)", (BULK_LOCK,))
            if self.exclusive:
                self.conn.execute("SELECT pg_advisory_unlock(%s)", (INDEX_LOCK,))
            if self.shared:
                self.conn.execute("SELECT pg_advisory_unlock_shared(%s)", (INDEX_LOCK,))
        except psycopg.Error:
            pass  # connection lost: the locks died with the session
        self.namespaces, self.shared, self.exclusive, self.bulk = [], False, False, False
