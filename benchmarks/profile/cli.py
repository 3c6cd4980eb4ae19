"""The entry point of `just bench-profile` (`main`; options in the package docstring)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.profile.catalogue import analysis_costs, explain_inserts, index_use, search_analysis_variants, store
from benchmarks.profile.load import one_run
from benchmarks.profile.report import git_head, report, write_section
from benchmarks.profile.server import perf_available

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    from benchmarks import profile  # the package docstring (imported by now)

    ap = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=profile.__doc__.splitlines()[0])
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
            "commit": git_head(),
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
