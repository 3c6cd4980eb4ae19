"""`just bench-profile`: where a cold ingest's time goes, server and client (issue 27; not a test).

    python -m benchmarks.profile [--scale 10] [--runs 2] [--work DIR] [--no-perf] [--write docs/performance.md]

Builds the shared corpus cloned SCALE times (``../shared/tools/scale_home.py``), then per run: a
fresh private embedded server with ``pg_stat_statements`` preloaded (``track = all``: statements
run inside functions and triggers are counted too), ``track_functions = all`` and
``track_io_timing = on``; a cold `agent-history index` of the home run through
`benchmarks.client_phases` (the real command, its loader timed by phase). Measured:

- CPU seconds of the client (wait4 rusage) and of the server (the postmaster's and its
  children's utime+stime from /proc), wall seconds, the machine's load average;
- server time per statement shape (``pg_stat_statements``: execution time is wall time inside
  the backend, so on a loaded machine it exceeds CPU) and per function
  (``pg_stat_user_functions``; SQL functions the planner inlines do not appear);
- where the server's CPU goes by code path: ``perf record`` samples of the server's processes,
  each symbol put in a category by `CATEGORIES` (skipped when perf is missing or not permitted);
- the client's time by phase (`benchmarks.client_phases`).

After the last run, on its catalogue: the search-text analysis alone, function by function
(backend CPU of one set-based statement each over every document), the store by relation and
by large column, the indexes' use after the `just eval` queries, and ``EXPLAIN (ANALYZE,
BUFFERS, WAL)`` of each insert shape: a sample of rows deleted and merged back from staging, in
a transaction rolled back.

Medians over runs; the tables go to stdout, and with ``--write FILE`` replace the part of FILE
between ``<!-- bench-profile:begin -->`` and ``<!-- bench-profile:end -->``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.compare import run, server_cpu

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

SERVER_SETTINGS = {
    "shared_preload_libraries": "pg_stat_statements",
    "pg_stat_statements.track": "all",
    "pg_stat_statements.max": "5000",
    "track_functions": "all",
    "track_io_timing": "on",
}
"""Settings of the profiled server (a restart applies the preload)."""

CATEGORIES: tuple[tuple[str, str], ...] = (
    ("pglz compression (TOAST values, WAL full-page images)", r"^pglz_"),
    (
        "regular expressions (code-aware text, script lexemes)",
        r"^(pg_reg|regexp_|textregex|RE_|miss$|getvacant$|shortest$|longest$|newdfa$|freedfa$|cfind|find$|"
        r"cdissect|dissect|ccondissect|crevcondissect|cbrdissect|caltdissect|citerdissect|creviterdissect|"
        r"subset$|lastcold$|pickss$|initialize$|hash$|matchuntil$|lacon$|checkmatchall|setup_regexp_matches|"
        r"replace_text_regexp|build_regexp_match_result|pg_wc_|pg_ctype_get_cache|range\b|newstate|addstate|"
        r"pg_utf2wchar|pg_mb2wchar|pg_utf_mblen)",
    ),
    (
        "text search parser, dictionaries, tsvector (to_tsvector)",
        r"^(TParser|p_is|p_iseq|SpecialTags|parsetext|LexizeExec|LexizeAddLemm|LexizeInit|moveToNextVariant|"
        r"hlparsetext|make_tsvector|uniqueWORD|compareWORD|compareentry|tsCompareString|to_tsvector|"
        r"tsvector_|searchstoplist|dsimple_lexize|dsnowball_lexize|unaccent|str_tolower|lowerstr|"
        r"english_UTF_8|in_grouping|out_grouping|find_among|eq_s|slice_|replace_s|r_|SN_|"
        r"__towlower|__iswalpha|__iswdigit|__iswspace|__iswpunct|__iswalnum|__iswupper|__iswlower|"
        r"__mbsrtowcs|__wcsrtombs|__gconv|char2wchar|wchar2char|t_is|__mbrtowc|__wcrtomb|__GI_isw|__GI_tow)",
    ),
    ("GIN index", r"^(gin|Gin|ginHeap|cmpEntr|ginInsert|ginEntry|ginCombine|ginFind|dataPlaceToPage|ginVacuum)"),
    ("B-tree indexes", r"^_bt|^bt"),
    ("sorting", r"^(pg_qsort|qsort|tuplesort|comparetup|ApplySortComparator|med3)"),
    (
        "heap, TOAST, buffers",
        r"^(heap_|heapam_|toast_|Toast|RelationGetBufferForTuple|PageAdd|Pin|Unpin|ReadBuffer|"
        r"BufTable|StrategyGetBuffer|LockBuffer|MarkBuffer|hash_search|hash_bytes|tts_|slot_|nocachegetattr|"
        r"detoast|pg_detoast|heap_fill|heap_compute|ExecStoreBufferHeapTuple|_hash_)",
    ),
    ("WAL", r"^(XLog|xlog|Log|CopyXLog|WALInsert|log_heap|pg_comp_crc32c|crc32)"),
    ("memory contexts", r"^(AllocSet|palloc|pfree|MemoryContext|repalloc|GenerationAlloc|BumpAlloc|Slab)"),
    (
        "executor, planner, COPY",
        r"^(Exec|exec_|ExprEval|CopyRead|CopyFrom|NextCopy|planner|expression_tree|"
        r"eval_const|standard_|ProcessUtility|plpgsql_|SPI_|fmgr|FunctionCall|OidFunctionCall|InputFunctionCall|"
        r"text|byteacat|jsonb|JsonbValue|pg_lltoa|int8|numeric)",
    ),
    (
        "locks, catalog caches",
        r"^(LWLock|LockAcquire|LockRelease|SearchCatCache|SearchSysCache|CatalogCache|"
        r"LockRelationOid|s_lock|spin)",
    ),
    ("libc memory and strings (memcmp, memmove, malloc)", r"^(__mem|__str|_int_malloc|_int_free|malloc|free|cfree)"),
    ("kernel", r"^\[k\]"),
)
"""Perf symbol → category, first match wins; anything else is "other". Symbol names are those of
PostgreSQL 18's sources (src/backend/regex for the regular-expression engine, tsearch/wparser_def.c
for the parser, snowball for stemming)."""

TOP_STATEMENTS = 15
SAMPLE_ROWS = 2000
"""Rows per table deleted and merged back for the EXPLAIN of each insert shape."""


def _git_head() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _server_children(pgdata: Path) -> set[int]:
    """Pids of the postmaster and its children now."""
    pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    pids = {pid}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                text = (d / "stat").read_text()
            except OSError:
                continue
            if int(text[text.rindex(")") + 2 :].split()[1]) == pid:
                pids.add(int(d.name))
    return pids


class _PidWatch:
    """Collects the server's process ids while a load runs (backends come and go)."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata, self.pids, self._stop = pgdata, set(), threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.pids |= _server_children(self.pgdata)
            self._stop.wait(0.2)

    def __enter__(self) -> _PidWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.pids |= _server_children(self.pgdata)


def perf_available() -> bool:
    """True when ``perf record`` can sample every CPU here."""
    if shutil.which("perf") is None:
        return False
    probe = subprocess.run(
        ["perf", "record", "-N", "-a", "-o", "/dev/null", "-q", "--", "true"], capture_output=True, text=True
    )
    return probe.returncode == 0


def categorise(symbol: str) -> str:
    """The `CATEGORIES` name of a perf symbol ("[k] name" for kernel samples)."""
    for name, pattern in CATEGORIES:
        if re.search(pattern, symbol):
            return name
    return "other"


def perf_categories(data: Path, pids: set[int]) -> tuple[dict[str, int], dict[str, int]]:
    """(samples per category, samples per symbol) of `pids` in a ``perf record`` file."""
    out = subprocess.run(
        ["perf", "script", "-i", str(data), "-F", "pid,ip,sym,dso"], capture_output=True, text=True, check=False
    ).stdout
    cats: dict[str, int] = {}
    syms: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 3 or not parts[0].isdigit() or int(parts[0]) not in pids:
            continue
        sym = parts[2] if len(parts) >= 3 else "?"
        if len(parts) == 4 and "kernel.kallsyms" in parts[3]:
            sym = "[k] " + sym
        elif sym.startswith("("):
            sym = "[unknown] " + sym
        cats[categorise(sym)] = cats.get(categorise(sym), 0) + 1
        syms[sym] = syms.get(sym, 0) + 1
    return cats, syms


def _configure(pgdata: Path, settings: dict[str, str]) -> None:
    import psycopg

    from agent_history.db import embedded

    with psycopg.connect(embedded.server_dsn(pgdata, database="postgres"), autocommit=True) as conn:
        for name, value in {**SERVER_SETTINGS, **settings}.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    embedded._restart(pgdata)
    with psycopg.connect(embedded.server_dsn(pgdata), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("SELECT pg_stat_statements_reset()")
        conn.execute("SELECT pg_stat_reset()")


def _shape(query: str) -> str:
    q = re.sub(r"\s+", " ", query).strip()
    return q if len(q) <= 110 else q[:107] + "…"


def one_run(home: Path, work: Path, i: int, use_perf: bool, settings: dict[str, str], bulk: str | None = None) -> dict:
    """One cold load on a fresh profiled server → its figures (see the module docstring); `bulk`:
    the ``[index] bulk`` setting of the load (None: the default)."""
    import psycopg

    from agent_history.db import embedded

    data = work / f"ah-{i}"
    (work / "config.toml").write_text(f'[index]\nbulk = "{bulk}"\n' if bulk else "")
    env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(data))
    env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
    for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN"):
        env.pop(key, None)
    run([sys.executable, "-m", "agent_history", "db", "status", "--json"], env)
    pgdata = data / "pg"
    _configure(pgdata, settings)
    phases_file = work / f"phases-{i}.json"
    env["AH_PROFILE_PHASES"] = str(phases_file)
    perf_file = work / f"perf-{i}.data"
    perf = None
    if use_perf:
        perf = subprocess.Popen(
            ["perf", "record", "-N", "-F", "499", "-a", "-q", "-o", str(perf_file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    load_before = os.getloadavg()[0]
    before = server_cpu(pgdata)
    with _PidWatch(pgdata) as watch:
        p = run([sys.executable, "-m", "benchmarks.client_phases", "index"], env)
    server = server_cpu(pgdata) - before
    if perf is not None:
        perf.send_signal(2)
        perf.wait()
    fig: dict = {
        "wall_s": p.wall,
        "client_cpu_s": p.cpu,
        "server_cpu_s": server,
        "client_rss_mb": p.rss_mb,
        "load": (load_before + os.getloadavg()[0]) / 2,
        "phases": json.loads(phases_file.read_text())["phases"] if phases_file.exists() else {},
    }
    with psycopg.connect(embedded.server_dsn(pgdata), autocommit=True) as conn:
        fig["statements"] = [
            {
                "toplevel": r[0],
                "calls": r[1],
                "ms": float(r[2]),
                "rows": r[3],
                "blocks": r[4],
                "wal_mb": float(r[5]),
                "io_ms": float(r[6]),
                "query": _shape(r[7]),
            }
            for r in conn.execute(
                "SELECT toplevel, calls, total_exec_time, rows, shared_blks_hit + shared_blks_read, "
                "wal_bytes / 1e6, shared_blk_read_time + shared_blk_write_time, query "
                "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "ORDER BY total_exec_time DESC"
            )
        ]
        fig["functions"] = [
            {"name": r[0], "calls": r[1], "total_ms": float(r[2]), "self_ms": float(r[3])}
            for r in conn.execute(
                "SELECT schemaname || '.' || funcname, calls, total_time, self_time FROM pg_stat_user_functions "
                "WHERE schemaname = 'ah' ORDER BY total_time DESC"
            )
        ]
        conn.execute("CHECKPOINT")
        fig["db_mb"] = conn.execute("SELECT pg_database_size(current_database()) / 1e6").fetchone()[0]
    fig["db_mb"] = float(fig["db_mb"])
    if perf is not None and perf_file.exists():
        cats, syms = perf_categories(perf_file, watch.pids)
        fig["perf_categories"], fig["perf_symbols"] = cats, dict(sorted(syms.items(), key=lambda kv: -kv[1])[:40])
        perf_file.unlink()
    fig["pgdata"] = str(pgdata)
    return fig


# -- after the last run: the analysis alone, the store, the insert shapes ---------------------------

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


def _backend_cpu(pid: int) -> float:
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
        c0, w0 = _backend_cpu(pid), time.perf_counter()
        conn.execute(stmt).fetchone()
        out.append({"step": label, "cpu_s": _backend_cpu(pid) - c0, "wall_s": time.perf_counter() - w0})
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


LARGE_COLUMNS = (
    ("message", "text"),
    ("message", "tsv"),
    ("tool_call", "input"),
    ("tool_call", "output"),
    ("tool_call", "tsv"),
    ("tool_call", "error_excerpt"),
)


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
    from agent_history.ingest.sql_merge import dirty_sql, merge_sql, staging_columns, staging_ddl, staging_name
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
    from agent_history.ingest.search_ready import READY_TSV
    from agent_history.ingest.sql_merge import dirty_sql, merge_sql, staging_columns, staging_ddl, staging_name
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
                c0 = _backend_cpu(pid)
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
                cpu = _backend_cpu(pid) - c0
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


# -- report ---------------------------------------------------------------------------------------


def _med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def report(runs: list[dict], extra: dict, meta: dict) -> str:
    """The Markdown tables (see the module docstring)."""
    n = len(runs)
    lines = [
        f"Generated by `just bench-profile` ({meta['when']}, commit {meta['commit']}): the shared corpus ×{meta['scale']} "
        f"({meta['files']} files, {meta['raw_mb']:.0f} MB), {n} cold load(s) on fresh servers, medians; "
        + (
            f"server settings tried: {', '.join(f'{k} = {v}' for k, v in meta['settings'].items())}; "
            if meta["settings"]
            else ""
        )
        + f"load average during the loads {min(r['load'] for r in runs):.1f}–{max(r['load'] for r in runs):.1f} "
        f"on {os.cpu_count()} cores (other work shares the machine: read CPU seconds, not wall).",
        "",
        "### Cold load",
        "",
        "| figure | value |",
        "|---|---|",
        f"| wall (s) | {_med(runs, 'wall_s'):.1f} |",
        f"| CPU, client (s) | {_med(runs, 'client_cpu_s'):.2f} |",
        f"| CPU, server (s) | {_med(runs, 'server_cpu_s'):.2f} |",
        f"| MB/s (raw bytes / wall) | {meta['raw_mb'] / _med(runs, 'wall_s'):.2f} |",
        f"| catalogue database (MB) · / raw | {_med(runs, 'db_mb'):.1f} · {_med(runs, 'db_mb') / meta['raw_mb']:.2f}× |",
        f"| peak RSS, client (MB) | {max(r['client_rss_mb'] for r in runs):.0f} |",
        "",
    ]
    cats: dict[str, list[int]] = {}
    for r in runs:
        for k, v in r.get("perf_categories", {}).items():
            cats.setdefault(k, []).append(v)
    if cats:
        total = sum(statistics.median(v + [0] * (n - len(v))) for v in cats.values())
        server = _med(runs, "server_cpu_s")
        lines += [
            "### Server CPU by code path (perf samples of the server's processes)",
            "",
            "| code path | share | ≈ CPU s |",
            "|---|---|---|",
        ]
        for k, v in sorted(cats.items(), key=lambda kv: -statistics.median(kv[1])):
            m = statistics.median(v + [0] * (n - len(v)))
            lines.append(f"| {k} | {100 * m / total:.1f} % | {server * m / total:.2f} |")
        top = runs[-1].get("perf_symbols", {})
        tot = sum(runs[-1].get("perf_categories", {}).values()) or 1
        lines += [
            "",
            "Top symbols (last run): " + ", ".join(f"`{s}` {100 * c / tot:.1f} %" for s, c in list(top.items())[:12]),
            "",
        ]
    stm: dict[str, list[dict]] = {}
    for r in runs:
        for s in r["statements"]:
            stm.setdefault(("" if s["toplevel"] else "↳ ") + s["query"], []).append(s)
    rows = sorted(stm.items(), key=lambda kv: -statistics.median(x["ms"] for x in kv[1]))[:TOP_STATEMENTS]
    lines += [
        "### Server time per statement (pg_stat_statements, track = all; ↳ = run inside a function or trigger)",
        "",
        "| statement | calls | exec s | rows | WAL MB | I/O ms |",
        "|---|---|---|---|---|---|",
    ]
    for q, xs in rows:
        lines.append(
            f"| `{q.replace('|', '¦')}` | {statistics.median(x['calls'] for x in xs):.0f} | "
            f"{statistics.median(x['ms'] for x in xs) / 1000:.2f} | {statistics.median(x['rows'] for x in xs):.0f} | "
            f"{statistics.median(x['wal_mb'] for x in xs):.1f} | {statistics.median(x['io_ms'] for x in xs):.0f} |"
        )
    fns: dict[str, list[dict]] = {}
    for r in runs:
        for f in r["functions"]:
            fns.setdefault(f["name"], []).append(f)
    lines += [
        "",
        "### Server time per function (pg_stat_user_functions; inlined SQL functions are not counted)",
        "",
        "| function | calls | total s | self s |",
        "|---|---|---|---|",
    ]
    for name, xs in sorted(fns.items(), key=lambda kv: -statistics.median(x["total_ms"] for x in kv[1]))[:12]:
        lines.append(
            f"| `{name}` | {statistics.median(x['calls'] for x in xs):.0f} | "
            f"{statistics.median(x['total_ms'] for x in xs) / 1000:.2f} | "
            f"{statistics.median(x['self_ms'] for x in xs) / 1000:.2f} |"
        )
    ph: dict[str, list[dict]] = {}
    for r in runs:
        for k, v in r["phases"].items():
            ph.setdefault(k, []).append(v)
    order = ["read", "hash", "decode", "parse", "search text", "fold", "row build", "send", "wait", "other"]
    lines += [
        "",
        "### Client time by phase (benchmarks/client_phases.py; exclusive, summed over the parse and writer threads)",
        "",
        "| phase | CPU s | wall s | calls |",
        "|---|---|---|---|",
    ]
    for k in sorted(ph, key=lambda p: order.index(p) if p in order else 99):
        xs = ph[k]
        lines.append(
            f"| {k} | {statistics.median(x['cpu_s'] for x in xs):.2f} | {statistics.median(x['wall_s'] for x in xs):.2f} | "
            f"{statistics.median(x['calls'] for x in xs):.0f} |"
        )
    if extra.get("analysis"):
        a = extra["analysis"]
        lines += [
            "",
            f"### The search-text analysis alone ({a[0]['docs']:,} documents, {a[0]['mb']:.1f} MB; one set-based statement each)",
            "",
            "| step | CPU s | MB/s |",
            "|---|---|---|",
        ]
        for x in a:
            lines.append(
                f"| {x['step']} | {x['cpu_s']:.2f} | {x['mb'] / x['cpu_s'] if x['cpu_s'] else float('inf'):.1f} |"
            )
    if extra.get("variants"):
        lines += [
            "",
            f"### Where the search-text analysis runs: the message and tool-call merges of {PROTOTYPE_ROWS:,} rows",
            "",
            "| table | variant | rows | server CPU s | client CPU s | sum |",
            "|---|---|---|---|---|---|",
        ]
        for v in extra["variants"]:
            lines.append(
                f"| {v['table']} | {v['variant']} | {v['rows']:,} | {v['server_cpu_s']:.2f} | {v['client_cpu_s']:.2f} | "
                f"{v['server_cpu_s'] + v['client_cpu_s']:.2f} |"
            )
    if extra.get("explain"):
        lines += [
            "",
            f"### Insert shapes: EXPLAIN (ANALYZE, BUFFERS, WAL) of the merge of {SAMPLE_ROWS:,} staged rows (rolled back)",
            "",
            "| table | rows | total ms | insert ms | triggers (ms) | buffers hit · dirtied | WAL MB (FPI) |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in extra["explain"]:
            trig = ", ".join(f"{name} {ms:.0f}" for name, ms, _ in e["triggers"]) or "—"
            lines.append(
                f"| {e['table']} | {e['rows']} | {e['total_ms']:.0f} | {e['modify_ms']:.0f} | {trig} | "
                f"{e['shared_hit']:,} · {e['dirtied']:,} | {e['wal_mb']:.1f} ({e['wal_fpi']}) |"
            )
    if extra.get("store"):
        s = extra["store"]
        lines += [
            "",
            "### Store (after VACUUM)",
            "",
            "| table | heap MB | TOAST MB | indexes MB |",
            "|---|---|---|---|",
        ]
        for r in s["relations"]:
            lines.append(f"| {r['table']} | {r['heap_mb']:.1f} | {r['toast_mb']:.1f} | {r['index_mb']:.1f} |")
        lines += ["", "| column | values | compressed | stored MB |", "|---|---|---|---|"]
        for c in s["columns"]:
            lines.append(f"| {c['column']} | {c['values']:,} | {c['compressed']:,} | {c['stored_mb']:.1f} |")
        lines += ["", "| index | table | MB | scans by the eval queries |", "|---|---|---|---|"]
        for i in s["indexes"]:
            lines.append(f"| {i['index']} | {i['table']} | {i['mb']:.1f} | {i['scans']} |")
    return "\n".join(lines)


def write_section(path: Path, text: str, name: str = "bench-profile") -> None:
    """Replace the generated part of `path` (between ``<!-- NAME:begin -->`` and
    ``<!-- NAME:end -->``, added at the end when missing) with `text`."""
    BEGIN, END = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"  # noqa: N806 - markers
    doc = path.read_text() if path.exists() else f"{BEGIN}\n{END}\n"
    if BEGIN not in doc or END not in doc:
        doc = doc.rstrip("\n") + f"\n\n{BEGIN}\n{END}\n"
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10, help="clones of the shared corpus home (default 10)")
    ap.add_argument("--runs", type=int, default=2, help="cold loads; medians are reported (default 2)")
    ap.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    ap.add_argument("--home", type=Path, help="an agent home to load instead of the scaled corpus")
    ap.add_argument("--no-perf", action="store_true", help="do not sample the server with perf")
    ap.add_argument("--loads-only", action="store_true", help="only the cold loads (no analysis, shapes, store)")
    ap.add_argument("--write", type=Path, help="replace the generated section of this Markdown file")
    ap.add_argument("--json", type=Path, help="also write every figure as JSON here")
    ap.add_argument(
        "--setting", action="append", default=[], metavar="NAME=VALUE", help="a server setting to try (repeatable)"
    )
    ap.add_argument(
        "--bulk", choices=("auto", "always", "never"), help="[index] bulk of the loads (never: the incremental path)"
    )
    args = ap.parse_args(argv)
    settings = dict(s.split("=", 1) for s in args.setting)
    from agent_history.db import embedded

    work = args.work or Path(tempfile.mkdtemp(prefix="ah-profile-"))
    work.mkdir(parents=True, exist_ok=True)
    home = args.home or work / "home"
    use_perf = not args.no_perf and perf_available()
    if not use_perf:
        print("perf is not available: no server CPU by code path", file=sys.stderr)
    runs: list[dict] = []
    try:
        if not home.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(SHARED / "tools" / "scale_home.py"),
                    str(SHARED / "corpus" / "home"),
                    str(home),
                    str(args.scale),
                ],
                check=True,
            )
        files = [p for p in home.rglob("*") if p.is_file() and ".debug" not in p.parts]
        raw = sum(p.stat().st_size for p in files)
        for i in range(args.runs):
            runs.append(one_run(home, work, i, use_perf, settings, args.bulk))
            print(
                f"run {i + 1}: wall {runs[-1]['wall_s']:.1f} s, CPU client {runs[-1]['client_cpu_s']:.1f} s, "
                f"server {runs[-1]['server_cpu_s']:.1f} s, load {runs[-1]['load']:.1f}",
                file=sys.stderr,
            )
            if i < args.runs - 1:
                embedded.stop(Path(runs[-1]["pgdata"]))
        import psycopg

        pgdata = Path(runs[-1]["pgdata"])
        extra = {}
        if not args.loads_only:
            # store first (after the eval queries, for the index scan counts): the measurements
            # below write and roll back rows, which leaves dead index entries behind
            index_use(embedded.server_dsn(pgdata))
            with psycopg.connect(embedded.server_dsn(pgdata), autocommit=True) as conn:
                extra["store"] = store(conn)
                extra["analysis"] = analysis_costs(conn)
                extra["explain"] = explain_inserts(conn)
                if conn.execute("SELECT to_regprocedure('ah.search_tsv_ready(text, text)')").fetchone()[0]:
                    extra["variants"] = search_analysis_variants(conn)
        embedded.stop(pgdata)
        meta = {
            "when": time.strftime("%Y-%m-%d"),
            "commit": _git_head(),
            "scale": args.scale if args.home is None else "—",
            "files": len(files),
            "settings": settings,
            "raw_mb": raw / 1e6,
        }
        text = report(runs, extra, meta)
        print(text)
        if args.write:
            write_section(args.write, text)
        if args.json:
            args.json.write_text(json.dumps({"meta": meta, "runs": runs, "extra": extra}, indent=1, default=str))
    finally:
        for r in runs:
            embedded.stop(Path(r["pgdata"]))
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
        else:
            for i in range(len(runs)):
                shutil.rmtree(work / f"ah-{i}", ignore_errors=True)


if __name__ == "__main__":
    main()
