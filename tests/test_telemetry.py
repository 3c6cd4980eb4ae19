"""Metrics (issue 13) in process: the label guard, the generated docs, `[metrics]` config, the
collectors on the real corpus catalogue, the runner's failure and lateness handling, and the
classifier's and loops' real tables (issues 11/12) filled by a real index pass."""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

import agent_history.telemetry as telemetry_pkg
from agent_history.config import ConfigError, Settings, load_settings
from agent_history.db.prices import priced_model_ids
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout, iter_files
from agent_history.telemetry import docs
from agent_history.telemetry.collectors import (
    COLLECTORS,
    CollectContext,
    collect_archive,
    collect_catalogue,
    collect_efficiency,
    collect_runs,
    record_embed_pass,
)
from agent_history.telemetry.families import BY_NAME, FAMILIES
from agent_history.telemetry.policy import LabelGuard, ModelLabels, Sample, resolve_label_values
from agent_history.telemetry.runner import CollectorRunner
from tests.corpus_db import corpus_db  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parents[1]


def by_labels(samples: list[Sample], family: str) -> dict[tuple, float]:
    return {s.labels: s.value for s in samples if s.family == family}


# --- pure: docs, guard, model labels --------------------------------------------------------------
def test_committed_docs_and_docstring_table_equal_the_generated_ones():
    assert (REPO / "docs" / "metrics.md").read_text(encoding="utf-8") == docs.metrics_markdown()
    assert f"{docs.TABLE_START}\n{docs.family_table()}\n{docs.TABLE_END}" in telemetry_pkg.__doc__
    # every family is a row, and names follow the Prometheus suffix rules the module doc states
    for f in FAMILIES:
        assert f"| `{f.name}` |" in docs.family_table()
        assert (f.kind == "counter") == f.name.endswith("_total")
        assert f.unit != "By" or f.name.endswith("_bytes")
        assert f.unit != "s" or f.name.endswith("_seconds")


def test_guard_drops_and_counts_values_outside_the_declared_sets():
    guard = LabelGuard(resolve_label_values({"claude-local"}, ModelLabels(("claude-opus-4-5%",))))
    good = [
        Sample.of("ah_catalogue_lag_bytes", 5, namespace="claude-local"),
        Sample.of("ah_tokens", 1, bucket="output", agent="claude", model="claude-opus-4-5"),
        Sample.of("ah_catalogue_dirty_sessions", 0),
    ]
    bad = [
        Sample.of("ah_catalogue_lag_bytes", 5, namespace="/home/someone/.claude"),  # a path
        Sample.of("ah_catalogue_lag_bytes", 5, namespace="claude-local", tier="hot"),  # an extra label
        Sample.of("ah_catalogue_sessions", 1),  # a label missing
        Sample.of("ah_tokens", 1, bucket="output", agent="claude", model="gpt-9"),  # model not allowlisted
        Sample.of("ah_session_prompt", 1),  # not a declared family
    ]
    assert guard.admit(good + bad) == good
    assert guard.dropped == {"ah_catalogue_lag_bytes": 2, "ah_catalogue_sessions": 1, "ah_tokens": 1, "unknown": 1}


def test_model_label_is_the_longest_price_pattern_an_extra_name_or_other():
    m = ModelLabels(("claude-opus-4", "claude-opus-4-5%", "claude-opus-4-0%", "gpt-5%"), extra=("llama-3",))
    assert m.label("claude-opus-4-5-20251101") == "claude-opus-4-5"
    assert m.label("CLAUDE-OPUS-4") == "claude-opus-4"
    assert m.label("claude-opus-4-1") == "other"  # 'claude-opus-4' is exact, not a prefix
    assert m.label("llama-3") == "llama-3"
    assert m.label(None) == "other"
    assert set(m.values) == {"claude-opus-4", "claude-opus-4-5", "claude-opus-4-0", "gpt-5", "llama-3", "other"}


# --- config ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("interval = 0", "metrics.interval must be a number of seconds between 1 and 3600"),
        ('interval = "15"', "metrics.interval must be a number of seconds between 1 and 3600"),
        ('endpoint = "127.0.0.1:4318"', "metrics.endpoint must be an http:// or https:// URL"),
        ('models = "gpt-5"', "metrics.models must be a list of model names"),
        ("port = 9464", "config metrics: unknown key 'port'"),
    ],
)
def test_metrics_config_mistakes_are_errors(tmp_path, monkeypatch, body, message):
    path = tmp_path / "config.toml"
    path.write_text(f"[metrics]\n{body}\n")
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(")):
        load_settings()


def test_metrics_config_values(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text('[metrics]\nendpoint = "http://collector:4318"\ninterval = 30\nmodels = ["Llama-3"]\n')
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(path))
    m = load_settings().metrics
    assert (m.endpoint, m.interval, m.models) == ("http://collector:4318", 30.0, ("llama-3",))
    (tmp_path / "empty.toml").write_text("")  # no [metrics] section: the defaults
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(tmp_path / "empty.toml"))
    m = load_settings().metrics
    assert (m.endpoint, m.interval, m.models) == (None, 15.0, ())


def test_endpoint_precedence_metrics_variable_then_base_variable_then_config():
    from agent_history.config import MetricsSettings
    from agent_history.telemetry.otlp import export_timeout_s, metrics_endpoint

    s = Settings(metrics=MetricsSettings(endpoint="http://cfg:4318/"))
    assert metrics_endpoint(Settings(), {}) is None
    assert metrics_endpoint(s, {}) == "http://cfg:4318/v1/metrics"
    assert metrics_endpoint(s, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318"}) == "http://base:4318/v1/metrics"
    both = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m/x"}
    assert metrics_endpoint(s, both) == "http://m/x"
    assert metrics_endpoint(s, {**both, "OTEL_SDK_DISABLED": "true"}) is None
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_METRICS_ENDPOINT must be an http"):
        metrics_endpoint(s, {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "collector:4318"})
    assert export_timeout_s({}) == 10.0
    assert export_timeout_s({"OTEL_EXPORTER_OTLP_TIMEOUT": "30"}) == 10.0  # capped
    assert export_timeout_s({"OTEL_EXPORTER_OTLP_TIMEOUT": "30", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "2.5"}) == 2.5
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_TIMEOUT must be a positive number"):
        export_timeout_s({"OTEL_EXPORTER_OTLP_TIMEOUT": "0"})


# --- collectors on the real corpus ----------------------------------------------------------------
@pytest.fixture
def ctx(corpus_home, corpus_db) -> CollectContext:  # noqa: F811
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(corpus_home).items()]
    with psycopg.connect(corpus_db.dsn) as conn:
        aliases = priced_model_ids(conn)
    return CollectContext(Settings(), sources, [], ModelLabels((), aliases=aliases), runs=("index", "embed"))


def test_archive_counts_the_files_discovery_finds(corpus_db, ctx):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        got = collect_archive(conn, ctx)
    files = by_labels(got, "ah_archive_files")
    for source in ctx.hot:
        key = (("namespace", source.namespace), ("tier", "hot"))
        if not source.home.exists():  # a default home of another harness, absent here
            assert key not in files and by_labels(got, "ah_archive_tier_available")[key] == 0
            continue
        refs = list(iter_files(source))
        assert files[key] == len(refs)
        assert by_labels(got, "ah_archive_bytes")[key] == sum(Path(r.path).stat().st_size for r in refs)
        assert by_labels(got, "ah_archive_files_missing")[key] == 0
        assert by_labels(got, "ah_archive_tier_available")[key] == 1
    assert files == {
        (("namespace", "claude-local"), ("tier", "hot")): 29,
        (("namespace", "codex-local"), ("tier", "hot")): 4,
        (("namespace", "pi-local"), ("tier", "hot")): 3,
    }


def test_catalogue_matches_the_database_and_the_issue_listing(corpus_db, ctx):  # noqa: F811
    from agent_history.ingest.status import list_issues

    with psycopg.connect(corpus_db.dsn) as conn:
        got = collect_catalogue(conn, ctx)
        rows = by_labels(got, "ah_catalogue_rows")
        for table in ("message", "session", "model_call", "tool_call", "parse_issue", "source_file"):
            assert rows[(("table", table),)] == conn.execute(f"SELECT count(*) FROM ah.{table}").fetchone()[0]
        listed = Counter(i["kind"] for i in list_issues(conn, limit=1_000_000))
    assert rows[(("table", "message"),)] == 1588
    assert (rows[(("table", "loops"),)], rows[(("table", "lane"),)]) == (0, 0)  # the corpus has no loops
    issues = by_labels(got, "ah_catalogue_parse_issues")
    # rows_shared: the resume 71c9afe9 holds a copy of one message its original b45ad5d8 owns
    assert {k[0][1]: v for k, v in issues.items() if v} == dict(listed) == {"fused_line": 1, "rows_shared": 1}
    assert issues[(("kind", "load_error"),)] == 0  # every declared kind is reported
    assert by_labels(got, "ah_catalogue_sessions") == {
        (("agent", "claude"),): 27,
        (("agent", "codex"),): 4,
        (("agent", "pi"),): 3,
    }
    assert set(by_labels(got, "ah_catalogue_lag_bytes").values()) == {0}
    assert by_labels(got, "ah_embeddings") == {}  # [embedding] is not configured


def test_runs_reports_the_last_index_pass_and_the_recorded_embed_passes(corpus_db, ctx):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        got = collect_runs(conn, ctx)
        run = conn.execute("SELECT files_changed, bytes_read FROM ah.index_run WHERE status = 'ok'").fetchone()
    idx = (("run", "index"),)
    assert by_labels(got, "ah_run_files_changed")[idx] == run[0] == 36
    assert by_labels(got, "ah_run_read_bytes")[idx] == run[1]
    assert by_labels(got, "ah_run_success")[idx] == 1
    assert by_labels(got, "ah_runs_total")[(("outcome", "success"), ("run", "index"))] == 1
    assert by_labels(got, "ah_run_lock_held")[idx] == 0
    assert by_labels(got, "ah_run_lock_held")[(("run", "embed"),)] == 0
    assert (("run", "embed"),) not in by_labels(got, "ah_run_success")  # no embed pass recorded yet


def test_embed_pass_record_accumulates_counts_and_keeps_the_last_success(db, ctx):
    ctx.runs = ("embed",)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        record_embed_pass(conn, ok=True, seconds=2.5, files_changed=7, rows=21)
        record_embed_pass(conn, ok=False, seconds=None, files_changed=None, rows=None)
        got = collect_runs(conn, ctx)
    emb = (("run", "embed"),)
    assert by_labels(got, "ah_runs_total") == {
        (("outcome", "success"), ("run", "embed")): 1,
        (("outcome", "failure"), ("run", "embed")): 1,
    }
    assert by_labels(got, "ah_run_success") == {emb: 0}
    assert by_labels(got, "ah_run_duration_seconds") == {}  # the failed pass's duration is unknown
    assert emb in by_labels(got, "ah_run_last_success_timestamp_seconds")


def test_cost_and_tokens_equal_the_per_call_functions_on_the_corpus(corpus_db, ctx):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        got = collect_efficiency(conn, ctx)
        rows = conn.execute(
            "SELECT agent, model, sum(ah.call_cost_usd(model, ts, input_uncached, cache_read, cache_write_5m, "
            "cache_write_1h, output)), sum(output) FROM ah.model_call GROUP BY 1, 2"
        ).fetchall()
    cost, output = Counter(), Counter()
    for agent, model, usd, out in rows:
        key = (("agent", agent), ("model", ctx.models.label(model)))
        if usd is not None:
            cost[key] += float(usd)
        if out is not None:
            output[(key[0], ("bucket", "output"), key[1])] += out
    assert by_labels(got, "ah_cost_usd") == pytest.approx(dict(cost))
    assert {k: v for k, v in by_labels(got, "ah_tokens").items() if k[1] == ("bucket", "output")} == dict(output)
    # the corpus's list-price total: 101.074007 at base rates + 29.233647 for the 170 Sonnet 4 calls of
    # 2025-09-20 over 200K input tokens, charged the long-context tier (usage.prices.OWN_TIERS),
    # + 0.441382 for the Codex gpt-5.1-codex calls (genai-prices: openai/gpt-5.1)
    assert round(sum(cost.values()), 6) == 130.749036


def test_efficiency_on_an_empty_catalogue_counts_zero_loops_and_has_no_ratios(db, ctx):
    with psycopg.connect(db.dsn) as conn:
        got = collect_efficiency(conn, ctx)
    # loops per status are counts (0 is known); no calls: no tokens, cost, triggers or poll
    # share (unknown, not 0); no running loop: no idle series
    assert {s.family for s in got} == {"ah_loops"}
    assert by_labels(got, "ah_loops") == {(("loop_status", s),): 0 for s in LOOP_STATUSES}


#: The loop statuses in the order families.LABEL_VALUES declares them (migration 0007's CHECK).
LOOP_STATUSES = ("finished", "waiting", "paused", "running", "stale")
FIXTURES = REPO / "fixtures"
#: The clock tests/test_loops.py recomputes the fixture's loop statuses at (some are running).
LOOP_CLOCK = datetime(2026, 5, 3, 17, 30, tzinfo=UTC)


def merged_home(corpus_home: Path, dst: Path) -> Path:
    """The corpus plus the loops and efficiency fixture homes in one home (no path is shared)."""
    for src in (corpus_home, FIXTURES / "loops" / "home", FIXTURES / "efficiency" / "home"):
        shutil.copytree(src, dst, dirs_exist_ok=True)
    return dst


@pytest.fixture
def interface_db(db, corpus_home, tmp_path) -> tuple:
    """(database, context): the merged home indexed by the real loader (post-pass: rollups →
    loops → roles and triggers), loop statuses then recomputed at :data:`LOOP_CLOCK`."""
    from agent_history.ingest.loader import Loader
    from agent_history.ingest.loops import refresh_loops

    home = merged_home(corpus_home, tmp_path / "home")
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert Loader(conn).run(sources).files_failed == 0
        with conn.transaction():
            refresh_loops(conn, [], now=LOOP_CLOCK)
        aliases = priced_model_ids(conn)
    return db, CollectContext(Settings(), sources, [], ModelLabels((), aliases=aliases), runs=("index",))


def poll_shares(conn: psycopg.Connection) -> dict[tuple, float]:
    """(wait + status) / classified non-error calls per thread role, from ah.model_call itself."""
    wait, classified = Counter(), Counter()
    for role, trigger in conn.execute(
        "SELECT s.thread_role, c.trigger FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id "
        "WHERE NOT coalesce(c.is_api_error, false) AND c.trigger IS NOT NULL"
    ):
        classified[role] += 1
        wait[role] += trigger in ("wait", "status")
    return {(("role", r),): wait[r] / n for r, n in classified.items()}


def test_efficiency_reads_the_real_classifier_and_loops_tables(interface_db):
    db, ctx = interface_db
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        before = time.time()
        with conn.transaction():  # the collector's now() is this transaction's start
            got = collect_efficiency(conn, ctx)
        after = time.time()
        calls = Counter()
        for trigger, role, api_error in conn.execute(
            "SELECT c.trigger, s.thread_role, c.is_api_error FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id"
        ):
            if not api_error:
                calls[(("role", role), ("trigger", trigger or "unclassified"))] += 1
        api_errors = conn.execute("SELECT count(*) FROM ah.model_call WHERE is_api_error").fetchone()[0]
        view_calls = conn.execute("SELECT sum(calls) FROM ah.efficiency").fetchone()[0]  # not the notices
        shares = poll_shares(conn)
        statuses = Counter(r[0] for r in conn.execute("SELECT status FROM ah.loops"))
        oldest = conn.execute(
            "SELECT extract(epoch FROM min(root_last_active_at))::float8 FROM ah.loops WHERE status = 'running'"
        ).fetchone()[0]
        # a catalogue whose workers' calls are not classified yet (indexed before migration 0006,
        # not rebuilt): their calls are unclassified and the worker role has no poll share
        conn.execute(
            "UPDATE ah.model_call SET trigger = NULL WHERE session_id IN "
            "(SELECT id FROM ah.session WHERE thread_role = 'worker')"
        )
        unrebuilt = collect_efficiency(conn, ctx)
    assert by_labels(got, "ah_model_calls") == dict(calls)
    assert sum(calls.values()) == 1538 and api_errors == 22 and view_calls == 1538
    assert {k[0][1] for k in calls} == {"root", "worker", "solo"}
    assert (calls[(("role", "root"), ("trigger", "wait"))], calls[(("role", "solo"), ("trigger", "work"))]) == (6, 1178)
    assert by_labels(got, "ah_poll_share_ratio") == pytest.approx(shares)
    # root (6 wait + 4 status) / 93, worker 3 / 25, solo 21 / 1420
    assert {k[0][1]: round(v, 4) for k, v in shares.items()} == {"root": 0.1075, "worker": 0.12, "solo": 0.0148}
    assert by_labels(got, "ah_loops") == {(("loop_status", s),): statuses[s] for s in LOOP_STATUSES}
    assert dict(statuses) == {"finished": 6, "waiting": 1, "paused": 1, "running": 3}
    idle = by_labels(got, "ah_loop_root_idle_max_seconds")[()]
    assert before - oldest <= idle <= after - oldest
    tokens = by_labels(got, "ah_tokens")
    assert tokens[(("agent", "codex"), ("bucket", "reasoning"), ("model", "gpt-5.1"))] == 19520
    worker = {k: v for k, v in by_labels(unrebuilt, "ah_model_calls").items() if k[0] == ("role", "worker")}
    assert worker == {
        (("role", "worker"), ("trigger", "unclassified")): sum(
            v for k, v in calls.items() if k[0] == ("role", "worker")
        )
    }
    assert set(by_labels(unrebuilt, "ah_poll_share_ratio")) == {(("role", "root"),), (("role", "solo"),)}


# --- the runner: a failing and a slow collector ---------------------------------------------------
def guard_for(ctx: CollectContext) -> LabelGuard:
    return LabelGuard(resolve_label_values({s.namespace for s in ctx.hot}, ctx.models))


def test_a_raising_collector_shows_success_0_while_the_others_report(corpus_db, ctx):  # noqa: F811
    def broken(conn, ctx):
        raise RuntimeError("boom\nsecond line")

    warnings: list[str] = []
    collectors = {**COLLECTORS, "efficiency": broken}
    runner = CollectorRunner(
        collectors,
        ctx,
        lambda: psycopg.connect(corpus_db.dsn, autocommit=True),
        guard_for(ctx),
        interval=3600,
        warn=warnings.append,
    )
    runner.collect_round()
    runner.collect_round()
    runner.close(final_round=False)
    got = runner.samples()
    success = by_labels(got, "ah_collector_success")
    assert success == {(("collector", c),): (0 if c == "efficiency" else 1) for c in (*COLLECTORS, "self")}
    assert by_labels(got, "ah_collector_errors_total")[(("collector", "efficiency"),)] == 2
    assert (("collector", "efficiency"),) not in by_labels(got, "ah_collector_last_success_timestamp_seconds")
    assert by_labels(got, "ah_catalogue_rows")[(("table", "message"),)] == 1588
    assert not by_labels(got, "ah_tokens")  # the broken collector reports nothing
    assert warnings == ["metrics: collector efficiency failed: boom"]  # once per change, first line only


def test_a_slow_collector_is_reported_late_and_does_not_block_the_round(corpus_db, ctx):  # noqa: F811
    release, entered = threading.Event(), threading.Event()

    def slow(conn, ctx):
        entered.set()
        release.wait()
        return [Sample.of("ah_catalogue_dirty_sessions", 42)]

    warnings: list[str] = []
    runner = CollectorRunner(
        {"runs": COLLECTORS["runs"], "catalogue": slow},
        ctx,
        lambda: psycopg.connect(corpus_db.dsn, autocommit=True),
        guard_for(ctx),
        interval=3600,
        # the round waits this long for `slow` (which never finishes in time); the real `runs`
        # collector must finish within it — 50 ms was missed at a load average of 9
        budget=5.0,
        warn=warnings.append,
    )
    runner.collect_round()  # returns although `slow` has not
    assert entered.is_set() and not release.is_set()
    got = runner.samples()
    assert by_labels(got, "ah_collector_success")[(("collector", "catalogue"),)] == 0
    assert by_labels(got, "ah_collector_success")[(("collector", "runs"),)] == 1
    assert by_labels(got, "ah_collector_errors_total")[(("collector", "catalogue"),)] == 1
    runner.collect_round()  # still running: not started twice, not counted twice
    assert by_labels(runner.samples(), "ah_collector_errors_total")[(("collector", "catalogue"),)] == 1
    release.set()
    runner.settle(timeout=60)
    runner.collect_round()
    runner.settle(timeout=60)
    runner.close(final_round=False)
    got = runner.samples()
    assert by_labels(got, "ah_catalogue_dirty_sessions") == {(): 42}
    assert by_labels(got, "ah_collector_success")[(("collector", "catalogue"),)] == 1
    assert warnings == ["metrics: collector catalogue still running after 5 s (reported late)"]


def test_every_family_has_a_collector_that_can_produce_it():
    assert {f.collector for f in FAMILIES} == {*COLLECTORS, "self"}
    assert set(BY_NAME) == {f.name for f in FAMILIES}


def test_lock_held_reads_the_bigint_advisory_lock_of_another_session(corpus_db, ctx):  # noqa: F811
    from agent_history.embed.store import EMBED_LOCK
    from agent_history.ingest.loader import INDEX_LOCK

    with psycopg.connect(corpus_db.dsn, autocommit=True) as holder, psycopg.connect(corpus_db.dsn) as conn:
        holder.execute("SELECT pg_advisory_lock(%s)", (INDEX_LOCK,))
        got = by_labels(collect_runs(conn, ctx), "ah_run_lock_held")
        assert got == {(("run", "index"),): 1, (("run", "embed"),): 0}
        holder.execute("SELECT pg_advisory_unlock(%s)", (INDEX_LOCK,))
        holder.execute("SELECT pg_advisory_lock(%s)", (EMBED_LOCK,))
        got = by_labels(collect_runs(conn, ctx), "ah_run_lock_held")
        assert got == {(("run", "index"),): 0, (("run", "embed"),): 1}


def test_an_unavailable_cold_tier_reports_available_0_and_no_counts(corpus_db, ctx, tmp_path):  # noqa: F811
    ctx.cold = [Source("claude-local", "claude", tmp_path / "unmounted", "cold")]
    with psycopg.connect(corpus_db.dsn) as conn:
        got = collect_archive(conn, ctx)
    cold = (("namespace", "claude-local"), ("tier", "cold"))
    assert by_labels(got, "ah_archive_tier_available")[cold] == 0
    assert cold not in by_labels(got, "ah_archive_files")  # unknown, not 0
    assert by_labels(got, "ah_archive_uncopied_files") == {}  # no cold listing to compare with
