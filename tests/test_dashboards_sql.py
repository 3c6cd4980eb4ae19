"""The catalogue dashboard's SQL panels run as ``ah_reader`` against the real corpus
(``../shared/corpus/home``), with macros and variables substituted the way Grafana does."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from dashboards.generate import outputs
from tests.conftest import TestDatabase
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.grafana_sql import PanelError, Target, interpolate, load, run, targets, variable_options

START = datetime(2000, 1, 1, tzinfo=UTC)
END = datetime(2100, 1, 1, tzinfo=UTC)

#: The classifier's and loops' tables (issues 11 and 12): the corpus has no loops, so panels reading
#: them are checked on a catalogue with the loops fixture (test_efficiency_and_loops_panels_...).
INTERFACE = ("ah.efficiency", "ah.loops", "ah.lane", "ah.loop_closeout", ".trigger", "thread_role")

#: Panels whose data the corpus does not hold, and why (every other panel must return rows).
EMPTY_IN_CORPUS = {
    # the embedding panels' real values: tests/test_dashboards_embeddings.py (an embedded catalogue)
    "Embedding failures by model": "the corpus catalogue is built without an embedding endpoint",
    "Chunks by model and state": "the corpus catalogue is built without an embedding endpoint",
    "Embedding spend by day": "the corpus catalogue is built without an embedding endpoint",
    "CI looks and watches": "no corpus session looks at CI (the loops fixture has one `gh pr checks`)",
    "CI runs by conclusion": "no repository is collected (tests/test_dashboards_tabs.py collects one)",
    "Collected commits by repository": "no repository is collected",
    "Tasks by status": "no repository is collected",
    "Status changes by day": "no repository is collected",
    "Review sub-agents": "no corpus session asks for a review (test_dashboards_tabs.py crafts one)",
    "History look-ups by tool": "no corpus session looks up agent-history (test_dashboards_tabs.py crafts one)",
    "Latest history queries": "no corpus session looks up agent-history",
}


def _catalogue() -> dict:
    return load(outputs()["dashboards/catalogue.json"])


def _sql_targets(dash: dict) -> list[Target]:
    return [t for t in targets(dash) if t.datasource == "grafana-postgresql-datasource"]


def _is_interface(t: Target) -> bool:
    return any(name in t.query for name in INTERFACE)


def _run_all(db: TestDatabase, chosen: list[Target]) -> dict[str, int]:
    """Panel title → rows returned; fails listing every panel whose query errs."""
    dash = _catalogue()
    errors, counts = [], {}
    with psycopg.connect(db.reader_dsn) as conn:
        variables = variable_options(conn, dash)
        for t in chosen:
            try:
                counts[t.panel] = len(run(conn, t, variables, START, END))
            except PanelError as exc:
                errors.append(str(exc))
    assert not errors, "\n".join(errors)
    return counts


def test_every_sql_panel_is_time_filtered_and_variables_have_options(corpus_db):  # noqa: F811
    dash = _catalogue()
    sql = _sql_targets(dash)
    assert len(sql) >= 30
    assert [t.panel for t in sql if "$__timeFilter(" not in t.query] == []
    with psycopg.connect(corpus_db.reader_dsn) as conn:
        options = variable_options(conn, dash)
    assert options["namespace"] == ["claude-local", "codex-local", "pi-local"]
    assert options["agent"] == ["claude", "codex", "pi"]
    assert "unknown" not in options["model"] or len(options["model"]) > 1
    assert len(options["model"]) >= 3


def test_core_panels_run_as_reader_and_return_rows_where_the_corpus_has_data(corpus_db):  # noqa: F811
    core = [t for t in _sql_targets(_catalogue()) if not _is_interface(t)]
    counts = _run_all(corpus_db, core)
    empty = {title for title, n in counts.items() if n == 0}
    assert empty == set(EMPTY_IN_CORPUS)


def test_stats_match_the_catalogue_and_the_time_picker_filters(corpus_db):  # noqa: F811
    dash = _catalogue()
    by_title = {t.panel: t for t in _sql_targets(dash)}
    with psycopg.connect(corpus_db.reader_dsn) as conn:
        variables = variable_options(conn, dash)
        sessions = run(conn, by_title["Sessions"], variables, START, END)[0][0]
        calls = run(conn, by_title["Model calls"], variables, START, END)[0][0]
        # Two corpus sessions carry no timestamp at all (one summary line each): no time range holds them.
        truth = conn.execute(
            "SELECT (SELECT count(*) FROM ah.session WHERE started_at IS NOT NULL), (SELECT count(*) FROM ah.model_call)"
        ).fetchone()
        assert (sessions, calls) == truth == (32, 1496)
        assert run(conn, by_title["Error classes"], variables, START, END) == [
            ("nonzero_exit", 35),
            ("tool_error", 27),
            ("validation_error", 16),
            ("interrupted", 9),
            ("denied", 8),
            ("not_found", 7),
        ]
        one = {
            t: run(conn, by_title[t], variables, START, END)[0][0]
            for t in ("Messages", "Tokens", "List-price cost", "Unpriced calls")
        }
        # Unpriced: pi-fixture-model (2); gpt-5.1-codex is priced as genai-prices' openai/gpt-5.1
        assert one == {
            "Messages": 1586,
            "Tokens": 174477480,
            "List-price cost": Decimal("130.749036"),  # incl. the long-context tier (2025-09-20)
            "Unpriced calls": 2,
        }
        by_agent = run(conn, by_title["By agent and namespace"], variables, START, END)
        assert [(r[0], r[1], r[2], r[6]) for r in by_agent] == [
            ("claude", "claude-local", 25, Decimal("70.240966")),
            ("pi", "pi-local", 3, Decimal("60.066688")),
            ("codex", "codex-local", 4, Decimal("0.441382")),
        ]
        commands = run(conn, by_title["Top failing commands"], variables, START, END)
        assert "cd" not in [r[0] for r in commands]
        git = run(conn, by_title["Commits and pushes per repo"], variables, START, END)
        assert (sum(r[1] for r in git), sum(r[2] for r in git)) == (49, 42)
        # A range before any transcript: every count is 0 and no series has a point.
        old = datetime(1990, 1, 1, tzinfo=UTC), datetime(1990, 2, 1, tzinfo=UTC)
        assert run(conn, by_title["Sessions"], variables, *old) == [(0,)]
        assert run(conn, by_title["Tokens by day and bucket"], variables, *old) == []
        # One agent selected: only its sessions.
        claude = run(conn, by_title["Sessions"], {**variables, "agent": ["claude"]}, START, END)[0][0]
        assert (
            claude
            == conn.execute(
                "SELECT count(*) FROM ah.session WHERE agent = 'claude' AND started_at IS NOT NULL"
            ).fetchone()[0]
            == 25
        )
        assert 0 < claude < sessions


def test_a_panel_needing_a_missing_column_fails_with_its_title(corpus_db):  # noqa: F811
    broken = Target(
        "Sessions by colour",
        "grafana-postgresql-datasource",
        "SELECT s.colour FROM ah.session s WHERE $__timeFilter(s.started_at)",
        "table",
    )
    with psycopg.connect(corpus_db.reader_dsn) as conn, pytest.raises(PanelError) as info:
        run(conn, broken, {}, START, END)
    assert str(info.value).startswith("Sessions by colour: UndefinedColumn")


def test_the_reader_cannot_write(corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.reader_dsn) as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute("DELETE FROM ah.meta")


def test_interpolation_matches_grafana():
    sql = "SELECT $__timeGroupAlias(c.ts, 1d) FROM t WHERE $__timeFilter(to_timestamp(x / 1e9)) AND a IN ($agent)"
    out = interpolate(sql, {"agent": ["claude", "o'brien"]}, START, END)
    assert out == (
        'SELECT floor(extract(epoch from c.ts)/86400)*86400 AS "time" FROM t WHERE '
        "to_timestamp(x / 1e9) BETWEEN '2000-01-01T00:00:00Z' AND '2100-01-01T00:00:00Z' "
        "AND a IN ('claude', 'o''brien')"
    )
    with pytest.raises(ValueError, match="unsupported Grafana macro"):
        interpolate("SELECT $__unixEpochFilter(x)", {}, START, END)
    with pytest.raises(ValueError, match="unresolved variable"):
        interpolate("SELECT 1 WHERE a IN ($nope)", {}, START, END)


# --- efficiency and loops panels (issues 11 and 12) -----------------------------------------------
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def loops_db(corpus_db, pg_server):  # noqa: F811
    """A copy of the corpus catalogue with `fixtures/loops/home` and `fixtures/efficiency/home`
    indexed too, by the real loader (post-pass: loops, lanes, roles, triggers)."""
    from agent_history.db.roles import READER

    name = f"i_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {corpus_db.name}")
    db = TestDatabase(name, pg_server.dsn(name), pg_server.dsn(name, user=READER), pg_server)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        for home in (FIXTURES / "loops" / "home", FIXTURES / "efficiency" / "home"):
            sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
            assert Loader(conn).run(sources).files_failed == 0
    yield db
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_efficiency_and_loops_panels_run_as_reader_on_a_catalogue_with_loops(loops_db):
    """Every efficiency and loops panel returns rows as ah_reader; the counts are the tables'."""
    chosen = [t for t in _sql_targets(_catalogue()) if _is_interface(t)]
    by_title = {t.panel: t for t in chosen}
    assert set(by_title) == {
        "Triggers by role",
        "Model calls by trigger and day",
        "Threads by role",
        "Poll share of roots over time",
        "Poll share per root",
        "Wait and status calls by day",
        "Loops by status",
        "Loop status",
        "Cost and lanes per loop",
        "Landed and parked per repo",
        "Lanes by link and return",
        "Lane sessions",
    }
    counts = _run_all(loops_db, chosen)
    assert {t for t, n in counts.items() if n == 0} == set()
    dash = _catalogue()
    with psycopg.connect(loops_db.reader_dsn) as conn:
        variables = variable_options(conn, dash)
        loops = dict(run(conn, by_title["Loops by status"], variables, START, END))
        truth = dict(conn.execute("SELECT status, count(*) FROM ah.loops GROUP BY 1").fetchall())
        assert loops == truth and sum(loops.values()) == 11  # the loops fixture's launches
        triggers = {r[0]: r[1:] for r in run(conn, by_title["Triggers by role"], variables, START, END)}
        calls = dict(
            conn.execute(
                "SELECT s.thread_role, count(*) FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id "
                "WHERE NOT coalesce(c.is_api_error, false) AND s.started_at IS NOT NULL GROUP BY 1"
            ).fetchall()
        )
        assert {role: sum(row) for role, row in triggers.items()} == calls
        assert set(triggers) == {"root", "worker", "solo"}
        lanes = {r[0]: r[2] for r in run(conn, by_title["Cost and lanes per loop"], variables, START, END)}
        assert (lanes["widgets #1"], lanes["gadgets #3"], lanes["widgets #8"]) == (1, 1, 0)
