"""Codex field cases E22/E23 (../shared/field/EXPECTED.md): replies and no ``token_count`` event.
Their model-call count is unknown — NULL in the catalogue, ``-`` / "unknown" with its basis in
`parse`, `session --calls` and `usage` — never 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.homes import cli

E22 = "0199a022-0000-7000-8000-000000000000"
E23 = "0199a023-0000-7000-8000-000000000000"


def _parse(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "AGENT_HISTORY_QUERY_IDLE_S": "0"}
    return subprocess.run(
        [sys.executable, "-m", "agent_history", "parse", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_parse_shows_unknown_model_calls_for_replies_without_usage(field_dir):
    files = [str(field_dir / f"{case}.jsonl") for case in ("E22", "E23", "E34")]
    data = json.loads(_parse(*files, "--json").stdout)
    got = {Path(f["path"]).stem: (f["model_calls"], f["replies_without_usage"]) for f in data["files"]}
    assert got == {"E22": (None, 1), "E23": (None, 1), "E34": (2, 0)}
    assert (data["totals"]["codex"]["model_calls"], data["totals"]["all"]["model_calls"]) == (None, 2)
    out = _parse(*files).stdout
    rows = {line.split()[0].rsplit("/", 1)[-1]: line.split()[1:] for line in out.splitlines() if "/E" in line}
    assert rows["E22.jsonl"] == ["codex", "1", "5", "1", "-", "-", "0", "0", "0"]
    assert rows["E34.jsonl"][4] == "2"
    assert (
        "codex: 2 files, 2 sessions (0 sub-agent), 7 messages, 2 human prompts, "
        "model calls unknown (2 replies with no usage recorded)"
    ) in out
    assert "all: 3 files, 3 sessions (0 sub-agent), 9 messages, 3 human prompts, " in out
    assert "2 model calls (+0 error notices; 2 replies with no usage recorded)" in out


def _codex_home(field_dir: Path, home: Path) -> None:
    d = home / ".codex" / "sessions" / "2025" / "10" / "20"
    d.mkdir(parents=True)
    for case, uid in (("E22", E22), ("E23", E23)):
        shutil.copy(field_dir / f"{case}.jsonl", d / f"rollout-2025-10-20T12-00-00-{uid}.jsonl")


def test_catalogue_session_and_usage_say_unknown_not_zero(field_dir, cli_env, db):
    _codex_home(field_dir, Path(cli_env["HOME"]))
    out = cli("index", "--home", cli_env["HOME"], env=cli_env)
    assert out.returncode == 0, out.stderr
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT session_uid, model_call_count, input_uncached, output, cost_usd FROM ah.session ORDER BY 1"
        ).fetchall()
    assert rows == [(E22, None, None, None, None), (E23, None, None, None, None)]
    env = {**cli_env, "COLUMNS": "200"}
    out = cli("session", "0199a022", "--calls", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "model calls unknown: 1 reply, no usage recorded in the transcript"
    assert "0 model calls" not in out.stdout
    data = json.loads(cli("session", "0199a022", "--calls", "--json", env=env).stdout)
    assert (data["model_calls"], data["replies_without_usage"]) == ([], 1)
    out = cli("usage", env=env)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        "error: no model calls match; model calls unknown in 2 sessions whose transcripts record no usage (codex 2)"
    )
    assert json.loads(cli("usage", "--json", env=env).stdout)["sessionsWithoutUsage"] == {"codex": 2}
