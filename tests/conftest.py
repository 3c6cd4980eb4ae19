"""Shared fixtures: where `../shared` lives (skip cleanly when absent), one embedded server per
test process, a fresh database per test.

Under pytest-xdist (`just test`: ``-n auto``) every worker is its own test session: its own
embedded server in its own ``mkdtemp`` directory (socket inside it), its own migrated template
and corpus template, and each test's HOME, config file and data dir (embedding service socket
included) under its own ``own_tmp``; nothing listens on a fixed port. With ``--dist loadgroup``
the tests of a module that shares a module-scoped fixture (a corpus catalogue, a web server, a
loaded model) run on one worker, so that fixture is built once (`pytest_collection_modifyitems`).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

# A suite started as a background job of a non-interactive shell (`cmd &`, `nohup`, some CI
# runners) inherits SIGINT ignored, and so does every command a test starts — Python then installs
# no KeyboardInterrupt handler, and the Ctrl-C tests (statusline, `usage blocks --live`) wait
# forever (seen: SigIgn 0x1001007 in tests/procinfo.py's report). Commands the tests start get
# SIGINT as a terminal gives it: a handled signal is reset to the default by exec, an ignored one
# is not.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]

# The suite's CLI subprocesses run in process, starting no resident query process in each test's
# data dir (`cli.resident_server`); tests/test_query_service.py turns it on for its own commands.
__import__("os").environ["AGENT_HISTORY_QUERY_IDLE_S"] = "0"
SHARED = REPO.parent / "shared"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Mark each test using a module-scoped fixture with ``xdist_group(<module>)``: under
    ``--dist loadgroup`` its module's tests share one worker (and one build of that fixture);
    the other tests are spread one by one.

    The scheduler groups by the suffix ``@<group>`` of the node ids a worker reports, which
    xdist (3.8) appends by assigning ``item._nodeid`` — ignored since pytest 9.2 (a node id is the
    ``NodeId`` in ``item._id``), so no test was grouped: a module's fixture was built on both
    workers and again whenever another module's test ran between two of its tests (the two-host
    world of tests/test_hosts.py twice, ≈ 20 s each). This hook (last, after deselection and after
    xdist's own) marks the tests and appends the suffix itself where it is missing
    (:func:`_with_group_suffix`)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d and d[-1].scope == "module" for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if getattr(config.option, "loadgroup", False):  # set on a worker of `--dist loadgroup`
        for item in items:
            _with_group_suffix(item)


def _with_group_suffix(item) -> None:
    """Give `item` the node id ``<nodeid>@<group>[_<group>…]`` xdist's loadgroup scheduler reads
    (the names of its ``xdist_group`` marks, sorted, as xdist joins them) unless it has it already
    or has no such mark. Pytest before 9.2 keeps the id in ``_nodeid``, 9.2 in ``_id``."""
    names = sorted(
        {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    )
    suffix = "@" + "_".join(names)
    if not names or item.nodeid.endswith(suffix):
        return
    nodeid = item.nodeid + suffix
    if hasattr(item, "_id"):
        item._id = type(item._id).parse(nodeid)
    else:
        item._nodeid = nodeid


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: these tests need ../shared beside the repository")
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """`../shared` (the corpus, samples and field cases)."""
    return _need(SHARED)


@pytest.fixture(scope="session")
def corpus_home() -> Path:
    """`../shared/corpus/home`: real agent homes laid out like `~`."""
    return _need(SHARED / "corpus" / "home")


@pytest.fixture(scope="session")
def field_dir() -> Path:
    """`../shared/field`: field cases Exx.jsonl with EXPECTED.md."""
    return _need(SHARED / "field")


# --- real database: one embedded server per test session, a fresh database per test ---------

import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import psycopg  # noqa: E402

from tests.clone_pool import ClonePool, create_copy  # noqa: E402

TEMPLATE = "ah_template"


@dataclass
class TestServer:
    """The session's embedded server: its PGDATA and an admin DSN factory."""

    pgdata: Path

    def dsn(self, database: str = "postgres", user: str = "postgres") -> str:
        from agent_history.db.embedded import server_dsn

        return server_dsn(self.pgdata, user=user, database=database)


@dataclass
class TestDatabase:
    """A fresh database cloned from the migrated template."""

    __test__ = False
    name: str
    dsn: str
    reader_dsn: str
    server: TestServer

    def connect(self, **kw) -> psycopg.Connection:
        return psycopg.connect(self.dsn, **kw)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory) -> TestServer:
    """Start one embedded PostgreSQL for the whole test session, with a migrated template DB."""
    from agent_history.db import embedded
    from agent_history.db.migrate import upgrade
    from agent_history.db.roles import ensure_roles

    # Not under pytest's basetemp: concurrent pytest runs prune each other's old basetemps,
    # which would delete a running server's data directory.
    base = Path(tempfile.mkdtemp(prefix="ah-test-pg-"))
    pgdata = base / "pg"
    embedded.ensure_running(pgdata)
    server = TestServer(pgdata)
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        # bulk passes keep the WAL settings here: tests read them while other tests load
        # (tests/test_bulk_end.py checks the widening on a server of its own)
        conn.execute(f"ALTER SYSTEM SET {embedded.BULK_SETTINGS_SWITCH} = 'off'")
        # no fsync and no full-page images: a commit still reaches the OS before it returns, so a
        # killed server (tests kill theirs) recovers everything; only an OS crash would lose
        # data, and no test survives one. Each test's database copy and drop (a WAL-logged 12 MB
        # copy; a forced checkpoint) then waits for no disk flush.
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET full_page_writes = off")
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    tdsn = server.dsn(TEMPLATE)
    upgrade(tdsn)
    ensure_roles(tdsn)
    yield server
    embedded.stop(pgdata)
    shutil.rmtree(base, ignore_errors=True)


def clone_database(server: TestServer, template: str = TEMPLATE, prefix: str = "t") -> TestDatabase:
    """A new database `<prefix>_<random>` copied from `template` (``CREATE DATABASE … TEMPLATE``:
    a file copy, ≈ 0.3 s of server CPU, instead of migrating or indexing again). Drop it with
    :func:`drop_database`. (The per-test fixtures take theirs from `clone_pool`, made ahead.)"""
    return existing_database(server, create_copy(server.dsn(), template, prefix))


def existing_database(server: TestServer, name: str) -> TestDatabase:
    """The `TestDatabase` of the existing database `name` on `server` (owner and reader DSNs)."""
    from agent_history.db.roles import READER

    return TestDatabase(name, server.dsn(name), server.dsn(name, user=READER), server)


@pytest.fixture(scope="session")
def clone_pool(pg_server: TestServer) -> ClonePool:
    """The session's `ClonePool`: each per-test database (`db`, `corpus_db.corpus_rw_db`) is
    copied while the previous test runs and dropped while the next one runs."""
    pool = ClonePool(pg_server.dsn())
    yield pool
    pool.close()


def drop_database(database: TestDatabase) -> None:
    """Drop a database made by :func:`clone_database` (connections to it are ended)."""
    with psycopg.connect(database.server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database.name} WITH (FORCE)")


@pytest.fixture
def db(pg_server: TestServer, clone_pool: ClonePool) -> TestDatabase:
    """A fresh, migrated database for one test (dropped afterwards, in the background)."""
    database = existing_database(pg_server, clone_pool.take(TEMPLATE, "t"))
    yield database
    clone_pool.give_back(database.name)


CORPUS_TEMPLATE = "ah_corpus_template"


@pytest.fixture(scope="session")
def corpus_template(pg_server: TestServer, corpus_home: Path) -> str:
    """The name of a database holding ``../shared/corpus/home`` indexed by the real loader, built
    once per test session on first use (≈ 5.5 s) and only ever cloned (see
    `tests/corpus_db.py`): never connect to it, or the clones' ``CREATE DATABASE`` fails."""
    from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
    from agent_history.ingest.loader import Loader

    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {CORPUS_TEMPLATE}")
        conn.execute(f"CREATE DATABASE {CORPUS_TEMPLATE} TEMPLATE {TEMPLATE}")
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home).items()]
    with psycopg.connect(pg_server.dsn(CORPUS_TEMPLATE), autocommit=True) as conn:
        summary = Loader(conn).run(sources)
    assert summary.files_failed == 0
    return CORPUS_TEMPLATE


@pytest.fixture
def own_tmp() -> Path:
    """A fresh directory outside pytest's basetemp, removed afterwards. Concurrent pytest runs on
    one machine prune each other's basetemps — seen deleting a running test's embedded server
    and config file — so what a test's subprocesses use lives here."""
    path = Path(tempfile.mkdtemp(prefix="ah-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def cli_env(db: TestDatabase, own_tmp: Path, monkeypatch) -> dict[str, str]:
    """Environment for running the CLI against the test database (no real home touched); its
    config file exists and is empty (an AGENT_HISTORY_CONFIG naming a missing file is an error)."""
    (own_tmp / "config.toml").touch()
    env = dict(os.environ)
    env.update(
        AGENT_HISTORY_DSN=db.dsn,
        AGENT_HISTORY_READER_DSN=db.reader_dsn,
        AGENT_HISTORY_CONFIG=str(own_tmp / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(own_tmp / "data"),
        HOME=str(own_tmp / "home"),
    )
    for k, v in env.items():
        if k.startswith("AGENT_HISTORY_") or k == "HOME":
            monkeypatch.setenv(k, v)
    return env
