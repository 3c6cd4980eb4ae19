"""`just bench-store`: where the catalogue's bytes are, per relation (issue 27 item 4; not a test).

    python -m benchmarks.store [--scale 10] [--work DIR] [--keep] [--dsn DSN] [--write FILE]

Without ``--dsn``: clones the shared corpus SCALE times with fresh ids
(``../shared/tools/scale_home.py``), runs a cold `agent-history index` on a private embedded
server, CHECKPOINTs, and measures that catalogue; with ``--dsn``: measures that database as it is.

Reported (MB = 10⁶ bytes): the catalogue (``pg_database_size``) and its ratio to the raw
transcript bytes (Σ ``source_file.indexed_offset``); per table of schema ``ah``, its rows (the
planner's estimate ``reltuples``: "not analysed" before the first ``ANALYZE``), the heap (main
fork, free-space and visibility maps), its TOAST relation (heap and index) and every index; the
large columns (values, values stored compressed, Σ ``pg_column_size``); and what the stored
search vectors are made of (lexeme entries, lexeme bytes, stored positions, lexemes with more than
one; a term-frequency vector, migration 0025, stores one position per lexeme with tf > 1), the
figures the store decisions of docs/performance.md cite. The CPU seconds of the client and server
and the load average are printed beside the load's wall time (the machine is shared: only the
byte figures compare across runs). ``--write FILE`` replaces the ``bench-store`` section of FILE.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from agent_history.model.tables import LARGE_COLUMNS

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

VECTORS = ("message", "tool_call")
"""Tables with a stored search vector: ``tsv``, or after migration 0028_term_ids for tool calls
``terms``/``tf`` (term ids: `TERM_VECTOR`)."""

TERM_COLUMNS = (("tool_call", "terms"), ("tool_call", "tf"))
"""The term-id form's columns (migration 0028_term_ids), measured beside `LARGE_COLUMNS`."""

RELATIONS = """
SELECT c.relname,
       (pg_relation_size(c.oid) + pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm')) / 1e6,
       coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) / 1e6,
       pg_indexes_size(c.oid) / 1e6,
       pg_total_relation_size(c.oid) / 1e6,
       c.reltuples::bigint
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = 'ah' AND c.relkind = 'r'
ORDER BY pg_total_relation_size(c.oid) DESC
"""

INDEXES = """
SELECT i.relname, t.relname, pg_relation_size(i.oid) / 1e6
FROM pg_index AS x
JOIN pg_class AS i ON i.oid = x.indexrelid
JOIN pg_class AS t ON t.oid = x.indrelid
JOIN pg_namespace AS n ON n.oid = t.relnamespace
WHERE n.nspname = 'ah'
ORDER BY pg_relation_size(i.oid) DESC
"""

COLUMN = """
SELECT count({c}), count({c}) FILTER (WHERE pg_column_compression({c}) IS NOT NULL),
       coalesce(sum(pg_column_size({c})), 0) / 1e6
FROM ah.{t}
"""

VECTOR = """
SELECT count(*), coalesce(sum(octet_length(u.lexeme)), 0) / 1e6,
       coalesce(sum(cardinality(u.positions)), 0), count(*) FILTER (WHERE cardinality(u.positions) > 1)
FROM ah.{t} AS d, unnest(d.tsv) AS u
"""
TERM_VECTOR = """
SELECT coalesce(sum(cardinality(d.terms)), 0), 0.0, 0,
       coalesce(sum((SELECT count(*) FROM generate_series(0, length(d.tf) - 1) AS i WHERE get_byte(d.tf, i) > 0)), 0)
FROM ah.{t} AS d
"""
"""A term-id vector's figures in `VECTOR`'s shape: term entries, no lexeme bytes (the dictionary
holds them) nor positions, and the terms with tf > 1 (a non-zero tf byte)."""


def _has_column(conn, table: str, column: str) -> bool:
    return bool(
        conn.execute(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s AND NOT attisdropped",
            (f"ah.{table}", column),
        ).fetchone()[0]
    )


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cold_load(home: Path, work: Path) -> tuple[str, dict]:
    """Index `home` cold into a private data dir under `work`; (superuser DSN, load figures)."""
    from agent_history.db import embedded
    from benchmarks.compare import server_cpu, settled_server_cpu

    data = work / "data"
    (work / "config.toml").touch()
    env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(data), AGENT_HISTORY_QUERY_IDLE_S="0")
    env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
    for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN"):
        env.pop(key, None)
    exe = [sys.executable, "-m", "agent_history"]
    subprocess.run([*exe, "db", "status", "--json"], env=env, check=True, capture_output=True)
    pgdata = data / "pg"
    load_before, server_before, client_before = os.getloadavg()[0], server_cpu(pgdata), _cpu_children()
    start = time.perf_counter()
    subprocess.run([*exe, "index"], env=env, check=True, capture_output=True)
    figures = {
        "cold load wall (s)": time.perf_counter() - start,
        "cold load CPU, client (s)": _cpu_children() - client_before,
        "cold load CPU, server (s)": settled_server_cpu(pgdata) - server_before,
        "load average (1 min) before · after": f"{load_before:.1f} · {os.getloadavg()[0]:.1f}",
    }
    return embedded.server_dsn(pgdata), figures


def measure(dsn: str) -> dict:
    """Every figure of the store of the catalogue at `dsn` (see the module docstring)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        db = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
        raw = int(conn.execute("SELECT coalesce(sum(indexed_offset), 0) FROM ah.source_file").fetchone()[0])
        relations = conn.execute(RELATIONS).fetchall()
        indexes = conn.execute(INDEXES).fetchall()
        columns = [
            (t, c, *conn.execute(COLUMN.format(t=t, c=c)).fetchone())
            for t, c in (*LARGE_COLUMNS, *TERM_COLUMNS)
            if _has_column(conn, t, c)
        ]
        vectors = [
            (f"{t}.{c}", *conn.execute((VECTOR if c == "tsv" else TERM_VECTOR).format(t=t)).fetchone())
            for t in VECTORS
            for c in ("tsv" if _has_column(conn, t, "tsv") else "terms",)
        ]
    return {"db": db, "raw": raw, "relations": relations, "indexes": indexes, "columns": columns, "vectors": vectors}


def search_latency(dsn: str, runs: int) -> dict:
    """Keyword search in process over the ``just eval`` queries (`benchmarks.scale.in_process`):
    p50 / p95 in ms and the load average around it."""
    from benchmarks.scale import in_process

    before = os.getloadavg()[0]
    ms = sorted(in_process(dsn, "keyword", runs))
    return {
        "keyword search in process p50 (ms)": ms[len(ms) // 2],
        "keyword search in process p95 (ms)": ms[min(len(ms) - 1, int(len(ms) * 0.95))],
        "load average (1 min) around the searches": f"{before:.1f} · {os.getloadavg()[0]:.1f}",
    }


def report(m: dict, load: dict | None, label: str) -> str:
    """Markdown tables of `measure`'s figures."""
    out = [
        f"{label}: catalogue {m['db'] / 1e6:.1f} MB for {m['raw'] / 1e6:.1f} MB of transcripts = "
        f"**{m['db'] / max(m['raw'], 1):.3f}× raw** (target ≤ 0.75×).",
        "",
    ]
    if load:
        out += ["| load figure | value |", "|---|---|"]
        out += [f"| {k} | {v:.2f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in load.items()]
        out.append("")
    out += ["| table | rows | heap MB | TOAST MB | indexes MB | total MB |", "|---|---|---|---|---|---|"]
    rest = 0.0
    for name, heap, toast, idx, total, rows in m["relations"]:
        if total < 0.4:
            rest += float(total)
            continue
        count = f"{rows:,}" if rows >= 0 else "not analysed"
        out.append(f"| {name} | {count} | {heap:.2f} | {toast:.2f} | {idx:.2f} | {total:.2f} |")
    tables = sum(float(r[4]) for r in m["relations"])
    out.append(f"| (other `ah` tables) | | | | | {rest:.2f} |")
    out.append(f"| (outside `ah`: catalogs, functions) | | | | | {m['db'] / 1e6 - tables:.2f} |")
    out += ["", "| index | table | MB |", "|---|---|---|"]
    out += [f"| {i} | {t} | {mb:.2f} |" for i, t, mb in m["indexes"] if mb >= 0.25]
    out += ["", "| column | values | compressed | stored MB |", "|---|---|---|---|"]
    out += [f"| {t}.{c} | {n:,} | {k:,} | {mb:.2f} |" for t, c, n, k, mb in m["columns"]]
    out += [
        "",
        "| vector | lexeme entries | lexeme MB | stored positions | lexemes with > 1 stored position |",
        "|---|---|---|---|---|",
    ]
    out += [f"| {v} | {n:,} | {mb:.2f} | {p:,} | {k:,} |" for v, n, mb, p, k in m["vectors"]]
    return "\n".join(out)


def write_section(path: Path, text: str, name: str = "bench-store") -> None:
    """Replace the part of `path` between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``
    (added at the end when missing) with `text`."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    doc = path.read_text() if path.exists() else ""
    if begin not in doc or end not in doc:
        doc = doc.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10, help="clones of the shared corpus home (default 10)")
    ap.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working directory (and its server)")
    ap.add_argument("--dsn", help="measure this catalogue instead of loading one")
    ap.add_argument("--search-runs", type=int, default=0, help="also time the eval queries in process, N runs")
    ap.add_argument("--write", type=Path, help="replace the bench-store section of this Markdown file")
    args = ap.parse_args(argv)
    stamp = datetime.now(UTC).date().isoformat()
    if args.dsn:
        extra = search_latency(args.dsn, args.search_runs) if args.search_runs else None
        text = report(measure(args.dsn), extra, f"Measured {stamp}")
    else:
        corpus, scaler = SHARED / "corpus" / "home", SHARED / "tools" / "scale_home.py"
        if not corpus.is_dir() or not scaler.exists():
            sys.exit(f"error: {corpus} and {scaler} are needed (../shared beside the repository)")
        work = args.work or Path(tempfile.mkdtemp(prefix="ah-store-"))
        work.mkdir(parents=True, exist_ok=True)
        home = work / "home"
        try:
            if not home.exists():
                subprocess.run([sys.executable, str(scaler), str(corpus), str(home), str(args.scale)], check=True)
            dsn, load = cold_load(home, work)
            if args.search_runs:
                load.update(search_latency(dsn, args.search_runs))
            text = report(measure(dsn), load, f"Shared corpus ×{args.scale}, cold load, {stamp}")
        finally:
            if not args.keep:
                from agent_history.db import embedded

                embedded.stop(work / "data" / "pg")
                if args.work is None:
                    shutil.rmtree(work, ignore_errors=True)
    print(text)
    if args.write:
        write_section(args.write, text)


if __name__ == "__main__":
    main()
