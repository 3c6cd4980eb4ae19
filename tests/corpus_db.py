"""The shared corpus catalogue (``../shared/corpus/home`` indexed by the real loader), built once
per test session (`conftest.corpus_template`) and cloned by ``CREATE DATABASE … TEMPLATE``:
`corpus_db` once per module that imports it (read-only tests share it), `corpus_rw_db` once per
test (free to write)."""

from __future__ import annotations

import pytest

from tests.conftest import TestDatabase, clone_database, drop_database


@pytest.fixture(scope="module")
def corpus_db(pg_server, corpus_template) -> TestDatabase:
    """A database with the corpus indexed, shared by the module's tests (do not write to it)."""
    database = clone_database(pg_server, corpus_template, "c")
    yield database
    drop_database(database)


@pytest.fixture
def corpus_rw_db(pg_server, corpus_template) -> TestDatabase:
    """A fresh database with the corpus indexed, for one test (it may write)."""
    database = clone_database(pg_server, corpus_template, "w")
    yield database
    drop_database(database)
