"""A newcomer's findings on sub-agent threads (h-nc1 brief), pinned on the corpus catalogue by
real CLI subprocesses (``session --json``, ``sessions --json``) with the exact values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture

CLAUDE_P = ".claude/projects/-src-experiments-claude_p"
JS_SOUND = ".claude/projects/-Users-user1-workspace-JSSoundRecorder"


@pytest.fixture(scope="module")
def env(corpus_db, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    """The CLI's environment against the module's corpus catalogue (no real home or config)."""
    tmp = tmp_path_factory.mktemp("newcomer-subagents")
    return cli_environment(tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=200)


def cli_json(env: dict, *args: str):
    r = subprocess.run([sys.executable, "-m", "agent_history", *args, "--json"], env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert (r.returncode, r.stderr) == (0, "")
    return json.loads(r.stdout)


def test_a_subagent_session_names_its_own_file_not_the_parents(env, corpus_home: Path):
    sub = cli_json(env, "session", "29ccd257/a2271d1")
    assert sub["session"]["agent_id"] == "a2271d1"
    assert sub["session"]["source_path"] == str(
        corpus_home / CLAUDE_P / "29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
    )
    # its first event is line 1, byte 0 — of that file
    assert (sub["events"][0]["line_number"], sub["events"][0]["byte_offset"]) == (1, 0)

    main = cli_json(env, "session", "29ccd257")
    assert (main["session"]["agent_id"], main["session"]["source_path"]) == (
        "",
        str(corpus_home / CLAUDE_P / "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"),
    )
    legacy = cli_json(env, "session", "7acd37a8/3430b97e")
    assert legacy["session"]["source_path"] == str(corpus_home / JS_SOUND / "agent-3430b97e.jsonl")


def test_sessions_counts_the_subagents_its_totals_add_up(env):
    rows = {r["session_uid"][:8]: r for r in cli_json(env, "sessions", "-n", "1000")}
    # 7acd37a8's only sub-agent is a legacy agent-3430b97e.jsonl without a Task spawn record
    s = rows["7acd37a8"]
    assert (s["subagent_count"], s["tokens"], s["tokens_with_subagents"]) == (1, 1_708_453, 1_709_757)
    # 29ccd257's sub-agent has a spawn record and a transcript: counted once
    assert rows["29ccd257"]["subagent_count"] == 1
