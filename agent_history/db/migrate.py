"""Schema migrations (alembic, raw-SQL revisions) and re-application of `sql/*.sql`.

`ensure_schema(dsn)` is what every command calls on first use: under an advisory lock it
upgrades to head if needed, then re-applies each `sql/*.sql` whose sha256 differs from the one
recorded in ``ah.meta`` (key ``sql:<file name>``). Files are applied in name order and must be
idempotent (``CREATE OR REPLACE``).
"""

from __future__ import annotations

import hashlib

import psycopg
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from agent_history.db.errors import SchemaTooNew
from agent_history.db.resources import migrations_dir, sql_dir

VERSION_TABLE = "ah_alembic_version"
MIGRATION_LOCK = 0x61685F6D6967  # 'ah_mig': serialises concurrent first-use migrations


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    return cfg


def head_revision() -> str:
    """The newest revision this code knows."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def known_revisions() -> set[str]:
    """Every revision id in the script directory."""
    return {s.revision for s in ScriptDirectory.from_config(_config()).walk_revisions()}


def _engine(dsn: str):
    return create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(dsn), poolclass=pool.NullPool)


def current_revision(conn: psycopg.Connection) -> str | None:
    """The database's schema revision, or None for a fresh database."""
    exists = conn.execute("SELECT to_regclass(%s)", (f"public.{VERSION_TABLE}",)).fetchone()[0]
    if exists is None:
        return None
    row = conn.execute(f"SELECT version_num FROM public.{VERSION_TABLE}").fetchone()
    return row[0] if row else None


def check_not_newer(revision: str | None) -> None:
    """Raise SchemaTooNew when `revision` is unknown to this code."""
    if revision is not None and revision not in known_revisions():
        raise SchemaTooNew(
            f"database schema is at revision {revision}, newer than this agent-history (head {head_revision()}); "
            "upgrade agent-history"
        )


def _run(dsn: str, fn, *args) -> None:
    engine = _engine(dsn)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            cfg = _config()
            cfg.attributes["connection"] = conn
            fn(cfg, *args)
    finally:
        engine.dispose()


def upgrade(dsn: str, revision: str = "head") -> None:
    """Upgrade the schema to `revision`, then re-apply `sql/*.sql` (all of them when the
    revision moved, since a migration may have replaced objects they depend on)."""
    with psycopg.connect(dsn) as conn:
        before = current_revision(conn)
        check_not_newer(before)
    _run(dsn, command.upgrade, revision)
    with psycopg.connect(dsn) as conn:
        moved = current_revision(conn) != before
    apply_sql_files(dsn, force=moved)


def downgrade(dsn: str, revision: str = "base") -> None:
    """Downgrade the schema (``base`` drops schema `ah`). Recorded `sql/*.sql` hashes are
    forgotten, so the next upgrade re-applies every file."""
    _run(dsn, command.downgrade, revision)
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('ah.meta')").fetchone()[0] is not None:
            conn.execute("DELETE FROM ah.meta WHERE key LIKE 'sql:%%'")


def apply_sql_files(dsn: str, *, force: bool = False) -> list[str]:
    """Re-apply each `sql/*.sql` whose content hash changed; returns the names applied."""
    files = sorted(sql_dir().glob("*.sql"))
    applied = []
    with psycopg.connect(dsn) as conn:
        conn.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        for path in files:
            body = path.read_text()
            digest = hashlib.sha256(body.encode()).hexdigest()
            key = f"sql:{path.name}"
            row = conn.execute("SELECT value FROM ah.meta WHERE key = %s", (key,)).fetchone()
            if not force and row and row[0] == digest:
                continue
            conn.execute(body)
            conn.execute(
                "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
                (key, digest),
            )
            applied.append(path.name)
    return applied


def ensure_schema(dsn: str) -> None:
    """Bring a database to head on first use (cheap when already there)."""
    with psycopg.connect(dsn) as conn:
        rev = current_revision(conn)
    check_not_newer(rev)
    if rev != head_revision():
        upgrade(dsn)
    else:
        apply_sql_files(dsn)
