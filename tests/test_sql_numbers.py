"""`agent-history sql` prints numbers as PostgreSQL writes them: a ``sum(bigint)`` (a ``numeric``)
is ``4326``, never ``4326.0``; ``12.50`` keeps its scale; in the table, CSV and JSON alike (JSON:
a number of those very digits; NaN and the infinities, which no JSON number holds, as strings).
The real CLI against a test database; `mcp.sqltool.number_text` is the rule."""

from __future__ import annotations

import json
from decimal import Decimal

from agent_history.mcp.sqltool import number_text
from tests.homes import cli

STATEMENT = (
    "SELECT sum(x) AS s, 12.50::numeric AS p, 0.0000001::numeric AS tiny, 'NaN'::numeric AS nan, "
    "2::float8 AS f, 0.25::float8 AS q, NULL::numeric AS n FROM (VALUES (4000::bigint), (326)) AS t(x)"
)


def test_number_text_is_postgresqls():
    assert [number_text(Decimal(t)) for t in ("4326", "12.50", "1E-7", "-0.5", "NaN", "Infinity", "-Infinity")] == [
        "4326",
        "12.50",
        "0.0000001",
        "-0.5",
        "NaN",
        "Infinity",
        "-Infinity",
    ]
    assert [number_text(v) for v in (4326.0, 0.25, 1e16, float("nan"), float("-inf"))] == [
        "4326",
        "0.25",
        "1e+16",
        "NaN",
        "-Infinity",
    ]


def test_sql_prints_numeric_sums_exactly_in_every_format(cli_env):
    table = cli("sql", STATEMENT, env={**cli_env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[2].split() == ["4326", "12.50", "0.0000001", "NaN", "2", "0.25", "NULL"]
    as_csv = cli("sql", "--csv", STATEMENT, env=cli_env)
    assert as_csv.returncode == 0, as_csv.stderr
    assert as_csv.stdout == "s,p,tiny,nan,f,q,n\n4326,12.50,0.0000001,NaN,2,0.25,\n"
    as_json = cli("sql", "--json", STATEMENT, env=cli_env)
    assert as_json.returncode == 0, as_json.stderr
    assert '"rows": [\n    [\n      4326,\n      12.50,\n      0.0000001,\n      "NaN",\n      2,\n      0.25,\n' in (
        as_json.stdout
    )
    assert json.loads(as_json.stdout)["rows"] == [[4326, 12.5, 1e-07, "NaN", 2, 0.25, None]]
