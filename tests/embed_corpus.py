"""Fixtures for the embedding tests: a synthetic agent home whose sessions each have one topic,
the loopback embedding server (model loaded once per test session) and embedding settings.

Import the fixtures into a test module with ``from tests.embed_corpus import *``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import orjson
import psycopg
import pytest

from agent_history.config import EmbeddingSettings
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from tests.embed_server import MODEL_NAME, EmbedServer, load_model

# Secrets planted in the corpus (fabricated); none of them may reach the server.
PLANTED_SECRETS = (
    "sk-proj-" + "Q7mZ2kR9vX4tL8nB1cY6" + "pW3sD5fG0hJ2kL4zX8cV",
    "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
    "Hunter2-Secret!",
)

# (project, session topic as prompt/reply pairs). The first session is the "no shared words" target:
# nothing in it contains memory, loss, between or sessions.
TOPICS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "notes-app",
        [
            (
                "Why does the agent forget everything we did yesterday, every single time I start a new chat? It is like "
                "50 First Dates.",
                "Like Drew Barrymore's character, it wakes up blank each morning. Keep a NOTES.md with decisions and read "
                "it at the start of each conversation so nothing has to be explained again.",
            ),
        ],
    ),
    (
        "api",
        [
            (
                "What TTL should the redis cache use for the user profile endpoint?",
                "Five minutes is a good default for the cache TTL; invalidate the key when the profile is updated.",
            ),
        ],
    ),
    (
        "api",
        [
            (
                "The postgres connection pool is exhausted under load and we see ECONNRESET from src/db/pool.py.",
                "Raise max_connections to 20 and add a retry with exponential backoff around the query.",
            ),
        ],
    ),
    (
        "parser",
        [
            (
                "test_parser_handles_utf8 fails randomly in CI but never on my laptop.",
                "It depends on dictionary ordering; sort the keys before comparing and the flaky test goes away.",
            ),
        ],
    ),
    (
        "deploy",
        [
            (
                "The docker image is two gigabytes, can we make it smaller?",
                "Use a multi-stage build on python:3.12-slim and copy only the wheel into the final stage.",
            ),
        ],
    ),
    (
        "deploy",
        [
            (
                f"Deploy with OPENAI_API_KEY={PLANTED_SECRETS[0]} and push with token {PLANTED_SECRETS[1]}, "
                f"the database password={PLANTED_SECRETS[2]} is in the vault too.",
                "Done: the deployment is rolling out to production and the health checks are green.",
            ),
        ],
    ),
    (
        "web",
        [
            (
                "The sidebar overlaps the header on small phone screens.",
                "Switch the layout to flexbox and add a media query that collapses the sidebar under 600 pixels.",
            ),
        ],
    ),
    (
        "web",
        [
            (
                "How long should the cached avatars live in redis before we refresh them?",
                "Keep avatar entries in redis for ten minutes and expire them early when a user uploads a new picture.",
            ),
        ],
    ),
]

FAILED_TOOL_OUTPUT = "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found"


def _ts(base: datetime, i: int) -> str:
    return (base + timedelta(seconds=7 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _session(n: int, project: str, turns: list[tuple[str, str]], with_failed_tool: bool) -> tuple[str, list[dict]]:
    sid = str(uuid.UUID(int=1000 + n))
    base = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=n)
    common = {"sessionId": sid, "cwd": f"/work/{project}", "version": "2.1.17", "gitBranch": "main",
              "userType": "external", "isSidechain": False}  # fmt: skip
    recs, parent, i = [], None, 0
    for t, (prompt, reply) in enumerate(turns):
        u = str(uuid.UUID(int=n * 10_000 + t * 10 + 1))
        recs.append({**common, "type": "user", "uuid": u, "parentUuid": parent, "timestamp": _ts(base, i),
                     "message": {"role": "user", "content": prompt}})  # fmt: skip
        parent, i = u, i + 1
        mid = f"msg_{n:04d}{t:04d}"
        usage = {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 20,
        }
        blocks: list[dict] = [{"type": "text", "text": reply}]
        tid = f"toolu_{n:04d}{t:04d}"
        if with_failed_tool:
            blocks.append(
                {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "npm install left-padd"}}
            )
        for b, block in enumerate(blocks):
            a = str(uuid.UUID(int=n * 10_000 + t * 10 + 2 + b))
            recs.append({**common, "type": "assistant", "uuid": a, "parentUuid": parent, "timestamp": _ts(base, i),
                         "requestId": f"req_{mid}", "message": {"id": mid, "type": "message", "role": "assistant",
                         "model": "claude-sonnet-4-5-20250929", "content": [block],
                         "stop_reason": "tool_use" if with_failed_tool else "end_turn", "usage": usage}})  # fmt: skip
            parent, i = a, i + 1
        if with_failed_tool:
            r = str(uuid.UUID(int=n * 10_000 + t * 10 + 9))
            recs.append({**common, "type": "user", "uuid": r, "parentUuid": parent, "timestamp": _ts(base, i),
                         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                     "content": FAILED_TOOL_OUTPUT, "is_error": True}]},
                         "toolUseResult": f"Error: {FAILED_TOOL_OUTPUT}"})  # fmt: skip
            parent, i = r, i + 1
    return sid, recs


def write_topic_home(root: Path) -> dict[str, str]:
    """Write one Claude Code session per `TOPICS` entry under ``root/.claude``; returns
    {topic key: session uid} with keys ``t0``, ``t1``, …"""
    uids = {}
    for n, (project, turns) in enumerate(TOPICS):
        sid, recs = _session(n, project, turns, with_failed_tool=(n == 4))
        path = root / ".claude" / "projects" / f"-work-{project}" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
        uids[f"t{n}"] = sid
    return uids


def sources_for(home: Path) -> list[Source]:
    return [Source(ns, agent_of_namespace(ns), path) for ns, path in home_layout(home).items()]


def index_home(dsn: str, home: Path) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        summary = Loader(conn).run(sources_for(home))
    assert summary.files_failed == 0


@cache
def _server() -> EmbedServer:
    return EmbedServer(load_model()).start()  # once per test session, whichever module asks first


@pytest.fixture
def embed_server() -> EmbedServer:
    """The loopback embedding server, reset for this test."""
    server = _server()
    server.reset()
    yield server
    server.reset()


@pytest.fixture
def embed_settings(embed_server) -> EmbeddingSettings:
    """Settings pointing at the loopback server. The query embedding may take 60 s (the default
    budget is 3 s): under a suite's load the loopback server's answer can take longer than 3 s,
    and hybrid search then answered keyword-only — a test about the fusion failing on the clock
    (seen once at a load average of 19). The test of the budget sets its own."""
    return EmbeddingSettings(
        provider="openai", model=MODEL_NAME, base_url=embed_server.base_url, batch_size=16, query_timeout_s=60.0
    )


@pytest.fixture
def topic_home(tmp_path) -> tuple[Path, dict[str, str]]:
    """The synthetic topic home and its session uids."""
    home = tmp_path / "home"
    return home, write_topic_home(home)


@pytest.fixture
def topic_db(db, topic_home):
    """A test database with the topic home indexed; returns (db, home, uids)."""
    home, uids = topic_home
    index_home(db.dsn, home)
    return db, home, uids


__all__ = ["embed_server", "embed_settings", "topic_home", "topic_db"]
