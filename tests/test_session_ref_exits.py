"""Every command that takes a session reference reads an ambiguous uid prefix the same way: exit 2
(a usage error — the reference must be longer) with one line listing the candidates
(`session.refs.ambiguous_message`, through `cli.options._ambiguous`)."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest

AMBIGUOUS = [
    ("session", "0a1b2c"),
    ("export", "0a1b2c"),
    ("resume", "0a1b2c"),
    ("efficiency", "--session", "0a1b2c"),
    ("search", "anything", "--session", "0a1b2c"),
    ("sessions", "exclude", "0a1b2c"),
    ("sessions", "delete", "0a1b2c", "--yes"),
]
EXPECTED = "error: '0a1b2c' matches 2 sessions: 0a1b2c3d-one, 0a1b2c4e-two\n"


@pytest.fixture
def two_sessions(db, cli_env):
    """Two sessions whose uids share the prefix 0a1b2c (one with a sub-agent thread)."""
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ah.session (agent, session_uid, agent_id, namespace) VALUES "
            "('claude', '0a1b2c3d-one', '', 'claude-local'), ('claude', '0a1b2c3d-one', 'agent-1', 'claude-local'), "
            "('codex', '0a1b2c4e-two', '', 'codex-local')"
        )
    return cli_env


@pytest.mark.parametrize("argv", AMBIGUOUS, ids=lambda argv: " ".join(argv[:2]))
def test_an_ambiguous_prefix_is_a_usage_error_listing_the_candidates(two_sessions, argv):
    r = subprocess.run(
        [sys.executable, "-m", "agent_history", *argv], env=two_sessions, capture_output=True, text=True, timeout=120
    )
    assert (r.returncode, r.stdout, r.stderr) == (2, "", EXPECTED)
