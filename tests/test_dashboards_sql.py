"""The catalogue dashboard's SQL panels run as ``ah_reader`` against the real corpus
(``../shared/corpus/home``), with macros and variables substituted the way Grafana does."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal

import psycopg
import pytest

from dashboards.generate import outputs
from tests.conftest import TestDatabase
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.grafana_sql import PanelError, Target, interpolate, load, run, targets, variable_options

START = datetime(2000, 1, 1, tzinfo=UTC)
END = datetime(2100, 1, 1, tzinfo=UTC)

#: Tables of the shared interface built in parallel (issues 11 and 12): panels reading them are
#: checked by test_interface_panels_against_standins only (the lead switches it to the real tables).
INTERFACE = ("ah.efficiency", "ah.loops", "ah.lane", "ah.loop_closeout", ".trigger", "thread_role")

#: Panels whose data the corpus does not hold, and why (every other panel must return rows).
EMPTY_IN_CORPUS = {
    "Embedding failures by model": "the corpus catalogue is built without an embedding endpoint",
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
        # Unpriced: gpt-5.1-codex (40 calls, no confirmed price) and pi-fixture-model (2)
        assert one == {
            "Messages": 1586,
            "Tokens": 174477480,
            "List-price cost": Decimal("101.074007"),
            "Unpriced calls": 42,
        }
        by_agent = run(conn, by_title["By agent and namespace"], variables, START, END)
        assert [(r[0], r[1], r[2], r[6]) for r in by_agent] == [
            ("pi", "pi-local", 3, Decimal("60.066688")),
            ("claude", "claude-local", 25, Decimal("41.007319")),
            ("codex", "codex-local", 4, None),  # cost unknown, not 0
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


# --- shared interface stand-ins (issues 11 and 12) ------------------------------------------------
# The efficiency and loops tables are built in parallel on other branches. This helper creates
# them with exactly the interface's names so the panels' SQL is checked now; at merge the lead
# replaces `_standins` by the real migrations/post-pass and keeps the test.

STANDINS = """
ALTER TABLE ah.model_call ADD COLUMN trigger text;
ALTER TABLE ah.session ADD COLUMN thread_role text;
UPDATE ah.session s SET thread_role = CASE
    WHEN s.agent_id <> '' OR s.parent_session_id IS NOT NULL THEN 'worker'
    WHEN EXISTS (SELECT 1 FROM ah.session c WHERE c.parent_session_id = s.id) THEN 'root'
    ELSE 'solo' END;
CREATE VIEW ah.efficiency AS
SELECT s.id AS session_id, s.agent, s.namespace, s.session_uid, s.agent_id, s.thread_role AS role, s.started_at,
       count(c.id) AS calls,
       count(*) FILTER (WHERE c.trigger = 'user') AS n_user, count(*) FILTER (WHERE c.trigger = 'model') AS n_model,
       count(*) FILTER (WHERE c.trigger = 'work') AS n_work, count(*) FILTER (WHERE c.trigger = 'status') AS n_status,
       count(*) FILTER (WHERE c.trigger = 'wait') AS n_wait, count(*) FILTER (WHERE c.trigger = 'event') AS n_event,
       count(*) FILTER (WHERE c.trigger = 'noop') AS n_noop,
       count(*) FILTER (WHERE c.trigger = 'orchestrate') AS n_orchestrate,
       count(*) FILTER (WHERE c.trigger = 'agent_msg') AS n_agent_msg,
       count(c.id) FILTER (WHERE c.trigger IS NULL) AS unclassified,
       round((count(*) FILTER (WHERE c.trigger IN ('wait', 'status')))::numeric
             / nullif(count(c.trigger), 0), 4) AS poll_share,
       sum(c.input_uncached) AS input_tokens, sum(c.cache_read) AS cache_read_tokens, sum(c.output) AS output_tokens
FROM ah.session s LEFT JOIN ah.model_call c ON c.session_id = s.id
GROUP BY s.id;
CREATE TABLE ah.loops (
    id bigserial PRIMARY KEY, root_session_id bigint, launch_message_id bigint, closeout_path text,
    charter_path text, charter_sha256 text, loop_number integer, repo text, started_at timestamptz,
    status text, waiting_until timestamptz, ended_at timestamptz, end_evidence text,
    root_last_active_at timestamptz, lanes integer, model_calls bigint, input_uncached bigint, cache_read bigint,
    cache_write_5m bigint, cache_write_1h bigint, output bigint, reasoning bigint, cost_usd numeric,
    errors integer, commits integer, pushes integer, landed integer, parked integer);
CREATE TABLE ah.lane (
    id bigserial PRIMARY KEY, loop_id bigint, session_id bigint, link_method text, return_status text,
    returns jsonb);
CREATE TABLE ah.loop_closeout (
    loop_id bigint, sha256 text, first_line text, written_at timestamptz, qualified boolean, reason text);
-- one loop on the corpus' first root session, with one lane (its first child)
INSERT INTO ah.loops (root_session_id, closeout_path, loop_number, repo, started_at, status, lanes, cost_usd)
SELECT id, 'CLOSEOUT.md', 1, 'corpus', started_at, 'running', 1, NULL
FROM ah.session WHERE thread_role = 'root' ORDER BY id LIMIT 1;
INSERT INTO ah.lane (loop_id, session_id, link_method)
SELECT l.id, c.id, 'lineage' FROM ah.loops l
JOIN LATERAL (SELECT id FROM ah.session WHERE parent_session_id = l.root_session_id ORDER BY id LIMIT 1) c ON true;
GRANT SELECT ON ah.efficiency, ah.loops, ah.lane, ah.loop_closeout TO ah_reader;
"""


@pytest.fixture(scope="module")
def standin_db(corpus_db, pg_server):  # noqa: F811
    """A copy of the corpus catalogue with the interface stand-ins added."""
    name = f"i_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {corpus_db.name}")
    from agent_history.db.roles import READER

    db = TestDatabase(name, pg_server.dsn(name), pg_server.dsn(name, user=READER), pg_server)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute(STANDINS)
    yield db
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_interface_panels_against_standins(standin_db):
    """Efficiency and loops panels (shared interface of issues 11 and 12) run as ah_reader and
    return rows. At merge: drop STANDINS/standin_db and run this on the real catalogue."""
    chosen = [t for t in _sql_targets(_catalogue()) if _is_interface(t)]
    titles = {t.panel for t in chosen}
    assert titles == {
        "Triggers by role",
        "Poll share of roots over time",
        "Poll share per root",
        "Loops by status",
        "Loop status",
        "Cost and lanes per loop",
        "Landed and parked per repo",
    }
    counts = _run_all(standin_db, chosen)
    assert {t for t, n in counts.items() if n == 0} == set()
