"""The `sql` tool over stdio (docs/design.md §10): one statement, read-only, 200 rows, 2,000-char cells, 30 s."""

from __future__ import annotations

import json
import subprocess
import sys

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
    # The server's own cancellation is the evidence (no wall-clock bound on a shared machine):
    # the limit in force for the tool's statement is 30 s, and pg_sleep(40) is cancelled by it.
    _, (limit, result) = call_tools(
        env,
        [
            ("sql", {"statement": "SELECT current_setting('statement_timeout') AS limit"}),
            ("sql", {"statement": "SELECT pg_sleep(40)"}),
        ],
    )
    assert limit.data["rows"] == [["30s"]]
    assert result.is_error
    assert "canceling statement due to statement timeout" in result.text


# Runs the tool's code path (guarded read-only connection + run_sql) in a fresh process and
# reports its peak resident memory: what the process received shows there. VmHWM, not
# getrusage's ru_maxrss, which keeps the parent's peak across fork + exec (the pytest process
# may hold a loaded model).
_PEAK_RSS = """
import json, re, sys
from agent_history.mcp.reader import guarded_connection
from agent_history.mcp.sqltool import run_sql
with guarded_connection(sys.argv[1]) as conn:
    data = run_sql(conn, sys.argv[2])
with open("/proc/self/status") as f:
    peak_kb = int(re.search(r"^VmHWM:\\s+(\\d+) kB", f.read(), re.M).group(1))
print(json.dumps({"data": data, "peak_mb": peak_kb // 1024}))
"""


@pytest.mark.parametrize("statement", ["select repeat('x', 300000000)", "SELECT repeat('x', 300000000) AS big ;\n"])
def test_a_300_mb_cell_is_cut_in_the_server_not_after_it_arrived(db, statement):
    run = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, db.reader_dsn, statement], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["data"]["rows"] == [["x" * 2000]] and out["data"]["cells_cut"] == 1
    assert out["peak_mb"] < 200  # receiving the value would take 300 MB (libpq's buffer) + 300 MB (the str)


def test_long_cells_of_every_variable_length_type_are_cut_and_short_ones_keep_their_type(env):
    _, results = call_tools(
        env,
        [
            (
                "sql",
                {
                    "statement": "SELECT 7 AS n, 2.5::numeric AS d, '{\"a\": [1, 2]}'::jsonb AS j, "
                    "timestamptz '2026-03-01 10:00:00+00' AS at, 'short' AS t, 'short' AS t, "
                    "decode('00ff', 'hex') AS b, ARRAY[1, 2] AS arr -- a comment at the end"
                },
            ),
            (
                "sql",
                {
                    "statement": "SELECT repeat('y', 2001) AS t, to_jsonb(repeat('z', 3000)) AS j, "
                    "decode(repeat('ab', 1500), 'hex') AS b, array_fill(7, ARRAY[1000]) AS arr;"
                },
            ),
            ("sql", {"statement": "SELECT g, repeat('w', 2500) FROM generate_series(1, 3) AS g ORDER BY g DESC"}),
            ("sql", {"statement": "SHOW default_transaction_read_only"}),
        ],
    )
    short = results[0].data
    assert [c["name"] for c in short["columns"]] == ["n", "d", "j", "at", "t", "t", "b", "arr"]
    assert short["rows"] == [[7, 2.5, {"a": [1, 2]}, "2026-03-01T10:00:00+00:00", "short", "short", "\\x00ff", [1, 2]]]
    assert short["cells_cut"] == 0
    long = results[1].data
    assert long["cells_cut"] == 4
    t, j, b, arr = long["rows"][0]
    assert t == "y" * 2000 and j == '"' + "z" * 1999 and b == "\\x" + "ab" * 999 and arr.startswith("{7,7,")
    assert len(arr) == 2000
    ordered = results[2].data
    assert [r[0] for r in ordered["rows"]] == [3, 2, 1] and ordered["cells_cut"] == 3
    assert results[3].data["rows"] == [["on"]]  # not a query: runs as written


def test_an_empty_statement_is_called_empty(env):
    blanks = ["  ;  ", ";", "-- only a comment", "/* nothing */ ;", "   "]
    _, results = call_tools(env, [("sql", {"statement": b}) for b in blanks])
    assert [(r.is_error, r.text) for r in results] == [(True, "empty statement: pass exactly one SQL statement")] * 5
