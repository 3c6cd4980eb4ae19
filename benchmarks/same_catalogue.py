"""Does a change keep the catalogue byte-identical? Load one home cold with each tree and compare
every ``ah.*`` table (a check for client-side speed work, docs/performance.md decision 14).

    python -m benchmarks.same_catalogue --home HOME --tree before=DIR --tree after=DIR

Each tree loads `HOME` with ``agent-history index`` on a fresh embedded server in its own data
directory (``PYTHONPATH`` = the tree, the work directory as the working directory); then every
row of every ``ah`` table is read as text (ids included; the columns that record when a pass ran
and the ``index_run`` table left out: `tests.snapshot.catalogue_rows`, as tests/test_bulk_load.py; ``meta`` keys ending in
``_at`` too), sorted, and hashed per table. Prints one line per table (rows, sha256 prefix per
tree) and exits 1 when a table differs, with up to five rows found in one load only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.compare import run

PASS_META = "_at"
"""``ah.meta`` keys ending so record when something ran (``schema_created_at``): left out."""


def dump(dsn: str) -> dict[str, list[tuple]]:
    """Every row of every ``ah`` table as text, sorted (`tests.snapshot.catalogue_rows`: pass-time
    columns and ``index_run`` left out), and ``meta`` keys ending in `PASS_META` too."""
    import psycopg

    from tests.snapshot import catalogue_rows

    with psycopg.connect(dsn) as conn:
        out = catalogue_rows(conn)
    if "meta" in out:
        out["meta"] = [r for r in out["meta"] if not str(r[0]).endswith(PASS_META)]
    return out


def load_and_dump(home: Path, tree: Path, work: Path) -> dict[str, list[tuple]]:
    """Load `home` cold with the code of `tree` on a server in `work` → `dump` of its catalogue."""
    from agent_history.db import embedded

    data = work / "data"
    env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(data), PYTHONPATH=str(tree))
    env["AGENT_HISTORY_QUERY_IDLE_S"] = "0"
    env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
    (work / "config.toml").write_text("")
    for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN"):
        env.pop(key, None)
    here = os.getcwd()
    os.chdir(work)  # `python -m` imports a source tree in the working directory before PYTHONPATH
    try:
        run([sys.executable, "-m", "agent_history", "db", "status", "--json"], env)
        p = run([sys.executable, "-m", "agent_history", "index"], env)
        if p.code != 0:
            raise SystemExit(f"index with {tree} exited {p.code}")
        return dump(embedded.server_dsn(data / "pg"))
    finally:
        os.chdir(here)
        embedded.stop(data / "pg")
        shutil.rmtree(data, ignore_errors=True)


def digest(rows: list[tuple]) -> str:
    """sha256 (hex, 16 characters) of a table's sorted rows."""
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()[:16]


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.same_catalogue", description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="the agent home to load")
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=DIR", help="a source tree (two)")
    args = ap.parse_args(argv)
    trees = {name: Path(path).resolve() for name, path in (t.split("=", 1) for t in args.tree)}
    if len(trees) != 2:
        ap.error("give two trees")
    with tempfile.TemporaryDirectory(prefix="ah-same-catalogue-") as tmp:
        dumps = {}
        for name, tree in trees.items():
            work = Path(tmp) / name
            work.mkdir()
            dumps[name] = load_and_dump(args.home.resolve(), tree, work)
    (a, da), (b, db) = dumps.items()
    differ = 0
    for table in sorted(set(da) | set(db)):
        ra, rb = da.get(table, []), db.get(table, [])
        same = ra == rb
        differ += not same
        print(
            f"{'same' if same else 'DIFF'} {table}: {len(ra)} rows {digest(ra)} ({a}) / {len(rb)} rows {digest(rb)} ({b})"
        )
        if not same:
            for x in sorted(set(ra) ^ set(rb))[:5]:
                print(f"  only in {a if x in set(ra) else b}: {x!r:.300}")
    print(f"{len(set(da) | set(db))} tables, {differ} differ")
    raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
