"""The `sql` tool over stdio (DESIGN §10): one statement, read-only, 200 rows, 2,000-char cells, 30 s."""

from __future__ import annotations

import time

import pytest

from tests.mcp_client import call, call_tools, server_env


@pytest.fixture
def env(db, own_tmp):
    return server_env(db.dsn, db.reader_dsn, own_tmp)


def test_a_second_statement_is_rejected_by_the_extended_protocol(env):
    result = call(env, "sql", {"statement": "SELECT 1; SELECT 2"})
    assert result.is_error
    assert "cannot insert multiple commands into a prepared statement" in result.text
    assert "exactly one statement" in result.text


def test_a_trailing_semicolon_is_still_one_statement(env):
    data = call(env, "sql", {"statement": "SELECT 41 + 1 AS answer;"}).data
    assert data["columns"] == [{"name": "answer", "type": "int4"}]
    assert data["rows"] == [[42]]
    assert data["truncated"] is None


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM ah.meta",
        "INSERT INTO ah.meta (key, value) VALUES ('mcp', 'write')",
        "UPDATE ah.meta SET value = 'x'",
        "CREATE TABLE ah.mcp_probe (a int)",
        "WITH d AS (DELETE FROM ah.meta RETURNING 1) SELECT count(*) FROM d",
        "SELECT nextval('ah.session_id_seq')",
    ],
)
def test_writes_fail_in_the_read_only_transaction(env, db, statement):
    with db.connect() as conn:
        before = conn.execute("SELECT count(*) FROM ah.meta").fetchone()[0]
    result = call(env, "sql", {"statement": statement})
    assert result.is_error
    assert "read-only transaction" in result.text or "permission denied" in result.text
    with db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ah.meta").fetchone()[0] == before
        assert conn.execute("SELECT to_regclass('ah.mcp_probe')").fetchone()[0] is None


def test_read_write_cannot_be_switched_back_on(env):
    result = call(env, "sql", {"statement": "SET TRANSACTION READ WRITE"})
    assert result.is_error
    assert "read-write mode must be set before any query" in result.text


def test_250_rows_come_back_as_200_with_a_truncation_note(env):
    data = call(env, "sql", {"statement": "SELECT g FROM generate_series(1, 250) AS g"}).data
    assert data["row_count"] == 200
    assert data["rows"][0] == [1] and data["rows"][-1] == [200]
    assert "first 200 rows" in data["truncated"]


def test_a_5000_character_cell_is_cut_to_2000(env):
    data = call(env, "sql", {"statement": "SELECT repeat('x', 5000) AS long, 'short' AS short"}).data
    assert len(data["rows"][0][0]) == 2000
    assert data["rows"][0][1] == "short"
    assert data["cells_cut"] == 1 and data["cell_limit"] == 2000


def test_an_empty_result_still_names_its_columns_and_the_scope(env):
    data = call(env, "sql", {"statement": "SELECT key, value FROM ah.meta WHERE false"}).data
    assert [c["name"] for c in data["columns"]] == ["key", "value"]
    assert data["rows"] == []
    assert data["scope"]["context"] == "all"


def test_errors_are_one_line_and_the_server_keeps_serving(env):
    _, results = call_tools(
        env,
        [
            ("sql", {"statement": "SELEC 1"}),
            ("sql", {"statement": "SELECT 1/0"}),
            ("sql", {"statement": "SELECT 'still here'"}),
        ],
    )
    assert results[0].is_error and 'syntax error at or near "SELEC"' in results[0].text
    assert results[1].is_error and "division by zero" in results[1].text
    assert results[2].data["rows"] == [["still here"]]


@pytest.mark.slow
def test_pg_sleep_40_is_cancelled_at_30_seconds(env):
    started = time.monotonic()
    result = call(env, "sql", {"statement": "SELECT pg_sleep(40)"})
    elapsed = time.monotonic() - started
    assert result.is_error
    assert "canceling statement due to statement timeout" in result.text
    assert 29 <= elapsed < 38, elapsed
