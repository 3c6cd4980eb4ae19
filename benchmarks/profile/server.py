"""The profiled server: its settings (`SERVER_SETTINGS`), its processes while a load runs
(`PidWatch`), where its CPU goes by code path (``perf`` samples put in `CATEGORIES`), and its time
per statement shape and per function (`statement_figures`)."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from pathlib import Path

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


def server_children(pgdata: Path) -> set[int]:
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


class PidWatch:
    """Collects the server's process ids while a load runs (backends come and go)."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata, self.pids, self._stop = pgdata, set(), threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.pids |= server_children(self.pgdata)
            self._stop.wait(0.2)

    def __enter__(self) -> PidWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.pids |= server_children(self.pgdata)


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


def configure(pgdata: Path, settings: dict[str, str]) -> None:
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


def shape(query: str) -> str:
    q = re.sub(r"\s+", " ", query).strip()
    return q if len(q) <= 110 else q[:107] + "…"


def statement_figures(conn) -> tuple[list[dict], list[dict]]:
    """(statements, functions) of the current database: ``pg_stat_statements`` per statement
    shape (calls, exec ms, rows, buffers, WAL MB, I/O ms), slowest first, and
    ``pg_stat_user_functions`` of schema ``ah`` (calls, total and self ms)."""
    statements = [
        {
            "toplevel": r[0],
            "calls": r[1],
            "ms": float(r[2]),
            "rows": r[3],
            "blocks": r[4],
            "wal_mb": float(r[5]),
            "io_ms": float(r[6]),
            "query": shape(r[7]),
        }
        for r in conn.execute(
            "SELECT toplevel, calls, total_exec_time, rows, shared_blks_hit + shared_blks_read, "
            "wal_bytes / 1e6, shared_blk_read_time + shared_blk_write_time, query "
            "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "ORDER BY total_exec_time DESC"
        )
    ]
    functions = [
        {"name": r[0], "calls": r[1], "total_ms": float(r[2]), "self_ms": float(r[3])}
        for r in conn.execute(
            "SELECT schemaname || '.' || funcname, calls, total_time, self_time FROM pg_stat_user_functions "
            "WHERE schemaname = 'ah' ORDER BY total_time DESC"
        )
    ]
    return statements, functions
