"""Spec for `agent-history statusline` (Claude Code's status line) and `connect claude
--statusline`: the line's session, today and block figures equal the `usage` views' for the same
clock; a malformed payload or option is one line, exit 2; an unreadable catalogue still prints a
line; the install is a structural edit of settings.json with a ``.bak``, never replacing another
status line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_history.usage.statusline import StatusFigures, StatusInput, StatusLineError, parse_payload, render_line
from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture

SESSION = "0fae0449-64d3-4788-8622-d3a47d82c14b"  # the corpus's Sonnet 4 session of 2025-09-20, 04:34-05:11 UTC
NOW = "2025-09-20T05:30:00+00:00"


@pytest.fixture(scope="module")
def env(corpus_db, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    return cli_environment(tmp_path_factory.mktemp("statusline"), corpus_db.dsn, corpus_db.reader_dsn)


def run(env: dict, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def payload(**extra) -> str:
    return json.dumps(
        {"session_id": SESSION, "model": {"id": "claude-sonnet-4-20250514", "display_name": "Sonnet 4"}, **extra}
    )


def test_the_line_equals_the_usage_views_at_the_same_clock(env):
    r = run(env, "statusline", "--timezone", "UTC", "--now", NOW, stdin=payload())
    assert r.returncode == 0 and r.stderr == "", r.stderr
    session = json.loads(run(env, "usage", "session", "--json", "--timezone", "UTC").stdout)["session"]
    s_cost = next(s for s in session if s["period"] == SESSION)["totalCost"]
    daily = json.loads(run(env, "usage", "daily", "--json", "--timezone", "UTC").stdout)["daily"]
    d_cost = next(d for d in daily if d["period"] == "2025-09-20")["totalCost"]
    blocks = json.loads(run(env, "usage", "blocks", "--json", "--timezone", "UTC", "--now", NOW).stdout)["blocks"]
    active = next(b for b in blocks if b["isActive"])
    end = datetime.fromisoformat(active["endTime"].replace("Z", "+00:00"))
    left = end - datetime.fromisoformat(NOW)
    assert left.total_seconds() == 3.5 * 3600  # the block 04:00-09:00
    assert r.stdout == (
        f"Sonnet 4 | session ${s_cost:,.2f} | today ${d_cost:,.2f} | "
        f"block ${active['costUSD']:,.2f}, ${active['burnRate']['costPerHour']:,.2f}/h, 3h30m left\n"
    )
    assert r.stdout == "Sonnet 4 | session $58.64 | today $58.64 | block $58.64, $95.18/h, 3h30m left\n"
    # a day later: no block open, nothing today; the session is still the session
    later = run(env, "statusline", "--timezone", "UTC", "--now", "2025-09-21T12:00:00Z", stdin=payload())
    assert later.stdout == "Sonnet 4 | session $58.64 | today $0.00 | no active block\n"


def test_a_session_not_indexed_yet_shows_claude_code_s_own_cost(env):
    r = run(
        env, "statusline", "--now", NOW, stdin=json.dumps({"session_id": "new-one", "cost": {"total_cost_usd": 0.125}})
    )
    assert r.returncode == 0 and r.stdout.startswith(
        "session $0.12 (Claude Code's; not indexed yet) | today $58.64 | block $58.64"
    )


def test_an_indexed_session_without_model_calls_says_so_not_not_indexed(env):
    # the newcomer's session: in the catalogue, but none of its records is a model call
    stdin = json.dumps(
        {
            "session_id": "3680252d-d4e3-4416-bddd-8f5b5b4fdb7f",
            "cost": {"total_cost_usd": 0.01},
            "model": {"display_name": "Opus"},
        }
    )
    r = run(env, "statusline", "--now", NOW, stdin=stdin)
    assert r.returncode == 0 and r.stdout.startswith(
        "Opus | session $0.01 (Claude Code's; indexed, no model calls recorded) | today $58.64"
    ), r.stdout
    bare = run(env, "statusline", "--now", NOW, stdin='{"session_id": "3680252d-d4e3-4416-bddd-8f5b5b4fdb7f"}')
    assert bare.stdout.startswith("session indexed, no model calls recorded | today $58.64"), bare.stdout


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "error: status-line payload is not JSON (Expecting value)"),
        ("[1, 2]", "error: status-line payload is not a JSON object"),
        ('{"model": "x"}', 'error: status-line payload has no "session_id" string'),
        ('{"session_id": "s", "cost": {"total_cost_usd": "1"}}', 'error: status-line payload: "cost.total_cost_usd" is not a number'),
    ],
)  # fmt: skip
def test_a_malformed_payload_is_one_line_exit_2(env, stdin, message):
    r = run(env, "statusline", stdin=stdin)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", message + "\n")


def test_bad_options_are_one_line_exit_2(env):
    r = run(env, "statusline", "--timezone", "Mars/Olympus", stdin=payload())
    assert (r.returncode, r.stdout) == (2, "")
    assert (
        r.stderr == "error: --timezone: unknown time zone 'Mars/Olympus' (an IANA name such as UTC or Europe/Berlin)\n"
    )
    r = run(env, "statusline", "--colour", stdin=payload())
    assert r.returncode == 2 and r.stderr.startswith("error: statusline: unexpected argument '--colour'")


def test_an_unreadable_catalogue_still_prints_a_line(env):
    down = {**env, "AGENT_HISTORY_DSN": "host=/nonexistent-socket-dir dbname=x connect_timeout=2"}
    r = run(down, "statusline", stdin=payload(cost={"total_cost_usd": 2.5}))
    assert r.returncode == 0
    assert r.stdout == "Sonnet 4 | session $2.50 (Claude Code's) | catalogue unavailable\n"
    assert r.stderr.startswith("warning: statusline: catalogue not read: ") and r.stderr.count("\n") == 1


def test_a_data_dir_never_used_prints_the_line_and_starts_nothing(tmp_path):
    """No DSN and no embedded server yet: Claude Code's own cost and ``no catalogue yet`` — no
    embedded server created, no resident query process started (its idle timeout is on here)."""
    (tmp_path / "config.toml").touch()
    fresh = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_")}
    fresh.update(
        AGENT_HISTORY_CONFIG=str(tmp_path / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
        AGENT_HISTORY_QUERY_IDLE_S="300",
    )
    try:
        for _ in range(2):  # the second run would find a resident process had the first started one
            r = run(fresh, "statusline", stdin=payload(cost={"total_cost_usd": 0.5}))
            assert (r.returncode, r.stdout, r.stderr) == (
                0,
                "Sonnet 4 | session $0.50 (Claude Code's) | no catalogue yet\n",
                "",
            )
        assert not (tmp_path / "data").exists()  # neither the embedded server nor the service dir
        # a bad payload is a usage error before any reading; with the idle timeout on, that run
        # spawns a resident query process the `service stop` below can miss (it is not listening
        # yet) and that lives 300 s: this run starts none
        bad = run({**fresh, "AGENT_HISTORY_QUERY_IDLE_S": "0"}, "statusline", stdin="{not json")
        assert (bad.returncode, bad.stdout, bad.stderr) == (
            2,
            "",
            "error: status-line payload is not JSON (Expecting property name enclosed in double quotes)\n",
        )
    finally:
        subprocess.run([sys.executable, "-m", "agent_history", "service", "stop"], env=fresh, capture_output=True)


def test_payload_text_is_shown_never_obeyed(env):
    """A model name with a right-to-left override, an escape sequence and a newline: shown as
    ``<U+202E>``, ``^[``, ``^J`` — the status line stays one line that moves no cursor."""
    hostile = json.dumps({"session_id": SESSION, "model": {"display_name": "Sonnet\u202e4\u001b[2J\nx"}})
    r = run(env, "statusline", "--timezone", "UTC", "--now", NOW, stdin=hostile)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Sonnet<U+202E>4^[[2J^Jx | session $58.64 | today $58.64 | block $58.64, $95.18/h, 3h30m left\n"
    down = StatusInput("s", "a\u2066b\tc", 1.0)
    assert render_line(down, None, datetime(2025, 1, 1, tzinfo=UTC)) == (
        "a<U+2066>b^Ic | session $1.00 (Claude Code's) | catalogue unavailable"
    )


def test_render_line_says_unknown_never_zero():
    given = StatusInput("s", None, None)
    figures = StatusFigures(None, 3, 1.0, 4, None, None, datetime(2025, 1, 1, 5, tzinfo=UTC))
    assert render_line(given, figures, datetime(2025, 1, 1, 4, 10, tzinfo=UTC)) == (
        "session ? | today $1.00 | block ?, 50m left"
    )
    with pytest.raises(StatusLineError):
        parse_payload('{"session_id": "s", "model": {"display_name": 5}}')


def test_connect_statusline_edits_settings_with_a_backup_and_never_replaces_another(tmp_path):
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "model": "opus",\n  "hooks": {}\n}\n')
    env = {
        k: v
        for k, v in os.environ.items()
        if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S") and k != "CLAUDE_CONFIG_DIR"
    }
    env["HOME"] = str(home)
    r = run(env, "connect", "claude", "--statusline", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["statusline"]["action"] == "updated"
    data = json.loads(settings.read_text())
    assert list(data) == ["model", "hooks", "statusLine"] and data["statusLine"]["type"] == "command"
    assert data["statusLine"]["command"].endswith("statusline")
    assert Path(str(settings) + ".bak").read_text() == '{\n  "model": "opus",\n  "hooks": {}\n}\n'
    assert (
        json.loads(run(env, "connect", "claude", "--statusline", "--json").stdout)["statusline"]["action"]
        == "unchanged"
    )
    assert (
        json.loads(run(env, "disconnect", "claude", "--statusline", "--json").stdout)["statusline"]["action"]
        == "removed"
    )
    assert json.loads(settings.read_text()) == {"model": "opus", "hooks": {}}
    settings.write_text('{"statusLine": {"type": "command", "command": "~/bin/mine.sh"}}')
    r = run(env, "connect", "claude", "--statusline")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().endswith("already has a status line ('~/bin/mine.sh'); not changed — remove it first")
    assert json.loads(settings.read_text())["statusLine"]["command"] == "~/bin/mine.sh"
    assert (
        json.loads(run(env, "disconnect", "claude", "--statusline", "--json").stdout)["statusline"]["action"]
        == "absent"
    )


def test_connect_statusline_print_prints_the_snippet_and_writes_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    settings = home / ".claude" / "settings.json"
    env = {
        k: v
        for k, v in os.environ.items()
        if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S") and k != "CLAUDE_CONFIG_DIR"
    }
    env["HOME"] = str(home)
    r = run(env, "connect", "claude", "--statusline", "--print")
    assert r.returncode == 0, r.stderr
    entry = json.loads(r.stdout)["statusLine"]
    assert entry["type"] == "command" and entry["command"].endswith("statusline")
    assert f"# add to {settings}:" in r.stderr
    assert not settings.exists() and list(home.rglob("*")) == []  # absent: not created
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n')
    r = run(env, "connect", "claude", "--statusline", "--print", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["snippet"]["statusLine"] == entry
    assert settings.read_text() == '{"model": "opus"}\n' and not Path(str(settings) + ".bak").exists()
