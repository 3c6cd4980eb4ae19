"""LiteLLM spend-log fill (issue 19) against a real `"LiteLLM_SpendLogs"` table in the embedded
server: a NULL count is filled, a known count is never overwritten, the fill is recorded, and
configuration mistakes are one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import psycopg
import pytest

from agent_history.ingest.discovery import Source
from agent_history.ingest.litellm import fill_from_litellm, spend_buckets
from agent_history.ingest.loader import Loader

# The columns of LiteLLM's spend log that the fill reads (LiteLLM's schema.prisma
# `LiteLLM_SpendLogs`, a subset; `metadata.usage_object` as the proxy writes it).
SPEND_LOG_DDL = """
CREATE TABLE "LiteLLM_SpendLogs" (
    request_id text PRIMARY KEY, call_type text NOT NULL DEFAULT '', api_key text NOT NULL DEFAULT '',
    spend double precision NOT NULL DEFAULT 0, total_tokens integer NOT NULL DEFAULT 0,
    prompt_tokens integer NOT NULL DEFAULT 0, completion_tokens integer NOT NULL DEFAULT 0,
    "startTime" timestamp(3) NOT NULL DEFAULT now(), "endTime" timestamp(3) NOT NULL DEFAULT now(),
    model text NOT NULL DEFAULT '', metadata jsonb DEFAULT '{}'
)
"""

ZERO = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def assistant(mid: str, usage: dict, stop, line: int) -> dict:
    return {
        "type": "assistant",
        "uuid": f"00000000-0000-4000-8000-{line:012d}",
        "sessionId": "11111111-2222-4333-8444-555555555555",
        "requestId": f"req_{mid}",
        "timestamp": f"2026-03-07T09:4{line}:00.000Z",
        "cwd": "/work/proxy-project",
        "message": {
            "id": mid,
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": stop,
            "usage": usage,
            "content": [{"type": "text", "text": f"answer {line}"}],
        },
    }


@pytest.fixture
def proxied(db, own_tmp, pg_server):
    """A catalogue with one proxied Claude session (namespace claude-proxy): call msg_zero has
    proxy zeros and no stop reason (→ NULL counts), msg_known real counts; and a LiteLLM database
    whose spend log holds both requests (different numbers for msg_known)."""
    home = own_tmp / "claude"
    project = home / "projects" / "-work-proxy-project"
    project.mkdir(parents=True)
    lines = [
        {
            "type": "user",
            "uuid": "00000000-0000-4000-8000-000000000000",
            "sessionId": "11111111-2222-4333-8444-555555555555",
            "timestamp": "2026-03-07T09:40:00.000Z",
            "cwd": "/work/proxy-project",
            "message": {"role": "user", "content": "hi"},
        },
        assistant("msg_zero", ZERO, None, 1),
        assistant(
            "msg_known", {**ZERO, "input_tokens": 7, "output_tokens": 40, "cache_read_input_tokens": 900}, "end_turn", 2
        ),
    ]
    (project / "11111111-2222-4333-8444-555555555555.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run([Source("claude-proxy", "claude", home)])
    name = f"litellm_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    litellm = pg_server.dsn(name)
    with psycopg.connect(litellm, autocommit=True) as conn:
        conn.execute(SPEND_LOG_DDL)
        conn.execute(
            'INSERT INTO "LiteLLM_SpendLogs" (request_id, prompt_tokens, completion_tokens, total_tokens, model, metadata) VALUES '
            "('msg_zero', 1530, 212, 1742, 'claude-sonnet-4-5', %s), ('msg_known', 99999, 99999, 199998, 'claude-sonnet-4-5', %s)",
            (
                json.dumps({"usage_object": {"cache_read_input_tokens": 1200, "cache_creation_input_tokens": 300}}),
                json.dumps({"usage_object": {"cache_read_input_tokens": 5, "cache_creation_input_tokens": 5}}),
            ),
        )
    yield db, litellm
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def calls(conn) -> dict[str, tuple]:
    return {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT call_uid, input_uncached, cache_read, cache_write_5m, output FROM ah.model_call ORDER BY call_uid"
        ).fetchall()
    }


def test_fill_fills_a_null_leaves_a_known_count_alone_and_records_it(proxied, cli_env, own_tmp):
    db, litellm = proxied
    config = own_tmp / "config.toml"

    def run() -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "agent_history", "litellm-fill", "--json"]
        return subprocess.run(argv, env=cli_env, capture_output=True, text=True, timeout=120)

    with psycopg.connect(db.dsn) as conn:
        assert calls(conn) == {"msg_known": (7, 900, 0, 40), "msg_zero": (None, None, None, None)}
        assert fill_from_litellm(conn, litellm, ["claude-local"]).candidates == 0  # another namespace
    config.write_text(f'[litellm]\ndsn = "{litellm}"\nnamespaces = ["claude-proxy"]\n')
    r = run()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "candidates": 1,
        "matched": 1,
        "filled": 1,
        "buckets": {"input_uncached": 1, "cache_read": 1, "cache_write_5m": 1, "output": 1},
    }
    with psycopg.connect(db.dsn) as conn:
        # 1530 prompt tokens include 1200 cache reads and 300 cache writes; msg_known keeps its own
        assert calls(conn) == {"msg_known": (7, 900, 0, 40), "msg_zero": (30, 1200, 300, 212)}
        fills = conn.execute("SELECT agent, call_uid, source, source_key, buckets FROM ah.usage_fill").fetchall()
        assert fills == [
            ("claude", "msg_zero", "litellm", "msg_zero", ["input_uncached", "cache_read", "cache_write_5m", "output"])
        ]
        # the rollup saw the filled counts
        assert conn.execute("SELECT input_uncached, cache_read, output FROM ah.session").fetchone() == (37, 2100, 252)
        assert fill_from_litellm(conn, litellm, ["claude-proxy"]).as_dict()["candidates"] == 0  # nothing left
    # configuration mistakes: one line on stderr, exit 2
    config.write_text(f'[litellm]\ndsn = "{litellm}"\nnamespaces = ["codex-local"]\n')
    r = run()
    assert r.returncode == 2 and "'codex-local' is not a Claude namespace" in r.stderr and r.stderr.count("\n") == 1
    config.write_text('[litellm]\ndsn = "host=/nonexistent/socket dbname=x"\nnamespaces = ["claude-proxy"]\n')
    r = run()
    assert r.returncode == 2 and r.stderr.startswith("error: LiteLLM spend log:") and r.stderr.count("\n") == 1
    config.write_text("")
    r = run()
    assert r.returncode == 2 and "no LiteLLM spend log configured" in r.stderr and r.stderr.count("\n") == 1


def test_spend_buckets_leave_input_unknown_without_the_cache_split():
    assert spend_buckets(100, 20, None, None) == {
        "input_uncached": None,
        "cache_read": None,
        "cache_write_5m": None,
        "output": 20,
    }
    assert spend_buckets(100, -1, 10, 5) == {
        "input_uncached": 85,
        "cache_read": 10,
        "cache_write_5m": 5,
        "output": None,
    }
