"""`just bench`: ingest benchmark on a synthetic home (not a timed test).

Reports cold ingest (messages/s, MB/s), peak RSS of the indexing process, the time of a pass
with no changes, the time of a pass after one line was appended to every file (the grown-file
path: prefix checks, resume, one short batch), and the raw orjson parse rate of the same bytes
(the ceiling). Uses a private
embedded server under a temp dir unless ``--dsn`` is given (the database is then emptied!).

    python -m benchmarks.ingest --sessions 2000
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import orjson
import psycopg

from agent_history.db import embedded
from agent_history.db.migrate import ensure_schema
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import truncate_derived
from benchmarks.synth import write_home


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _grow_every_file(home: Path) -> int:
    """Append each transcript's own last line to it again (a re-observed record: valid in every
    format, merges as a no-op). Returns the number of files grown."""
    n = 0
    for p in sorted(home.rglob("*.jsonl")):
        data = p.read_bytes()
        last = data[data.rfind(b"\n", 0, len(data) - 1) + 1 :]
        with open(p, "ab") as fh:
            fh.write(last)
        n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (home + server)")
    ap.add_argument(
        "--many-files",
        type=int,
        default=20000,
        help="files of a second, one-turn home for the no-change pass (0: skip)",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ah-bench-"))
    try:
        home = tmp / "home"
        t0 = time.perf_counter()
        files, nbytes, msgs = write_home(home, args.sessions)
        print(
            f"synthetic home: {files:,} files, {nbytes / 1e6:,.1f} MB, ~{msgs:,} messages "
            f"(generated in {time.perf_counter() - t0:.1f} s)"
        )

        t0 = time.perf_counter()
        n = 0
        for p in home.rglob("*.jsonl"):
            for line in p.read_bytes().splitlines():
                orjson.loads(line)
                n += 1
        raw = time.perf_counter() - t0
        print(f"raw orjson parse: {n:,} lines in {raw:.2f} s = {nbytes / 1e6 / raw:,.0f} MB/s (ceiling)")

        dsn = args.dsn or embedded.ensure_running(tmp / "pg")
        ensure_schema(dsn)
        sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
        with psycopg.connect(dsn, autocommit=True) as conn, psycopg.connect(dsn, autocommit=True) as writer:
            rss0 = _rss_mb()
            t0 = time.perf_counter()
            s = Loader(conn, writer_conn=writer).run(sources)
            cold = time.perf_counter() - t0
            n_msgs = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
            n_tools = conn.execute("SELECT count(*) FROM ah.tool_call").fetchone()[0]
            print(
                f"cold ingest: {s.files_changed:,} files, {n_msgs:,} messages + {n_tools:,} tool calls in {cold:.1f} s "
                f"= {n_msgs / cold:,.0f} messages/s, {(n_msgs + n_tools) / cold:,.0f} messages+tool calls/s, "
                f"{s.bytes_read / 1e6 / cold:,.1f} MB/s; load errors {s.files_failed}"
            )
            print(f"peak RSS of the indexer: {_rss_mb():,.0f} MB (before ingest {rss0:,.0f} MB)")
            t0 = time.perf_counter()
            s2 = Loader(conn, writer_conn=writer).run(sources)
            print(
                f"no-change pass over {s2.files_scanned:,} files: {time.perf_counter() - t0:.2f} s "
                f"({s2.bytes_read} bytes read)"
            )
            grown = _grow_every_file(home)
            t0 = time.perf_counter()
            s5 = Loader(conn, writer_conn=writer).run(sources)
            print(
                f"grown-file pass over {s5.files_scanned:,} files ({grown:,} grown by one line): "
                f"{time.perf_counter() - t0:.2f} s ({s5.bytes_read:,} bytes parsed, "
                f"{s5.issues.get('source_rewritten', 0)} rewritten)"
            )
            if args.many_files:
                many = tmp / "many"
                write_home(many, args.many_files, seed=2, turns=(1, 1))
                msources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(many).items()]
                truncate_derived(conn)
                t0 = time.perf_counter()
                s3 = Loader(conn, writer_conn=writer).run(msources)
                print(f"many small files: {s3.files_changed:,} files indexed in {time.perf_counter() - t0:.1f} s")
                t0 = time.perf_counter()
                s4 = Loader(conn, writer_conn=writer).run(msources)
                print(
                    f"no-change pass over {s4.files_scanned:,} files: {time.perf_counter() - t0:.2f} s "
                    f"({s4.bytes_read} bytes read)"
                )
        if not args.dsn and not args.keep:
            embedded.stop(tmp / "pg")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}")


if __name__ == "__main__":
    main()
