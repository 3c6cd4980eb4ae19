"""Full-content snapshots of the catalogue for equality tests: `snapshot` (surrogate ids replaced
by natural keys: two catalogues built differently compare equal) and `catalogue_rows` (every
``ah`` table as it is, ids included: two loads of one home by two code paths or two trees —
tests/test_bulk_load.py, ``python -m benchmarks.same_catalogue``)."""

from __future__ import annotations

import psycopg

from agent_history.model.rows import ROW_TYPES, SessionRow

_SKIP = {
    "id",
    "session_id",
    "source_id",
    "child_session_id",
    "parent_session_id",
    "root_session_id",
    "repo_id",
    "rolled_up_at",
    "created_at",
    "text_sha256",
    "origin_host",  # which machine indexed it (migration 0024): compared by the hosts tests themselves
}


_TERM_FORM = (
    "(SELECT string_agg(s.lexeme || ':' || (get_byte(x.tf, u.i::int - 1) + 1), ' ' ORDER BY s.lexeme) "
    "FROM unnest(x.terms) WITH ORDINALITY AS u(id, i) JOIN ah.search_term AS s ON s.id = u.id)"
)
"""A tool call's ``terms``/``tf`` (migration 0028_term_ids) as ``lexeme:tf`` pairs in lexeme order:
the dictionary's ids depend on the order lexemes first arrived in, so two catalogues built in
different orders compare by the words (tests/test_bulk_load.py compares the ids themselves)."""


def snapshot(conn: psycopg.Connection, *, include_issues: bool = True) -> dict[str, list[tuple]]:
    """Every row of every row-model table, as sorted tuples; sessions referenced by natural key and
    source files by (namespace, rel_path) so two catalogues built differently compare equal."""
    out: dict[str, list[tuple]] = {}
    for t in ROW_TYPES:
        if t.PER_SOURCE and not include_issues:
            continue
        cols = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema='ah' AND table_name=%s "
                "ORDER BY ordinal_position",
                (t.TABLE,),
            )
            if r[0] not in _SKIP
        ]
        select = ", ".join(_TERM_FORM if c == "terms" else f"x.{c}::text" for c in cols if c != "tf")
        joins = " LEFT JOIN ah.source_file f ON f.id = x.source_id"
        extra = ", f.namespace, f.rel_path"
        if t is not SessionRow and not t.PER_SOURCE:
            joins += " JOIN ah.session s ON s.id = x.session_id"
            extra += ", s.agent, s.session_uid, s.agent_id"
        if t.TABLE == "parse_issue":
            select = select.replace("x.detail::text", "left(x.detail, 20)")
        rows = conn.execute(f"SELECT {select}{extra} FROM ah.{t.TABLE} x{joins}").fetchall()
        out[t.TABLE] = sorted(tuple("" if v is None else str(v) for v in r) for r in rows)
    return out


PASS_TIME_COLUMNS = frozenset(
    {"created_at", "updated_at", "first_seen_at", "last_indexed_at", "rolled_up_at", "noticed_at"}
)
"""Columns recording when a pass ran (the only ones that may differ between two loads)."""
PASS_TABLES = frozenset({"index_run"})
"""Tables recording the passes themselves."""


def catalogue_rows(conn: psycopg.Connection) -> dict[str, list[tuple]]:
    """Every row of every ``ah`` base table (ids included) as text, ``""`` for NULL, sorted; the
    `PASS_TIME_COLUMNS` and the `PASS_TABLES` left out. Table name → rows."""
    out = {}
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'ah' "
            "AND table_type = 'BASE TABLE' ORDER BY 1"
        )
    ]
    for table in tables:
        if table in PASS_TABLES:
            continue
        cols = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'ah' AND table_name = %s "
                "ORDER BY ordinal_position",
                (table,),
            )
            if r[0] not in PASS_TIME_COLUMNS
        ]
        rows = conn.execute(f"SELECT {', '.join(f'x.{c}::text' for c in cols)} FROM ah.{table} x").fetchall()
        out[table] = sorted(tuple("" if v is None else v for v in r) for r in rows)
    return out
