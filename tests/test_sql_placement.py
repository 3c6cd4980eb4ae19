"""The front ends hold no SQL (issue 26, "one query layer"): `cli/`, `mcp/` and `web/` parse their
input, call the read layer (`agent_history.read`, `agent_history.search`) and render. A string
constant (or f-string) that reads as a statement over schema ``ah`` — it starts with SELECT,
INSERT, UPDATE, DELETE, WITH or a FROM/JOIN fragment (keywords in capitals, as this
project writes SQL) and names ``ah.`` or ``'ah'`` — found in
those packages fails here, unless `ALLOWED` names its module with a reason. Pure (reads the
source with `ast`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

FRONT_ENDS = ("cli", "mcp", "web")

QUERY_LAYER = ("db", "session", "read", "search")
"""The packages that own the catalogue's statements (docs/design.md §3, "One query layer"): `db/`
(with `db/tables/`, the writers' statements by table family), `session/` (the session
vocabulary), the query modules of `read/` and `search/`. Migrations and `sql/` are not Python
modules of the package."""

PENDING: dict[str, str] = {}
"""Modules outside the query layer that still hold SQL over ``ah``, each with why (empty: none)."""

ALLOWED: dict[str, str] = {
    "mcp/guard.py": (
        "the read-only guard itself: it checks the connection's own role (superuser, owner, CREATE, "
        "write privileges, read-only default) before any tool runs; it belongs beside the connection it "
        "guards, not in the read layer whose statements it protects"
    ),
}
"""Front-end modules allowed to hold SQL over ``ah``, each with why."""

_STATEMENT = re.compile(
    r"^\s*\(?\s*(SELECT|INSERT|UPDATE|DELETE|WITH|FROM|(LEFT\s+|CROSS\s+)?JOIN"
    r"|CREATE|ALTER|DROP|TRUNCATE|LOCK|VACUUM|ANALYZE|REINDEX|COPY|MERGE)\b"
)
_SCHEMA = re.compile(r"\bah\.(\w|\{\})|'ah'")


def is_sql_over_ah(text: str) -> bool:
    """True when `text` reads as a statement (or FROM/JOIN fragment) over schema ``ah``."""
    return bool(_STATEMENT.match(text) and _SCHEMA.search(text))


def sql_literals(path: Path) -> list[int]:
    """Line numbers of the SQL literals over ``ah`` in the Python file `path` (f-strings are read
    with their placeholders as ``{}``)."""
    found = []
    parts: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.JoinedStr):
            parts |= {id(v) for v in node.values}
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            text = node.value
        else:
            continue
        if is_sql_over_ah(text):
            found.append(node.lineno)
    return found


def test_the_detector_sees_statements_fragments_and_f_strings(tmp_path):
    assert is_sql_over_ah("SELECT DISTINCT namespace FROM ah.source_file ORDER BY 1")
    assert is_sql_over_ah("\n  WITH keys AS (SELECT 1 FROM ah.message)")
    assert is_sql_over_ah("LEFT JOIN LATERAL (SELECT sh.grade FROM ah.session_health AS sh) AS h ON true")
    assert is_sql_over_ah("SELECT 1 FROM pg_class WHERE relnamespace = 'ah'::regnamespace")
    assert not is_sql_over_ah('One read-only statement, e.g. "SELECT agent FROM ah.session".')
    assert not is_sql_over_ah("SELECT current_user")  # not over the catalogue
    assert not is_sql_over_ah("select the sessions shown (ah.session has them)")  # prose: no statement shape
    module = tmp_path / "m.py"
    module.write_text('X = 1\nQ = f"SELECT NOT {X} FROM ah.session AS s"\nDOC = "a word"\n', encoding="utf-8")
    assert sql_literals(module) == [2]


def test_no_sql_literal_in_the_front_ends():
    package = REPO / "agent_history"
    found = sorted(
        f"{path.relative_to(package).as_posix()}:{line}"
        for front in FRONT_ENDS
        for path in (package / front).rglob("*.py")
        if path.relative_to(package).as_posix() not in ALLOWED
        for line in sql_literals(path)
    )
    assert found == [], "move these statements into a query module under agent_history/read/ (or search/)"


def test_no_sql_literal_outside_the_query_layer():
    package = REPO / "agent_history"
    found = sorted(
        f"{path.relative_to(package).as_posix()}:{line}"
        for path in package.rglob("*.py")
        if path.relative_to(package).parts[0] not in QUERY_LAYER
        and path.relative_to(package).as_posix() not in ALLOWED
        and path.relative_to(package).as_posix() not in PENDING
        for line in sql_literals(path)
    )
    assert found == [], "move these statements into the query layer (db/tables/ for writers, read/ for readers)"


def test_every_allowed_module_still_holds_sql():
    package = REPO / "agent_history"
    names = [*ALLOWED, *PENDING]
    assert [name for name in names if not sql_literals(package / name)] == [], "drop it from ALLOWED/PENDING"
