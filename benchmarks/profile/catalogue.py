"""After the last run, on its catalogue: the search-text analysis alone, function by function
(`analysis_costs`), the store by relation and by large column (`store`), the indexes' use after
the `just eval` queries (`index_use`), ``EXPLAIN (ANALYZE, BUFFERS, WAL)`` of each insert shape
(`explain_inserts`), and where the search-text analysis runs (`search_analysis_variants`). Rows
written by a measurement are rolled back."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent_history.model.tables import LARGE_COLUMNS as TABLE_LARGE_COLUMNS

SAMPLE_ROWS = 2000
"""Rows per table deleted and merged back for the EXPLAIN of each insert shape."""

ANALYSIS_STEPS: tuple[tuple[str, str], ...] = (
    ("read the documents (baseline)", "SELECT sum(length(d)) FROM pg_temp.doc"),
    ("ah.search_tsv (the whole analysis)", "SELECT sum(length(ah.search_tsv(d))) FROM pg_temp.doc"),
    ("ah.code_aware_text", "SELECT sum(length(ah.code_aware_text(d))) FROM pg_temp.doc"),
    ("ah.search_text (CJK spacing + code-aware)", "SELECT sum(length(ah.search_text(d))) FROM pg_temp.doc"),
    ("ah.script_lexemes", "SELECT sum(length(ah.script_lexemes(d))) FROM pg_temp.doc"),
    ("to_tsvector of ready search text", "SELECT sum(length(to_tsvector('ah.search', s))) FROM pg_temp.pre"),
    (
        "to_tsvector(ready) || ready symbols::tsvector",
        "SELECT sum(length(to_tsvector('ah.search', s) || y::tsvector)) FROM pg_temp.pre",
    ),
)
"""Each step is one statement over every document; its backend CPU is the figure."""


def backend_cpu(pid: int) -> float:
    text = Path(f"/proc/{pid}/stat").read_text()
    f = text[text.rindex(")") + 2 :].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def analysis_costs(conn) -> list[dict]:
    """Backend CPU of each `ANALYSIS_STEPS` statement, and the same work in Python
    (`agent_history.analysis.search_text`) for comparison."""
    from agent_history.analysis import search_text as st

    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    conn.execute(
        "CREATE TEMP TABLE doc AS SELECT left(coalesce(text, ''), 131072) AS d FROM ah.message "
        "UNION ALL SELECT ah.tool_call_doc(name, input, output) FROM ah.tool_call"
    )
    docs = [r[0] for r in conn.execute("SELECT d FROM pg_temp.doc")]
    t0 = time.process_time()
    pre = [st.ready(d) for d in docs]
    python_cpu = time.process_time() - t0
    conn.execute("CREATE TEMP TABLE pre (s text, y text)")
    with conn.cursor().copy("COPY pg_temp.pre (s, y) FROM STDIN") as copy:
        for row in pre:
            copy.write_row(row)
    out = []
    for label, stmt in ANALYSIS_STEPS:
        c0, w0 = backend_cpu(pid), time.perf_counter()
        conn.execute(stmt).fetchone()
        out.append({"step": label, "cpu_s": backend_cpu(pid) - c0, "wall_s": time.perf_counter() - w0})
    out.append(
        {
            "step": "Python: search_text + script_lexemes (client)",
            "cpu_s": python_cpu,
            "wall_s": python_cpu,
            "python": True,
        }
    )
    megabytes = conn.execute("SELECT sum(octet_length(d)) / 1e6, count(*) FROM pg_temp.doc").fetchone()
    conn.execute("DROP TABLE pg_temp.doc, pg_temp.pre")
    return [dict(x, docs=int(megabytes[1]), mb=float(megabytes[0])) for x in out]


LARGE_COLUMNS = tuple(c for c in TABLE_LARGE_COLUMNS if c != ("message", "attachments"))
"""The large columns of the profile's store table (attachments: rarely any)."""


def store(conn) -> dict:
    """Bytes by relation (heap, TOAST, each index) and by large column (stored, raw, compressed
    values), after VACUUM; and the indexes' scan counts after the eval queries."""
    conn.execute("VACUUM ANALYZE")
    rels = [
        {"table": r[0], "heap_mb": float(r[1]), "toast_mb": float(r[2]), "index_mb": float(r[3]), "free_mb": None}
        for r in conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) / 1e6, "
            "coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) / 1e6, pg_indexes_size(c.oid) / 1e6 "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'ah' AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 12"
        )
    ]
    indexes = [
        {"index": r[0], "table": r[1], "mb": float(r[2]), "scans": r[3]}
        for r in conn.execute(
            "SELECT s.indexrelname, s.relname, pg_relation_size(s.indexrelid) / 1e6, s.idx_scan "
            "FROM pg_stat_user_indexes s WHERE s.schemaname = 'ah' ORDER BY pg_relation_size(s.indexrelid) DESC LIMIT 20"
        )
    ]
    columns = []
    for table, column in LARGE_COLUMNS:
        exists = conn.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s AND NOT attisdropped",
            (f"ah.{table}", column),
        ).fetchone()
        if not exists:
            continue
        r = conn.execute(
            f"SELECT count({column}), count(*) FILTER (WHERE pg_column_compression({column}) IS NOT NULL), "
            f"coalesce(sum(pg_column_size({column})), 0) / 1e6 FROM ah.{table}"
        ).fetchone()
        columns.append({"column": f"{table}.{column}", "values": r[0], "compressed": r[1], "stored_mb": float(r[2])})
    return {"relations": rels, "indexes": indexes, "columns": columns}


def explain_inserts(conn) -> list[dict]:
    """EXPLAIN (ANALYZE, BUFFERS, WAL) of the loader's merge of each event table: the newest
    `SAMPLE_ROWS` rows are deleted and merged back from staging, in a transaction that is rolled
    back (so the catalogue is unchanged)."""
    from agent_history.db.tables.merges import dirty_sql, merge_sql, staging_columns, staging_ddl, staging_name
    from agent_history.model.rows import FileTouchRow, MessageRow, ModelCallRow, ToolCallRow

    out = []
    for row_type in (MessageRow, ToolCallRow, ModelCallRow, FileTouchRow):
        table, stg = row_type.TABLE, staging_name(row_type)
        have = {
            r[0]
            for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
                (f"ah.{table}",),
            )
        }
        cols = staging_columns(row_type)
        select = ", ".join(_staged(c, have, table) for c in cols)
        with conn.transaction(force_rollback=True):
            conn.execute(staging_ddl(row_type))
            conn.execute(
                f"CREATE TEMP TABLE sample ON COMMIT DROP AS SELECT id FROM ah.{table} ORDER BY id DESC LIMIT {SAMPLE_ROWS}"
            )
            conn.execute(
                f"INSERT INTO {stg} ({', '.join(cols)}) SELECT {select} FROM ah.{table} t "
                f"JOIN ah.session ses ON ses.id = t.session_id WHERE t.id IN (SELECT id FROM sample)"
            )
            conn.execute(f"DELETE FROM ah.{table} WHERE id IN (SELECT id FROM sample)")
            plan = conn.execute(
                f"EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) {dirty_sql(merge_sql(row_type))}"
            ).fetchone()[0][0]
        out.append(_plan_summary(table, plan))
    return out


PROTOTYPE_ROWS = 5000
"""Rows per table merged back by each variant of `search_analysis_variants`."""


def search_analysis_variants(conn) -> list[dict]:
    """Where the search-text analysis runs, measured on the hot statements (the merges of
    ``ah.message`` and ``ah.tool_call``): the newest `PROTOTYPE_ROWS` rows are deleted and merged
    back from staging, in a transaction rolled back, three ways —

    - *per row in SQL*: no ready text; the row trigger runs ``ah.message_tsv`` /
      ``ah.tool_call_tsv`` (the path before migration 0016, and today's path for updates);
    - *(a) set-based after the load*: rows merged with triggers off and no vector, then one
      ``UPDATE … SET tsv = …`` and one term-statistics delta over all of them;
    - *(b) ready text from Python*: the loader's path — `search_text.ready` in the client (its
      CPU reported apart), ``ah.search_tsv_ready`` in the merge.

    Figures are the backend's CPU seconds (``/proc``) for the statements of each variant."""
    from agent_history.analysis import search_text as st
    from agent_history.db.tables.merges import (
        READY_TSV,
        dirty_sql,
        merge_sql,
        staging_columns,
        staging_ddl,
        staging_name,
    )
    from agent_history.model.rows import MessageRow, ToolCallRow

    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    tsv_of = {"message": "ah.message_tsv(t.text)", "tool_call": "ah.tool_call_tsv(t.name, t.input, t.output)"}
    out = []
    for row_type in (MessageRow, ToolCallRow):
        table, stg = row_type.TABLE, staging_name(row_type)
        uid = "message_uid" if row_type is MessageRow else "tool_call_uid"
        have = {
            r[0]
            for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
                (f"ah.{table}",),
            )
        }
        cols = staging_columns(row_type)
        select = ", ".join(
            f"t.{c}" if c in have else (f"ses.{c}" if c in ("session_uid", "agent_id", "namespace") else "NULL")
            for c in cols
        )
        merge = dirty_sql(merge_sql(row_type))
        doc = st.message_doc if row_type is MessageRow else st.tool_call_doc
        for variant in ("per row in SQL", "(a) set-based after the load", "(b) ready text from Python"):
            python_cpu = 0.0
            with conn.transaction(force_rollback=True):
                conn.execute(staging_ddl(row_type))
                conn.execute(
                    f"CREATE TEMP TABLE sample ON COMMIT DROP AS "
                    f"SELECT id FROM ah.{table} ORDER BY id DESC LIMIT {PROTOTYPE_ROWS}"
                )
                conn.execute(
                    f"INSERT INTO {stg} ({', '.join(cols)}) SELECT {select} FROM ah.{table} t "
                    f"JOIN ah.session ses ON ses.id = t.session_id WHERE t.id IN (SELECT id FROM sample)"
                )
                if variant.startswith("(b)"):
                    fields = "text" if row_type is MessageRow else "name, input, output"
                    staged = conn.execute(f"SELECT {uid}, {fields} FROM {stg}").fetchall()
                    t0 = time.process_time()
                    ready = [(r[0], *st.ready(doc(*r[1:]))) for r in staged]
                    python_cpu = time.process_time() - t0
                    conn.execute("CREATE TEMP TABLE ready (u text, s text, y text) ON COMMIT DROP")
                    with conn.cursor().copy("COPY ready (u, s, y) FROM STDIN") as copy:
                        for r in ready:
                            copy.write_row(r)
                    conn.execute(
                        f"UPDATE {stg} SET search_text = r.s, search_symbols = r.y FROM ready r WHERE {stg}.{uid} = r.u"
                    )
                conn.execute(f"DELETE FROM ah.{table} WHERE id IN (SELECT id FROM sample)")
                if variant.startswith("(a)"):
                    conn.execute(f"ALTER TABLE ah.{table} DISABLE TRIGGER USER")
                c0 = backend_cpu(pid)
                if variant.startswith("(b)"):
                    conn.execute(merge).fetchone()
                else:
                    unready = merge
                    for ready_tsv in READY_TSV.values():  # per row type (migration 0025)
                        unready = unready.replace(ready_tsv, "NULL::tsvector")
                    conn.execute(unready).fetchone()
                if variant.startswith("(a)"):
                    conn.execute(
                        f"UPDATE ah.{table} AS t SET tsv = {tsv_of[table]} "
                        f"FROM {stg} s WHERE t.agent = s.agent AND t.{uid} = s.{uid}"
                    )
                    conn.execute(
                        f"SELECT ah.search_stats_apply(%s, (SELECT array_agg(t.tsv) FROM ah.{table} t "
                        f"JOIN {stg} s ON t.agent = s.agent AND t.{uid} = s.{uid}), '{{}}')",
                        (table,),
                    )
                cpu = backend_cpu(pid) - c0
                n = conn.execute(f"SELECT count(*) FROM {stg}").fetchone()[0]
            out.append({"table": table, "variant": variant, "rows": n, "server_cpu_s": cpu, "client_cpu_s": python_cpu})
    return out


_DOC_SQL = {"message": "left(coalesce(t.text, ''), 131072)", "tool_call": "ah.tool_call_doc(t.name, t.input, t.output)"}


def _staged(column: str, have: set[str], table: str) -> str:
    """The value a staging column gets from the catalogue row ``t`` (its session ``ses``): the
    ready search text as the loader would send it (computed here by the SQL functions, before
    the measured statement)."""
    if column in have:
        return f"t.{column}"
    if column in ("session_uid", "agent_id", "namespace"):
        return f"ses.{column}"
    if column == "search_text":
        return f"ah.search_text({_DOC_SQL[table]})"
    if column == "search_symbols":
        return f"ah.script_lexemes({_DOC_SQL[table]})::text"
    return "NULL"


def _plan_summary(table: str, plan: dict) -> dict:
    def find(node: dict, kind: str) -> dict | None:
        if node.get("Node Type") == kind:
            return node
        for child in node.get("Plans", []):
            hit = find(child, kind)
            if hit:
                return hit
        return None

    top = plan["Plan"]
    modify = find(top, "ModifyTable") or top
    inner = sum(c.get("Actual Total Time", 0.0) for c in modify.get("Plans", []))
    return {
        "table": table,
        "rows": modify.get("Actual Rows", 0) or SAMPLE_ROWS,
        "total_ms": plan.get("Execution Time", 0.0),
        "modify_ms": modify.get("Actual Total Time", 0.0) - inner,
        "triggers": [(t["Trigger Name"], t["Time"], t["Calls"]) for t in plan.get("Triggers", [])],
        "shared_hit": top.get("Shared Hit Blocks", 0),
        "dirtied": top.get("Shared Dirtied Blocks", 0),
        "wal_mb": top.get("WAL Bytes", 0) / 1e6,
        "wal_fpi": top.get("WAL FPI", 0),
    }


def index_use(dsn: str) -> None:
    """Run the `just eval` queries against the catalogue (so pg_stat_user_indexes counts them)."""
    import psycopg

    from agent_history.evaluation.search import load_queries, run_query

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_reset()")
        for lq in load_queries():
            run_query(conn, lq)
