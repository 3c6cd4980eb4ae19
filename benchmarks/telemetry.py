"""Metrics benchmark (issue 13): CPU cost of collection on an indexed home (not a timed test).

Indexes HOME (e.g. ``../shared/tools/scale_home.py ../shared/corpus/home /tmp/b 10``) into a
private embedded server under a temp dir, then runs ROUNDS collection rounds of the five
collectors and reports, per round and per minute at the default 15 s interval: the CPU time
of this process (collectors + guard, all threads) and of the server backends serving the
collectors' connections (read from /proc), and each collector's wall time.

    python -m benchmarks.telemetry /tmp/b --rounds 20
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import psycopg

from agent_history.config import Settings
from agent_history.db import embedded
from agent_history.db.migrate import ensure_schema
from agent_history.db.prices import priced_model_ids
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.telemetry.collectors import COLLECTORS, CollectContext
from agent_history.telemetry.policy import LabelGuard, ModelLabels, resolve_label_values
from agent_history.telemetry.runner import CollectorRunner

INTERVAL_S = 15.0  # the default [metrics] interval


def _self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home", type=Path)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ah-bench-otel-"))
    try:
        dsn = embedded.ensure_running(tmp / "pg")
        ensure_schema(dsn)
        sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(args.home.resolve()).items()]
        with psycopg.connect(dsn, autocommit=True) as conn:
            t0 = time.perf_counter()
            s = Loader(conn).run(sources)
            print(
                f"indexed {s.files_scanned:,} files, {s.bytes_read / 1e6:,.1f} MB in {time.perf_counter() - t0:.1f} s"
            )
            aliases = priced_model_ids(conn)
            counts = conn.execute("SELECT (SELECT count(*) FROM ah.message), (SELECT count(*) FROM ah.model_call)")
            print("catalogue: {:,} messages, {:,} model calls".format(*counts.fetchone()))
        models = ModelLabels((), aliases=aliases)
        ctx = CollectContext(Settings(), sources, [], models, runs=("index",))
        guard = LabelGuard(resolve_label_values({x.namespace for x in sources}, models))
        runner = CollectorRunner(COLLECTORS, ctx, lambda: psycopg.connect(dsn, autocommit=True), guard, interval=3600)
        runner.collect_round()  # warm: connections opened, caches filled
        pids = [c.info.backend_pid for c in runner._conns.values()]
        walls = {n: 0.0 for n in COLLECTORS}
        cpu0, srv0, t0 = _self_cpu(), sum(map(_proc_cpu, pids)), time.perf_counter()
        for _ in range(args.rounds):
            runner.collect_round()
            for n in COLLECTORS:
                walls[n] += runner.health[n].duration_s or 0.0
        wall = time.perf_counter() - t0
        cpu, srv = _self_cpu() - cpu0, sum(map(_proc_cpu, pids)) - srv0
        runner.close(final_round=False)
        per = args.rounds
        scale = 60 / INTERVAL_S
        print(f"{per} rounds in {wall:.2f} s wall; samples per round: {len(runner.samples()):,}")
        print(f"process CPU: {cpu / per * 1000:.1f} ms/round = {cpu / per * scale:.3f} s/min at {INTERVAL_S:g} s")
        print(f"server CPU:  {srv / per * 1000:.1f} ms/round = {srv / per * scale:.3f} s/min at {INTERVAL_S:g} s")
        print("wall per collector (ms/round): " + ", ".join(f"{n} {w / per * 1000:.1f}" for n, w in walls.items()))
    finally:
        embedded.stop(tmp / "pg")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
