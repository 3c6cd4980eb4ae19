"""Findings of a newcomer's break-it run, each pinned by a test (issue: h-polish brief)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import psycopg
import pytest

from agent_history.read.efficiency import efficiency_report
from agent_history.read.loops import list_loops
from agent_history.read.usage import usage_calls
from agent_history.search.request import check_range
from agent_history.usage.report import PARTIAL_FIELDS, Call, build_report
from tests.corpus_db import cli_environment, corpus_db, resident_environment  # noqa: F401 - fixture


def test_usage_page_role_table_and_loops_honour_until(corpus_db):  # noqa: F811
    # the web usage page's "by thread role" table and loops list read these with the page's range
    cut = datetime(2020, 1, 1, tzinfo=UTC)
    with psycopg.connect(corpus_db.dsn) as conn:
        assert efficiency_report(conn).threads  # the corpus has threads …
        assert efficiency_report(conn, until=cut).threads == []  # … none started before 2020
        dated = [t for t in efficiency_report(conn).threads if t.started_at]  # a bound drops undated
        assert efficiency_report(conn, since=cut).threads == dated
        starts = sorted(t.started_at for t in efficiency_report(conn).threads if t.started_at)
        mid = starts[len(starts) // 2]
        before = efficiency_report(conn, until=mid).threads
        assert before and all(t.started_at < mid for t in before)
        assert list_loops(conn, until=cut) == []


def _call(day: int, **buckets) -> Call:
    fields = dict.fromkeys(("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning"))
    fields.update(buckets)
    return Call(datetime(2026, 3, day, 12, tzinfo=UTC), "claude", "claude-local", "s", None, "m", **fields,
                cost_usd=None, priced=False)  # fmt: skip


def test_usage_totals_over_unknown_counts_are_null_or_marked_partial():
    calls = [_call(1, input_uncached=10, output=5), _call(2, input_uncached=3, output=1, cache_write_5m=0)]
    t = build_report("daily", calls, UTC, datetime(2026, 4, 1, tzinfo=UTC))["totals"]
    assert (t["cacheCreationTokens"], t["cacheCreationTokensPartial"]) == (0, True)  # day 1 unknown
    assert (t["reasoningTokens"], t["reasoningTokensPartial"]) == (None, False)  # all unknown
    assert (t["inputTokens"], t["inputTokensPartial"]) == (13, False)
    # the total adds the cache writes, a lower bound: so is the total
    assert (t["cacheReadTokens"], t["totalTokens"], t["totalTokensPartial"]) == (None, 19, True)


def test_usage_partial_flags_of_grouped_calls_match_single_calls(corpus_db):  # noqa: F811
    now = datetime(2026, 12, 1, tzinfo=UTC)
    with psycopg.connect(corpus_db.dsn) as conn:
        single = build_report("monthly", usage_calls(conn), UTC, now)
        grouped = build_report("monthly", usage_calls(conn, grouped=True), UTC, now)
    assert single == grouped
    t = single["totals"]
    # the corpus mixes harnesses: Codex records no cache writes, Claude Code no reasoning
    assert t["cacheCreationTokensPartial"] and t["reasoningTokensPartial"]
    # a total adding a lower bound (the cache writes) is one
    assert t["totalTokensPartial"] and t["totalCostPartial"] is (t["totalCost"] is not None)
    for f in PARTIAL_FIELDS:
        rows = single["monthly"]
        if all(r[f] is None for r in rows):
            assert t[f] is None and not t[f + "Partial"]
        if any(r[f] is None for r in rows) and t[f] is not None:
            assert t[f + "Partial"], f


@pytest.fixture(scope="module")
def env(corpus_db, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    """The CLI's environment against the module's corpus catalogue (no real home or config); its
    read commands answered by a resident query process (`resident_environment`)."""
    plain = cli_environment(tmp_path_factory.mktemp("polish"), corpus_db.dsn, corpus_db.reader_dsn, columns=200)
    with resident_environment(plain) as env:
        yield env


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_usage_table_marks_partial_totals(env):
    r = cli(env, "usage", "monthly", "--timezone", "UTC")
    assert r.returncode == 0, r.stderr
    total = next(line for line in r.stdout.splitlines() if line.startswith("total"))
    assert "≥" in total, r.stdout
    assert "≥: a lower bound" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("usage", "daily", "--until", "2020-01-01"),
        ("usage", "blocks", "--until", "2020-01-01"),
        ("usage", "daily", "--model", "nosuch"),
        ("efficiency", "--role", "worker", "--agent", "pi"),
        ("sessions", "--since", "2099-01-01"),
        ("search", "nosuchwordanywhere", "--mode", "keyword"),
        ("loops",),
    ],
)
def test_nothing_found_exits_1_with_and_without_json(env, args):
    text = cli(env, *args)
    assert text.returncode == 1, (text.stdout, text.stderr)
    js = cli(env, *args, "--json")
    assert (js.returncode, js.stderr) == (1, "")
    json.loads(js.stdout)  # the empty document


def test_check_range_refuses_backwards_ranges():
    a, b = datetime(2025, 11, 1, tzinfo=UTC), datetime(2025, 12, 1, tzinfo=UTC)
    check_range(a, b, "x", "y")
    check_range(None, a, "", "y")
    with pytest.raises(ValueError, match=r"^--since 2025-12-01 is after --until 2025-11-01$"):
        check_range(b, a, "2025-12-01", "2025-11-01")
    with pytest.raises(ValueError, match="is not before"):
        check_range(a, a, "a", "a")


@pytest.mark.parametrize("command", [("usage", "daily"), ("usage", "blocks"), ("search", "x"), ("recall", "x")])
@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_backwards_range_is_a_usage_error(env, command, json_flag):
    r = cli(env, *command, "--since", "2025-12-01", "--until", "2025-11-01", *json_flag)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "error: --since 2025-12-01 is after --until 2025-11-01\n")


@pytest.mark.parametrize("command", [("sessions",), ("usage", "monthly", "--timezone", "UTC"), ("efficiency",)])
def test_agent_accepts_the_product_names_exclude_agent_accepts(env, command):
    alias = cli(env, *command, "--agent", "claude-code", "--json")
    plain = cli(env, *command, "--agent", "claude", "--json")
    assert (alias.returncode, alias.stderr) == (0, "")
    assert json.loads(alias.stdout) == json.loads(plain.stdout)


@pytest.mark.parametrize("statement", ["DELETE FROM ah.session", "", "   ", "SELECT nope", "SELECT 1/0"])
@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_sql_errors_exit_2_with_one_line_and_no_stdout(env, statement, json_flag):
    r = cli(env, "sql", statement, *json_flag)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr


def test_sql_truncation_note_on_stderr_only_and_a_boolean_in_json(env):
    big = "SELECT g FROM generate_series(1, 500) AS g"
    table = cli(env, "sql", big)
    assert table.returncode == 0 and "the first 200 rows" not in table.stdout and "200 rows" in table.stdout
    assert table.stderr.startswith("note: showing the first 200 rows") and table.stderr.count("\n") == 1
    js = cli(env, "sql", big, "--json")
    assert json.loads(js.stdout)["truncated"] is True and js.stderr.startswith("note: ")
    assert json.loads(cli(env, "sql", "SELECT 1", "--json").stdout)["truncated"] is False


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("session", "03eb5"), "session"),
        (("session", ""), "session"),
        (("search", "x", "--session", "03eb5"), "--session"),
        (("efficiency", "--session", "03eb5"), "--session"),
    ],
)
def test_a_session_prefix_under_6_characters_is_a_usage_error(env, args, option):
    r = cli(env, *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith(f"error: {option}: give a session uid or a prefix of at least 6 characters")


def test_efficiency_session_takes_a_prefix(env, corpus_db):  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        uid = efficiency_report(conn).threads[0].session_uid
    full = json.loads(cli(env, "efficiency", "--session", uid, "--json").stdout)
    assert full["threads"]
    assert json.loads(cli(env, "efficiency", "--session", uid[:8], "--json").stdout) == full


@pytest.mark.parametrize("limit", ["0", "1001", "-5"])
def test_sessions_limit_is_validated_like_search(env, limit):
    r = cli(env, "sessions", "--limit", limit)
    assert (r.returncode, r.stderr) == (2, f"error: --limit must be between 1 and 1000 (got {limit})\n")


def test_efficiency_json_token_counts_are_integers(env):
    data = json.loads(cli(env, "efficiency", "--json").stdout)
    values = [v for t in data["threads"] for v in t["tokens"].values()] + list(data["totals"]["tokens"].values())
    assert any(v is not None for v in values)
    assert all(v is None or type(v) is int for v in values), values


def test_tables_piped_to_a_file_are_not_squeezed_to_80_columns(env):
    piped = {k: v for k, v in env.items() if k != "COLUMNS"}  # stdout is a pipe here, as `> file`
    r = cli(piped, "efficiency")
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[0]
    assert "…" not in r.stdout
    for name in ("started", "agent", "thread", "role", "calls", "poll", "user", "agmsg", "uncl"):
        assert name in header.split(), header
    squeezed = cli({**piped, "COLUMNS": "80"}, "efficiency")  # COLUMNS still wins: records, nothing cut
    assert squeezed.stdout.splitlines()[0].split() == ["started", "agent", "thread", "role", "calls", "poll"]
    assert "…" not in squeezed.stdout and max(map(len, squeezed.stdout.splitlines())) <= 80


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("search", "tokenizer", "--namespace", "claude-lcoal"), "unknown namespace 'claude-lcoal' (indexed: "),
        (("sessions", "-N", "claude-local", "-N", "nope"), "unknown namespace 'nope' (indexed: "),
        (("search", "tokenizer", "--session", "ffffff00"), "--session: no session 'ffffff00' in the catalogue"),
    ],
)
def test_an_unknown_namespace_or_session_filter_is_named_in_a_usage_error(env, args, error, json_flag):
    r = cli(env, *args, *json_flag)
    assert (r.returncode, r.stdout) == (2, "")
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {error}"), r.stderr
    if "indexed" in error:
        assert "claude-local" in lines[0]


def test_a_known_namespace_and_session_prefix_still_search(env):
    r = cli(env, "search", "tokenizer submodule", "-N", "claude-local", "--session", "9e953218", "--json")
    assert r.returncode == 0, r.stderr
    assert {h["session_uid"] for h in json.loads(r.stdout)["hits"]} == {"9e953218-585f-4692-89df-9e0747a31c68"}


def test_a_local_model_path_that_is_no_model_is_one_line_not_a_traceback(corpus_db, tmp_path):  # noqa: F811
    """Found by a newcomer: the local provider fails on first use (loading the model), inside the
    search — vector mode says why (VectorUnavailable → one line, exit 2 in the CLI), hybrid falls
    back to keyword results with the reason in the note."""
    from agent_history.config import EmbeddingSettings
    from agent_history.search.hybrid import VectorUnavailable, run_search
    from agent_history.search.request import SearchRequest

    missing = tmp_path / "no-model"
    settings = EmbeddingSettings(provider="local", model="all-MiniLM-L6-v2", local_model_path=missing, service_idle_s=0)
    with psycopg.connect(corpus_db.dsn) as conn:
        keyword = run_search(conn, SearchRequest("tokenizer"), "keyword", None)
        # no vectors yet: said at once, without loading (or failing to load) any model
        with pytest.raises(VectorUnavailable) as caught:
            run_search(conn, SearchRequest("tokenizer"), "vector", settings)
        assert str(caught.value) == "no vectors for all-MiniLM-L6-v2 yet (run `agent-history embed`)"
        # vectors recorded (in this transaction only, rolled back): the model load itself fails
        conn.execute(
            "INSERT INTO ah.embedding_model (model, provider, dimensions) VALUES ('all-MiniLM-L6-v2', 'local', 384)"
        )
        with pytest.raises(VectorUnavailable, match="no-model"):
            run_search(conn, SearchRequest("tokenizer"), "vector", settings)
        result = run_search(conn, SearchRequest("tokenizer"), "hybrid", settings)
        conn.rollback()
    assert result.mode == "keyword" and result.note.endswith(": keyword results only") and "no-model" in result.note
    assert [h.id for h in result.hits] == [h.id for h in keyword.hits] and keyword.hits
