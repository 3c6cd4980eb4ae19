"""`usage` after an interrupted first index (newcomer trial, stop 42): the sessions whose post-pass
has not run yet (``ah.dirty_session``: model names not resolved to prices, totals not rolled up)
are named as pending — a warning saying to run `index` — and are not counted as sessions "whose
transcripts record no usage". Real CLI processes on a test database; the pass is stopped by the
loader's fault injection (`AGENT_HISTORY_PAUSE_AFTER_BATCHES`) and SIGKILL."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys

import psycopg

PY = sys.executable


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


def pending_by_agent(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT s.agent, count(*) FROM ah.session AS s JOIN ah.dirty_session AS d ON d.session_id = s.id "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
    return {a: n for a, n in rows}


def test_usage_names_the_sessions_an_interrupted_index_left_pending(cli_env, corpus_home, own_tmp):
    home = own_tmp / "home"
    shutil.copytree(corpus_home, home, symlinks=True, dirs_exist_ok=True)
    env = {**cli_env, "AGENT_HISTORY_BATCH_LINES": "400"}
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "index", "--home", str(home)],
        env={**env, "AGENT_HISTORY_PAUSE_AFTER_BATCHES": "2"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr.readline().strip() == "paused after batch 2"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    pending = pending_by_agent(cli_env["AGENT_HISTORY_DSN"])
    assert sum(pending.values()) > 0

    during = json.loads(cli("usage", "monthly", "--json", env=env).stdout)
    assert during["sessionsPendingIndex"] == pending
    assert "claude" not in during["sessionsWithoutUsage"]  # Claude Code records usage on every reply
    table = cli("usage", "monthly", env=env)
    n = sum(pending.values())
    per = ", ".join(f"{a} {k:,}" for a, k in pending.items())
    assert table.stderr.splitlines()[0] == (
        f"warning: {n:,} session{'s' if n != 1 else ''} ({per}) wait for the end of an index pass (running, or "
        "interrupted): until it completes their models may show as unpriced and their totals as unknown — "
        "run `agent-history index`"
    )
    assert "record no usage (claude" not in table.stdout

    done = cli("index", "--home", str(home), env=env)
    assert done.returncode == 0, done.stderr
    assert pending_by_agent(cli_env["AGENT_HISTORY_DSN"]) == {}
    after = json.loads(cli("usage", "monthly", "--json", env=env).stdout)
    assert after["sessionsPendingIndex"] == {}
    assert "claude" not in after["sessionsWithoutUsage"]
    assert "wait for the end of an index pass" not in cli("usage", "monthly", env=env).stderr
    # every Claude model of the corpus has a list price once the pass completes
    assert after["totals"]["pricedCost"] > 0
    assert not [m for m in after["totals"]["unpricedModels"] if m.startswith("claude")]
