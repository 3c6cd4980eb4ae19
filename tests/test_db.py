"""Foundation: migrations, natural keys, roles, embedded server sharing, `db status` and its errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.db.migrate import current_revision, downgrade, head_revision, upgrade
from agent_history.db.status import CORE_TABLES
from agent_history.db.tables.merges import conflict_target, pg_type, stored_column
from agent_history.model.rows import ROW_TYPES

PY = sys.executable


def run_cli(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_migrations_run_up_from_empty_and_down_again(db):
    downgrade(db.dsn, "base")
    with db.connect() as conn:
        assert current_revision(conn) is None
        assert conn.execute("SELECT to_regnamespace('ah')").fetchone()[0] is None
    upgrade(db.dsn)
    with db.connect() as conn:
        assert current_revision(conn) == head_revision()
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'ah'")}
    assert set(CORE_TABLES) <= tables


def test_every_core_table_has_its_natural_key_constraint(db):
    # a key column the table keeps as its digest (`merges.KEY_DIGESTS`) is keyed by that column; one
    # it keeps as text under an expression key, by the column's digest (a unique index, no constraint)
    expected = {
        t.TABLE: (["source_id"] if t.PER_SOURCE else [])
        + [conflict_target(t, c).removeprefix("(").removesuffix(")") for c in t.key_columns()]
        for t in ROW_TYPES
    }
    assert expected["file_touch"] == ["agent", "touch_key"]
    assert expected["message"] == ["agent", "ah.key_digest(message_uid)"]
    with db.connect() as conn:
        rows = conn.execute(
            """
            SELECT i.indrelid::regclass::text, array_agg(pg_get_indexdef(i.indexrelid, k.ord::int, true) ORDER BY k.ord),
                   bool_or(c.oid IS NOT NULL)
            FROM pg_index i
            JOIN pg_class x ON x.oid = i.indexrelid
            CROSS JOIN LATERAL generate_series(1, i.indnkeyatts) AS k(ord)
            LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.contype = 'u'
            WHERE i.indisunique AND x.relnamespace = 'ah'::regnamespace AND x.relname LIKE '%natural_key'
            GROUP BY i.indrelid, i.indexrelid
            """
        ).fetchall()
    found = {table.removeprefix("ah."): cols for table, cols, _ in rows}
    assert found == expected
    # the plain keys are constraints; the expression keys cannot be
    constraints = {table.removeprefix("ah.") for table, _, is_constraint in rows if is_constraint}
    assert constraints == {t for t, cols in expected.items() if not any("(" in c for c in cols)}
    assert {"message", "tool_call", "model_call"}.isdisjoint(constraints)


def test_every_row_field_has_a_column_of_the_same_type(db):
    import dataclasses

    with db.connect() as conn:
        for t in ROW_TYPES:
            cols = dict(
                conn.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema='ah' AND table_name=%s",
                    (t.TABLE,),
                ).fetchall()
            )
            for f in dataclasses.fields(t):
                if f.name in ("session_uid", "agent_id") and t.TABLE != "session":
                    continue  # stored as session_id
                want = {
                    "text": "text",
                    "bigint": "bigint",
                    "boolean": "boolean",
                    "jsonb": "jsonb",
                    "numeric": "numeric",
                    "timestamptz": "timestamp with time zone",
                }[pg_type(str(f.type))]
                if stored_column(t, f.name) != f.name:  # kept as its digest (`merges.KEY_DIGESTS`)
                    assert (f.name in cols, cols.get(stored_column(t, f.name))) == (False, "uuid"), (t.TABLE, f.name)
                    continue
                assert cols.get(f.name) in (want, "integer" if want == "bigint" else want), (t.TABLE, f.name)


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO ah.meta (key, value) VALUES ('x', 'y')",
        "UPDATE ah.meta SET value = 'z'",
        "DELETE FROM ah.meta",
        "CREATE TABLE ah.evil (id int)",
        "TRUNCATE ah.meta",
    ],
)
def test_reader_role_cannot_write(db, statement):
    with psycopg.connect(db.reader_dsn) as conn:
        with pytest.raises(psycopg.errors.Error) as err:
            conn.execute(statement)
    assert err.value.sqlstate in ("25006", "42501")  # read-only transaction / insufficient privilege


def test_reader_role_reads_with_read_only_default_and_timeout(db):
    with psycopg.connect(db.reader_dsn) as conn:
        assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "30s"
        assert conn.execute("SELECT value FROM ah.meta WHERE key = 'keyword_backend'").fetchone()[0] == "fts"
        conn.execute("SET default_transaction_read_only = off")  # even then, no privilege
        conn.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO ah.meta (key, value) VALUES ('x', 'y')")


def test_two_processes_starting_the_embedded_server_share_one(cli_env, own_tmp):
    """Two `db status` runs on a fresh data dir: one server starts, both migrate safely."""
    env = {k: v for k, v in cli_env.items() if k not in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN")}
    env["AGENT_HISTORY_DATA_DIR"] = str(own_tmp / "shared-data")
    cmd = [PY, "-m", "agent_history", "db", "status", "--json"]
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    try:
        assert [p.returncode for p in procs] == [0, 0], [o[1][-800:] for o in outs]
        first, second = (json.loads(o[0]) for o in outs)
        assert first["server"] == second["server"] == f"embedded server {own_tmp / 'shared-data' / 'pg'}"
        assert first["schema_at_head"] and second["schema_at_head"]
        pid_file = own_tmp / "shared-data" / "pg" / "postmaster.pid"
        assert pid_file.exists()
    finally:
        from agent_history.db.embedded import stop

        assert stop(own_tmp / "shared-data" / "pg") is True


def test_db_status_json_reports_versions_backend_revision_and_counts(cli_env):
    out = run_cli("db", "status", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["postgres_version"].startswith("18.")
    assert data["pgvector_version"].startswith("0.8.")
    assert data["keyword_backend"] == "fts"
    assert data["schema_revision"] == head_revision()
    assert data["schema_at_head"] is True
    assert data["embedded"] is False
    assert set(data["row_counts"]) == set(CORE_TABLES)
    assert data["row_counts"]["session"] == 0


def _one_line_error(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]


def test_unreachable_server_is_one_line_error(cli_env, tmp_path):
    env = {**cli_env, "AGENT_HISTORY_DSN": f"host={tmp_path}/nowhere dbname=x user=y"}
    line = _one_line_error(run_cli("db", "status", env=env))
    assert "cannot reach the database" in line


def test_auth_failure_is_one_line_error(cli_env, db):
    env = {**cli_env, "AGENT_HISTORY_DSN": db.server.dsn(db.name, user="no_such_role")}
    line = _one_line_error(run_cli("db", "status", env=env))
    assert "authentication failed" in line


def test_unwritable_data_dir_is_one_line_error(cli_env, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = {k: v for k, v in cli_env.items() if k != "AGENT_HISTORY_DSN"}
    env["AGENT_HISTORY_DATA_DIR"] = str(blocker / "data")
    line = _one_line_error(run_cli("db", "status", env=env))
    assert "data dir" in line


def test_schema_newer_than_code_is_one_line_error(cli_env, db):
    with db.connect() as conn:
        conn.execute("UPDATE public.ah_alembic_version SET version_num = '9999_future'")
    line = _one_line_error(run_cli("db", "status", env=cli_env))
    assert "newer than this agent-history" in line


def test_python_dash_m_and_version_flag_work(cli_env):
    out = run_cli("--version", env=cli_env)
    assert out.returncode == 0 and out.stdout.startswith("agent-history ")


def test_sql_files_are_reapplied_only_when_their_hash_changes(db):
    from agent_history.db.migrate import apply_sql_files

    assert apply_sql_files(db.dsn) == []  # template already applied every file
    names = apply_sql_files(db.dsn, force=True)
    assert names == sorted(p.name for p in (Path(__file__).parents[1] / "sql").glob("*.sql"))


def test_roles_command_is_idempotent(cli_env):
    for _ in range(2):
        out = run_cli("db", "roles", env=cli_env)
        assert out.returncode == 0, out.stderr
        assert "ah_reader" in out.stdout


_ = os


def test_scratch_server_is_private_and_removed_afterwards():
    from agent_history.db.embedded import dsn_or_scratch

    with dsn_or_scratch("host=/given dbname=x") as given:
        assert given == "host=/given dbname=x"
    with dsn_or_scratch(None, "ah-test-scratch-") as dsn:
        with psycopg.connect(dsn) as conn:
            pgdata = Path(conn.execute("SHOW data_directory").fetchone()[0])
        assert pgdata.parent.name.startswith("ah-test-scratch-") and pgdata.is_dir()
    assert not pgdata.parent.exists()
