"""A module-scoped catalogue of the real corpus (``../shared/corpus/home``), indexed once per test
module that imports `corpus_db` (read-only tests share it)."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from tests.conftest import TEMPLATE, TestDatabase


@pytest.fixture(scope="module")
def corpus_db(pg_server, corpus_home) -> TestDatabase:
    """A fresh database with the corpus indexed (do not write to it)."""
    from agent_history.db.roles import READER

    name = f"c_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    db = TestDatabase(name, pg_server.dsn(name), pg_server.dsn(name, user=READER), pg_server)
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home).items()]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources)
    assert summary.files_failed == 0
    yield db
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
