"""`usage blocks --live` over the real corpus (issue 31): the `--json` snapshot's block and week
equal the active rows of `usage blocks --json` (and `--window week`) at the same injected clock,
a named plan's limit is the highest past block those reports list, the refreshing view runs on a
real pseudo-terminal and exits 0 on Ctrl-C, and a plan config mistake is one line, exit 2."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture
from tests.procinfo import signal_state

NOW = "2025-09-20T05:30:00+00:00"  # inside the corpus's Sonnet 4 session of 2025-09-20, 04:34-05:11 UTC


def make_env(corpus_db, tmp, config: str) -> dict[str, str]:  # noqa: F811
    return cli_environment(tmp, corpus_db.dsn, corpus_db.reader_dsn, config=config, home=tmp)


@pytest.fixture(scope="module")
def env(corpus_db, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    return make_env(corpus_db, tmp_path_factory.mktemp("plans"), '[plans]\nclaude = "max20"\n')


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120
    )


def as_json(env: dict, *args: str) -> dict:
    r = cli(env, *args, "--json", "--timezone", "UTC", "--now", NOW)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_snapshot_equals_the_active_block_and_week_of_the_reports(env):
    snap = as_json(env, "usage", "blocks", "--live", "--agent", "claude")
    (claude,) = snap["agents"]
    assert (claude["agent"], claude["plan"], claude["planName"]) == ("claude", "max20", "Claude Max 20×")
    for window, extra in (("block", ()), ("week", ("--window", "week"))):
        rows = as_json(env, "usage", "blocks", "--agent", "claude", *extra)["blocks"]
        (active,) = [b for b in rows if b["isActive"]]
        s = claude[window]
        assert (s["startTime"], s["endTime"], s["calls"]) == (active["startTime"], active["endTime"], active["entries"])
        assert s["totalTokens"] == active["totalTokens"] and s["costUSD"] == pytest.approx(active["costUSD"])
        assert s["burnRate"] == pytest.approx(active["burnRate"])
        assert s["projection"] == pytest.approx(active["projection"])
        # the past windows: before the injected clock (the report also lists the corpus's later ones)
        past = [
            b["totalTokens"] for b in rows if not b["isGap"] and not b["isActive"] and b["startTime"] < "2025-09-20T05"
        ]
        assert s["limit"]["tokens"] == (max(past) if past else None)
        if past:
            assert s["percentUsed"]["tokens"] == pytest.approx(active["totalTokens"] / max(past) * 100)
            assert "ccusage's `--token-limit max` rule" in s["limit"]["tokensBasis"]
    # the session's block: 04:00-09:00 UTC, 3 h 30 min left at 05:30
    assert (claude["block"]["startTime"], claude["block"]["timeLeftMinutes"]) == ("2025-09-20T04:00:00Z", 210)
    # the week opened 2025-09-19 17:00 UTC: its rate is over the 750 minutes elapsed at 05:30, not
    # over its first → last call; projected at that pace over the 9,330 minutes left
    week = claude["week"]
    assert (week["startTime"], week["totalTokens"], week["timeLeftMinutes"]) == ("2025-09-19T17:00:00Z", 69421163, 9330)
    assert week["burnRate"]["tokensPerMinute"] == pytest.approx(69421163 / 750)
    assert week["burnRate"]["costPerHour"] == pytest.approx(week["costUSD"] / 12.5)
    assert week["projection"]["totalTokens"] == 933020431


def test_week_gap_rows_print_whole_seconds(env):
    r = cli(env, "usage", "blocks", "--window", "week", "--agent", "claude", "--timezone", "UTC", "--now", NOW)
    assert r.returncode == 0, r.stderr
    gaps = [line.split()[0] for line in r.stdout.splitlines() if " gap " in f"{line} "]
    assert gaps[:2] == ["2025-06-25T23:21:08Z", "2025-07-12T19:52:21Z"]  # last call + 7 days, µs dropped
    assert not any("." in g for g in gaps)
    data = as_json(env, "usage", "blocks", "--window", "week", "--agent", "claude")  # the JSON keeps them
    assert data["blocks"][1]["startTime"] == "2025-06-25T23:21:08.014000Z"


def run_live_on_a_pty(env: dict, *args: str) -> tuple[int, str]:
    """Start `usage blocks --live` with stdout and stderr on a new pty, wait for its second
    refresh, press Ctrl-C (SIGINT, as the terminal sends it); (exit code, everything shown)."""
    leader, follower = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_history", "usage", "blocks", "--live", *args],
        env={**env, "COLUMNS": "160", "TERM": "xterm"},
        stdout=follower,
        stderr=follower,
        stdin=follower,
    )
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 120
    try:
        while shown.count(b"plan windows at") < 2 and time.monotonic() < deadline:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        proc.send_signal(signal.SIGINT)
        # Keep reading while it exits: a view that refreshed again while we were slow (a loaded
        # machine) writes its last frame on the way out, and a full pty would block it there.
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    chunk = b""
                shown += chunk
        if proc.poll() is None:
            state = signal_state(proc.pid)
            proc.kill()
            raise AssertionError(f"SIGINT did not end the live view within 60 s: {state}")
        code = proc.wait(timeout=1)
        while select.select([leader], [], [], 0)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
    return code, shown.decode(errors="replace")


def test_the_live_view_refreshes_and_exits_cleanly_on_ctrl_c(env):
    snap = as_json(env, "usage", "blocks", "--live", "--agent", "claude")
    code, shown = run_live_on_a_pty(env, "--agent", "claude", "--refresh", "1", "--now", NOW, "--timezone", "UTC")
    assert code == 0, shown
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown
    assert shown.count("plan windows at 2025-09-20 05:30 (UTC)") >= 2
    block = snap["agents"][0]["block"]
    assert "claude (max20)" in shown and f"{block['totalTokens']:,}" in shown
    assert f"{block['percentUsed']['tokens']:.1f}%" in shown and "3h30m" in shown
    assert "highest past block of this agent" in shown


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[plans]\nclaude = "max30"\n', "error: config plans.claude: unknown plan 'max30'"),
        (
            "[plans.claude]\nblock_tokens = -1\n",
            "error: config plans.claude.block_tokens must be a finite number > 0, not -1",
        ),
        (
            "[plans.claude]\nweek_cost_usd = 1e400\n",
            "error: config plans.claude.week_cost_usd must be a finite number > 0, not inf",
        ),
    ],
)
def test_a_plan_config_mistake_is_one_line_exit_2(corpus_db, tmp_path, config, message):  # noqa: F811
    r = cli(make_env(corpus_db, tmp_path, config), "usage", "blocks", "--live", "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(message) and r.stderr.count("\n") == 1, r.stderr


def test_live_and_window_go_with_the_blocks_view_only(env):
    for args, message in (
        (("daily", "--live"), "error: --live goes with the blocks view"),
        (("--by", "model", "--window", "week"), "error: --window goes with the blocks view"),
        (("blocks", "--window", "month"), "error: --window: unknown window 'month' (known: block, week)"),
        (("blocks", "--live", "--refresh", "0.5"), "error: --refresh: 0.5 is not between 1 and 60 seconds"),
    ):
        r = cli(env, "usage", *args)
        assert r.returncode == 2 and r.stderr.strip() == message, r.stderr


def test_the_web_usage_page_shows_the_same_plan_windows(env, corpus_db, tmp_path):  # noqa: F811
    from tests.test_web import Served

    snap = as_json(env, "usage", "blocks", "--live", "--agent", "claude")
    block = snap["agents"][0]["block"]
    served = Served(make_env(corpus_db, tmp_path, '[plans]\nclaude = "max20"\n'))
    try:
        r = httpx.get(f"{served.url}/usage", params={"agent": "claude", "now": NOW}, timeout=60)
    finally:
        err = served.stop()
    assert r.status_code == 200 and "Traceback" not in err, err
    row = re.search(r'<tr data-agent="claude" data-window="block">(.*?)</tr>', r.text, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[:8] == [
        "claude",
        "Claude Max 20×",
        "block",
        block["endTime"],
        "210",
        f"{block['totalTokens']:,}",
        f"{block['percentUsed']['tokens']:.1f}%",
        f"${block['costUSD']:,.2f}" if block["costUSD"] >= 1 else f"${block['costUSD']:,.4f}",
    ]
    assert cells[-1].startswith("Claude Max 20× publishes no token limit: the highest past block of this agent")
