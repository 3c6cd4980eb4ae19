"""Column limits (`agent_history.model.limits`): every value a parser emits fits the catalogue, and
the limits table agrees with the migrated schema (btree key sizes, integer column types)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from datetime import UTC, datetime

import psycopg
import pytest

from agent_history.model.limits import (
    BTREE_MAX_BYTES,
    DIGEST_MARK,
    INT4_MAX,
    KEY_BYTES,
    MAX_TOKENS,
    PATH_BYTES,
    Kind,
    check_row,
    check_rows,
    column_limits,
    digest_form,
)
from agent_history.model.rows import (
    ROW_TYPES,
    FileTouchRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    ToolCallRow,
)
from agent_history.model.values import MAX_JSON_DEPTH, sanitize

# --- pure: what each kind of column accepts ---------------------------------------------------


def test_every_row_column_has_a_declared_limit_of_its_annotated_kind():
    for row_type in ROW_TYPES:
        limits = column_limits(row_type)
        assert list(limits) == list(row_type.columns())
    assert column_limits(ModelCallRow)["output"].kind is Kind.INT
    assert column_limits(ToolCallRow)["output"].kind is Kind.TEXT  # the same name, another meaning
    assert column_limits(SessionRow)["cwd"].hi == PATH_BYTES
    assert column_limits(SessionRow)["session_uid"].hi == KEY_BYTES


def test_an_over_long_key_becomes_a_stable_digest_within_the_limit_with_an_issue():
    uid = "s" * 300_000
    rows = check_rows([SessionRow("claude", uid, ""), MessageRow("claude", "m1", uid, "")], 1234, 5)
    session, message, issue = rows
    digest = hashlib.sha256(uid.encode()).hexdigest()
    assert session.session_uid == message.session_uid  # the same long key still joins its references
    assert session.session_uid.endswith(DIGEST_MARK + digest)
    assert len(session.session_uid.encode()) <= KEY_BYTES
    assert session.session_uid.startswith("s" * 400)
    assert issue == ParseIssueRow(
        "key_too_long",
        1234,
        5,
        "session.session_uid, message.session_uid: 300,000 bytes > 512; stored as its digest form",
    )
    assert check_rows([SessionRow("claude", uid, "")])[0].session_uid == session.session_uid  # stable


def test_a_digest_keeps_whole_characters_and_different_long_keys_apart():
    a, b = "é" * 1000 + "a", "é" * 1000 + "b"
    da, db = digest_form(a, KEY_BYTES), digest_form(b, KEY_BYTES)
    assert da != db
    assert len(da.encode()) <= KEY_BYTES and len(db.encode()) <= KEY_BYTES
    assert da.split(DIGEST_MARK)[0] == "é" * ((KEY_BYTES - len(DIGEST_MARK.encode()) - 64) // 2)


def test_a_key_at_the_limit_is_kept_as_written():
    uid = "k" * KEY_BYTES
    assert check_row(SessionRow("claude", uid, "")) == (SessionRow("claude", uid, ""), [])
    path = "/p" * (PATH_BYTES // 2)
    row = FileTouchRow("claude", "t", "s", "", path=path, op="read")
    assert check_row(row) == (row, [])


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (2**63, "9223372036854775808"),
        (int(1e30), "1000000000000000019884624838656"),
        (int(1e308), "10000000000000000109…23118336 (309 chars)"),
        (-5, "-5"),
        (MAX_TOKENS + 1, "1000000001"),
    ],
    ids=["2^63", "1e30", "1e308", "negative", "just-over"],
)
def test_token_counts_out_of_range_become_null_with_an_issue(value, shown):
    row = ModelCallRow("claude", "c", "s", "", output=value, input_uncached=7)
    kept, issue = check_rows([row], 99, 3)
    assert (kept.output, kept.input_uncached) == (None, 7)
    assert (issue.kind, issue.byte_offset, issue.line_number) == ("value_out_of_range", 99, 3)
    assert issue.detail == f"model_call.output: {shown} outside 0…1,000,000,000 tokens; stored NULL"


def test_a_bool_a_float_or_a_string_in_an_integer_column_is_null_with_an_issue():
    row = ModelCallRow("claude", "c", "s", "", output=True, cache_read=1.5, reasoning="12")
    kept, issue = check_rows([row], 0, 1)
    assert (kept.output, kept.cache_read, kept.reasoning) == (None, None, None)
    assert issue.kind == "bad_value"
    assert issue.detail == (  # in column order
        "model_call.cache_read: float 1.5 where an integer is expected; stored NULL; "
        "model_call.output: bool True where an integer is expected; stored NULL; "
        "model_call.reasoning: str '12' where an integer is expected; stored NULL"
    )


def test_an_exit_code_must_fit_the_integer_column_and_a_cost_must_be_finite():
    kept, issue = (
        check_rows(
            [
                ToolCallRow("claude", "t", "s", "", exit_code=INT4_MAX + 1),
                ModelCallRow("claude", "c", "s", "", recorded_cost_usd=math.nan),
            ],
            0,
            1,
        )[0::2],
        check_rows([ModelCallRow("claude", "c", "s", "", recorded_cost_usd=math.inf)], 0, 1)[1],
    )
    assert kept[0].exit_code is None
    assert issue.detail == "model_call.recorded_cost_usd: inf outside 0…1e+06 USD; stored NULL"
    assert check_row(ToolCallRow("claude", "t", "s", "", exit_code=-9))[1] == []


def test_nul_and_lone_surrogates_in_any_text_column_become_replacement_characters():
    row = ToolCallRow("claude", "t\x00", "s", "", output="ok\x00\ud800", name="Bash")
    kept, issue = check_rows([row], 0, 1)
    assert (kept.tool_call_uid, kept.output) == ("t\ufffd", "ok\ufffd\ufffd")
    assert issue.kind == "lone_surrogate"
    assert issue.detail == "tool_call.tool_call_uid, tool_call.output: NUL or lone surrogate replaced by U+FFFD"


def test_a_row_missing_a_required_column_is_dropped_with_an_issue_and_the_others_are_kept():
    good = MessageRow("claude", "m", "s", "", text="hi")
    rows = check_rows([SessionRow("claude", None, ""), good, SessionRow("claude", 7, "")], 10, 2)  # type: ignore[arg-type]
    assert rows[0] == good
    assert rows[1] == ParseIssueRow(
        "bad_value",
        10,
        2,
        "session.session_uid: missing; row dropped; session.session_uid: int where text is expected; stored NULL; "
        "session.session_uid: required; row dropped",
    )


def test_jsonb_and_timestamp_columns_take_only_storable_values():
    attachments = [{"name": "a\x00", "size": math.nan, "deep": [[[[1]]]]}]
    kept, issue = check_rows([MessageRow("claude", "m", "s", "", attachments=attachments, ts="2025")], 0, 1)
    assert kept.attachments == [{"name": "a\ufffd", "size": None, "deep": [[[[1]]]]}]
    assert kept.ts is None
    assert issue.detail == (
        "message.ts: str '2025' where a timestamp is expected; stored NULL; "
        "message.attachments: 1 NaN/Infinity number(s) read as null; "
        "1 string(s) with NUL or lone surrogates: replaced by U+FFFD"
    )
    ok = MessageRow("claude", "m", "s", "", ts=datetime(1, 1, 1, tzinfo=UTC), attachments=[{"size": 3}])
    assert check_row(ok) == (ok, [])


def test_rows_without_a_record_offset_take_their_own_position():
    row = dataclasses.replace(ModelCallRow("claude", "c", "s", "", output=-1), byte_offset=4096, line_number=9)
    issue = check_rows([row])[1]
    assert (issue.byte_offset, issue.line_number) == (4096, 9)
    assert check_rows([RecordTypeRow("claude", "x", "", "k", count=0)])[1].byte_offset == 0


def test_sanitize_bounds_any_depth_without_recursion():
    value: list = []
    for _ in range(100_000):
        value = [value]
    out, rep = sanitize({"a": value})
    assert rep.too_deep == 1
    depth, node = 1, out["a"]
    while isinstance(node, list) and node:
        depth, node = depth + 1, node[0]
    assert node is None and depth == MAX_JSON_DEPTH


# --- against the migrated schema -----------------------------------------------------------------

_ROW_TABLES = {t.TABLE: t for t in ROW_TYPES}
NOT_FROM_TRANSCRIPTS = {
    "namespace": "a configured source's name (discovery)",
    "thread_role": "derived by the efficiency post-pass from a fixed set of roles",
    "origin_host": "this machine's configured or system host name (config.check_host_name bounds it)",
}
"""Indexed text columns whose values no transcript writes, so no row check bounds them."""


def _btree_text_keys(conn: psycopg.Connection) -> list[tuple[str, str, list[str]]]:
    """(table, index, text columns) of every btree index over a row-model table."""
    rows = conn.execute(
        """
        SELECT c.relname, i.relname, array_agg(a.attname ORDER BY k.n)
        FROM pg_index x
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_class c ON c.oid = x.indrelid
        JOIN pg_namespace ns ON ns.oid = c.relnamespace
        JOIN pg_am am ON am.oid = i.relam
        CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
        WHERE ns.nspname = 'ah' AND am.amname = 'btree' AND a.atttypid = 'text'::regtype
          AND c.relname = ANY(%s)
        GROUP BY c.relname, i.relname
        """,
        (list(_ROW_TABLES),),
    ).fetchall()
    return [(t, i, list(cols)) for t, i, cols in rows]


def test_every_btree_text_key_of_the_catalogue_fits_the_btree_row_limit(db):
    with db.connect() as conn:
        indexes = _btree_text_keys(conn)
    assert len(indexes) >= 15  # natural keys, cwd, paths, shas, labels
    for table, index, columns in indexes:
        limits = column_limits(_ROW_TABLES[table])
        columns = [c for c in columns if c not in NOT_FROM_TRANSCRIPTS]
        for c in columns:
            assert limits[c].kind is Kind.KEY, f"{table}.{c} is in btree index {index} but is free text"
        total = sum(int(limits[c].hi) for c in columns)
        assert total + 64 <= BTREE_MAX_BYTES, f"{index}: {total} bytes of keys"


def test_integer_ranges_fit_their_database_columns(db):
    with db.connect() as conn:
        types = {
            (t, c): d
            for t, c, d in conn.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'ah' AND table_name = ANY(%s)",
                (list(_ROW_TABLES),),
            )
        }
    bounds = {"integer": 2**31 - 1, "bigint": 2**63 - 1}
    for table, row_type in _ROW_TABLES.items():
        for column, limit in column_limits(row_type).items():
            if limit.kind is Kind.INT:
                top = bounds[types[(table, column)]]
                assert -top - 1 <= limit.lo and limit.hi <= top, f"{table}.{column}: {limit.describe()}"
