"""Loops end to end (issue 12): the synthetic homes in `fixtures/loops/home` (Claude Code, Codex,
pi; see `fixtures/loops/build.py`) indexed by the real loader into a real database, statuses
recomputed at a controlled clock (`refresh_loops(now=…)`), and the CLI in subprocesses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.ingest.loops import refresh_loops

FIXTURE_HOME = Path(__file__).resolve().parents[1] / "fixtures" / "loops" / "home"
WIDGETS = "02bb81d5411e22aca5867e654c1e4ecbf1b409a4b567bb08ed12b240122845ae"
GADGETS = "dd48a6b315fff8c19074833ed3774fe32d63cbb03b3511f218b4887ee9c7d3d1"
PY = sys.executable


def at(hms: str, day: int = 3) -> datetime:
    h, m = (int(x) for x in hms.split(":"))
    return datetime(2026, 5, day, h, m, tzinfo=UTC)


def index(db, home: Path = FIXTURE_HOME) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run([Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()])
    assert summary.files_failed == 0 and summary.files_changed > 0


def refresh(db, now: datetime) -> None:
    with psycopg.connect(db.dsn, autocommit=True) as conn, conn.transaction():
        refresh_loops(conn, [], now=now)


def loops(db) -> dict[tuple[str, int], dict]:
    """Loops keyed by (closeout directory's repo, loop number), with a relaunch suffix."""
    with psycopg.connect(db.dsn) as conn:
        cur = conn.execute(
            "SELECT l.*, s.session_uid AS root_uid FROM ah.loops AS l JOIN ah.session AS s ON s.id = l.root_session_id "
            "ORDER BY l.started_at"
        )
        cols = [c.name for c in cur.description]
        out: dict = {}
        for row in cur:
            d = dict(zip(cols, row, strict=True))
            key = (d["repo"], d["loop_number"])
            out[key if key not in out else (*key, "relaunch")] = d
        return out


@pytest.fixture
def catalogue(db):
    index(db)
    return db


def test_each_status_at_a_controlled_clock(catalogue):
    refresh(catalogue, at("17:30"))
    status = {k: v["status"] for k, v in loops(catalogue).items()}
    assert status == {
        ("widgets", 1): "finished",
        ("gadgets", 3): "finished",
        ("sprockets", 9): "finished",
        ("widgets", 2): "waiting",
        ("widgets", 3): "paused",
        ("widgets", 4): "running",
        ("widgets", 5): "finished",
        ("widgets", 5, "relaunch"): "finished",
        ("widgets", 6): "finished",
        ("widgets", 7): "running",
        ("widgets", 8): "running",
    }
    # a day later only the terminal and paused ones keep their status
    refresh(catalogue, at("16:59", day=4))
    status = {k: v["status"] for k, v in loops(catalogue).items()}
    assert [k for k, v in status.items() if v == "stale"] == [("widgets", 2), ("widgets", 4), ("widgets", 7)]
    assert status[("widgets", 8)] == "running" and status[("widgets", 3)] == "paused"


def test_a_finished_loop_with_a_qualified_closeout_counts_everything_exactly(catalogue):
    loop = loops(catalogue)[("widgets", 1)]
    assert loop["closeout_path"] == "codex/closeout-2026-05-03-loop1.md"
    assert loop["charter_path"] == "codex/charter-widgets.md" and loop["charter_sha256"] == WIDGETS
    assert (loop["status"], loop["ended_at"]) == ("finished", datetime(2026, 5, 3, 9, 10, 1, tzinfo=UTC))
    progress = {k: loop[k] for k in ("lanes", "model_calls", "input_uncached", "cache_read", "cache_write_5m",
                                     "cache_write_1h", "output", "reasoning", "cost_usd", "errors", "commits",
                                     "pushes", "landed", "parked")}  # fmt: skip
    # root: 6 calls (10+4·5 input, 1000 cache write, 5·1000 cache read, 50+5·30+20 output);
    # lane: 2 calls (5+5 input, 20+30 output)
    assert progress == {
        "lanes": 1, "model_calls": 8, "input_uncached": 40, "cache_read": 5000, "cache_write_5m": 1000,
        "cache_write_1h": 0, "output": 240, "reasoning": None, "cost_usd": Decimal("0.008970"), "errors": 1,
        "commits": 1, "pushes": 1, "landed": 2, "parked": 1,
    }  # fmt: skip
    with psycopg.connect(catalogue.dsn) as conn:
        rows = conn.execute(
            "SELECT qualified, reason, sha256, first_line FROM ah.loop_closeout WHERE loop_id = %s", (loop["id"],)
        ).fetchall()
    assert rows == [(True, None, "67f551e5954cd9d01bfd97ce4e98599c45feb2c64e0050b912ea55480537bfda",
                     f"# Closeout: widgets loop1 · Charter: {WIDGETS}")]  # fmt: skip


def test_every_way_a_closeout_fails_to_qualify_is_recorded_and_the_loop_does_not_finish(catalogue):
    loop = loops(catalogue)[("widgets", 4)]
    assert loop["status"] != "finished" and loop["ended_at"] is None
    assert (loop["landed"], loop["parked"]) == (None, None)
    with psycopg.connect(catalogue.dsn) as conn:
        rows = conn.execute(
            "SELECT c.tool_call_uid, c.qualified, c.reason, c.sha256 IS NOT NULL FROM ah.loop_closeout AS c "
            "WHERE c.loop_id = %s ORDER BY c.written_at",
            (loop["id"],),
        ).fetchall()
    assert rows == [
        ("toolu_c4_early", False, "written before the launch", True),
        ("toolu_c4_edit", False, "a partial edit (Edit) proves nothing", False),
        ("toolu_c4_failed", False, "the write failed", False),
        ("toolu_c4_digest", False, "wrong charter digest", True),
        ("toolu_c4_number", False, "wrong loop number (loop5, launch says loop4)", True),
    ]  # the heredoc in Bash (toolu_c4_shell) is shell text: no evidence at all


def test_a_waiting_loop_whose_time_passes_runs_then_goes_stale(catalogue):
    refresh(catalogue, at("17:59"))
    loop = loops(catalogue)[("widgets", 2)]
    assert (loop["status"], loop["waiting_until"]) == ("waiting", at("18:00"))
    refresh(catalogue, at("18:01"))  # root last active 10:00:05 → within 24 h
    loop = loops(catalogue)[("widgets", 2)]
    assert (loop["status"], loop["waiting_until"]) == ("running", None)
    refresh(catalogue, at("10:01", day=4))
    assert loops(catalogue)[("widgets", 2)]["status"] == "stale"


def _append(path: Path, record: dict) -> None:
    with path.open("a") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")


def _claude_text(sid: str, uid: str, parent: str | None, ts: str, text: str) -> dict:
    return {
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/widgets",
        "sessionId": sid, "version": "2.1.17", "gitBranch": "main",
        "message": {"model": "claude-sonnet-4-5-20250929", "id": f"msg_{uid}", "type": "message", "role": "assistant",
                    "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                              "output_tokens": 5}},
        "requestId": f"req_{uid}", "type": "assistant", "uuid": uid, "timestamp": ts,
    }  # fmt: skip


def test_new_root_activity_revives_a_stale_loop_and_clears_waiting(db, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, home)
    index(db, home)
    refresh(db, at("09:00", day=5))
    before = loops(db)
    assert (before[("widgets", 8)]["status"], before[("widgets", 2)]["status"]) == ("stale", "stale")
    project = home / ".claude" / "projects" / "-home-dev-widgets"
    sid8, sid2 = "c8000000-0000-4000-8000-000000000008", "c2000000-0000-4000-8000-000000000002"
    _append(project / f"{sid8}.jsonl", _claude_text(sid8, "c8-late", "c8000000-main-0001", "2026-05-05T08:30:00.000Z", "Back on loop 8."))  # fmt: skip
    _append(project / f"{sid2}.jsonl", _claude_text(sid2, "c2-late", "c2000000-main-0002", "2026-05-03T12:00:00.000Z", "CI is green; merging."))  # fmt: skip
    index(db, home)
    refresh(db, at("09:00", day=5))
    after = loops(db)
    assert after[("widgets", 8)]["status"] == "running"
    assert after[("widgets", 8)]["root_last_active_at"] == datetime(2026, 5, 5, 8, 30, tzinfo=UTC)
    # loop 2's WAITING line is no longer the root's last word: stale by the 24 h rule, not waiting
    refresh(db, at("17:00"))
    assert (loops(db)[("widgets", 2)]["status"], loops(db)[("widgets", 2)]["waiting_until"]) == ("running", None)


def test_lanes_by_lineage_with_returns_and_by_the_codex_exec_heuristic(catalogue):
    with psycopg.connect(catalogue.dsn) as conn:
        rows = conn.execute(
            "SELECT l.repo, l.loop_number, s.session_uid, s.agent_id, a.link_method, a.return_status, a.returns "
            "FROM ah.lane AS a JOIN ah.loops AS l ON l.id = a.loop_id JOIN ah.session AS s ON s.id = a.session_id "
            "ORDER BY l.repo, s.session_uid"
        ).fetchall()
    assert rows == [
        ("gadgets", 3, "0196a000-0000-7000-8000-000000000002", "", "heuristic", "complete",
         [{"v": 2, "lane": "task-301", "status": "complete"}]),
        ("widgets", 1, "c1000000-0000-4000-8000-000000000001", "a1b2c3d", "lineage", "complete",
         [{"v": 2, "lane": "docs", "status": "partial", "landed": []},
          {"v": 2, "lane": "docs", "status": "complete", "landed": ["task-101"]}]),
    ]  # fmt: skip
    # x3 ran in another tree, x4 after the command ended: neither is a lane
    gadgets = loops(catalogue)[("gadgets", 3)]
    assert (gadgets["lanes"], gadgets["model_calls"], gadgets["landed"], gadgets["parked"]) == (1, 4, 1, 2)


def test_a_relaunch_shares_the_closeout_and_a_second_launch_replaces_the_first(catalogue):
    got = loops(catalogue)
    first, again = got[("widgets", 5)], got[("widgets", 5, "relaunch")]
    assert first["root_uid"] != again["root_uid"]
    assert (
        first["closeout_abspath"] == again["closeout_abspath"] == "/home/dev/widgets/codex/closeout-2026-05-03-loop5.md"
    )
    assert (first["status"], again["status"]) == ("finished", "finished")
    assert (
        first["end_evidence"]
        == again["end_evidence"]
        == ("qualified closeout written by session c5b00000-0000-4000-8000-00000000005b")
    )
    replaced, next_one = got[("widgets", 6)], got[("widgets", 7)]
    assert (replaced["status"], replaced["ended_at"], replaced["window_end_at"]) == (
        "finished",
        at("16:30"),
        at("16:30"),
    )
    assert replaced["end_evidence"] == f"replaced by the next launch of the same root (loop id {next_one['id']})"
    assert replaced["model_calls"] == 1 and next_one["model_calls"] == 1  # each keeps its own window's calls


def test_progress_columns_are_null_when_unknown_never_zero(catalogue):
    got = loops(catalogue)
    fresh = got[("widgets", 8)]  # launched, nothing else
    assert {k: fresh[k] for k in ("model_calls", "input_uncached", "cache_read", "cache_write_5m", "cache_write_1h",
                                  "output", "reasoning", "cost_usd", "errors", "commits", "pushes", "landed",
                                  "parked")} == dict.fromkeys(("model_calls", "input_uncached", "cache_read",
                                  "cache_write_5m", "cache_write_1h", "output", "reasoning", "cost_usd", "errors",
                                  "commits", "pushes", "landed", "parked"))  # fmt: skip
    assert fresh["lanes"] == 0  # a count: nothing attached
    pi = got[("sprockets", 9)]  # tokens known, model unpriced → cost unknown; empty sections → 0 tasks
    assert (pi["model_calls"], pi["input_uncached"], pi["output"], pi["cost_usd"]) == (2, 600, 80, None)
    assert (pi["landed"], pi["parked"]) == (0, 0)
    codex = got[("gadgets", 3)]  # Codex reports no cache writes: unknown, not 0
    assert (codex["cache_write_5m"], codex["cache_write_1h"], codex["cache_read"]) == (None, None, 6000)
    relaunched = got[("widgets", 5, "relaunch")]  # a closeout without a Parked heading
    assert (relaunched["landed"], relaunched["parked"]) == (1, None)


def test_a_second_pass_changes_nothing(catalogue):
    refresh(catalogue, at("17:30"))
    with psycopg.connect(catalogue.dsn) as conn:

        def snap() -> list:
            return [
                conn.execute(f"SELECT * FROM ah.{t} ORDER BY id").fetchall() for t in ("loops", "lane", "loop_closeout")
            ]

        before = snap()
        with conn.transaction():
            assert refresh_loops(conn, [], now=at("17:30")) == 5  # the non-finished loops
        assert snap() == before


# --- CLI ---------------------------------------------------------------------------------------
def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def indexed_cli(db, cli_env):
    r = cli("index", "--home", str(FIXTURE_HOME), env=cli_env)
    assert r.returncode == 0, r.stderr
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute("UPDATE ah.index_run SET finished_at = '2026-05-03 17:30:00+00'")
    return cli_env


def test_loop_usage_prints_the_expected_markdown_block(db, indexed_cli):
    ids = {k: v["id"] for k, v in loops(db).items()}
    r = cli("loop", str(ids[("widgets", 1)]), "--usage", env=indexed_cli)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "### Usage: widgets loop1\n"
        "\n"
        "- As of 2026-05-03 17:30 UTC, from the agent-history catalogue (it lags the transcripts by one index pass).\n"
        "- Closeout: `codex/closeout-2026-05-03-loop1.md`\n"
        f"- Launch {ids[('widgets', 1)]}: root claude `c1000000-0000-4000-8000-000000000001`, finished, "
        "started 2026-05-03 09:00 UTC, wall time 10m 01s, 1 lane; commits 1 (transcripts), pushes 1 (transcripts), "
        "landed 2 (closeout), parked 1 (closeout).\n"
        "- Total: 8 model calls, list-price cost $0.0090.\n"
        "\n"
        "| Launch | Role | Model | Calls | Cost (USD) |\n"
        "|---:|---|---|---:|---:|\n"
        f"| {ids[('widgets', 1)]} | root | claude-sonnet-4-5-20250929 | 6 | 0.0082 |\n"
        f"| {ids[('widgets', 1)]} | lane | claude-sonnet-4-5-20250929 | 2 | 0.0008 |\n"
    )


def test_loop_usage_of_a_relaunched_closeout_shows_both_launches(db, indexed_cli):
    ids = {k: v["id"] for k, v in loops(db).items()}
    a, b = ids[("widgets", 5)], ids[("widgets", 5, "relaunch")]
    r = cli("loop", "/home/dev/widgets/codex/closeout-2026-05-03-loop5.md", "--usage", env=indexed_cli)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "### Usage: widgets loop5\n"
        "\n"
        "- As of 2026-05-03 17:30 UTC, from the agent-history catalogue (it lags the transcripts by one index pass).\n"
        "- Closeout: `codex/closeout-2026-05-03-loop5.md`\n"
        f"- This closeout is shared by 2 launches (a relaunch): {a}, {b}; all are counted below.\n"
        f"- Launch {a}: root claude `c5a00000-0000-4000-8000-00000000005a`, finished, started 2026-05-03 13:00 UTC, "
        "wall time 2h 01m, 0 lanes; commits unknown, pushes unknown, landed 1 (closeout), parked unknown.\n"
        f"- Launch {b}: root claude `c5b00000-0000-4000-8000-00000000005b`, finished, started 2026-05-03 15:00 UTC, "
        "wall time 1m 01s, 0 lanes; commits 0 (transcripts), pushes 0 (transcripts), landed 1 (closeout), "
        "parked unknown.\n"
        "- Total: 3 model calls, list-price cost $0.0112.\n"
        "\n"
        "| Launch | Role | Model | Calls | Cost (USD) |\n"
        "|---:|---|---|---:|---:|\n"
        f"| {a} | root | claude-sonnet-4-5-20250929 | 1 | 0.0081 |\n"
        f"| {b} | root | claude-sonnet-4-5-20250929 | 2 | 0.0030 |\n"
    )


def test_loops_json_and_loop_json_shapes(db, indexed_cli):
    r = cli("loops", "--json", "--status", "finished", env=indexed_cli)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["loops"]
    assert sorted((x["repo"], x["loop_number"]) for x in rows) == [
        ("gadgets", 3), ("sprockets", 9), ("widgets", 1), ("widgets", 5), ("widgets", 5), ("widgets", 6)
    ]  # fmt: skip
    gadgets = next(x for x in rows if x["repo"] == "gadgets")
    assert {k: gadgets[k] for k in ("root_session_uid", "charter_sha256", "lanes", "model_calls", "tokens",
                                    "cost_usd", "errors", "commits", "pushes", "landed", "parked")} == {
        "root_session_uid": "0196a000-0000-7000-8000-000000000011", "charter_sha256": GADGETS, "lanes": 1,
        "model_calls": 4, "tokens": 8760, "cost_usd": 0.009975, "errors": 0, "commits": 0, "pushes": 0,
        "landed": 1, "parked": 2,
    }  # fmt: skip
    r = cli("loop", str(gadgets["id"]), "--json", env=indexed_cli)
    detail = json.loads(r.stdout)
    assert [(x["link_method"], x["model"], x["model_calls"], x["tokens"], x["return_status"]) for x in detail["lanes"]] == [
        ("heuristic", "gpt-5-codex", 1, 1200, "complete")
    ]  # fmt: skip
    assert detail["relaunched"] is False and [c["qualified"] for c in detail["closeouts"]] == [True]


def test_cli_errors_are_one_line(indexed_cli):
    r = cli("loops", "--status", "done", env=indexed_cli)
    assert (r.returncode, r.stderr.strip()) == (2, "error: unknown status 'done' (known: finished, waiting, paused, running, stale)")  # fmt: skip
    r = cli("loop", "999999", env=indexed_cli)
    assert (r.returncode, r.stderr.strip()) == (1, "error: no loop with id 999999")
    r = cli("loop", "codex/closeout-2026-05-03-loop3.md", env=indexed_cli)
    assert r.returncode == 1 and r.stderr.strip() == (
        "error: 'codex/closeout-2026-05-03-loop3.md' names closeouts in 2 directories: "
        "/home/dev/gadgets/codex/closeout-2026-05-03-loop3.md, /home/dev/widgets/codex/closeout-2026-05-03-loop3.md"
    )
    r = cli("loop", "1", "--usage", "--json", env=indexed_cli)
    assert (r.returncode, r.stderr.strip()) == (2, "error: --usage and --json are exclusive")


def test_the_shared_corpus_has_no_loops_and_says_so(corpus_home, cli_env):
    r = cli("index", "--home", str(corpus_home), env=cli_env)
    assert r.returncode == 0, r.stderr
    r = cli("loops", env=cli_env)
    assert (r.returncode, r.stdout.strip()) == (
        1, "No loops found: no prompt with 'You are the root' and a codex/closeout-<date>-loop<N>.md path."
    )  # fmt: skip
    assert json.loads(cli("loops", "--json", env=cli_env).stdout) == {"loops": []}


def test_a_rebuild_empties_the_loop_tables_and_the_next_pass_derives_the_same_loops(catalogue):
    from agent_history.ingest.rebuild import truncate_derived

    before = {
        k: (v["status"], v["model_calls"], v["landed"], v["parked"], v["lanes"]) for k, v in loops(catalogue).items()
    }
    with psycopg.connect(catalogue.dsn, autocommit=True) as conn:
        truncate_derived(conn)
        assert conn.execute("SELECT count(*) FROM ah.loops").fetchone()[0] == 0
    index(catalogue)
    after = {
        k: (v["status"], v["model_calls"], v["landed"], v["parked"], v["lanes"]) for k, v in loops(catalogue).items()
    }
    assert after == before


def test_loop_shows_the_loop_its_lanes_and_its_closeout_writes(db, indexed_cli):
    ids = {k: v["id"] for k, v in loops(db).items()}
    wide = {**indexed_cli, "COLUMNS": "250"}  # each line whole (at 80 columns they wrap between fields)
    r = cli("loop", str(ids[("widgets", 1)]), env=wide)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (
        f"loop {ids[('widgets', 1)]}: widgets loop1 · finished · root claude c1000000-0000-4000-8000-000000000001 · "
        "started 2026-05-03 09:00 · ended 2026-05-03 09:10"
    )
    assert lines[1:4] == [
        "  calls 8 · tokens 6,280 · cost $0.01 · errors 1 · commits 1 · pushes 1 · landed 2 · parked 1",
        "  closeout codex/closeout-2026-05-03-loop1.md",
        "  charter codex/charter-widgets.md",
    ]
    assert lines[-1] == "  closeout write 2026-05-03 09:10 by c1000000-0000-4000-8000-000000000001: qualified"
    relaunch = cli("loop", str(ids[("widgets", 5)]), env=wide).stdout.splitlines()
    assert relaunch[0] == "This closeout has 2 launches (a relaunch); all are shown."


def test_a_loop_root_is_a_root_thread_and_a_lineage_lane_a_worker(catalogue):
    """The post-pass runs rollups → loops → roles: `ah.refresh_efficiency` (sql/35_efficiency.sql)
    makes every loop's root a `root`, also a root that spawned no sub-agent (it owns a loop)."""
    with psycopg.connect(catalogue.dsn) as conn:
        roots = conn.execute(
            "SELECT l.repo, l.loop_number, s.agent, s.thread_role, "
            "EXISTS (SELECT 1 FROM ah.session AS c WHERE c.parent_session_id = s.id) "
            "OR EXISTS (SELECT 1 FROM ah.subagent_spawn AS sp WHERE sp.session_id = s.id) AS spawned "
            "FROM ah.loops AS l JOIN ah.session AS s ON s.id = l.root_session_id ORDER BY l.started_at, l.id"
        ).fetchall()
        lanes = conn.execute(
            "SELECT a.link_method, s.session_uid, s.agent_id, s.thread_role FROM ah.lane AS a "
            "JOIN ah.session AS s ON s.id = a.session_id ORDER BY a.link_method, s.session_uid"
        ).fetchall()
        efficiency_roles = dict(
            conn.execute(
                "SELECT e.session_id, e.role FROM ah.efficiency AS e "
                "WHERE e.session_id IN (SELECT root_session_id FROM ah.loops)"
            ).fetchall()
        )
    assert {r[3] for r in roots} == {"root"} and len(roots) == 11
    # only widgets #1's root spawned a sub-agent; the other ten are roots because they own a loop
    assert [(r[0], r[1]) for r in roots if r[4]] == [("widgets", 1)]
    assert {r[2] for r in roots if not r[4]} == {"claude", "codex", "pi"}
    assert set(efficiency_roles.values()) == {"root"}
    assert lanes == [  # the Codex exec heuristic's lane is a thread of its own, not a sub-agent
        ("heuristic", "0196a000-0000-7000-8000-000000000002", "", "solo"),
        ("lineage", "c1000000-0000-4000-8000-000000000001", "a1b2c3d", "worker"),
    ]


def test_list_loops_keeps_the_loops_whose_root_ran_in_the_project(catalogue):
    # the web usage page's project filter: a case-insensitive substring of the root session's cwd
    from agent_history.read.loops import list_loops

    refresh(catalogue, at("12:00"))
    with psycopg.connect(catalogue.dsn) as conn:
        every = list_loops(conn, limit=1000)
        cwds = dict(conn.execute("SELECT session_uid, cwd FROM ah.session WHERE agent_id = ''").fetchall())
        by_cwd = {
            cwd: [lp.id for lp in every if cwds[lp.root_session_uid] == cwd]
            for cwd in {cwds[lp.root_session_uid] for lp in every}
        }
        cwd = sorted(by_cwd)[0]
        mine = list_loops(conn, project=cwd.upper(), limit=1000)
        none = list_loops(conn, project="no-such-project", limit=1000)
    assert len(by_cwd) > 1 and every  # loops in more than one project: the filter has something to drop
    assert [lp.id for lp in mine] == by_cwd[cwd]
    assert none == []
