"""Ingest-time cost of the efficiency classifier (issue 11; not a timed test).

Builds a benchmark home by cloning a real one K times (``../shared/tools/scale_home.py``),
then runs cold index passes on a private embedded server, alternating *without* the classifier's
post-pass (``ah.refresh_efficiency`` dropped: the post-pass skips it) and *with* it, and times
``ah.refresh_efficiency`` alone over every session. Prints the trigger distribution and the
poll share per harness of the catalogue.

    python -m benchmarks.efficiency --home ../shared/corpus/home --clones 10 --rounds 2
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from agent_history.db import embedded
from agent_history.db.migrate import apply_sql_files, ensure_schema
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.rebuild import truncate_derived

REPO = Path(__file__).resolve().parents[1]


def _cold_pass(dsn: str, sources: list[Source], *, classifier: bool) -> float:
    with psycopg.connect(dsn, autocommit=True) as conn:
        truncate_derived(conn)
        if classifier:
            apply_sql_files(dsn, force=True)
        else:
            conn.execute("DROP FUNCTION IF EXISTS ah.refresh_efficiency(bigint[])")
        t0 = time.perf_counter()
        summary = Loader(conn).run(sources)
        elapsed = time.perf_counter() - t0
        assert summary.files_failed == 0
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=REPO.parent / "shared" / "corpus" / "home")
    ap.add_argument("--clones", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ah-bench-eff-"))
    try:
        home = tmp / "home"
        subprocess.run(
            [
                sys.executable,
                str(REPO.parent / "shared" / "tools" / "scale_home.py"),
                str(args.home),
                str(home),
                str(args.clones),
            ],
            check=True,
        )
        dsn = embedded.ensure_running(tmp / "pg")
        ensure_schema(dsn)
        sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
        without, with_ = [], []
        for _ in range(args.rounds):
            without.append(_cold_pass(dsn, sources, classifier=False))
            with_.append(_cold_pass(dsn, sources, classifier=True))
        a, b = statistics.median(without), statistics.median(with_)
        print(f"cold pass without the classifier post-pass: {a:.2f} s (runs {', '.join(f'{x:.2f}' for x in without)})")
        print(f"cold pass with it:                          {b:.2f} s (runs {', '.join(f'{x:.2f}' for x in with_)})")
        print(f"difference: {100 * (b - a) / a:+.1f} %")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("UPDATE ah.model_call SET trigger = NULL")
            ids = [r[0] for r in conn.execute("SELECT id FROM ah.session")]
            t0 = time.perf_counter()
            changed = conn.execute("SELECT ah.refresh_efficiency(%s)", (ids,)).fetchone()[0]
            alone = time.perf_counter() - t0
            print(
                f"ah.refresh_efficiency over {len(ids):,} sessions ({changed:,} calls): {alone:.2f} s "
                f"= {100 * alone / a:.1f} % of the pass without it"
            )
            print("triggers per harness:")
            for agent, trig, n in conn.execute(
                "SELECT agent, coalesce(trigger, '(none)'), count(*) FROM ah.model_call "
                "WHERE NOT coalesce(is_api_error, false) GROUP BY 1, 2 ORDER BY 1, 3 DESC"
            ):
                print(f"  {agent:7} {trig:12} {n:7,}")
            print("poll_share per harness (wait + status) / classified:")
            for agent, share in conn.execute(
                "SELECT agent, round(count(*) FILTER (WHERE trigger IN ('wait', 'status'))::numeric "
                "/ nullif(count(trigger), 0), 4) FROM ah.model_call WHERE NOT coalesce(is_api_error, false) "
                "GROUP BY 1 ORDER BY 1"
            ):
                print(f"  {agent:7} {share}")
        embedded.stop(tmp / "pg")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
