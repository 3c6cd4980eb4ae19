"""Search latency benchmark (not a timed test): p50/p95 of keyword search at N messages.

    python -m benchmarks.search --messages 1000000 [--dsn DSN] [--explain]

Builds a synthetic catalogue directly in SQL (the loader benchmark measures ingest; this one
measures queries): N messages in sessions of 40, classes 35% assistant text, 20% human prompts,
25% reasoning, 20% other; message lengths 4–200 words drawn from the real corpus vocabulary
(``../shared/corpus/home``) with Zipf-distributed frequencies (rank sampled log-uniformly, i.e.
P(rank) ∝ 1/rank), so there are very common words, a long tail, and rare identifiers. Rows go
through the real table (generated tsvectors, statistics triggers, GIN), in batches of 20,000.

Then a fixed query mix — rare identifiers, mid-frequency words, very common words, questions,
phrases, filtered searches — runs end to end through `search.keyword.search` (snippets
included), each query three times after a warm-up; prints p50/p95 overall and per category.
``--explain`` prints EXPLAIN (ANALYZE, BUFFERS) of every statement of one common-word question.
Uses a private embedded server under a temp dir unless ``--dsn`` is given (that database must
be empty or a previous run of this benchmark: it is reused when the row count matches).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import psycopg

from agent_history.db import embedded
from agent_history.db.migrate import ensure_schema
from agent_history.model import classes
from agent_history.search.keyword import search
from agent_history.search.request import SearchRequest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "home"
BATCH = 20_000
TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_./:-]{1,40}")
FALLBACK = (
    "cache ttl pool connection retry timeout parser loader session index query rank token model commit "
    "branch merge rebase deploy build test fixture error warning config yaml json schema migration postgres "
    "vector embedding search snippet highlight lineage rollup cost price refactor module function class "
    "method variable import export async await promise future getUserById parse_config ECONNRESET "
    "src/db/pool.py max_retries HttpClient useEffect"
).split()


def vocabulary(limit: int = 60_000) -> list[str]:
    """Words ranked by frequency in the real corpus (fallback: a small fixed list)."""
    counts: Counter[str] = Counter()
    for path in sorted(CORPUS.rglob("*.jsonl")) if CORPUS.is_dir() else []:
        counts.update(TOKEN.findall(path.read_text(errors="replace")))
    words = [w for w, _ in counts.most_common(limit) if len(w) < 40]
    return words if len(words) > 1000 else FALLBACK


def build(conn: psycopg.Connection, n_messages: int, words: list[str]) -> None:
    """Insert `n_messages` synthetic messages (see the module docstring)."""
    conn.execute("CREATE TEMP TABLE vocab (rank int PRIMARY KEY, word text NOT NULL)")
    with conn.cursor().copy("COPY vocab (rank, word) FROM STDIN") as cp:
        for i, w in enumerate(words, 1):
            cp.write_row((i, w))
    src = conn.execute(
        "INSERT INTO ah.source_file (path, namespace, agent) VALUES ('/bench/synthetic.jsonl', 'claude-local', 'claude') "
        "ON CONFLICT ON CONSTRAINT source_file_path_host_key DO UPDATE SET agent = EXCLUDED.agent RETURNING id"
    ).fetchone()[0]
    n_sessions = n_messages // 40 + 1
    conn.execute(
        "INSERT INTO ah.session (agent, session_uid, namespace, source_id, cwd, started_at) "
        "SELECT CASE WHEN g %% 4 = 3 THEN 'codex' ELSE 'claude' END, 'bench-' || g, "
        "       CASE WHEN g %% 4 = 3 THEN 'codex-local' ELSE 'claude-local' END, %s, '/work/proj' || (g %% 40), "
        "       timestamptz '2025-01-01' + g * interval '17 minutes' "
        "FROM generate_series(0, %s) AS g ON CONFLICT DO NOTHING",
        (src, n_sessions),
    )
    first = conn.execute("SELECT min(id) FROM ah.session WHERE session_uid LIKE 'bench-%%'").fetchone()[0]
    nv = len(words)
    for start in range(0, n_messages, BATCH):
        stop = min(n_messages, start + BATCH)
        t0 = time.perf_counter()
        conn.execute(
            """
            INSERT INTO ah.message (agent, message_uid, session_id, namespace, source_id, role, message_class,
                                    text, ts, byte_offset, line_number)
            SELECT 'claude', 'bench-m' || g, %(first)s + g / 40, 'claude-local', %(src)s, 'assistant',
                   (ARRAY['assistant_text','assistant_text','assistant_text','assistant_text','assistant_text',
                          'assistant_text','assistant_text','human_prompt','human_prompt','human_prompt',
                          'human_prompt','reasoning','reasoning','reasoning','reasoning','reasoning',
                          'tool_result_text','system_reminder','context_injection','subagent_report'])[1 + g %% 20],
                   -- ranks drawn first (a volatile target list keeps the subquery from being
                   -- flattened), then looked up by primary key
                   (SELECT string_agg(v.word, ' ' ORDER BY k.i)
                      FROM (SELECT i, least(%(nv)s, floor(exp(random() * ln(%(nv)s)))::int) AS r
                            FROM generate_series(1, 4 + (random() * random() * 196)::int + 0 * g) AS i) AS k
                      JOIN vocab AS v ON v.rank = k.r),
                   timestamptz '2025-01-01' + g * interval '25 seconds', (g %% 40) * 2000, g %% 40 + 1
            FROM generate_series(%(start)s, %(stop)s - 1) AS g
            ON CONFLICT DO NOTHING
            """,
            {"first": first, "src": src, "nv": nv, "start": start, "stop": stop},
        )
        print(f"  {stop:,} messages ({(stop - start) / (time.perf_counter() - t0):,.0f}/s)", flush=True)
    conn.execute("ANALYZE ah.message")
    conn.execute("ANALYZE ah.search_term")


def query_mix(words: list[str], seed: int = 5) -> dict[str, list[SearchRequest]]:
    """A fixed query mix by category, drawn from vocabulary ranks."""
    rng = random.Random(seed)
    stop = {"the", "a", "an", "and", "or", "to", "of", "in", "is", "it", "for", "on", "this", "that", "with"}
    plain = [w for w in words if w.isalpha() and w.lower() not in stop]
    # identifier-shaped: snake_case, camelCase, dotted/pathy names (not base64 noise)
    shaped = re.compile(r"^[a-z]+(?:[A-Z][a-z]+|_[a-z]+)+$|^[\w-]+\.(?:py|ts|tsx|js|md|json|rs|go)$")
    ident = [w for w in words if shaped.match(w)]
    common, mid, rare = plain[:60], plain[500:5000], plain[20000:]
    rare_ident = ident[len(ident) // 3 :] or rare
    q: dict[str, list[SearchRequest]] = {
        "rare identifier": [SearchRequest(rng.choice(rare_ident)) for _ in range(8)],
        "mid words": [SearchRequest(f"{rng.choice(mid)} {rng.choice(mid)}") for _ in range(8)],
        "common word": [SearchRequest(rng.choice(common)) for _ in range(8)],
        "question": [
            SearchRequest(f"why did the {rng.choice(common)} {rng.choice(mid)} {rng.choice(common)} fail")
            for _ in range(8)
        ],
        "common pair": [SearchRequest(f"{rng.choice(common)} {rng.choice(common)}") for _ in range(6)],
        "phrase": [SearchRequest(f'"{rng.choice(common)} {rng.choice(common)}"') for _ in range(6)],
        "filtered": [
            SearchRequest(f"{rng.choice(common)} {rng.choice(mid)}", classes=classes.PROMPTS) for _ in range(4)
        ]
        + [SearchRequest(f"{rng.choice(mid)}", agents=("codex",), namespaces=("codex-local",)) for _ in range(4)],
    }
    return q


class _Recorder:
    """Connection proxy recording the statements a search runs (for --explain)."""

    def __init__(self, conn: psycopg.Connection):
        self.conn, self.statements = conn, []

    def execute(self, query, params=None):
        self.statements.append((query, params))
        return self.conn.execute(query, params)

    def transaction(self):
        return self.conn.transaction()


def run(conn: psycopg.Connection, mix: dict[str, list[SearchRequest]], repeat: int = 3) -> dict[str, list[float]]:
    """Latencies (ms) per category."""
    for reqs in mix.values():  # warm-up
        for r in reqs:
            search(conn, r)
    out: dict[str, list[float]] = {}
    for cat, reqs in mix.items():
        for _ in range(repeat):
            for r in reqs:
                t0 = time.perf_counter()
                search(conn, r)
                out.setdefault(cat, []).append((time.perf_counter() - t0) * 1000)
    return out


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--explain", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (server + data)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ah-search-bench-"))
    try:
        dsn = args.dsn or embedded.ensure_running(tmp / "pg")
        ensure_schema(dsn)
        words = vocabulary()
        with psycopg.connect(dsn, autocommit=True) as conn:
            have = conn.execute("SELECT count(*) FROM ah.message WHERE message_uid LIKE 'bench-m%%'").fetchone()[0]
            if have < args.messages:
                t0 = time.perf_counter()
                print(f"building {args.messages:,} messages from a {len(words):,}-word vocabulary …")
                build(conn, args.messages, words)
                print(f"built in {time.perf_counter() - t0:.0f} s")
            n, terms = conn.execute(
                "SELECT (SELECT doc_count FROM ah.search_corpus WHERE corpus = 'message'), "
                "(SELECT count(*) FROM ah.search_term WHERE corpus = 'message')"
            ).fetchone()
            print(f"catalogue: {n:,} messages with text, {terms:,} distinct lexemes")
            mix = query_mix(words)
            lat = run(conn, mix)
            everything = [x for xs in lat.values() for x in xs]
            print(
                f"search latency over {len(everything)} searches: p50 {pct(everything, 50):.1f} ms, "
                f"p95 {pct(everything, 95):.1f} ms, max {max(everything):.1f} ms"
            )
            for cat, xs in lat.items():
                print(
                    f"  {cat:<16} p50 {pct(xs, 50):7.1f} ms  p95 {pct(xs, 95):7.1f} ms  "
                    f"mean {statistics.fmean(xs):7.1f} ms"
                )
            if args.explain:
                rec = _Recorder(conn)
                req = mix["question"][0]
                search(rec, req)  # type: ignore[arg-type]
                print(f"\nEXPLAIN of {req.query!r}:")
                for query, params in rec.statements:
                    text = query if isinstance(query, str) else query.as_string(conn)
                    if text.lstrip().upper().startswith("SELECT VALUE FROM AH.META"):
                        continue
                    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + text, params).fetchall()
                    print("-- " + " ".join(text.split())[:160])
                    print("\n".join(r[0] for r in plan) + "\n")
        if not args.dsn and not args.keep:
            embedded.stop(tmp / "pg")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}")


if __name__ == "__main__":
    main()
