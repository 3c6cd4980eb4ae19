"""The MCP role guard (docs/design.md §10): each kind of unsafe role is refused, over stdio, naming the check.

Every role here starts from a *proper* reader (LOGIN, USAGE on `ah`, SELECT on its tables,
``default_transaction_read_only = on``) and then gets exactly one unsafe property, so a refusal
can only come from the check under test. A role built from the same base with nothing added
passes, as does `ah_reader` itself.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

from tests.mcp_client import call, server_env

# check name → statements that give role {r} (and helper role {o}) exactly one unsafe property
UNSAFE = {
    "superuser": ["ALTER ROLE {r} SUPERUSER"],
    "owner": ["ALTER TABLE ah.meta OWNER TO {r}"],
    "owner_member": ["CREATE ROLE {o} NOLOGIN", "ALTER TABLE ah.meta OWNER TO {o}", "GRANT {o} TO {r}"],
    "create": ["GRANT CREATE ON SCHEMA ah TO {r}"],
    "write": ["GRANT INSERT ON ah.message TO {r}"],
    "pg_execute_server_program": ["GRANT pg_execute_server_program TO {r}"],
    "pg_write_server_files": ["GRANT pg_write_server_files TO {r}"],
    "pg_read_server_files": ["GRANT pg_read_server_files TO {r}"],
    "read_only_default": ["ALTER ROLE {r} RESET default_transaction_read_only"],
}
EXPECTED_CHECK = {
    "owner_member": "owner",
    "pg_execute_server_program": "server_files",
    "pg_write_server_files": "server_files",
    "pg_read_server_files": "server_files",
}
EXPECTED_TEXT = {
    "superuser": "superuser",
    "owner": "table ah.meta",
    "owner_member": "a role it is a member of",
    "create": "CREATE on schema ah",
    "write": "INSERT on ah.message",
    "pg_execute_server_program": "pg_execute_server_program",
    "pg_write_server_files": "pg_write_server_files",
    "pg_read_server_files": "pg_read_server_files",
    "read_only_default": "default_transaction_read_only = off",
}


@pytest.fixture
def make_role(db):
    """Create a proper reader role plus `extra` statements; drop everything afterwards."""
    created: list[str] = []
    admin = psycopg.connect(db.server.dsn(db.name), autocommit=True)

    def make(extra: list[str]) -> str:
        suffix = uuid.uuid4().hex[:8]
        r, o = f"ah_guard_{suffix}", f"ah_guard_owner_{suffix}"
        created.extend([r, o])
        for stmt in [
            "CREATE ROLE {r} LOGIN",
            "GRANT USAGE ON SCHEMA ah TO {r}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA ah TO {r}",
            "ALTER ROLE {r} SET default_transaction_read_only = on",
            *extra,
        ]:
            admin.execute(stmt.format(r=r, o=o))
        return r

    yield make
    for role in created:
        if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            admin.execute(f"REASSIGN OWNED BY {role} TO postgres")
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")
    admin.close()


@pytest.mark.parametrize("kind", list(UNSAFE))
def test_unsafe_role_is_refused_naming_the_check(kind, db, make_role, own_tmp):
    role = make_role(UNSAFE[kind])
    env = server_env(db.dsn, db.server.dsn(db.name, user=role), own_tmp)
    result = call(env, "sql", {"statement": "SELECT 1"})
    assert result.is_error, result.text
    check = EXPECTED_CHECK.get(kind, kind)
    assert f"refused by the role guard (check '{check}')" in result.text
    assert f"role {role}" in result.text
    assert EXPECTED_TEXT[kind] in result.text


def test_a_role_with_only_the_reader_grants_passes(db, make_role, own_tmp):
    role = make_role([])
    env = server_env(db.dsn, db.server.dsn(db.name, user=role), own_tmp)
    assert call(env, "sql", {"statement": "SELECT current_user"}).data["rows"] == [[role]]


def test_ah_reader_passes_and_every_tool_is_guarded(db, own_tmp):
    env = server_env(db.dsn, db.reader_dsn, own_tmp)
    assert call(env, "sql", {"statement": "SELECT current_user"}).data["rows"] == [["ah_reader"]]
    owner_env = server_env(db.dsn, db.dsn, own_tmp)  # the owner as "reader": refused by every tool
    for tool, args in [("schema", {}), ("search", {"query": "x"}), ("active_sessions", {})]:
        result = call(owner_env, tool, args)
        assert result.is_error and "refused by the role guard" in result.text
