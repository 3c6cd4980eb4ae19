"""Timestamps print with a four-digit year (issue 25, item 7: year 1 printed as ``1-01-01``,
because glibc's ``%Y`` does not pad). Year 1 is real input: Go's zero time is
``0001-01-01T00:00:00Z``. Pure checks of `agent_history.timestamps`, then the CLI on a transcript
whose records carry that time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone

import orjson

from agent_history.timestamps import day, minute, second

PY = sys.executable
ZERO = "0001-01-01T00:00:00Z"
SESSION = "0001d0d0-0000-4000-8000-000000000001"


def test_every_year_prints_with_four_digits():
    assert minute(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01 00:00"
    assert second(datetime(1, 1, 1, 0, 0, 5, tzinfo=UTC), zone=True) == "0001-01-01 00:00:05 UTC"
    assert second(datetime(999, 12, 31, 23, 59, 59)) == "0999-12-31 23:59:59"
    assert (
        second(datetime(2026, 3, 1, tzinfo=timezone(timedelta(hours=2))), zone=True) == "2026-03-01 00:00:00 UTC+02:00"
    )
    assert day(date(9999, 12, 31)) == "9999-12-31"


def test_no_module_formats_a_year_with_strftime():
    """`%Y` is the bug: every printed date goes through `agent_history.timestamps`."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "agent_history"
    offenders = [
        f"{p.relative_to(root)}:{n}"
        for p in root.rglob("*.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if "%Y" in line and "strptime" not in line and p.name != "timestamps.py"
    ]
    assert offenders == []


def _write_home(root) -> None:
    path = root / ".claude" / "projects" / "-work-zero" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    common = {"sessionId": SESSION, "cwd": "/work/zero", "version": "2.1.17", "userType": "external",
              "isSidechain": False, "timestamp": ZERO}  # fmt: skip
    records = [
        {**common, "type": "user", "uuid": "00000000-0000-4000-8000-0000000000a1", "parentUuid": None,
         "message": {"role": "user", "content": "when did the zero time start"}},
        {**common, "type": "assistant", "uuid": "00000000-0000-4000-8000-0000000000a2",
         "parentUuid": "00000000-0000-4000-8000-0000000000a1", "requestId": "req_1",
         "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                     "content": [{"type": "text", "text": "the zero time is year one"}], "stop_reason": "end_turn",
                     "usage": {"input_tokens": 3, "output_tokens": 4}}},
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def test_a_year_one_transcript_prints_0001_01_01_everywhere(cli_env, own_tmp):
    _write_home(own_tmp / "zero")
    env = {**cli_env, "PGTZ": "UTC", "COLUMNS": "200"}  # the session's zone: year 1 stays year 1
    run = lambda *a: subprocess.run([PY, "-m", "agent_history", *a], env=env, capture_output=True, text=True,  # noqa: E731
                                    timeout=300)  # fmt: skip
    assert run("index", "--home", str(own_tmp / "zero")).returncode == 0
    data = json.loads(run("session", SESSION, "--json").stdout)
    assert data["events"][0]["ts"] == "0001-01-01T00:00:00+00:00"
    outputs = {
        "sessions": run("sessions").stdout,
        "session": run("session", SESSION).stdout,
        "search": run("search", "zero time").stdout,
        "recall": run("recall", "zero time").stdout,
        "efficiency": run("efficiency").stdout,
        "usage": run("usage", "--timezone", "UTC").stdout,
        "usage blocks": run("usage", "blocks", "--timezone", "UTC").stdout,
    }
    for name, out in outputs.items():
        assert "0001-01-01" in out, (name, out)
        assert " 1-01-01" not in out and "\n1-01-01" not in out, (name, out)
    assert os.environ.get("PGTZ") != "x"  # the test's own environment is untouched
