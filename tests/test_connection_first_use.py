"""The first-use check on the command's own connection (`db.connection.Database.connect`): a
database that needs nothing costs one connection; anything due — a changed `sql/*.sql` hash, a
schema newer than this code — takes the full path, which repairs or reports it. Real PostgreSQL
(the `db` fixture's fresh migrated clone); the connections are counted by wrapping
`psycopg.connect` where the four first-use steps call it, never replacing it."""

from __future__ import annotations

import psycopg
import pytest

from agent_history.config import Settings
from agent_history.db import connection, embedded, migrate, roles
from agent_history.db.errors import SchemaTooNew


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """Every DSN the first-use code connects to, in order."""
    seen: list[str] = []
    real = psycopg.connect

    def counting(dsn, *args, **kwargs):
        seen.append(dsn)
        return real(dsn, *args, **kwargs)

    for module in (connection, migrate, roles, embedded):
        monkeypatch.setattr(module.psycopg, "connect", counting)
    return seen


def test_a_current_database_costs_one_connection(db, opened):
    database = connection.Database(Settings(dsn=db.dsn))
    with database.connect() as conn:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # the check's one ended
        assert conn.execute("SELECT count(*) FROM ah.session").fetchone() == (0,)
    assert opened == [db.dsn]
    assert database.dsn == db.dsn  # resolved by the check: the next connection is a plain one
    with database.connect(autocommit=True) as again:
        assert again.autocommit and again.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert opened == [db.dsn, db.dsn]


def test_a_changed_sql_hash_takes_the_full_path_and_is_repaired(db, opened):
    with db.connect() as conn:
        conn.execute("UPDATE ah.meta SET value = 'stale' WHERE key = 'sql:20_pricing.sql'")
        conn.commit()
    database = connection.Database(Settings(dsn=db.dsn))
    database.connect().close()
    assert len(opened) > 2  # the check, then ensure_schema re-applying the file, then the command's
    digest = {name: d for name, _, d in migrate._sql_files()}["20_pricing.sql"]
    with db.connect() as conn:
        assert conn.execute("SELECT value FROM ah.meta WHERE key = 'sql:20_pricing.sql'").fetchone() == (digest,)
        assert migrate.schema_current(conn)


def test_a_newer_schema_is_still_refused_in_one_line(db, opened):
    with db.connect() as conn:
        conn.execute("UPDATE public.ah_alembic_version SET version_num = '9999_future'")
        conn.commit()
    with pytest.raises(SchemaTooNew) as err:
        connection.Database(Settings(dsn=db.dsn)).connect()
    assert "newer than this agent-history" in str(err.value) and "\n" not in str(err.value)
