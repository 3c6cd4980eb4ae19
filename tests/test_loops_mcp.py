"""The MCP `loops` tool and the loop ids in `session` / `find_sessions` (issue 12), over stdio
against the synthetic loop homes (`fixtures/loops/home`) indexed by the real loader."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from tests.mcp_client import call, call_tools, server_env

FIXTURE_HOME = Path(__file__).resolve().parents[1] / "fixtures" / "loops" / "home"


@pytest.fixture
def env(db, tmp_path):
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run([Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(FIXTURE_HOME).items()])
    return server_env(db.dsn, db.reader_dsn, tmp_path)


def _ids(db) -> dict[tuple[str, int], int]:
    with psycopg.connect(db.dsn) as conn:
        return {
            (r[0], r[1]): r[2] for r in conn.execute("SELECT repo, loop_number, min(id) FROM ah.loops GROUP BY 1, 2")
        }


def test_loops_tool_filters_by_status_and_repo_and_omits_unknown_values(db, env):
    data = call(env, "loops", {"status": "finished", "repo": "gadgets"}).data
    assert data["loops"] == [
        {
            "id": _ids(db)[("gadgets", 3)],
            "status": "finished",
            "repo": "gadgets",
            "loop_number": 3,
            "closeout_path": "codex/closeout-2026-05-03-loop3.md",
            "root_session_uid": "0196a000-0000-7000-8000-000000000011",
            "started_at": "2026-05-03T09:00:01+00:00",
            "ended_at": "2026-05-03T09:05:01+00:00",
            "lanes": 1,
            "model_calls": 4,
            "tokens": 8760,
            "cost_usd": 0.009975,
            "errors": 0,
            "commits": 0,
            "pushes": 0,
            "landed": 1,
            "parked": 2,
            "progress_sources": {
                "landed": "closeout",
                "parked": "closeout",
                "commits": "transcripts",
                "pushes": "transcripts",
            },
        }
    ]
    # the loop launched with nothing else: every unknown progress value is left out
    fresh = [x for x in call(env, "loops", {"repo": "widgets", "limit": 100}).data["loops"] if x["loop_number"] == 8]
    assert set(fresh[0]) == {"id", "status", "repo", "loop_number", "closeout_path", "root_session_uid", "started_at", "lanes"}  # fmt: skip
    empty = call(env, "loops", {"repo": "no-such-repo"}).data
    assert empty["loops"] == [] and empty["note"].startswith("no loops")
    bad = call(env, "loops", {"status": "done"})
    assert bad.is_error and "status" in bad.text


def test_session_and_find_sessions_name_the_loop_of_a_root_and_of_a_lane(db, env):
    ids = _ids(db)
    _, (root, lane, found) = call_tools(
        env,
        [
            ("session", {"uid": "c1000000-0000-4000-8000-000000000001", "limit": 1}),
            ("session", {"uid": "0196a000-0000-7000-8000-000000000002", "limit": 1}),
            ("find_sessions", {"query": "lane-return task-301", "mode": "keyword"}),
        ],
    )
    assert root.data["loop_ids"] == [ids[("widgets", 1)]]
    assert lane.data["loop_ids"] == [ids[("gadgets", 3)]]  # a heuristic Codex lane
    by_uid = {s["session_uid"]: s.get("loop_ids") for s in found.data["sessions"]}
    assert by_uid["0196a000-0000-7000-8000-000000000002"] == [ids[("gadgets", 3)]]
    outside = call(env, "session", {"uid": "0196a000-0000-7000-8000-000000000003", "limit": 1}).data
    assert "loop_ids" not in outside
