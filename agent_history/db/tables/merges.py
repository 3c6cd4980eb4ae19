"""SQL generated from the row model: staging tables and per-table merges (docs/design.md §5, §7).

For each row type the loader ``COPY``s pre-folded rows into a temp staging table, then runs one
``INSERT … SELECT … ON CONFLICT (natural key) DO UPDATE`` whose SET list applies each column's
merge policy (the SQL twin of `model.policy.merge_value`). The update is guarded by
``IS DISTINCT FROM`` so re-reading a copy (fork, archive) rewrites nothing and marks nothing
dirty. Every merge returns ``inserted`` per written row (``xmax = 0`` holds for a row version
the statement inserted, not for one its ``DO UPDATE`` wrote), so a pass can count new rows and
merged rows apart. Event rows name their session by ``(agent, session_uid, agent_id)``; the merge joins
``ah.session`` to store ``session_id``.

Also the statements that take a source file's rows out again (`purge_source`, `purge_missing_many`,
`delete_per_source`). Nothing here commits: every function runs in the caller's transaction (the
loader's one transaction per batch).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache

import psycopg

from agent_history.model.policy import Merge
from agent_history.model.rows import ROW_TYPES, FileTouchRow, MessageRow, ModelCallRow, Row, SessionRow, ToolCallRow

_SESSION_REF = ("session_uid", "agent_id")

READY_COLUMNS: tuple[str, ...] = ("search_text", "search_symbols")
"""Staging columns carrying the ready analysis (text, tsvector text; `ingest.search_ready`)."""

VECTOR_COLUMN = "tsv"
"""Staging column of a message carrying the row's vector computed ahead (on the loader's
analysis connection, `db.tables.ready_vectors`), NULL when none was sent: the merge then
computes it from the ready text (`READY_TSV`). A tool call's is `TERM_LISTS` instead."""

TERM_LISTS: tuple[tuple[str, str], ...] = (("lexemes", "text[]"), ("counts", "int2[]"))
"""Staging columns (name, type) of a `TERM_IDS` type carrying its vector computed ahead, in the
form its merge maps to term ids: the lexemes, and each one's tf (the number of its positions, a
lexeme without positions counts 1; 1–256) at the same index — `term_lists_sql` of the vector.
NULL when none was sent: `assign_terms_sql` fills them from the ready text. The positional
vector itself never crosses the server as text (docs/performance.md, decision 19)."""

READY_TSV: dict[type[Row], str] = {
    MessageRow: "ah.search_tsv_ready(s.search_text, s.search_symbols)",
    # the positional vector, mapped to term ids by the merge (`TERM_IDS`, migration 0028_term_ids)
    ToolCallRow: "ah.search_tsv_ready(s.search_text, s.search_symbols)",
}
"""Row type → the positional vector of a staged row from the ready text: what ``ah.message_tsv``
stores for a message, what a tool call's term ids are made of (``ah.search_tsv`` of
``ah.tool_call_doc``). Its keys are the row types whose vectors the loader sends ready
(`ingest.search_ready.READY` is the same set)."""

TERM_IDS: dict[type[Row], str] = {ToolCallRow: "tool_call"}
"""Row types whose vector is stored as term ids (``terms int4[]``, ``tf bytea``: migration
0028_term_ids) → their corpus in ``ah.search_term``. Before their merge, `assign_terms_sql` gives
the batch's new lexemes an id; the merge maps each staged vector (`TERM_LISTS`) to ``(terms, tf)``."""


def vector_columns(row_type: type[Row]) -> tuple[tuple[str, str], ...]:
    """Staging columns (name, type) of a `READY_TSV` type carrying its vector computed ahead:
    `TERM_LISTS` for a `TERM_IDS` type, else `VECTOR_COLUMN` (a ``tsvector``)."""
    return TERM_LISTS if row_type in TERM_IDS else ((VECTOR_COLUMN, "tsvector"),)


def term_lists_sql(vector: str) -> str:
    """A one-row ``SELECT`` of (``lexemes text[]``, ``counts int2[]``) — `TERM_LISTS` — of the
    SQL ``tsvector`` expression `vector`: its lexemes in the vector's order, each one's tf at the
    same index; two empty arrays for an empty vector. The one ``unnest`` of a positional vector
    on the ingest path (run per distinct text on the analysis connection, else in
    `assign_terms_sql`'s fill)."""
    return (
        "SELECT coalesce(array_agg(u.lexeme), '{}') AS lexemes, "
        "coalesce(array_agg(coalesce(nullif(cardinality(u.positions), 0), 1)::int2), '{}') AS counts "
        f"FROM unnest({vector}) AS u"
    )


CONTENT_COLUMNS: dict[type[Row], tuple[str, ...]] = {MessageRow: ("text", "role")}
"""Row types whose natural key (a harness's record uid) another session's file may reuse, and
the columns that must agree for a row of another session to merge into the stored one. Claude
Code re-emits a record with the same ``uuid`` and text under the new ``sessionId`` when a
session is resumed (FORMATS.md, "the same uuid appears in two Claude Code session files"): those
copies merge, counted once (owned by one session, `db.tables.claims`). A row of another session
whose content differs is a *uid conflict*: the stored row is kept and a `uid_conflict` parse
issue names both sessions."""

KEY_DIGESTS: dict[type[Row], dict[str, str]] = {
    FileTouchRow: {"touch_uid": "touch_key"},
    MessageRow: {"message_uid": "message_uid"},
    ToolCallRow: {"tool_call_uid": "tool_call_uid"},
    ModelCallRow: {"call_uid": "call_uid"},
}
"""Row types whose natural key is unique by the digest of a text key column, ``ah.key_digest(value)``
(the first 16 bytes of the value's SHA-256; migration 0029_touch_keys): row column → the table
column it is stored in. Two forms:

- **digest column** (mapped to another name): the table stores only the digest, a ``uuid``
  column. A touch's ``touch_uid`` is ``<tool call uid>:<op>:<path>``
  (`parsers.common.shell.touch_uid`, 106 bytes on average), whose three parts are columns of the
  row already; the 16-byte key cut ``ah.file_touch`` by 1.74 MB of a ×10 cold load
  (docs/performance.md, decision 15).
- **expression key** (mapped to itself): the table keeps the text — the harness's record id,
  which readers return and other rows name — and the natural key is the unique index
  ``(agent, ah.key_digest(column))`` (migration 0030_key_digests; −0.95 MB at ×10, decision 20).
  A lookup by the column uses the index only when it compares digests too:
  ``ah.key_digest(t.c) = ah.key_digest(x) AND t.c = x`` (`key_match`; the readers' own lookups,
  tests/test_key_digests.py).

Two keys of one agent share a digest with probability ≈ n² / 2¹²⁹ (≈ 7 × 10⁻²⁸ for the ≈ 680 k
touches of 1 M messages); the second would merge into the first. Staging keeps the row's text;
the merge (`conflict_target`), the purge and the claims compare digests (`stored_column`,
`stored_value`, `key_match`)."""


def _expression_key(row_type: type[Row], column: str) -> bool:
    """Whether `column` of `row_type` is kept as text under a unique index of its digest (`KEY_DIGESTS`)."""
    return KEY_DIGESTS.get(row_type, {}).get(column) == column


def stored_column(row_type: type[Row], column: str) -> str:
    """The table column that holds `row_type`'s row column `column` (`KEY_DIGESTS`, else itself)."""
    return KEY_DIGESTS.get(row_type, {}).get(column, column)


def stored_value(row_type: type[Row], column: str, value: str) -> str:
    """SQL for the stored form of the SQL expression `value` of row column `column`: its
    ``ah.key_digest`` when the table keeps a digest column (`KEY_DIGESTS`), else `value` itself."""
    stored = stored_column(row_type, column)
    return f"ah.key_digest({value})" if stored != column else value


def conflict_target(row_type: type[Row], column: str) -> str:
    """The ``ON CONFLICT`` target element of key column `column`: its stored column, or the
    indexed expression ``(ah.key_digest(column))`` of an expression key (`KEY_DIGESTS`)."""
    return f"(ah.key_digest({column}))" if _expression_key(row_type, column) else stored_column(row_type, column)


def key_match(row_type: type[Row], stored: str, value: Callable[[str], str]) -> str:
    """SQL condition: the row aliased `stored` of ``ah.<table>`` has the natural key whose key
    columns' values are the SQL expressions ``value(column)`` (a staged row's ``s.<column>``, a
    joined row's column) — digests compared where the table keeps one, and digests then texts
    for an expression key (so the lookup uses its index; `value(column)` appears twice)."""
    conds = []
    for c in row_type.key_columns():
        if _expression_key(row_type, c):
            conds.append(f"ah.key_digest({stored}.{c}) = ah.key_digest({value(c)}) AND {stored}.{c} = {value(c)}")
        else:
            conds.append(f"{stored}.{stored_column(row_type, c)} = {stored_value(row_type, c, value(c))}")
    return " AND ".join(conds)


STAGED_ORDER = "staged_n"
"""Staging column of the event types numbering the rows in the order the writer sent them: their
merge inserts them in that order, so new rows' ids follow the batch's fold order. A scan of the
staging table does not: a row smaller than the ones before it may land in an earlier page with
room left (the free-space map), so the scan's order — and with it a hash join's — depends on the
rows' sizes, which differ between a batch sent with its vectors and one sent with its ready text
(`vector_columns`); a bulk and an incremental load must give the same ids (tests/test_bulk_load.py)."""


def pg_type(annotation: str) -> str:
    """PostgreSQL type for a row field annotation (string form, from ``__future__`` annotations)."""
    a = annotation.replace(" ", "")
    if a.startswith("list") or a.startswith("dict"):
        return "jsonb"
    if "datetime" in a:
        return "timestamptz"
    if a.startswith("bool"):
        return "boolean"
    if a.startswith("int"):
        return "bigint"
    if a.startswith("float"):
        return "numeric"
    return "text"


def merge_expression(policy: Merge, column: str) -> str | None:
    """SQL for the merged value of `column` (``t`` = existing row, ``EXCLUDED`` = new)."""
    t, e = f"t.{column}", f"EXCLUDED.{column}"
    return {
        Merge.KEEP_FIRST: f"COALESCE({t}, {e})",
        Merge.LATEST: f"COALESCE({e}, {t})",
        Merge.MAX: f"GREATEST({t}, {e})",
        Merge.MIN: f"LEAST({t}, {e})",
        Merge.OR: f"COALESCE({t} OR {e}, {t}, {e})",
        Merge.SUM: f"COALESCE({t}, 0) + COALESCE({e}, 0)",
    }.get(policy)


def staging_name(row_type: type[Row]) -> str:
    """Temp staging table name for a row type."""
    return f"stg_{row_type.TABLE}"


@cache
def copy_sql(row_type: type[Row]) -> str:
    """The ``COPY … FROM STDIN`` filling `row_type`'s staging table, columns in `staging_columns`
    order (the writer sends each row's values, then ``source_id``, ``namespace`` and, for the
    `READY_TSV` types, the ready search text and the vector computed ahead)."""
    cols = ", ".join(staging_columns(row_type))
    return f"COPY {staging_name(row_type)} ({cols}) FROM STDIN"


@cache
def staging_columns(row_type: type[Row]) -> tuple[str, ...]:
    """Columns copied into staging: the row's fields plus ``source_id`` and ``namespace`` (and the
    ready search text and `vector_columns` of `READY_TSV` types)."""
    ready = (*READY_COLUMNS, *(c for c, _ in vector_columns(row_type))) if row_type in READY_TSV else ()
    return (*row_type.columns(), "source_id", "namespace", *ready)


@cache
def staging_ddl(row_type: type[Row]) -> str:
    """``CREATE TEMP TABLE`` for a row type's staging table (emptied at commit)."""
    cols = [f"{f.name} {pg_type(str(f.type))}" for f in dataclasses.fields(row_type)]  # type: ignore[arg-type]
    cols += ["source_id bigint", "namespace text"]
    if _is_event(row_type):  # not copied: numbered as they arrive
        cols.append(f"{STAGED_ORDER} bigint GENERATED ALWAYS AS IDENTITY")
    # consumed by the merge, never stored: kept out of line uncompressed (pglz-compressing them
    # in staging cost the server ~1 s per 100 MB of transcripts, docs/performance.md)
    if row_type in READY_TSV:
        cols += [f"{c} text STORAGE EXTERNAL" for c in READY_COLUMNS]
        cols += [f"{c} {t} STORAGE EXTERNAL" for c, t in vector_columns(row_type)]
    return f"CREATE TEMP TABLE IF NOT EXISTS {staging_name(row_type)} ({', '.join(cols)}) ON COMMIT DELETE ROWS"


def _is_event(row_type: type[Row]) -> bool:
    return row_type is not SessionRow and not row_type.PER_SOURCE


@cache
def merge_sql(row_type: type[Row]) -> str:
    """The ``INSERT … ON CONFLICT DO UPDATE`` merging staged rows of `row_type` into ``ah.<table>``.

    Every written row returns ``inserted`` (new, not merged); sessions and event rows also
    return the affected ``session_id`` (for dirty marks); per-source rows (parse issues,
    record-type counters) are keyed with ``source_id``.
    """
    table, stg = row_type.TABLE, staging_name(row_type)
    policies = row_type.policies()
    key = list(row_type.key_columns())
    if row_type is SessionRow:
        target = [*row_type.columns(), "namespace", "source_id"]
        select = [f"s.{c}" for c in target]
        source = f"{stg} s"
        conflict = key
        extra = {"namespace": Merge.KEEP_FIRST, "source_id": Merge.KEEP_FIRST}
        returning = " RETURNING t.id AS session_id, (t.xmax = 0) AS inserted"
    elif row_type.PER_SOURCE:
        target = ["source_id", *row_type.columns()]
        select = [f"s.{c}" for c in target]
        source = f"{stg} s"
        conflict = ["source_id", *key]
        extra = {}
        returning = " RETURNING (t.xmax = 0) AS inserted"
    else:
        own = [c for c in row_type.columns() if c not in _SESSION_REF]
        target = [*(stored_column(row_type, c) for c in own), "session_id", "source_id"]
        select = [stored_value(row_type, c, f"s.{c}") for c in own] + ["ses.id", "s.source_id"]
        if row_type is MessageRow:
            target.append("namespace")
            select.append("s.namespace")
        ids = ""
        if row_type in TERM_IDS:  # a new row's term ids: the staged vector mapped (re-observed: trigger)
            target += ["terms", "tf"]
            select += ["coalesce(m.terms, '{}')", "coalesce(m.tf, ''::bytea)"]
            ids = f" LEFT JOIN ({map_terms_sql(row_type)}) m ON m.n = s.{STAGED_ORDER}"
        elif row_type in READY_TSV:  # a new row's vector: sent, else from the ready text (re-observed: trigger)
            target.append("tsv")
            select.append(f"COALESCE(s.{VECTOR_COLUMN}, {READY_TSV[row_type]})")
        # in the order the rows were sent (`STAGED_ORDER`), whatever the join's plan
        source = (
            f"{stg} s JOIN ah.session ses ON ses.agent = s.agent "
            f"AND ses.session_uid = s.session_uid AND ses.agent_id = s.agent_id{ids} ORDER BY s.{STAGED_ORDER}"
        )
        conflict = [conflict_target(row_type, c) for c in key]
        extra = {"source_id": Merge.KEEP_FIRST}
        returning = " RETURNING t.session_id, (t.xmax = 0) AS inserted"
    sets, olds, news = [], [], []
    for col, policy in {**{c: policies[c] for c in target if c in policies}, **extra}.items():
        if col in _SESSION_REF and _is_event(row_type):
            continue
        expr = merge_expression(policy, col)
        if expr is None:
            continue
        sets.append(f"{col} = {expr}")
        olds.append(f"t.{col}")
        news.append(expr)
    where = (
        f" WHERE ({', '.join(olds)}) IS DISTINCT FROM ({', '.join(news)})"
        if len(sets) > 1
        else (f" WHERE {olds[0]} IS DISTINCT FROM {news[0]}" if sets else "")
    )
    if row_type in CONTENT_COLUMNS and sets:
        where += f" AND ({same_content(row_type, 't', 'EXCLUDED')} OR t.session_id = EXCLUDED.session_id)"
    action = f"DO UPDATE SET {', '.join(sets)}{where}" if sets else "DO NOTHING"
    return (
        f"INSERT INTO ah.{table} AS t ({', '.join(target)}) SELECT {', '.join(select)} FROM {source} "
        f"ON CONFLICT ({', '.join(conflict)}) {action}{returning}"
    )


@cache
def assign_terms_sql(row_type: type[Row]) -> str:
    """Before the merge of a `TERM_IDS` type: the staged rows sent without a vector get its
    `TERM_LISTS` from their ready text (`term_lists_sql` of `READY_TSV`, into staging: the
    expression the analysis connection runs, so the same lists), and each lexeme of the batch not
    yet in the dictionary is added with df 0 and the next id (``ah.search_term_id_seq``; in lexeme
    order, so a bulk and an incremental load number them alike). Lexemes already there take no id
    (a conflicting insert would consume one); ``ON CONFLICT DO NOTHING`` covers another pass adding
    the same lexeme meanwhile (this statement then waits for it, and the merge's next snapshot sees
    its id). The statistics triggers count df when the rows are stored. Run `TERM_MAP_SETTINGS`
    with it: the merge's mapping (`map_terms_sql`) then sorts in memory."""
    stg, corpus = staging_name(row_type), TERM_IDS[row_type]
    (lexemes, _), (counts, _) = TERM_LISTS
    return (
        f"WITH filled AS (UPDATE {stg} s SET ({lexemes}, {counts}) = ({term_lists_sql(READY_TSV[row_type])}) "
        f"WHERE s.{lexemes} IS NULL RETURNING s.{lexemes}), "
        f"v AS (SELECT s.{lexemes} FROM {stg} s WHERE s.{lexemes} IS NOT NULL "
        f"UNION ALL SELECT filled.{lexemes} FROM filled), "
        f"x AS (SELECT DISTINCT u.lexeme FROM v CROSS JOIN LATERAL unnest(v.{lexemes}) AS u(lexeme) "
        f"WHERE NOT EXISTS (SELECT 1 FROM ah.search_term t WHERE t.corpus = '{corpus}' AND t.lexeme = u.lexeme) "
        "ORDER BY u.lexeme) "
        f"INSERT INTO ah.search_term (corpus, lexeme, df, id) "
        f"SELECT '{corpus}', x.lexeme, 0, nextval('ah.search_term_id_seq') FROM x "
        "ON CONFLICT (corpus, lexeme) DO NOTHING"
    )


TERM_MAP_SETTINGS = "SET LOCAL work_mem = '64MB'"
"""Run in a batch's transaction before the merge of a `TERM_IDS` type (to the batch's end): the
mapping (`map_terms_sql`) sorts every (row, term) pair of the batch by row and id for its ordered
aggregates — ≈ 93 pairs per tool call, ≈ 250 k for a batch of 2,600 tool calls, ≈ 16 MB — and
hashes the tool-call dictionary; under the default 4 MB of ``work_mem`` the sort went to disk
(an external merge of 10 MB for 2,293 tool calls) and a large dictionary's hash would be split in
batches. The batch's size, not the catalogue's, bounds the sort (docs/performance.md, decision 16)."""


@cache
def map_terms_sql(row_type: type[Row]) -> str:
    """Per staged row of a `TERM_IDS` type (``n``: its `STAGED_ORDER`), its vector as ``terms``
    (the lexemes' ids, ascending) and ``tf`` (one byte per term, ``tf − 1``; tf = the number of
    positions, ≤ 256); set-based over the batch (one hash join with the dictionary) from the
    staged `TERM_LISTS`. A row with an empty vector has no row here (the merge stores ``'{}'``
    and ``''``)."""
    stg, corpus = staging_name(row_type), TERM_IDS[row_type]
    (lexemes, _), (counts, _) = TERM_LISTS
    return (
        f"SELECT s.{STAGED_ORDER} AS n, array_agg(t.id ORDER BY t.id) AS terms, "
        "string_agg(ah.tf_byte(u.tf), ''::bytea ORDER BY t.id) AS tf "
        f"FROM {stg} s CROSS JOIN LATERAL unnest(s.{lexemes}, s.{counts}) AS u(lexeme, tf) "
        f"JOIN ah.search_term t ON t.corpus = '{corpus}' AND t.lexeme = u.lexeme GROUP BY s.{STAGED_ORDER}"
    )


_COUNTS = "SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up"


def dirty_sql(merge: str) -> str:
    """Wrap a merge that returns ``session_id`` so the affected sessions are marked dirty; the
    statement returns one row (new rows, merged rows)."""
    return (
        f"WITH up AS ({merge}), dirty AS (INSERT INTO ah.dirty_session (session_id) "
        "SELECT DISTINCT session_id FROM up ON CONFLICT (session_id) DO NOTHING) " + _COUNTS
    )


def count_sql(merge: str) -> str:
    """Wrap a merge so the statement returns one row (new rows, merged rows)."""
    return f"WITH up AS ({merge}) " + _COUNTS


def same_content(row_type: type[Row], a: str, b: str) -> str:
    cols = CONTENT_COLUMNS[row_type]
    return f"({', '.join(f'{a}.{c}' for c in cols)}) IS NOT DISTINCT FROM ({', '.join(f'{b}.{c}' for c in cols)})"


@cache
def uid_conflict_sql(row_type: type[Row]) -> str:
    """Record a `uid_conflict` parse issue for each staged row of `row_type` (one of
    `CONTENT_COLUMNS`) whose natural key is stored for another session with other content; the
    statement returns the number of issues written. Run before the type's merge, which then
    leaves those stored rows as they are."""
    table, stg = row_type.TABLE, staging_name(row_type)
    on = key_match(row_type, "t", lambda c: f"s.{c}")
    uid = row_type.key_columns()[-1]
    return (
        f"WITH c AS (SELECT DISTINCT ON (s.source_id, coalesce(s.byte_offset, 0)) s.source_id, "
        "coalesce(s.byte_offset, 0) AS byte_offset, s.line_number, "
        f"format('%s %s of session %s was already stored for session %s with other content: kept the stored one', "
        f"'{uid}', s.{uid}, s.session_uid, ses.session_uid) AS detail "
        # the stored row looked up per staged row (the natural key's index, one digest each):
        # a join would let the planner hash the whole table by its digests for every batch
        # (13,063 messages at ×10: 0.42 s against 0.06, docs/performance.md decision 20)
        f"FROM {stg} s CROSS JOIN LATERAL (SELECT t.session_id, {', '.join(f't.{c}' for c in CONTENT_COLUMNS[row_type])} "
        f"FROM ah.{table} t WHERE {on} LIMIT 1) AS t JOIN ah.session ses ON ses.id = t.session_id "
        f"WHERE (ses.agent, ses.session_uid, ses.agent_id) IS DISTINCT FROM (s.agent, s.session_uid, s.agent_id) "
        f"AND NOT {same_content(row_type, 't', 's')} ORDER BY 1, 2, s.{uid}), "
        "ins AS (INSERT INTO ah.parse_issue (source_id, kind, byte_offset, line_number, detail) "
        "SELECT source_id, 'uid_conflict', byte_offset, line_number, detail FROM c "
        "ON CONFLICT (source_id, kind, byte_offset) DO UPDATE SET detail = EXCLUDED.detail RETURNING 1) "
        "SELECT count(*) FROM ins"
    )


EVENT_TYPES: tuple[type[Row], ...] = tuple(t for t in ROW_TYPES if t is not SessionRow and not t.PER_SOURCE)
"""Row types merged by a natural key another session's file may hold: every event table."""
EVENT_TABLES: tuple[str, ...] = tuple(t.TABLE for t in EVENT_TYPES)
"""Tables of event rows: merged by natural key, each row naming its session."""
PER_SOURCE_TABLES: tuple[str, ...] = tuple(t.TABLE for t in ROW_TYPES if t.PER_SOURCE)
"""Tables of per-source rows (parse issues, record-type counts), keyed with ``source_id``."""


def purge_source(conn: psycopg.Connection, source_id: int) -> int:
    """Delete every row a source file contributed; mark the affected sessions dirty.

    Sessions first seen in this file are deleted when no other file still has rows for them.
    Returns the number of event rows deleted. Runs in the caller's transaction.
    """
    deleted = 0
    with conn.cursor() as cur:
        for table in EVENT_TABLES:
            cur.execute(
                f"WITH d AS (DELETE FROM ah.{table} WHERE source_id = %s RETURNING session_id) "
                "INSERT INTO ah.dirty_session (session_id) SELECT DISTINCT session_id FROM d "
                "ON CONFLICT (session_id) DO NOTHING",
                (source_id,),
            )
            deleted += cur.rowcount
        for table in PER_SOURCE_TABLES:
            cur.execute(f"DELETE FROM ah.{table} WHERE source_id = %s", (source_id,))
        refs = " AND ".join(f"NOT EXISTS (SELECT 1 FROM ah.{t} x WHERE x.session_id = s.id)" for t in EVENT_TABLES)
        cur.execute(f"DELETE FROM ah.session s WHERE s.source_id = %s AND {refs}", (source_id,))
    return deleted


def delete_per_source(conn: psycopg.Connection, source_ids: list[int]) -> None:
    """Delete the per-source rows (`PER_SOURCE_TABLES`) of the files `source_ids` (a document
    re-read whole replaces them); one statement per table, in the caller's transaction."""
    with conn.cursor() as cur:
        for table in PER_SOURCE_TABLES:
            cur.execute(f"DELETE FROM ah.{table} WHERE source_id = ANY(%s)", (source_ids,))


def purge_missing_many(conn: psycopg.Connection, docs: list[tuple[int, list[Row]]]) -> int:
    """For each ``(source_id, rows)``: delete the event rows and sessions that source contributed
    whose natural key is not among its `rows`; mark the sessions of deleted rows dirty. One
    statement per table for all of them, in the caller's transaction. Returns the number of
    event rows deleted."""
    ids = [sid for sid, _ in docs]
    deleted = 0
    with conn.cursor() as cur:
        for row_type in EVENT_TYPES:
            cols = row_type.key_columns()
            pairs = {(sid, *r.natural_key()) for sid, rows in docs for r in rows if type(r) is row_type}
            arrays = [[p[i] for p in pairs] for i in range(len(cols) + 1)]
            cast = ", ".join(["%s::bigint[]", *("%s::text[]" for _ in cols)])
            stored = ", ".join(stored_column(row_type, c) for c in cols)
            kept = ", ".join(["u.source_id", *(stored_value(row_type, c, f"u.{c}") for c in cols)])
            cur.execute(
                f"WITH d AS (DELETE FROM ah.{row_type.TABLE} WHERE source_id = ANY(%s) AND (source_id, {stored}) "
                f"NOT IN (SELECT {kept} FROM unnest({cast}) AS u(source_id, {', '.join(cols)})) RETURNING session_id) "
                "INSERT INTO ah.dirty_session (session_id) SELECT DISTINCT session_id FROM d "
                "ON CONFLICT (session_id) DO NOTHING",
                (ids, *arrays),
            )
            deleted += cur.rowcount
        keep = set()
        for sid, rows in docs:
            for r in rows:
                if type(r) is SessionRow:
                    keep.add((sid, *r.natural_key()))
                elif not type(r).PER_SOURCE and hasattr(r, "session_uid"):
                    keep.add((sid, r.agent, r.session_uid, r.agent_id))
        refs = " AND ".join(f"NOT EXISTS (SELECT 1 FROM ah.{t} x WHERE x.session_id = s.id)" for t in EVENT_TABLES)
        cur.execute(
            "DELETE FROM ah.session s WHERE s.source_id = ANY(%s) AND (s.source_id, s.agent, s.session_uid, s.agent_id) "
            f"NOT IN (SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[])) AND {refs}",
            (ids, *[[k[i] for k in keep] for i in range(4)]),
        )
    return deleted
