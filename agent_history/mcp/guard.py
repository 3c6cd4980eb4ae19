"""Role guard: refuse any role that could change the catalogue or reach the server's files.

docs/design.md §10. Run on every fresh connection before a tool does anything. Each check is one query
returning the offending objects (no rows = pass); a role passes only if every check passes.
"Roles it can become" means every role `r` with ``pg_has_role(current_user, r, 'MEMBER')``
(itself included), so privileges held through a NOINHERIT membership — usable after
``SET ROLE`` — are counted too.

Checks, in order (the first failure is reported; `GuardRefused.check` names it):

- ``schema``            schema ``ah`` exists and the role has USAGE on it (else nothing works).
- ``superuser``         the role, or a role it can become, is a superuser.
- ``owner``             it owns, or is a member of the owner of, schema ``ah`` or any table,
                        view, sequence or function in it.
- ``create``            it (or a role it can become) has CREATE on schema ``ah``.
- ``write``             INSERT/UPDATE/DELETE/TRUNCATE on any ``ah`` table or view, or UPDATE on
                        an ``ah`` sequence (predefined roles such as ``pg_write_all_data`` show up
                        here, since ``has_table_privilege`` counts them).
- ``server_files``      member of ``pg_execute_server_program``, ``pg_write_server_files`` or
                        ``pg_read_server_files``.
- ``read_only_default`` the session's ``default_transaction_read_only`` is not ``on`` (set it with
                        ``ALTER ROLE … SET default_transaction_read_only = on``, as
                        `agent_history.db.roles` does for ``ah_reader``).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

__all__ = ["CHECKS", "Check", "GuardRefused", "check_role"]


class GuardRefused(Exception):
    """The connected role failed a guard check. ``check`` is the check's name."""

    def __init__(self, check: str, role: str, message: str) -> None:
        super().__init__(f"refused by the role guard (check '{check}'): role {role} {message}")
        self.check = check
        self.role = role


@dataclass(frozen=True)
class Check:
    """One guard rule: `sql` returns one text column per offending object; `message` takes them."""

    name: str
    sql: str
    message: str  # formatted with {found}: the offending objects, comma-separated


# Roles the session user can become (itself included).
_MEMBER_OF = (
    "SELECT r.oid, r.rolname FROM pg_catalog.pg_roles AS r WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')"
)

CHECKS: tuple[Check, ...] = (
    Check(
        "schema",
        """
        SELECT 'schema ah is missing' WHERE pg_catalog.to_regnamespace('ah') IS NULL
        UNION ALL
        SELECT 'no USAGE on schema ah'
        WHERE pg_catalog.to_regnamespace('ah') IS NOT NULL
          AND NOT pg_catalog.has_schema_privilege(current_user, 'ah', 'USAGE')
        """,
        "cannot use the catalogue: {found}",
    ),
    Check(
        "superuser",
        f"SELECT m.rolname FROM ({_MEMBER_OF}) AS m JOIN pg_catalog.pg_roles AS r ON r.oid = m.oid WHERE r.rolsuper",
        "is or can become a superuser: {found}",
    ),
    Check(
        "owner",
        """
        WITH objects AS (
            SELECT 'schema ah' AS what, n.nspowner AS owner
            FROM pg_catalog.pg_namespace AS n WHERE n.nspname = 'ah'
            UNION ALL
            SELECT CASE c.relkind WHEN 'S' THEN 'sequence ' WHEN 'v' THEN 'view ' WHEN 'm' THEN 'view '
                                  ELSE 'table ' END || 'ah.' || c.relname, c.relowner
            FROM pg_catalog.pg_class AS c
            WHERE c.relnamespace = 'ah'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
            UNION ALL
            SELECT 'function ah.' || p.proname, p.proowner
            FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'ah'::regnamespace
        )
        SELECT o.what || CASE WHEN o.owner = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user)
                              THEN '' ELSE ' (owned by ' || pg_catalog.pg_get_userbyid(o.owner) || ', a role it is a member of)' END
        FROM objects AS o
        WHERE pg_catalog.pg_has_role(current_user, o.owner, 'MEMBER')
        ORDER BY 1
        LIMIT 5
        """,
        "owns, or is a member of the owner of: {found}",
    ),
    Check(
        "create",
        f"""
        SELECT m.rolname FROM ({_MEMBER_OF}) AS m
        WHERE pg_catalog.has_schema_privilege(m.oid, 'ah', 'CREATE')
        """,
        "has CREATE on schema ah (through: {found})",
    ),
    Check(
        "write",
        f"""
        SELECT DISTINCT p.priv || ' on ah.' || c.relname || CASE WHEN m.rolname = current_user THEN ''
                                                             ELSE ' (via ' || m.rolname || ')' END
        FROM ({_MEMBER_OF}) AS m
        CROSS JOIN pg_catalog.pg_class AS c
        CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p(priv)
        WHERE c.relnamespace = 'ah'::regnamespace
          AND ((c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_catalog.has_table_privilege(m.oid, c.oid, p.priv))
               OR (c.relkind = 'S' AND p.priv = 'UPDATE' AND pg_catalog.has_sequence_privilege(m.oid, c.oid, 'UPDATE')))
        ORDER BY 1
        LIMIT 5
        """,
        "has write privileges: {found}",
    ),
    Check(
        "server_files",
        """
        SELECT r.rolname FROM pg_catalog.pg_roles AS r
        WHERE r.rolname IN ('pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files')
          AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')
        ORDER BY 1
        """,
        "is a member of {found}",
    ),
    Check(
        "read_only_default",
        """
        SELECT 'default_transaction_read_only = ' || s.setting || ' (source: ' || s.source || ')'
        FROM pg_catalog.pg_settings AS s
        WHERE s.name = 'default_transaction_read_only' AND s.setting <> 'on'
        """,
        "does not have default_transaction_read_only = on: {found}; "
        "run ALTER ROLE <role> SET default_transaction_read_only = on",
    ),
)


def check_role(conn: psycopg.Connection) -> str:
    """Run every check on `conn`; return the role name, or raise `GuardRefused` on the first failure.

    Runs only catalogue queries (safe inside a read-only transaction). Raises psycopg errors if
    the catalogue queries themselves fail.
    """
    role = conn.execute("SELECT current_user").fetchone()[0]
    for check in CHECKS:
        found = [row[0] for row in conn.execute(check.sql).fetchall()]
        if found:
            raise GuardRefused(check.name, role, check.message.format(found=", ".join(found)))
    return role
