"""Search quality on the real corpus: the labelled evaluation set and the CLI end to end."""

from __future__ import annotations

import json
import subprocess
import sys

from agent_history.evaluation.search import check_labels, evaluate, load_queries
from agent_history.search.keyword import search
from agent_history.search.request import HL_START, SearchRequest
from tests.corpus_db import corpus_db  # noqa: F401 - fixture

HIT5_FLOOR = 0.85


def test_eval_set_has_40_plus_satisfiable_labels_of_every_kind(corpus_db):  # noqa: F811
    queries = load_queries()
    assert len(queries) >= 40
    assert {q.kind for q in queries} >= {"identifier", "error", "path", "phrase", "question"}
    assert len({q.id for q in queries}) == len(queries)
    with corpus_db.connect() as conn:
        assert check_labels(conn, queries) == []


def test_eval_hit_at_5_on_the_plain_postgresql_backend(corpus_db):  # noqa: F811
    with corpus_db.connect() as conn:
        backend = conn.execute("SELECT value FROM ah.meta WHERE key = 'keyword_backend'").fetchone()[0]
        report = evaluate(conn, load_queries())
    assert backend == "fts"
    misses = [(r.query.id, r.rank) for r in report.results if not r.rank or r.rank > 5]
    assert report.hit_at(5) >= HIT5_FLOOR, misses


def test_reader_role_can_search(corpus_db):  # noqa: F811
    import psycopg

    with psycopg.connect(corpus_db.reader_dsn) as conn:
        hits = search(conn, SearchRequest("markdownlint MD034"))
    assert hits and hits[0].session_uid == "5ed31c36-bca8-40fd-8d24-f1a1f0af7901"


def test_cli_search_answers_a_question_with_snippets(corpus_db, tmp_path):  # noqa: F811
    (tmp_path / "none.toml").touch()
    env = {
        "AGENT_HISTORY_DSN": corpus_db.dsn,
        "AGENT_HISTORY_CONFIG": str(tmp_path / "none.toml"),
        "AGENT_HISTORY_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "AGENT_HISTORY_QUERY_IDLE_S": "0",  # no resident query process left behind (tests/conftest.py)
    }
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "search", "why did the build fail", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)["hits"]
    assert len(hits) == 20
    assert all(h["snippet"] and h["highlights"] and HL_START not in h["snippet"] for h in hits)
    assert all("build" in h["snippet"].lower() or "fail" in h["snippet"].lower() for h in hits[:5])
    plain = subprocess.run(
        [sys.executable, "-m", "agent_history", "search", "why did the build fail", "-n", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plain.returncode == 0 and plain.stdout.count(".jsonl:") == 3
