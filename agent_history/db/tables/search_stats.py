"""The search corpora's term statistics (``ah.search_term``, ``ah.search_corpus``; migration
0002) and what the bulk path of a large pass switches off and on around them
(`ingest.bulk`; docs/performance.md "Bulk path"): the statistics triggers, the GIN indexes of
the ``tsv`` columns, the ``ah.meta`` mark holding the dropped indexes' definitions, and the
tables compacted and B-tree indexes rebuilt afterwards. The transactions are the caller's
(`ingest.bulk.begin`/`finish`).
"""

from __future__ import annotations

import psycopg

CORPORA: tuple[str, ...] = ("message", "tool_call")
"""Search corpora: each is the table of the same name, with a ``tsv`` column or, for the
`ID_CORPORA`, ``terms``/``tf`` (term ids, migration 0028_term_ids)."""

ID_CORPORA: tuple[str, ...] = ("tool_call",)
"""Corpora whose vectors are term ids: their ``ah.search_term`` rows hold the ids and are kept at
df 0 (`recompute_statistics` updates their df in place instead of replacing them)."""

STATS_TRIGGERS: tuple[str, ...] = ("search_stats_ins", "search_stats_upd", "search_stats_del")
"""Suffixes of the term-statistics triggers (``<table>_<suffix>``, migration 0002) a bulk pass
disables (the TRUNCATE trigger stays: a `rebuild` truncates before the pass)."""

LOCK_CORPORA = "LOCK TABLE " + ", ".join(f"ah.{t}" for t in CORPORA) + " IN SHARE ROW EXCLUSIVE MODE"
"""Taken first by `begin` and `finish`: both corpus tables at once, in the order a batch writes
them, so the DDL waits for another pass's batch in flight (and blocks the next) instead of
deadlocking with it (docs/design.md §7 "Many machines")."""


def lock_corpora(conn: psycopg.Connection) -> None:
    """Take `LOCK_CORPORA` (until the caller's transaction ends)."""
    conn.execute(LOCK_CORPORA)


def read_mark(conn: psycopg.Connection, key: str) -> tuple[str | None] | None:
    """``(value,)`` of the ``ah.meta`` row at `key` (the bulk pass's mark, JSON text; the value
    may be NULL), or None when there is no such row."""
    return conn.execute("SELECT value FROM ah.meta WHERE key = %s", (key,)).fetchone()


def write_mark(conn: psycopg.Connection, key: str, value: str) -> None:
    """Set the ``ah.meta`` value at `key` (inserted or replaced, ``updated_at`` now)."""
    conn.execute(
        "INSERT INTO ah.meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
        "SET value = EXCLUDED.value, updated_at = now()",
        (key, value),
    )


def delete_mark(conn: psycopg.Connection, key: str) -> None:
    """Delete the ``ah.meta`` row at `key`."""
    conn.execute("DELETE FROM ah.meta WHERE key = %s", (key,))


def owns_corpora(conn: psycopg.Connection) -> bool:
    """True when the connection's role owns the `CORPORA` tables (disabling triggers and dropping
    indexes need ownership)."""
    return bool(
        conn.execute(
            "SELECT bool_and(pg_has_role(current_user, c.relowner, 'USAGE')) FROM pg_class c "
            "WHERE c.oid = ANY(%s::regclass[])",
            ([f"ah.{t}" for t in CORPORA],),
        ).fetchone()[0]
    )


def no_message(conn: psycopg.Connection) -> bool:
    """True when ``ah.message`` is empty."""
    return conn.execute("SELECT NOT EXISTS (SELECT 1 FROM ah.message)").fetchone()[0]


def gin_indexes(conn: psycopg.Connection) -> dict[str, str]:
    """The GIN indexes of the `CORPORA`'s vectors (``tsv``, ``terms``): name → definition
    (``CREATE INDEX …``).

    ``pg_get_indexdef`` runs only on the corpora's own indexes (picked by ``indrelid``) and the
    definition is matched here: a ``LIKE`` on ``pg_indexes.indexdef`` let the planner call it on
    every index of the database first, and another backend's temporary staging index dropped
    meanwhile raised "could not open relation with OID" (seen in tests/test_bulk_load.py)."""
    rows = conn.execute(
        "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid "
        "WHERE x.indrelid = ANY(%s::regclass[]) ORDER BY i.relname",
        ([f"ah.{t}" for t in CORPORA],),
    ).fetchall()
    return {name: d for name, d in rows if "USING gin (tsv)" in d or "USING gin (terms" in d}


def drop_index(conn: psycopg.Connection, name: str) -> None:
    """Drop index ``ah."<name>"`` if it exists."""
    conn.execute(f'DROP INDEX IF EXISTS ah."{name}"')


def build_index(conn: psycopg.Connection, name: str, definition: str) -> None:
    """Run `definition` (a saved ``CREATE INDEX``) unless index ``ah."<name>"`` exists."""
    if conn.execute("SELECT to_regclass(%s)", (f'ah."{name}"',)).fetchone()[0] is None:
        conn.execute(definition)


def switch_stats_triggers(conn: psycopg.Connection, *, enable: bool) -> None:
    """Enable or disable the `STATS_TRIGGERS` of every corpus table (one ``ALTER TABLE`` each)."""
    for table in CORPORA:
        for trigger in STATS_TRIGGERS:
            if enable:
                conn.execute(f"ALTER TABLE ah.{table} ENABLE TRIGGER {table}_{trigger}")
            else:
                conn.execute(f"ALTER TABLE ah.{table} DISABLE TRIGGER {table}_{trigger}")


# ts_stat's ndoc is the number of vectors holding the lexeme: the df of migration 0002's formula
# (count(*) over unnest(tsvector_to_array(tsv)) grouped by lexeme), counted in C from each vector's
# sorted lexemes instead of one text per lexeme entry hashed: backend CPU of the tool calls of a ×10
# load 0.45 → 0.27 s, of the messages 0.12 → 0.06 s (docs/performance.md, decision 8). Its memory is
# one entry per distinct lexeme (19,600 tool-call lexemes at ×10, 6,596 message lexemes).
# In key order (``ORDER BY``): the primary key (corpus, lexeme) then fills its pages as a build
# does, instead of ts_stat's order splitting them half-full (×10 cold load: 2.04 → 1.14 MB;
# docs/performance.md, decision 10).
RECOMPUTE_TERMS = """
INSERT INTO ah.search_term (corpus, lexeme, df)
SELECT %(corpus)s, s.word, s.ndoc FROM pg_catalog.ts_stat('SELECT tsv FROM ah.{table}') AS s
ORDER BY s.word
"""
RECOMPUTE_CORPUS = """
INSERT INTO ah.search_corpus AS c (corpus, doc_count, total_len)
SELECT %(corpus)s, count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.{table}
ON CONFLICT (corpus) DO UPDATE SET doc_count = EXCLUDED.doc_count, total_len = EXCLUDED.total_len
"""

# A term-id corpus: every dictionary row keeps its id; its df is the number of vectors holding
# the id (0 for one no vector holds), written only where it changed.
RECOMPUTE_TERM_IDS = """
UPDATE ah.search_term AS s SET df = v.n
FROM (SELECT t.id, coalesce(c.n, 0) AS n
      FROM ah.search_term AS t
      LEFT JOIN (SELECT u.t, count(*) AS n FROM ah.{table} AS d CROSS JOIN LATERAL unnest(d.terms) AS u(t)
                 GROUP BY u.t) AS c ON c.t = t.id
      WHERE t.corpus = %(corpus)s) AS v
WHERE s.id = v.id AND s.df IS DISTINCT FROM v.n
"""
RECOMPUTE_ID_CORPUS = """
INSERT INTO ah.search_corpus AS c (corpus, doc_count, total_len)
SELECT %(corpus)s, count(*) FILTER (WHERE cardinality(terms) > 0), coalesce(sum(cardinality(terms)), 0)
FROM ah.{table}
ON CONFLICT (corpus) DO UPDATE SET doc_count = EXCLUDED.doc_count, total_len = EXCLUDED.total_len
"""


def recompute_statistics(conn: psycopg.Connection) -> None:
    """Replace ``ah.search_term`` and ``ah.search_corpus`` of every corpus by their values
    computed from the stored vectors (the formula of migration 0002's initial fill, which the
    triggers' deltas maintain; the df through ``ts_stat``, `RECOMPUTE_TERMS`); a term-id corpus
    (`ID_CORPORA`) keeps its rows and ids and gets its df recounted (`RECOMPUTE_TERM_IDS`). Runs
    in the caller's transaction."""
    for table in CORPORA:
        if table in ID_CORPORA:
            conn.execute(RECOMPUTE_TERM_IDS.format(table=table), {"corpus": table})
            conn.execute(RECOMPUTE_ID_CORPUS.format(table=table), {"corpus": table})
            continue
        conn.execute("DELETE FROM ah.search_term WHERE corpus = %(corpus)s", {"corpus": table})
        conn.execute(RECOMPUTE_TERMS.format(table=table), {"corpus": table})
        conn.execute(RECOMPUTE_CORPUS.format(table=table), {"corpus": table})


def snapshot_horizon(conn: psycopg.Connection) -> int:
    """The first transaction id not yet started when `conn` looks (``pg_snapshot_xmax`` of a new
    snapshot, 64-bit): transactions whose snapshot is older than it may still see rows replaced
    before now."""
    return int(conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()[0])


def older_snapshots(conn: psycopg.Connection, horizon: int) -> int:
    """Other sessions of this database (autovacuum workers included) whose snapshot's ``xmin``
    precedes `horizon` (`snapshot_horizon`): while one runs, ``VACUUM FULL`` must keep the row
    versions it may see. Compared by ``age`` (the 32-bit ids of ``pg_stat_activity``)."""
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND backend_xmin IS NOT NULL AND age(backend_xmin) > age((%s %% 4294967296)::text::xid)",
        (horizon,),
    ).fetchone()[0]


def vacuum_full(conn: psycopg.Connection, table: str) -> None:
    """``VACUUM (FULL) ah.<table>`` (same rows, packed pages, indexes rebuilt). `conn` is
    autocommit; raises `psycopg.errors.LockNotAvailable` past the session's ``lock_timeout``."""
    conn.execute(f"VACUUM (FULL) ah.{table}")


def reindex(conn: psycopg.Connection, index: str) -> bool:
    """``REINDEX INDEX ah."<index>"`` (the B-tree rebuilt with its pages filled) when it exists;
    True when it did. `conn` is autocommit; raises `psycopg.errors.LockNotAvailable` past the
    session's ``lock_timeout``."""
    if conn.execute("SELECT to_regclass(%s)", (f'ah."{index}"',)).fetchone()[0] is None:
        return False
    conn.execute(f'REINDEX INDEX ah."{index}"')
    return True
