"""The suite's per-test databases made ahead (`tests/clone_pool.py`, `conftest.clone_pool`): a copy
taken is a new database holding the template's rows, the next one is made in the background and
handed out without waiting, and a database given back is dropped."""

from __future__ import annotations

import time

import psycopg

from tests.clone_pool import ClonePool
from tests.conftest import TEMPLATE, clone_database, drop_database


def _databases(pg_server, prefix: str) -> set[str]:
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (prefix + "\\_%",)).fetchall()
    return {name for (name,) in rows}


def _until(predicate, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_copy_holds_the_templates_rows_the_next_is_made_ahead_and_a_given_back_one_is_dropped(pg_server):
    source = clone_database(pg_server, TEMPLATE, "poolsrc")  # a template of our own, with a marker row
    with psycopg.connect(source.dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO ah.meta (key, value) VALUES ('clone-pool', 'marker')")
    pool = ClonePool(pg_server.dsn())
    try:
        first = pool.take(source.name, "poolt")  # none ready: copied in this thread
        assert first.startswith("poolt_") and len(first) == len("poolt_") + 12
        with psycopg.connect(pg_server.dsn(first)) as conn:
            assert conn.execute("SELECT value FROM ah.meta WHERE key = 'clone-pool'").fetchone() == ("marker",)
        # the take asked for the next copy: it is made without another take
        assert _until(lambda: pool._ready.get((source.name, "poolt")))
        (ahead,) = _databases(pg_server, "poolt") - {first}
        started = time.monotonic()
        second = pool.take(source.name, "poolt")
        assert second == ahead and time.monotonic() - started < 0.5  # handed out, not made now
        pool.give_back(first)
        pool.give_back(second)
        # the third copy (asked for by the second take) is made, the two given back are dropped
        assert _until(lambda: len(_databases(pg_server, "poolt") - {first, second}) == 1)
        assert _until(lambda: not _databases(pg_server, "poolt") & {first, second})
    finally:
        pool.close()
        with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
            for name in _databases(pg_server, "poolt"):
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        drop_database(source)
    assert not pool._thread.is_alive()  # closed: the session's teardown stops it before the server


def test_a_background_copy_that_fails_costs_no_take(pg_server):
    """A template that does not exist: the background job fails and is given up; each take still
    raises the server's error in the caller, and the pool keeps serving another template."""
    pool = ClonePool(pg_server.dsn())
    try:
        for _ in range(2):
            try:
                pool.take("poolnone_missing", "poolf")
            except psycopg.errors.InvalidCatalogName as e:
                assert 'template database "poolnone_missing" does not exist' in str(e)
            else:
                raise AssertionError("a copy of a missing template was made")
        name = pool.take(TEMPLATE, "poolf")
        with psycopg.connect(pg_server.dsn(name)) as conn:
            assert conn.execute("SELECT to_regclass('ah.message')::text").fetchone() == ("ah.message",)
        pool.give_back(name)
    finally:
        pool.close()
        with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
            for name in _databases(pg_server, "poolf"):
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    assert _databases(pg_server, "poolf") == set()
