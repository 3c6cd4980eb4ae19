"""Database roles (docs/design.md §5): the writer for the indexer and `ah_reader` for agents.

- ``ah_reader``: LOGIN, USAGE on schema `ah`, SELECT on every table (now and later, via default
  privileges) and on alembic's version table ``public.ah_alembic_version`` (the web status page
  shows the schema revision), ``default_transaction_read_only = on`` and a statement timeout. It owns nothing
  and holds no write privilege, so the MCP role guard accepts it.
- ``ah_writer``: LOGIN, SELECT/INSERT/UPDATE/DELETE on `ah` tables and sequences — for an
  indexer that should not own the schema on a shared server.
- ``ah_collector`` (issue 30): LOGIN, SELECT on every `ah` table, INSERT/UPDATE/DELETE only on
  the collector tables (`COLLECTOR_TABLES`) and their sequences — for `collect` run as a
  dedicated ingest role. No default privileges: a table added later is not writable by it.

Passwords come from the environment or the config file (`AGENT_HISTORY_READER_PASSWORD`,
`AGENT_HISTORY_WRITER_PASSWORD`), never from code; without one the role is created without a
password (usable over a trusted socket, as on the embedded server). Idempotent.
"""

from __future__ import annotations

import time

import psycopg
from psycopg import sql

from agent_history.db.migrate import MIGRATION_LOCK, VERSION_TABLE

READER = "ah_reader"
WRITER = "ah_writer"
COLLECTOR = "ah_collector"
ROLES_VERSION = 3
"""Bump when the grants below change, so existing databases get them on next use."""

COLLECTOR_TABLES: tuple[str, ...] = (
    "repository",
    "repo_commit",
    "repo_commit_file",
    "repo_push",
    "backlog_task",
    "backlog_status_change",
    "loop_state_line",
    "ci_run",
    "collect_issue",
    "installed_skill",  # migration 0022
    "permission_rule",
    "loop_run_metadata",
    "collect_run",
)
"""The tables `collect` writes (migrations 0019, 0022): authoritative data, kept by `rebuild`, the only
ones ``ah_collector`` may write."""


def _ensure_login_role(conn: psycopg.Connection, name: str, password: str | None) -> None:
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    verb = "ALTER" if exists else "CREATE"
    stmt = sql.SQL(verb + " ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE").format(sql.Identifier(name))
    if password:
        stmt = stmt + sql.SQL(" PASSWORD {}").format(sql.Literal(password))
    try:
        _retry_concurrent(conn, stmt)
    except psycopg.errors.DuplicateObject:
        pass  # created concurrently by another process


def ensure_roles(
    dsn: str,
    *,
    reader_password: str | None = None,
    writer_password: str | None = None,
    statement_timeout_ms: int = 30_000,
) -> list[str]:
    """Create/update `ah_reader`, `ah_writer` and `ah_collector` with their grants; returns the
    reader and writer names.

    Must run as the schema owner (or a superuser). Raises psycopg errors on failure.
    """
    marker = _marker(statement_timeout_ms, reader_password, writer_password)
    with psycopg.connect(dsn, autocommit=True) as conn:
        if _up_to_date(conn, marker):
            return [READER, WRITER, COLLECTOR]
        # Same lock as migrations: GRANT/REVOKE ON ALL TABLES must not race a migration or a
        # re-applied sql/*.sql file replacing a view ("tuple concurrently updated").
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            if _up_to_date(conn, marker):
                return [READER, WRITER, COLLECTOR]
            dbname = conn.info.dbname
            _ensure_login_role(conn, READER, reader_password)
            _ensure_login_role(conn, WRITER, writer_password)
            _ensure_login_role(conn, COLLECTOR, None)
            r, w, c = sql.Identifier(READER), sql.Identifier(WRITER), sql.Identifier(COLLECTOR)
            for stmt in (
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(sql.Identifier(dbname), r, w),
                sql.SQL("REVOKE CREATE ON SCHEMA ah FROM {}, {}").format(r, w),
                sql.SQL("GRANT USAGE ON SCHEMA ah TO {}, {}").format(r, w),
                sql.SQL("REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA ah FROM {}").format(r),
                sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA ah TO {}").format(r),
                sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ah TO {}").format(w),
                sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ah TO {}").format(w),
                sql.SQL("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ah TO {}, {}").format(r, w),
                sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA ah GRANT SELECT ON TABLES TO {}").format(r),
                sql.SQL(
                    "ALTER DEFAULT PRIVILEGES IN SCHEMA ah GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {}"
                ).format(w),
                sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA ah GRANT USAGE, SELECT ON SEQUENCES TO {}").format(w),
                sql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(r),
                sql.SQL("ALTER ROLE {} SET statement_timeout = {}").format(
                    r, sql.Literal(f"{int(statement_timeout_ms)}ms")
                ),
                sql.SQL("ALTER ROLE {} SET search_path = ah, public").format(r),
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(dbname), c),
                sql.SQL("REVOKE CREATE ON SCHEMA ah FROM {}").format(c),
                sql.SQL("GRANT USAGE ON SCHEMA ah TO {}").format(c),
                sql.SQL("REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA ah FROM {}").format(c),
                sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA ah TO {}").format(c),
            ):
                _retry_concurrent(conn, stmt)
            for table in COLLECTOR_TABLES:
                if conn.execute("SELECT to_regclass(%s)", (f"ah.{table}",)).fetchone()[0] is None:
                    continue  # a database before migration 0019
                _retry_concurrent(
                    conn,
                    sql.SQL("GRANT INSERT, UPDATE, DELETE ON {} TO {}").format(sql.Identifier("ah", table), c),
                )
            owned = conn.execute(
                "SELECT s.oid::regclass::text FROM pg_class AS s "
                "JOIN pg_depend AS d ON d.objid = s.oid AND d.deptype = 'a' "
                "JOIN pg_class AS t ON t.oid = d.refobjid "
                "WHERE s.relkind = 'S' AND t.relnamespace = 'ah'::regnamespace AND t.relname = ANY (%s)",
                (list(COLLECTOR_TABLES),),
            ).fetchall()
            for (seq,) in owned:  # the bigserial sequences of the collector tables
                _retry_concurrent(conn, sql.SQL("GRANT USAGE, SELECT ON SEQUENCE {} TO {}").format(sql.SQL(seq), c))
            if conn.execute("SELECT to_regclass(%s)", (f"public.{VERSION_TABLE}",)).fetchone()[0] is not None:
                _retry_concurrent(
                    conn, sql.SQL("GRANT SELECT ON {} TO {}, {}").format(sql.Identifier("public", VERSION_TABLE), r, c)
                )
            conn.execute(
                "INSERT INTO ah.meta (key, value) VALUES ('roles', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
                (marker,),
            )
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return [READER, WRITER, COLLECTOR]


def roles_current(conn: psycopg.Connection, *, statement_timeout_ms: int = 30_000) -> bool:
    """True when `ensure_roles` with these settings (and no passwords, as the embedded server's
    first use calls it) has nothing to do: one query on `conn`."""
    return _up_to_date(conn, _marker(statement_timeout_ms, None, None))


def _marker(statement_timeout_ms: int, reader_password: str | None, writer_password: str | None) -> str:
    return f"v{ROLES_VERSION};timeout={int(statement_timeout_ms)};pw={bool(reader_password)}{bool(writer_password)}"


def _up_to_date(conn: psycopg.Connection, marker: str) -> bool:
    """True when this database's roles were set up with the same settings and still exist."""
    row = conn.execute(
        "SELECT value FROM ah.meta WHERE key = 'roles' "
        "AND (SELECT count(*) FROM pg_roles WHERE rolname IN (%s, %s, %s)) = 3",
        (READER, WRITER, COLLECTOR),
    ).fetchone()
    return row is not None and row[0] == marker


def _retry_concurrent(conn: psycopg.Connection, stmt, attempts: int = 5) -> None:
    """Run `stmt`, retrying when another database of the cluster alters the same role at once
    (roles are cluster-wide; advisory locks are per database)."""
    for i in range(attempts):
        try:
            conn.execute(stmt)
            return
        except psycopg.errors.InternalError_ as exc:
            if "concurrently" not in str(exc) or i == attempts - 1:
                raise
            time.sleep(0.1 * (i + 1))


def collector_role_problem(conn: psycopg.Connection) -> str | None:
    """None when the connection may run `collect`: as `COLLECTOR`, as the owner of schema `ah`
    (the embedded default) or a superuser; else a one-line reason."""
    user, owner, superuser = conn.execute(
        "SELECT current_user, (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'ah'), "
        "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
    ).fetchone()
    if user == COLLECTOR or user == owner or superuser:
        return None
    return f"collect runs as {COLLECTOR} or as the schema owner ({owner}), not as {user}: run `db roles` and connect as {COLLECTOR}"
