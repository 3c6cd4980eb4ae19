"""Per-call time to first token and thinking time where a transcript records them (issue 31):
Kimi's real journals (``step.end.llmFirstTokenLatencyMs``) indexed by the real loader show each
call's figure in `session --calls` and their mean and maximum in `usage session`; a Claude
transcript, which records neither, shows them unknown (null), never 0."""

from __future__ import annotations

import json

import pytest

from tests.homes import cli, index
from tests.repo_sample_homes_b import KIMI_SESSION, kimi_layout
from tests.test_usage_partial import SESSION as CLAUDE_SESSION
from tests.test_usage_partial import _home as claude_home

MAIN_TTFT = [1667, 2818, 3696]  # assistant_tools.jsonl's three step.end records, in file order
MAIN_STREAM = [8941, 3527, 11919]  # their llmStreamDurationMs
SUB_TTFT = [3212, 1605, 1272]  # the sub-agent journal's (agent-0)


@pytest.fixture
def indexed(db, cli_env, own_tmp):
    home = own_tmp / "home-timings"
    kimi_layout(home)
    claude_home(home)
    assert index(db, home).files_failed == 0
    return cli_env


def test_session_calls_show_each_recorded_time_to_first_token(indexed):
    r = cli("session", KIMI_SESSION, "--calls", "--json", env=indexed)
    assert r.returncode == 0, r.stderr
    calls = [c for c in json.loads(r.stdout)["model_calls"] if not c["is_api_error"]]
    # the fourth call is the manual compaction's request: its usage.record has no latency (unknown)
    assert [c["ttft_ms"] for c in calls] == [*MAIN_TTFT, None]
    # Kimi's duration: first token + stream, named as such; thinking time: not recorded
    assert [c["duration_ms"] for c in calls] == [*(t + s for t, s in zip(MAIN_TTFT, MAIN_STREAM, strict=True)), None]
    assert [c["duration_basis"] for c in calls] == [*["first_token_plus_stream"] * 3, None]
    assert {c["thinking_ms"] for c in calls} == {None}
    table = cli("session", KIMI_SESSION, "--calls", env={**indexed, "COLUMNS": "160"})
    assert table.returncode == 0, table.stderr
    assert "4 model calls" in table.stdout and "1,667 ms" in table.stdout and "3,696 ms" in table.stdout
    claude = json.loads(cli("session", CLAUDE_SESSION, "--calls", "--json", env=indexed).stdout)["model_calls"]
    assert (
        len(claude) == 4 and {c["ttft_ms"] for c in claude} == {None} and {c["duration_ms"] for c in claude} == {None}
    )


def test_usage_session_gives_the_mean_and_maximum_over_the_calls_that_record_it(indexed):
    r = cli("usage", "session", "--json", "--timezone", "UTC", env=indexed)
    assert r.returncode == 0, r.stderr
    rows = {s["period"]: s for s in json.loads(r.stdout)["session"]}
    kimi = rows[KIMI_SESSION]  # the session with its sub-agent thread
    every = MAIN_TTFT + SUB_TTFT
    assert kimi["timeToFirstTokenMs"] == {"calls": 6, "meanMs": pytest.approx(sum(every) / 6), "maxMs": 3696}
    assert kimi["thinkingMs"] is None
    assert rows[CLAUDE_SESSION]["timeToFirstTokenMs"] is None and rows[CLAUDE_SESSION]["thinkingMs"] is None
    table = cli("usage", "session", "--timezone", "UTC", env={**indexed, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    header = next(ln for ln in table.stdout.splitlines() if "total tokens" in ln)
    assert header.split()[0] == "session"  # the rows are sessions, not periods
