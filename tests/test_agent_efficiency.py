"""The ``agent_efficiency_*`` families (issue 32): the pure rules and their SQL twins on the same
inputs, every thread's figures in Python (`classify.activity`) equal to ``ah.agent_efficiency``
on the shared corpus plus the loops, efficiency and operations fixtures, the collector's
incremental reading, budget and unreadable records, and `index --every` exporting every family
over a loopback OTLP receiver with the values SQL computes."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from agent_history.classify.activity import Tool, gate_of, gate_result, review_event, shell_command, spawn_route
from agent_history.telemetry.activity import ThreadCache, collect_activity, read_threads
from agent_history.telemetry.families import FAMILIES
from tests.otlp_receiver import Receiver, points, values
from tests.test_telemetry import FIXTURES, merged_home
from tests.test_telemetry_otlp import clean_env, next_pass, start_index, stop

ROLE_FAMILIES = ("model_calls", "tokens", "thread_state_seconds")
NEW = {f.name for f in FAMILIES if f.collector == "activity"}
META = ("agent_efficiency_unreadable_records", "agent_efficiency_backlog_threads")


def ops_home(corpus_home: Path, dst: Path) -> Path:
    """The corpus, the loops and efficiency fixture homes and fixtures/operations/home in one home."""
    merged_home(corpus_home, dst)
    shutil.copytree(FIXTURES / "operations" / "home", dst, dirs_exist_ok=True)
    return dst


@pytest.fixture
def ops_db(db, corpus_home, tmp_path):
    from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
    from agent_history.ingest.loader import Loader

    home = ops_home(corpus_home, tmp_path / "home")
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert Loader(conn).run(sources).files_failed == 0
    return db


def sql_figures(conn: psycopg.Connection) -> dict[tuple, float]:
    """The exported figures as SQL computes them: ``ah.agent_efficiency()`` summed by family and
    labels, with ``loop`` from ``ah.thread_loop`` (``none`` without one) and ``role`` on the
    role families (threads without a role left out)."""
    out: Counter = Counter()
    for family, labels, role, loop, value in conn.execute(
        "SELECT e.family, e.labels, s.thread_role, coalesce(l.loop, 'none'), e.value FROM ah.agent_efficiency() e "
        "JOIN ah.session s ON s.id = e.session_id LEFT JOIN ah.thread_loop l ON l.session_id = e.session_id"
    ):
        labels = {**labels, "loop": loop}
        if family in ROLE_FAMILIES:
            if role is None:
                continue
            labels["role"] = role
        out[(f"agent_efficiency_{family}", tuple(sorted(labels.items())))] += value
    return dict(out)


def collected(conn: psycopg.Connection, ctx=None, **kw) -> dict[tuple, float]:
    ctx = ctx or SimpleNamespace(extra={})
    return {(s.family, s.labels): s.value for s in collect_activity(conn, ctx, **kw)}


def by_family(figures: dict[tuple, float], family: str) -> dict[tuple, float]:
    return {labels: v for (f, labels), v in figures.items() if f == family}


# --- the rules and their SQL twins on the same inputs ----------------------------------------------
COMMANDS = [
    "python -m pytest -q tests/x.py",
    "uv run pytest",
    "cd web && npm run test -- --watch=false",
    "ruff format --check . && ruff check .",
    "ruff format .",
    "echo pytest",
    "mypy agent_history",
    "npx tsc --noEmit",
    "make",
    "make -j4 2>&1 | tail",
    "cargo build --release",
    "just check",
    "git push origin main",
    "gh pr create --fill",
    "gh pr edit 7 --add-reviewer alice",
    "gh pr review 7 --approve",
    "gh pr review 7 --request-changes -b no",
    "gh pr review 7 --comment -b hm",
    "gh pr view 7",
    "codex exec 'fix it'",
    "claude -p 'summarise'",
    "FOO=1 pytest\nsleep 3",
    'applypatch << \'PATCH\'\n"build": "vite build && tsc -p x.json"\nPATCH',
]


def test_gates_reviews_and_spawns_equal_their_sql_twins(db):
    expected_gates = {
        "python -m pytest -q tests/x.py": "test",
        "uv run pytest": "test",
        "cd web && npm run test -- --watch=false": "test",
        "ruff format --check . && ruff check .": "lint",
        "ruff format .": None,
        "echo pytest": None,
        "mypy agent_history": "typecheck",
        "npx tsc --noEmit": "typecheck",
        "make": "build",
        "make -j4 2>&1 | tail": "build",
        "cargo build --release": "build",
        "just check": None,
        'applypatch << \'PATCH\'\n"build": "vite build && tsc -p x.json"\nPATCH': None,  # a heredoc body is data
    }
    for command, gate in expected_gates.items():
        assert gate_of(command) == gate, command
    assert review_event("gh pr view 7", "reviewDecision:\tAPPROVED") == "approved"
    assert review_event("gh pr view 7", "reviewDecision:\tCHANGES_REQUESTED") == "changes_requested"
    assert review_event("gh pr review 7 --request-changes -b no", None) == "changes_requested"
    with psycopg.connect(db.dsn) as conn:
        for command in COMMANDS:
            for output in (None, "reviewDecision:\tAPPROVED", "CHANGES_REQUESTED"):
                got = conn.execute(
                    "SELECT ah.eff_gate(%s), ah.eff_review(%s, %s)", (command, command, output)
                ).fetchone()
                assert got == (gate_of(command), review_event(command, output)), (command, output)
        tools = [
            ("claude", "Bash", {"command": "npm run build", "run_in_background": True}),
            ("claude", "Bash", {"command": "codex exec 'lane 2'", "run_in_background": True}),
            ("claude", "Bash", {"command": "sleep 5"}),
            ("claude", "Task", {"prompt": "go"}),
            ("claude", "ScheduleWakeup", {"delaySeconds": 60}),
            ("codex", "spawn_agent", {"message": "go"}),
            ("codex", "shell", {"command": ["bash", "-lc", "claude --print hi"]}),
            ("pi", "subagent", {"action": "status"}),
            ("pi", "subagent", {"action": "run", "task": "x"}),
        ]
        routes = []
        for agent, name, args in tools:
            text = json.dumps(args)
            tool = Tool("u", name, text, None, None, None, None, None, None, None, None)
            command = shell_command(agent, tool)
            sql = conn.execute(
                "SELECT ah.eff_shell_command(%s, %s, %s), ah.eff_spawn_route(%s, %s, %s, ah.eff_shell_command(%s, %s, %s))",
                (agent, name, text, agent, name, text, agent, name, text),
            ).fetchone()
            assert sql == (command, spawn_route(agent, tool, command)), (agent, name, args)
            routes.append(sql[1])
    assert routes == [
        "background_shell",
        "exec_lane",
        None,
        "sub_agent",
        "wake",
        "sub_agent",
        "exec_lane",
        None,
        "sub_agent",
    ]
    with psycopg.connect(db.dsn) as conn:
        for is_error, exit_code in [(None, None), (False, None), (True, None), (None, 0), (None, 2), (False, 1)]:
            tool = Tool("u", "Bash", None, None, is_error, exit_code, None, None, None, None, None)
            sql = conn.execute("SELECT ah.eff_gate_result(%s, %s)", (is_error, exit_code)).fetchone()[0]
            assert sql == gate_result(tool), (is_error, exit_code)


# --- every thread: Python ≡ SQL ---------------------------------------------------------------------
def test_every_thread_figures_equal_the_sql_function(ops_db):
    with psycopg.connect(ops_db.dsn) as conn:
        threads = {
            sid: (agent, worker)
            for sid, agent, worker in conn.execute(
                "SELECT id, agent, coalesce(is_subagent, agent_id <> '') FROM ah.session"
            )
        }
        python = {sid: figures for sid, (figures, bad) in read_threads(conn, threads).items()}
        sql: dict[int, Counter] = {sid: Counter() for sid in threads}
        for sid, family, labels, value in conn.execute("SELECT * FROM ah.agent_efficiency()"):
            sql[sid][(family, tuple(sorted(labels.items())))] += value
    assert len(threads) == 55
    for sid in threads:
        assert set(python[sid]) == set(sql[sid]), sid
        for key, v in sql[sid].items():
            assert python[sid][key] == pytest.approx(v, abs=1e-6), (sid, key)


def test_the_operations_thread_shows_every_signal(ops_db):
    with psycopg.connect(ops_db.dsn) as conn:
        sid, agent, worker = conn.execute(
            "SELECT id, agent, coalesce(is_subagent, agent_id <> '') FROM ah.session "
            "WHERE session_uid = '0f000000-0000-4000-8000-000000000001'"
        ).fetchone()
        figures, bad = read_threads(conn, {sid: (agent, worker)})[sid]
    got = {(f, labels): v for (f, labels), v in figures.items() if f != "tokens"}
    assert bad == 0
    assert got == {
        ("model_calls", (("trigger", "user"),)): 3,
        ("model_calls", (("trigger", "work"),)): 8,
        ("model_calls", (("trigger", "status"),)): 3,
        ("model_calls", (("trigger", "orchestrate"),)): 1,
        ("polls", ()): 3,
        ("poll_seconds", ()): 88.0,  # gh run view ×2 (30 + 56 s) and gh pr view (2 s)
        ("spawns", (("route", "background_shell"),)): 1,
        ("spawns", (("route", "wake"),)): 1,
        ("gate_runs", (("gate", "test"), ("gate_result", "fail"))): 1,
        ("gate_runs", (("gate", "test"), ("gate_result", "pass"))): 1,
        ("gate_runs", (("gate", "lint"), ("gate_result", "pass"))): 1,
        ("gate_runs", (("gate", "build"), ("gate_result", "pass"))): 1,
        ("ci_waits", ()): 1,
        ("ci_wait_seconds", ()): 90.0,  # push result at 09:00:25, finished run seen at 09:01:55
        ("reviews", (("review_event", "requested"),)): 1,
        ("reviews", (("review_event", "approved"),)): 1,
        ("tool_failures", (("error_class", "nonzero_exit"),)): 1,
        ("tool_failures", (("error_class", "denied"),)): 1,
        ("tool_failures", (("error_class", "not_found"),)): 1,
        ("interventions", (("intervention", "denial"),)): 1,
        ("interventions", (("intervention", "interrupt"),)): 1,
        ("interventions", (("intervention", "correction"),)): 1,
        ("thread_state_seconds", (("state", "working"),)): 30.0,
        ("thread_state_seconds", (("state", "waiting_tool"),)): 24.0,
        ("thread_state_seconds", (("state", "polling"),)): 88.0,
        ("thread_state_seconds", (("state", "waiting_subagent"),)): 1.0,  # the ScheduleWakeup result
        ("thread_state_seconds", (("state", "waiting_human"),)): 25.0,
        ("thread_state_seconds", (("state", "idle"),)): 2400.0,  # 40 min before the last prompt
    }


# --- the collector: incremental, bounded, unreadable records ---------------------------------------
def test_collector_reads_only_changed_threads_within_its_budget(ops_db):
    with psycopg.connect(ops_db.dsn, autocommit=True) as conn:
        ctx = SimpleNamespace(extra={})
        starved = collected(conn, ctx, budget_s=0)  # no time to read anything: counts wait, freshness does not
        assert by_family(starved, "agent_efficiency_backlog_threads") == {(): 55}
        assert not [k for k in starved if k[0] == "agent_efficiency_model_calls"]
        full = collected(conn, ctx)
        assert by_family(full, "agent_efficiency_backlog_threads") == {(): 0}
        assert {k: v for k, v in full.items() if k[0] not in META} == pytest.approx(sql_figures(conn))
        cache: ThreadCache = ctx.extra["activity"]
        sentinel = Counter({("polls", ()): 1000})
        ops = conn.execute(
            "SELECT id FROM ah.session WHERE session_uid = '0f000000-0000-4000-8000-000000000001'"
        ).fetchone()[0]
        for sid in cache.figures:
            cache.figures[sid] = sentinel
        # one thread changes: a record of it becomes unreadable (a time of infinity) and the
        # post-pass marks it rolled up again; only that thread is read again
        conn.execute(
            "UPDATE ah.message SET ts = 'infinity' WHERE id = "
            "(SELECT min(id) FROM ah.message WHERE session_id = %s AND message_class = 'interrupt_marker')",
            (ops,),
        )
        conn.execute("UPDATE ah.session SET rolled_up_at = now() WHERE id = %s", (ops,))
        again = collected(conn, ctx)
        assert [sid for sid, f in cache.figures.items() if f is not sentinel] == [ops]
        assert by_family(again, "agent_efficiency_unreadable_records")[(("agent", "claude"),)] == 1
        assert by_family(again, "agent_efficiency_unreadable_records")[(("agent", "codex"),)] == 0
        fresh = collected(conn)  # a new process reads everything: equal to SQL, which skips the record too
        sql = sql_figures(conn)
    assert {k: v for k, v in fresh.items() if k in sql} == pytest.approx(sql)
    assert set(sql) == {k for k in fresh if k[0] not in META}
    assert by_family(fresh, "agent_efficiency_interventions")[(("intervention", "interrupt"), ("loop", "none"))] == (
        by_family(full, "agent_efficiency_interventions")[(("intervention", "interrupt"), ("loop", "none"))] - 1
    )


# --- end to end: index --every → OTLP receiver == SQL ----------------------------------------------
def test_index_every_exports_every_efficiency_family_with_the_sql_figures(cli_env, db, corpus_home, tmp_path):
    home = ops_home(corpus_home, tmp_path / "home")
    with Receiver() as receiver:
        env = clean_env(cli_env) | {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        proc = start_index(env, home, 3600)
        next_pass(proc)
        code, err = stop(proc)  # the final collection after the signal reads the finished pass
        assert code == 0, err
        last = receiver.requests[-1]
    arrived = {p.name for p in points(last)}
    assert NEW <= arrived
    assert set(values(last, "ah_collector_success")) >= {(("collector", "activity"),)}
    assert values(last, "ah_collector_success")[(("collector", "activity"),)] == 1
    assert set(values(last, "ah_telemetry_dropped_samples_total").values()) == {0}
    with psycopg.connect(db.dsn) as conn:
        sql = sql_figures(conn)
        agents = {a for (a,) in conn.execute("SELECT DISTINCT agent FROM ah.session")}
    exported = {(name, labels): v for name in NEW for labels, v in values(last, name).items()}
    meta = {k: v for k, v in exported.items() if k[0] in META}
    assert {k: v for k, v in exported.items() if k not in meta} == pytest.approx(sql)
    assert meta == {("agent_efficiency_backlog_threads", ()): 0} | {
        ("agent_efficiency_unreadable_records", (("agent", a),)): 0 for a in agents
    }
    # the figures the closing note lists (corpus + loops + efficiency + operations fixtures)
    totals: Counter = Counter()
    for (name, labels), v in sql.items():
        keep = tuple(kv for kv in labels if kv[0] not in ("loop", "role", "trigger"))
        totals[(name, keep)] += v
    assert totals[("agent_efficiency_ci_waits", ())] == 1
    assert totals[("agent_efficiency_ci_wait_seconds", ())] == 90
    assert totals[("agent_efficiency_reviews", (("review_event", "requested"),))] == 2
    assert totals[("agent_efficiency_gate_runs", (("gate", "test"), ("gate_result", "fail")))] == 5
    assert totals[("agent_efficiency_interventions", (("intervention", "correction"),))] == 6
    assert totals[("agent_efficiency_waits", (("wait_outcome", "timed_out"),))] == 9
    assert sum(v for (n, _), v in totals.items() if n == "agent_efficiency_model_calls") == 1553


# --- the loop label: a bounded pattern ----------------------------------------------------------------
def test_loop_label_admits_loops_and_drops_paths():
    from agent_history.telemetry.policy import LabelGuard, ModelLabels, Sample, resolve_label_values

    guard = LabelGuard(resolve_label_values({"claude-local"}, ModelLabels(())))
    good = [
        Sample.of("agent_efficiency_polls", 1, loop=loop)
        for loop in ("none", "other", "widgets/loop3", "example/ops/loop12")
    ]
    bad = [
        Sample.of("agent_efficiency_polls", 1, loop="/home/someone/widgets/loop3"),
        Sample.of("agent_efficiency_polls", 1, loop="widgets"),
        Sample.of("agent_efficiency_polls", 1, loop="a/b/c/loop1"),
    ]
    assert guard.admit(good + bad) == good
    assert guard.dropped == {"agent_efficiency_polls": 3}


def test_only_the_most_recent_loops_get_a_label_of_their_own(db):
    from agent_history.telemetry.activity import loop_labels
    from agent_history.telemetry.families import MAX_LOOP_LABELS

    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ah.source_file (namespace, tier, agent, path, rel_path) VALUES ('claude-local', 'hot', 'claude', '/x', 'x')"
        )
        src = conn.execute("SELECT id FROM ah.source_file").fetchone()[0]
        for n in range(MAX_LOOP_LABELS + 2):
            sid = conn.execute(
                "INSERT INTO ah.session (agent, session_uid, agent_id, namespace, source_id) "
                "VALUES ('claude', %s, '', 'claude-local', %s) RETURNING id",
                (f"s{n}", src),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO ah.loops (agent, launch_message_uid, root_session_id, closeout_path, closeout_abspath, "
                "loop_number, repo, started_at, status) VALUES ('claude', %s, %s, 'c.md', '/c.md', %s, 'my repo', "
                "timestamptz '2026-05-01 00:00Z' + %s * interval '1 hour', 'finished')",
                (f"m{n}", sid, n + 1, n),
            )
        labels = loop_labels(conn)
    assert len(labels) == MAX_LOOP_LABELS + 2
    assert sorted(v for v in labels.values() if v != "other") == sorted(f"my_repo/loop{n}" for n in range(3, 23))
    assert sum(v == "other" for v in labels.values()) == 2  # loops 1 and 2, the oldest
