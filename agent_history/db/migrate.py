"""Schema migrations (alembic, raw-SQL revisions) and re-application of `sql/*.sql`.

`ensure_schema(dsn)` is what every command calls on first use: under an advisory lock it
upgrades to head if needed, then re-applies each `sql/*.sql` whose sha256 differs from the one
recorded in ``ah.meta`` (key ``sql:<file name>``), then reloads the list prices when the price
data key (`usage.prices.data_key`: the installed genai-prices version and our price rules)
differs from ``ah.meta['prices']`` (`db.prices.load_prices`), and the session-health rule and
harness capability table when their data key differs from ``ah.meta['health']``
(`db.health.load_health`). Files are applied in name order
and must be idempotent (``CREATE OR REPLACE``).

Start-up cost: the check is one version read plus one read of the recorded hashes and price key
(and a few stat calls for the library's version). alembic and
SQLAlchemy (about a second of imports) are imported only when an upgrade or downgrade runs; the
revision chain is read from the migration files' ``revision`` / ``down_revision`` assignments
(`revision_graph`), which a test compares with alembic's own script directory.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache

import psycopg

from agent_history.db.errors import SchemaTooNew
from agent_history.db.resources import migrations_dir, sql_dir

VERSION_TABLE = "ah_alembic_version"
MIGRATION_LOCK = 0x61685F6D6967  # 'ah_mig': serialises concurrent first-use migrations


def _config():
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    return cfg


@cache
def revision_graph() -> dict[str, str | None]:
    """{revision id: the revision it revises (None for the first)}, read from the top-level
    ``revision`` / ``down_revision`` assignments of ``migrations/versions/*.py`` without importing
    alembic (≈ 0.45 s of every command's start-up when the schema is already at head). Raises
    ValueError for a revision file without them."""
    graph: dict[str, str | None] = {}
    for path in sorted((migrations_dir() / "versions").glob("*.py")):
        found = {}
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in ("revision", "down_revision"):
                    found[node.targets[0].id] = ast.literal_eval(node.value)
        if "revision" not in found or "down_revision" not in found:
            raise ValueError(f"{path}: no top-level revision / down_revision")
        graph[found["revision"]] = found["down_revision"]
    return graph


def head_revision() -> str:
    """The newest revision this code knows (the one no other revision revises). Raises
    ValueError when the chain has no single head."""
    graph = revision_graph()
    heads = set(graph) - set(graph.values())
    if len(heads) != 1:
        raise ValueError(f"migrations have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


def known_revisions() -> set[str]:
    """Every revision id in the script directory."""
    return set(revision_graph())


def _engine(dsn: str):
    from sqlalchemy import create_engine, pool

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
    from alembic import command

    _run(dsn, command.upgrade, revision)
    with psycopg.connect(dsn) as conn:
        moved = current_revision(conn) != before
    apply_sql_files(dsn, force=moved)
    load_prices_if_changed(dsn, force=moved)
    load_health_if_changed(dsn, force=moved)


def downgrade(dsn: str, revision: str = "base") -> None:
    """Downgrade the schema (``base`` drops schema `ah`). Recorded `sql/*.sql` hashes are
    forgotten, so the next upgrade re-applies every file."""
    from alembic import command

    _run(dsn, command.downgrade, revision)
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('ah.meta')").fetchone()[0] is not None:
            conn.execute("DELETE FROM ah.meta WHERE key LIKE 'sql:%%'")


def _sql_files() -> list[tuple[str, str, str]]:
    """(file name, body, sha256 hex) of each `sql/*.sql`, in name order."""
    out = []
    for path in sorted(sql_dir().glob("*.sql")):
        body = path.read_text(encoding="utf-8")  # UTF-8 whatever the locale (the hashes are of UTF-8)
        out.append((path.name, body, hashlib.sha256(body.encode()).hexdigest()))
    return out


def _recorded_hashes(conn: psycopg.Connection) -> dict[str, str]:
    """The recorded ``sql:<file>`` hashes, the ``prices`` data key (`db.prices.PRICES_KEY`) and
    the ``health`` data key (`db.health.HEALTH_KEY`)."""
    rows = conn.execute(
        "SELECT key, value FROM ah.meta WHERE key LIKE 'sql:%%' OR key IN ('prices', 'health')"
    ).fetchall()
    return {key: value for key, value in rows}


def _prices_current(recorded: dict[str, str]) -> bool:
    from agent_history.usage.prices import data_key

    return recorded.get("prices") == data_key()


def load_prices_if_changed(dsn: str, *, force: bool = False) -> bool:
    """Reload the list prices when their data key changed (or `force`); True when it did."""
    with psycopg.connect(dsn) as conn:
        if not force and _prices_current(_recorded_hashes(conn)):
            return False
        from agent_history.db.prices import load_prices

        load_prices(conn)
    return True


def _health_current(recorded: dict[str, str]) -> bool:
    from agent_history.db.health import data_key

    return recorded.get("health") == data_key()


def load_health_if_changed(dsn: str, *, force: bool = False) -> bool:
    """Reload the session-health rule and the harness capability table when their data key
    changed (or `force`); True when it did (`db.health`)."""
    with psycopg.connect(dsn) as conn:
        if not force and _health_current(_recorded_hashes(conn)):
            return False
        from agent_history.db.health import load_health

        load_health(conn)
    return True


def apply_sql_files(dsn: str, *, force: bool = False) -> list[str]:
    """Re-apply each `sql/*.sql` whose content hash changed; returns the names applied."""
    applied = []
    with psycopg.connect(dsn) as conn:
        conn.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        recorded = _recorded_hashes(conn)
        for name, body, digest in _sql_files():
            key = f"sql:{name}"
            if not force and recorded.get(key) == digest:
                continue
            conn.execute(body)
            conn.execute(
                "INSERT INTO ah.meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
                (key, digest),
            )
            applied.append(name)
    return applied


def schema_current(conn: psycopg.Connection) -> bool:
    """True when the database of `conn` needs nothing from `ensure_schema`: at this code's head
    revision, every `sql/*.sql` hash, the price data key and the health data key as recorded —
    read-only, three queries on `conn` (what a command checks on its own connection before
    using it, `db.connection.Database.connect`). False for anything else, a newer schema
    included (`ensure_schema` then says why)."""
    rev = current_revision(conn)
    if rev is None or rev != head_revision():
        return False
    recorded = _recorded_hashes(conn)
    return (
        all(recorded.get(f"sql:{name}") == digest for name, _, digest in _sql_files())
        and _prices_current(recorded)
        and _health_current(recorded)
    )


def ensure_schema(dsn: str) -> None:
    """Bring a database to head on first use. When it is already there this is one connection,
    one version read and one read of the recorded `sql/*.sql` hashes — no lock, no alembic.
    Raises SchemaTooNew for a database newer than this code."""
    with psycopg.connect(dsn) as conn:
        rev = current_revision(conn)
        check_not_newer(rev)
        if rev == head_revision():
            recorded = _recorded_hashes(conn)
            if all(recorded.get(f"sql:{name}") == digest for name, _, digest in _sql_files()):
                if not _prices_current(recorded):
                    load_prices_if_changed(dsn)
                if not _health_current(recorded):
                    load_health_if_changed(dsn)
                return
    if rev != head_revision():
        upgrade(dsn)
    else:
        apply_sql_files(dsn)
        load_prices_if_changed(dsn)
        load_health_if_changed(dsn)
