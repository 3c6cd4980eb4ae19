"""The six-tab archive dashboard (issue 32): each tab states its question, every SQL panel is
time-filtered and runs as ``ah_reader`` with exact values on a real catalogue — a copy of the
shared corpus home indexed, its Claude and Codex namespaces archived by the real archive pass
(zstd copies; pi's left uncopied), one transcript grown and re-indexed after its copy, one copy
corrupted and caught by `verify_archive`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import psycopg
import pytest

from agent_history.ingest.archive.run import archive_pass
from agent_history.ingest.archive.verify import verify_archive
from dashboards.generate import outputs
from tests.grafana_sql import load, run, targets, variable_options
from tests.homes import copy_home, index, sources_for

START = datetime(2000, 1, 1, tzinfo=UTC)
END = datetime(2100, 1, 1, tzinfo=UTC)

TABS = [
    ("Tiers", "What does each tier hold: transcript files in the hot tier, archived copies in the cold tier, per namespace?"),
    ("Freshness", "How current is the archive: when was each namespace last copied, and which hot files changed since their copy?"),
    ("Copies missing", "Which catalogued transcripts have no archived copy yet, and which are gone from a tier?"),
    ("Sizes and growth", "How big is the archive, how well does it compress, and how fast does it grow?"),
    ("Rebuild readiness", "Could the catalogue be rebuilt from the archive: is every catalogued file copied and every copy verified?"),
    ("Filesystem", "Is the filesystem under either tier filling up, and how much of it do the transcripts take?"),
]  # fmt: skip


def _dashboard() -> dict:
    return load(outputs()["dashboards/archive.json"])


def test_six_tabs_each_state_their_question_and_every_sql_panel_is_time_filtered():
    dash = _dashboard()
    rows = [p["title"] for p in dash["panels"] if p["type"] == "row"]
    questions = [p["options"]["content"] for p in dash["panels"] if p["type"] == "text"]
    assert list(zip(rows, questions, strict=True)) == [(t, f"**{q}**") for t, q in TABS]
    sql = [t for t in targets(dash) if t.datasource == "grafana-postgresql-datasource"]
    assert len(sql) == 11
    assert [t.panel for t in sql if "$__timeFilter(" not in t.query] == []
    assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in dash["panels"])


@pytest.fixture
def archived(db, corpus_home, own_tmp):
    """(db, {namespace: catalogued files}, grown file, home): the corpus home copied, indexed, archived
    but for pi-local; then one Claude transcript grown and re-indexed, one copy corrupted."""
    home = copy_home(corpus_home, own_tmp / "home")
    root = own_tmp / "archive"
    assert index(db, home).files_failed == 0
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        archive_pass(conn, [s for s in sources_for(home) if s.namespace != "pi-local"], root)
    claude = sorted((home / ".claude").rglob("*.jsonl"))
    grown, corrupt = claude[0], claude[1]
    with grown.open("ab") as fh:
        fh.write(grown.read_bytes().splitlines(keepends=True)[0])
    assert index(db, home).files_failed == 0
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        rel = conn.execute("SELECT archive_file FROM ah.archive_copy WHERE path = %s", (str(corrupt),)).fetchone()[0]
        (root / rel).write_bytes(b"not zstd")
        assert len(verify_archive(conn, root).bad) == 1
        files = dict(conn.execute("SELECT namespace, count(*) FROM ah.source_file GROUP BY 1").fetchall())
    return db, files, grown, home


def test_archive_panels_run_as_reader_with_exact_values(archived):
    db, files, grown, home = archived
    dash = _dashboard()
    by_title = {t.panel: t for t in targets(dash) if t.datasource == "grafana-postgresql-datasource"}
    with psycopg.connect(db.reader_dsn) as conn:
        variables = variable_options(conn, dash)
        got = {title: run(conn, t, variables, START, END) for title, t in by_title.items()}
        truth = conn.execute("SELECT count(*), sum(size), sum(compressed_size) FROM ah.archive_copy").fetchone()
    assert variables["namespace"] == ["claude-local", "codex-local", "pi-local"]
    assert files == {"claude-local": 29, "codex-local": 4, "pi-local": 3}
    tiers = {r[0]: r[1:] for r in got["Files and copies by namespace"]}
    assert tiers == {
        "claude-local": (29, 29, None),
        "codex-local": (4, 4, None),
        "pi-local": (3, 0, None),
    }
    assert got["Copies by kind"] == [("jsonl", truth[0])] and truth[0] == 33
    ahead = got["Hot files ahead of their copy"]
    assert [(r[0], r[1]) for r in ahead] == [("claude-local", str(grown))]
    assert ahead[0][2] - ahead[0][3] == len(grown.read_bytes().splitlines(keepends=True)[0])
    assert {r[0]: r[1:] for r in got["Not archived by namespace"]} == {
        "claude-local": (0, 29),
        "codex-local": (0, 4),
        "pi-local": (3, 0),
    }
    assert sorted(r[1] for r in got["Files without a copy"]) == sorted(str(p) for p in (home / ".pi").rglob("*.jsonl"))
    sizes = {r[0]: r[1:] for r in got["Archive size by namespace"]}
    assert sum(r[0] for r in sizes.values()) == 33
    assert (sum(r[1] for r in sizes.values()), sum(r[2] for r in sizes.values())) == (truth[1], truth[2])
    assert all(r[3] > Decimal(1) for r in sizes.values())  # zstd shrinks JSONL
    assert sum(r[2] for r in got["Bytes archived by day"]) == truth[2]
    ready = {r[0]: r[1:] for r in got["Readiness by namespace"]}
    assert ready == {
        "claude-local": (29, 29, 28, 1, Decimal("0.9655")),
        "codex-local": (4, 4, 4, 0, Decimal("1.0000")),
        "pi-local": (3, 0, 0, 0, Decimal("0.0000")),
    }
    [failing] = got["Copies failing verification"]
    assert failing[0] == "claude-local" and failing[4]
    per_tier = dict(got["Bytes per tier"])
    assert per_tier["cold"] == truth[2] and per_tier["hot"] > per_tier["cold"]
    assert [r[0] for r in got["Last copy by namespace"]] == ["claude-local", "codex-local"]
    json.dumps(got, default=str)  # every value is something Grafana can show
