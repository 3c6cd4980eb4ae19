"""`agent-history usage` over the real corpus (issue 19): the daily report equals per-day sums
computed here straight from the JSONL files (not via our parsers), the other views add up to
the same totals, unpriced models cost NULL and are named, and usage errors exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest

from agent_history.read.usage import usage_calls
from agent_history.usage.report import build_report
from tests.corpus_db import cli_environment, corpus_db, resident_environment  # noqa: F401 - fixture

PY = sys.executable
BUCKETS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")


@pytest.fixture(scope="module")
def env(corpus_db) -> dict[str, str]:  # noqa: F811
    tmp = Path(tempfile.mkdtemp(prefix="ah-usage-"))
    with resident_environment(cli_environment(tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=80)) as on:
        yield on  # `usage` answered by a resident query process
    shutil.rmtree(tmp, ignore_errors=True)


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120)


def usage_json(env: dict, *args: str) -> dict:
    r = cli(env, "usage", *args, "--json", "--timezone", "UTC")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def all_calls(corpus_db):  # noqa: F811
    """Every billable call of the catalogue as the usage command reads them (in-process: the
    views are pure functions of these; the CLI itself is run where its output is the point)."""
    with psycopg.connect(corpus_db.dsn) as conn:
        return usage_calls(conn)


def report(calls, view: str, *, agent: str | None = None, model: str | None = None, now=None) -> dict:
    """`usage <view> --json --timezone UTC` in-process, JSON round-tripped like the CLI's."""
    picked = [c for c in calls if (agent is None or c.agent == agent) and (model is None or model in (c.model or ""))]
    out = build_report(view, picked, UTC, now or datetime.now(UTC))
    return json.loads(json.dumps(out, default=float))


def _day(ts: str) -> str:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(UTC).date().isoformat()


def _lines(path: Path):
    """Every JSON object of a file, one per line — and both objects of a line where an
    unterminated append fused two (the pi file of 2025-12-24 has one: 130,604 cache-read tokens)."""
    decoder = json.JSONDecoder()
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        pos, text = 0, raw.strip()
        while pos < len(text):
            try:
                rec, end = decoder.raw_decode(text, pos)
            except ValueError:
                break
            if isinstance(rec, dict):
                yield rec
            pos = end


def independent_daily(home: Path) -> dict[str, dict[str, int]]:
    """Per-UTC-day token sums read straight from the transcripts, by each format's own rules:
    Claude — one response per ``message.id`` (its lines repeat the usage; take each bucket's max,
    the earliest line's time), ``<synthetic>``/API-error lines excluded; Codex — each
    ``token_count`` event whose ``total_token_usage`` changed adds its ``last_token_usage``
    (``cached_input_tokens`` ⊂ ``input_tokens``); pi — each assistant message's ``usage``,
    error/aborted messages that billed nothing excluded."""
    days: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(BUCKETS, 0))
    claude: dict[str, dict] = {}
    for f in sorted((home / ".claude").rglob("*.jsonl")):
        for r in _lines(f):
            msg = r.get("message") if isinstance(r.get("message"), dict) else {}
            u = msg.get("usage")
            if r.get("type") != "assistant" or not isinstance(u, dict) or msg.get("model") == "<synthetic>":
                continue
            if r.get("isApiErrorMessage"):
                continue
            key = msg.get("id") or r.get("requestId")
            c = claude.setdefault(key, {"ts": r["timestamp"], **dict.fromkeys(BUCKETS, 0)})
            c["ts"] = min(c["ts"], r["timestamp"], key=lambda t: datetime.fromisoformat(t.replace("Z", "+00:00")))
            c["inputTokens"] = max(c["inputTokens"], u.get("input_tokens") or 0)
            c["outputTokens"] = max(c["outputTokens"], u.get("output_tokens") or 0)
            c["cacheCreationTokens"] = max(c["cacheCreationTokens"], u.get("cache_creation_input_tokens") or 0)
            c["cacheReadTokens"] = max(c["cacheReadTokens"], u.get("cache_read_input_tokens") or 0)
    for c in claude.values():
        for b in BUCKETS:
            days[_day(c["ts"])][b] += c[b]
    for f in sorted((home / ".codex").rglob("*.jsonl")):
        last_total = None
        for r in _lines(f):
            p = r.get("payload") if isinstance(r.get("payload"), dict) else {}
            info = p.get("info") if p.get("type") == "token_count" else None
            if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
                continue
            total = info.get("total_token_usage")
            if total == last_total:
                continue
            last_total = total
            u, d = info["last_token_usage"], days[_day(r["timestamp"])]
            d["inputTokens"] += u["input_tokens"] - u.get("cached_input_tokens", 0)
            d["cacheReadTokens"] += u.get("cached_input_tokens", 0)
            d["outputTokens"] += u["output_tokens"]
    for f in sorted((home / ".pi").rglob("*.jsonl")):
        for r in _lines(f):
            msg = r.get("message") if isinstance(r.get("message"), dict) else {}
            u = msg.get("usage")
            if r.get("type") != "message" or msg.get("role") != "assistant" or not isinstance(u, dict):
                continue
            counts = [u.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")]
            if msg.get("stopReason") in ("error", "aborted") and not any(counts):
                continue
            d = days[_day(r["timestamp"])]
            for b, v in zip(
                ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens"), counts, strict=True
            ):
                d[b] += v
    return dict(days)


def test_daily_equals_an_independent_per_day_sum_of_the_files(env, corpus_home, all_calls):
    daily = usage_json(env, "daily")
    ours = {r["period"]: {b: r[b] or 0 for b in BUCKETS} for r in daily["daily"]}
    assert ours == independent_daily(corpus_home)
    assert daily["timezone"] == "UTC"
    tokens = [r[k] for r in [*daily["daily"], daily["totals"]] for k in (*BUCKETS, "totalTokens") if r[k] is not None]
    assert tokens and all(type(v) is int for v in tokens)  # integers, as ccusage prints them
    # ccusage 20.0.24 `daily --json --offline` over the same .claude home: 21 days, these totals
    claude = report(all_calls, "daily", agent="claude")
    assert len(claude["daily"]) == 21
    t = claude["totals"]
    assert (t["inputTokens"], t["outputTokens"], t["cacheCreationTokens"], t["cacheReadTokens"], t["totalTokens"]) == (
        10833,
        67146,
        3384033,
        78327387,
        81789399,
    )


def test_session_weekly_and_monthly_views_add_up_to_the_daily_totals(all_calls):
    daily = report(all_calls, "daily")["totals"]
    keys = (*BUCKETS, "totalTokens", "reasoningTokens", "calls", "pricedCost", "unpricedModels")
    for view in ("weekly", "monthly", "session"):
        got = report(all_calls, view)
        assert {k: got["totals"][k] for k in keys} == {k: daily[k] for k in keys}, view
        rows = got[view]
        assert sum(r["totalTokens"] or 0 for r in rows) == daily["totalTokens"], view
        assert sum(r["calls"] for r in rows) == daily["calls"], view
    monthly = report(all_calls, "monthly")["monthly"]
    assert [r["period"] for r in monthly][:3] == ["2025-06", "2025-07", "2025-09"]
    sessions = report(all_calls, "session", agent="claude")["session"]
    big = next(r for r in sessions if r["period"] == "0fae0449-64d3-4788-8622-d3a47d82c14b")
    # equals ccusage's session row for it (tokens) and names the project (the session's cwd)
    assert (big["inputTokens"], big["outputTokens"], big["cacheCreationTokens"], big["cacheReadTokens"]) == (
        360,
        22976,
        2395354,
        66925567,
    )
    assert big["projects"] == ["/Users/testuser/Documents/GitHub/projects/example-project/.worktrees/streaming"]


def test_unpriced_models_cost_null_and_are_named(all_calls):
    # pi-fixture-model (the pi fixture project's model) has no list price
    got = report(all_calls, "daily", agent="pi")
    day = next(r for r in got["daily"] if r["period"] == "2026-05-12")
    assert day["modelsUsed"] == ["pi-fixture-model"]
    assert day["totalCost"] is None
    assert day["unpricedModels"] == ["pi-fixture-model"]
    assert day["modelBreakdowns"][0]["cost"] is None
    assert got["totals"]["totalCost"] is None
    assert got["totals"]["unpricedModels"] == ["pi-fixture-model"]
    assert got["totals"]["pricedCost"] > 0
    # pi records its own cost per call: our list-price cost of its priced calls equals it exactly
    by_model = {
        m["modelName"]: m for r in report(all_calls, "monthly", agent="pi")["monthly"] for m in r["modelBreakdowns"]
    }
    recorded = {c.model: 0 for c in all_calls if c.agent == "pi"}
    for c in all_calls:
        if c.agent == "pi" and c.recorded_cost_usd is not None:
            recorded[c.model] += float(c.recorded_cost_usd)
    assert round(recorded["claude-opus-4-5"], 6) == 29.73649 == round(by_model["claude-opus-4-5"]["cost"], 6)
    assert round(recorded["claude-sonnet-4-5"], 6) == 30.330198 == round(by_model["claude-sonnet-4-5"]["cost"], 6)
    assert got["totals"]["recordedCost"] == pytest.approx(29.73649 + 30.330198, abs=1e-6)
    priced = report(all_calls, "daily", agent="claude")
    assert priced["totals"]["unpricedModels"] == []
    assert priced["totals"]["totalCost"] == pytest.approx(priced["totals"]["pricedCost"])


def test_model_filter_and_blocks(all_calls):
    model = report(all_calls, "monthly", model="opus-4-6")
    assert [r["modelsUsed"] for r in model["monthly"]] == [["claude-opus-4-6"]]
    assert model["totals"]["totalTokens"] == 248753
    blocks = report(all_calls, "blocks", agent="claude", now=datetime(2026, 2, 20, 15, tzinfo=UTC))["blocks"]
    active = [b for b in blocks if b["isActive"]]
    assert [b["startTime"] for b in active] == ["2026-02-20T14:00:00Z"]
    assert active[0]["totalTokens"] == 62835 and active[0]["burnRate"]["tokensPerMinute"] > 0
    assert sum(b["totalTokens"] or 0 for b in blocks) == 81789399


def test_cli_filters_table_and_errors(env):
    since = usage_json(env, "daily", "--since", "20260101", "--until", "2026-02-16", "--agent", "claude")
    assert [r["period"] for r in since["daily"]] == ["2026-01-23", "2026-02-16"]
    bad = cli(env, "usage", "--timezone", "Mars/Olympus")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown time zone 'Mars/Olympus'" in bad.stderr
    none = cli(env, "usage", "--since", "2099-01-01")
    assert none.returncode == 1 and "no model calls" in none.stderr
    table = cli(env, "usage", "monthly", "--timezone", "UTC", "--agent", "claude")
    assert table.returncode == 0 and "2025-06" in table.stdout and "81,789,399" in table.stdout


def test_pricing_lists_rows_with_sources_and_the_unpriced_models_seen(env):
    r = cli(env, "pricing", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    version = data["priceData"].split(";")[0]
    assert version.startswith("genai-prices ")
    assert {p["source"] for p in data["prices"] if p["origin"] == "library"} == {version}
    # ours: the long-context tier genai-prices lacks for Sonnet 4 (its page named in the source)
    assert [(p["price_key"], p["effective_from"]) for p in data["prices"] if p["origin"] == "ours"] == [
        ("anthropic/claude-sonnet-4-0", "2025-08-12")
    ]
    # every model of the corpus is priced (the Codex calls too) but pi's fixture model, named with why
    assert [(u["model"], u["calls"]) for u in data["unpricedModels"]] == [("pi-fixture-model", 2)]
    assert data["unpricedModels"][0]["reason"].startswith("a name no price list knows")
    models = {m["model"]: m for m in data["models"]}
    assert models["gpt-5.1-codex"]["price_key"] == "openai/gpt-5.1" and models["gpt-5.1-codex"]["agents"] == ["codex"]
    assert models["claude-sonnet-4-5-20250929"]["price_key"] == "anthropic/claude-sonnet-4-5"
    tiered = {p["price_key"]: p for p in data["prices"] if p["long_context_threshold"]}
    t = tiered["anthropic/claude-sonnet-4-5"]
    assert (t["long_context_threshold"], t["long_input_per_mtok"], t["long_output_per_mtok"]) == (200000, 6.0, 22.5)
    table = cli(env, "pricing")  # the table prints the tier's column and the reasons too
    assert table.returncode == 0 and not table.stderr, table.stderr
    assert "pi-fixture-model (2 calls): a name no price list knows" in table.stdout


def test_calls_summed_in_the_database_give_the_same_reports(corpus_db, all_calls):  # noqa: F811
    # the CLI sums calls per 15-minute UTC bucket (and session, model, loop, repo) for every view
    # but blocks; offsets of 5:30 (Kolkata) and -3:30 (St John's) must not split a bucket's day
    with psycopg.connect(corpus_db.dsn) as conn:
        grouped = usage_calls(conn, grouped=True)
    assert len(grouped) < len(all_calls) and sum(c.n for c in grouped) == len(all_calls)
    now = datetime(2026, 12, 1, tzinfo=UTC)
    for zone in ("UTC", "Asia/Kolkata", "America/St_Johns"):
        tz = ZoneInfo(zone)
        for view in ("daily", "weekly", "monthly", "session", "repo"):
            flat, summed = (json.dumps(build_report(view, c, tz, now), default=float) for c in (all_calls, grouped))
            assert json.loads(flat, parse_float=lambda x: round(float(x), 9)) == json.loads(
                summed, parse_float=lambda x: round(float(x), 9)
            ), (zone, view)


# Anthropic list prices, USD per MTok (docs.anthropic.com/en/docs/about-claude/pricing, "Long
# context pricing"): Claude Sonnet 4 base and, for a request of more than 200K input tokens, the
# long-context rates for the whole request — (input, output, cache read, 5m write, 1h write)
SONNET_4_BASE = (3, 15, 0.3, 3.75, 6)
SONNET_4_LONG = (6, 22.5, 0.6, 7.5, 12)


def independent_claude_day_cost(home: Path, day: str) -> Decimal:
    """The Claude Sonnet 4 list-price cost of UTC `day`, straight from the transcripts: one call per
    ``message.id`` (each bucket's max over its repeated lines, 5m/1h writes from ``cache_creation``),
    each call priced on its own input (uncached + cache read + cache writes) by the rule above."""
    calls: dict[str, dict] = {}
    for f in sorted((home / ".claude").rglob("*.jsonl")):
        for r in _lines(f):
            msg = r.get("message") if isinstance(r.get("message"), dict) else {}
            u = msg.get("usage")
            if r.get("type") != "assistant" or not isinstance(u, dict) or r.get("isApiErrorMessage"):
                continue
            if _day(r["timestamp"]) != day:
                continue
            assert msg["model"] == "claude-sonnet-4-20250514"
            split = u.get("cache_creation") or {}
            counts = (
                u.get("input_tokens") or 0,
                u.get("output_tokens") or 0,
                u.get("cache_read_input_tokens") or 0,
                split.get("ephemeral_5m_input_tokens", u.get("cache_creation_input_tokens") or 0),
                split.get("ephemeral_1h_input_tokens", 0),
            )
            c = calls.setdefault(msg.get("id") or r.get("requestId"), [0] * 5)
            c[:] = [max(a, b) for a, b in zip(c, counts, strict=True)]
    total = Decimal(0)
    for iu, out, cr, w5, w1 in calls.values():
        rates = SONNET_4_LONG if iu + cr + w5 + w1 > 200_000 else SONNET_4_BASE
        total += sum(Decimal(n) * Decimal(str(p)) for n, p in zip((iu, out, cr, w5, w1), rates, strict=True))
    return total / 1_000_000


def test_long_context_day_costs_the_premium_for_each_call_over_200k(corpus_home, all_calls):
    # 2025-09-20: every Sonnet 4 call had more than 200K input tokens (a 1M-context session)
    expected = independent_claude_day_cost(corpus_home, "2025-09-20")
    day = next(d for d in report(all_calls, "daily", agent="claude")["daily"] if d["period"] == "2025-09-20")
    assert round(day["totalCost"], 6) == round(float(expected), 6) == 58.639615


def test_by_attribution_keys_add_up_to_the_totals_and_host_is_the_indexing_machine(env):
    from agent_history.config import default_host

    machine = default_host()  # the corpus catalogue's Loader recorded this machine's system name
    daily = usage_json(env, "daily")["totals"]
    for key in ("project", "branch", "host", "model", "agent"):
        got = usage_json(env, "--by", key)
        rows = got[key]
        assert sum(r["calls"] for r in rows) == daily["calls"], key
        assert sum(r["totalTokens"] for r in rows) == daily["totalTokens"], key
        assert len({r["period"] for r in rows}) == len(rows), key
        if key == "agent":
            assert {r["period"]: r["totalCost"] for r in rows} == {
                "claude": pytest.approx(70.24096627),
                "codex": pytest.approx(0.44138225),
                "pi": None,  # pi-fixture-model has no price: unknown, never 0
            }
        if key == "model":
            assert next(r for r in rows if r["period"] == "gpt-5.1-codex")["totalCost"] == pytest.approx(0.44138225)
        if key == "branch":
            # the session's git branch from its transcript; sessions that record none in one row
            by = {r["period"]: r for r in rows}
            assert "(unknown)" in by and by["feature-branch"]["calls"] == 174
            priced = [r["pricedCost"] or 0 for r in rows]
            assert priced == sorted(priced, reverse=True)  # the largest priced cost first
        if key == "host":
            assert [r["period"] for r in rows] == [machine or "(unknown)"]
            assert bool(got.get("hostUnknown")) == (machine is None)  # unknown only when no name was usable
    for key in ("model", "repo", "agent"):  # the first column is named by the key, not "period"
        shown = cli(env, "usage", "--by", key, "--timezone", "UTC")
        assert shown.returncode == 0, shown.stderr
        head = shown.stdout.splitlines()[0].split()
        assert head[0] == key and "period" not in shown.stdout, shown.stdout
    table = cli(env, "usage", "--by", "host", "--timezone", "UTC")
    assert table.returncode == 0 and (machine or "host: unknown") in table.stdout
    bad = cli(env, "usage", "--by", "hostname")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "error: --by: unknown grouping 'hostname' (known: loop, repo, project, branch, host, model, agent)"
    ]
