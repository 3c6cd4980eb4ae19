"""Contract: the Python classifier (agent_history.classify) and its SQL twin
(sql/35_efficiency.sql) give the same answer for the same input — tool results, messages and
whole-thread attribution — on synthetic cases covering every trigger of every harness and on
every real call of the corpus (../shared/corpus/home)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from agent_history.classify import eff_message, eff_result
from agent_history.classify.threads import thread_triggers
from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow, ToolCallRow
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes
from tests.corpus_db import corpus_db  # noqa: F401

# (agent, tool name, input, output, is_error) — every tool-result trigger for each harness,
# including the waits and orchestration tools the corpus has no example of.
SYNTHETIC_RESULTS: list[tuple[str, str | None, str | None, str | None, bool | None]] = [
    ("claude", "Bash", json.dumps({"command": "git status"}), "clean", False),
    ("claude", "Bash", json.dumps({"command": "sleep 30 && gh run view 7"}), "", False),
    ("claude", "Bash", json.dumps({"command": "echo ok"}), "ok", False),
    ("claude", "Bash", json.dumps({"command": "make -j4 2>&1 | tail"}), "", True),
    ("claude", "Bash", json.dumps({"command": "until [ -f done ]; do sleep 5; done"}), "", False),
    ("claude", "Bash", json.dumps({"command": '(cd a && git fetch) ; echo "x;y"'}), "", False),
    ("claude", "Bash", json.dumps({"command": "cat 'runs/STATUS.md'"}), "", False),
    ("claude", "Bash", json.dumps({"command": "cat > STATE.md <<'EOF'\nstatus: green\nEOF"}), "", False),
    ("claude", "Bash", json.dumps({"command": "git status\n\n  sleep 1  \n"}), "", False),
    ("claude", "Bash", json.dumps({"command": "X=1 Y=2 env ps aux | grep x"}), "", False),
    ("claude", "Bash", json.dumps({"command": "do   sleep\t3"}), "", False),
    ("claude", "Bash", json.dumps({"command": 5}), "", False),
    ("claude", "Bash", "not json at all; sleep 1", "", False),
    ("claude", "Bash", "[1, 2]", "", False),
    ("claude", "Bash", None, None, None),
    ("claude", "BashOutput", json.dumps({"bash_id": "b1"}), "<status>running</status>", False),
    ("claude", "BashOutput", json.dumps({"bash_id": "b1"}), "<status>completed</status>", False),
    ("claude", "TaskOutput", json.dumps({"task_id": "t"}), "<retrieval_status>not_ready</retrieval_status>", False),
    ("claude", "TaskOutput", json.dumps({"task_id": "t"}), None, None),
    ("claude", "Task", json.dumps({"prompt": "go"}), "report", False),
    ("claude", "Agent", json.dumps({"prompt": "go"}), "launched", False),
    ("claude", "SendMessage", json.dumps({"to": "x"}), "ok", False),
    ("claude", "ScheduleWakeup", json.dumps({"delay": 60}), "armed", False),
    ("claude", "Read", json.dumps({"file_path": "/w/handoff-notes.md"}), "", False),
    ("claude", "Read", json.dumps({"file_path": "", "path": "/w/REPORT.json"}), "", False),
    ("claude", "Read", json.dumps({"file_path": ["x"]}), "", False),
    ("claude", "Glob", json.dumps({"pattern": "*.py"}), "", False),
    ("claude", None, None, "orphan result", False),
    ("codex", "shell", json.dumps({"command": ["bash", "-lc", "git log -1"]}), "", False),
    ("codex", "shell", json.dumps({"command": ["/bin/zsh", "-c", "sleep 2"]}), "", False),
    ("codex", "shell", json.dumps({"command": ["bash", "-lc", 7]}), "", False),
    ("codex", "shell", json.dumps({"command": ["echo", {"a": 1}]}), "", False),
    ("codex", "shell", json.dumps({"command": []}), "", False),
    ("codex", "shell", json.dumps({"command": ["true"]}), "", False),
    ("codex", "shell_command", json.dumps({"command": "pgrep -f codex"}), "", False),
    ("codex", "exec_command", json.dumps({"cmd": "backlog task view 12"}), "", False),
    ("codex", "exec_command", json.dumps({"cmd": "cargo test"}), "", False),
    ("codex", "write_stdin", json.dumps({"session_id": 1, "chars": ""}), "Process running with session ID 1", False),
    ("codex", "write_stdin", json.dumps({"session_id": 1}), "Process exited with code 0", False),
    ("codex", "write_stdin", json.dumps({"session_id": 1, "chars": "q"}), "", False),
    ("codex", "wait", json.dumps({"ids": ["a"]}), '{"timed_out": true}', False),
    ("codex", "wait_agent", json.dumps({"ids": ["a"]}), "wait timed out after 30s", False),
    ("codex", "wait_agent", json.dumps({"ids": ["a"]}), '{"status": {"a": "done"}, "timed_out": false}', False),
    ("codex", "wait_agent", json.dumps({"ids": ["a"]}), "no such agent", True),
    ("codex", "spawn_agent", json.dumps({"message": "x"}), '{"agent_id": "t"}', False),
    ("codex", "send_input", json.dumps({"id": "t", "message": "y"}), "ok", False),
    ("codex", "close_agent", json.dumps({"id": "t"}), "ok", False),
    ("codex", "list_agents", "{}", "[]", False),
    ("codex", "apply_patch", "*** Begin Patch", "Done", False),
    ("pi", "bash", json.dumps({"command": "git fetch --all"}), "", False),
    ("pi", "bash", json.dumps({"command": "while true; do sleep 1; done"}), "", False),
    ("pi", "bash", json.dumps({"command": ":"}), "", False),
    ("pi", "bash", json.dumps({"command": "gh pr view 3 --json state"}), "", False),
    ("pi", "bash", json.dumps({"command": "npm run build"}), "", False),
    ("pi", "read", json.dumps({"path": "docs/progress.yaml"}), "", False),
    ("pi", "read", json.dumps({"path": "src/index.ts"}), "", False),
    ("pi", "subagent", json.dumps({"agent": "scout", "task": "x"}), "", False),
    ("pi", "subagent", json.dumps({"action": "status"}), "", False),
    ("pi", "subagent", json.dumps({"action": ["list"]}), "", False),
    ("pi", "write", json.dumps({"path": "STATE.md"}), "", False),
]

# (agent, message class, role, text, record type, record origin, in worker)
SYNTHETIC_MESSAGES: list[tuple] = [
    ("claude", "human_prompt", "user", "fix", "user", None, False),
    ("claude", "queued_prompt", "user", "more", "attachment", None, False),
    ("claude", "command_expansion", "user", "<command-name>/review</command-name>", "user", None, False),
    ("claude", "interrupt_marker", "user", "[Request interrupted by user]", "user", None, False),
    ("claude", "subagent_brief", "user", "explore", "user", None, True),
    ("claude", "agent_message", "user", "continue", "user", None, True),
    ("claude", "agent_message", "user", "<teammate-message from=x>", "user", None, False),
    ("claude", "agent_message", "user", "List files", "user", "task-notification", False),
    ("claude", "subagent_report", "user", "<task-notification><result>ok</result>", "user", None, False),
    ("claude", "subagent_report", "tool", "report", "user", None, False),
    ("claude", "context_injection", "user", "  <task-notification>\n<status>completed", "user", None, False),
    ("claude", "context_injection", "system", "<task-notification>", "attachment", None, False),
    ("claude", "system_reminder", "user", "<system-reminder>x", "user", None, False),
    ("claude", "assistant_text", "assistant", "done", "assistant", None, False),
    ("claude", "hook_output", "system", "hook ran", "system", None, False),
    ("claude", None, None, None, None, None, False),
    ("codex", "human_prompt", "user", "go", "event_msg/user_message", None, False),
    ("codex", "subagent_brief", "user", "lint", "response_item/message", "user", True),
    ("codex", "agent_message", "user", "<subagent_notification>", "response_item/message", "user", False),
    ("codex", "agent_message", "user", "from parent", "response_item/agent_message", None, True),
    ("codex", "reasoning", "assistant", "think", "response_item/reasoning", None, False),
    ("pi", "human_prompt", "user", "hi", "message", "user", False),
    ("pi", "subagent_brief", "assistant", "brief", "message", "assistant", False),
    ("pi", "subagent_report", "tool", "report", "message", "toolResult", False),
    ("pi", "hook_output", "user", "wake up", "custom_message", "loop-wake", False),
    ("pi", "hook_output", "user", "note", "custom_message", "notes", False),
    ("pi", "hook_output", "user", "note", "custom_message", None, False),
    ("pi", "compaction_summary", "user", "summary", "compaction", None, False),
]


def _corpus_rows(corpus_home: Path, source_ids: dict[str, int]) -> list[tuple[int, list]]:
    files = []
    for path in sorted(corpus_home.rglob("*.jsonl")):
        text = str(path)
        agent = "claude" if "/.claude/" in text else "codex" if "/.codex/" in text else "pi"
        rows = parse_bytes(parser_class(agent), ParseContext(path=text), path.read_bytes())
        files.append((source_ids[text], [r for by_key in fold(rows).values() for r in by_key.values()]))
    return files


@pytest.fixture(scope="module")
def corpus_files(corpus_db, corpus_home) -> list[tuple[int, list]]:  # noqa: F811
    with psycopg.connect(corpus_db.dsn) as conn:
        ids = dict(conn.execute("SELECT path, id FROM ah.source_file").fetchall())
    return _corpus_rows(corpus_home, ids)


def _sql_results(conn, cases) -> list[str]:
    cols = list(zip(*cases, strict=True))
    return [
        r[0]
        for r in conn.execute(
            "SELECT ah.eff_result(a, n, i, o, e) FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], "
            "%s::boolean[]) WITH ORDINALITY AS u (a, n, i, o, e, k) ORDER BY k",
            [list(c) for c in cols],
        )
    ]


def _sql_messages(conn, cases) -> list[str | None]:
    cols = list(zip(*cases, strict=True))
    return [
        r[0]
        for r in conn.execute(
            "SELECT ah.eff_message(a, c, r, t, rt, ro, w) FROM unnest(%s::text[], %s::text[], %s::text[], "
            "%s::text[], %s::text[], %s::text[], %s::boolean[]) WITH ORDINALITY AS u (a, c, r, t, rt, ro, w, k) "
            "ORDER BY k",
            [list(c) for c in cols],
        )
    ]


def test_tool_results_python_equals_sql(corpus_db, corpus_files):  # noqa: F811
    real = {
        (r.agent, r.name, r.input, r.output, r.is_error)
        for _, rows in corpus_files
        for r in rows
        if isinstance(r, ToolCallRow)
    }
    cases = SYNTHETIC_RESULTS + sorted(real, key=repr)
    python = [eff_result(*c) for c in cases]
    with psycopg.connect(corpus_db.dsn) as conn:
        sql = _sql_results(conn, cases)
    diffs = [(c[:3], p, s) for c, p, s in zip(cases, python, sql, strict=True) if p != s]
    assert diffs == []
    assert len(cases) >= 80
    by_agent = {a: {p for c, p in zip(cases, python, strict=True) if c[0] == a} for a in ("claude", "codex", "pi")}
    assert by_agent["claude"] == by_agent["codex"] == {"work", "status", "wait", "event", "noop", "orchestrate"}
    assert by_agent["pi"] == {"work", "status", "wait", "noop", "orchestrate"}  # pi events are messages
    # the real corpus alone: every harness has ordinary work and status looks
    real_triggers = Counter((c[0], p) for c, p in zip(cases, python, strict=True) if c in real)
    # corpus: two `sleep 2` waits for a dev server and two BashOutput polls of a still-running one
    assert real_triggers[("claude", "status")] > 0 and real_triggers[("claude", "wait")] == 4
    assert real_triggers[("pi", "status")] > 0 and real_triggers[("codex", "work")] > 0


def test_messages_python_equals_sql(corpus_db, corpus_files):  # noqa: F811
    real = set()
    for _, rows in corpus_files:
        for r in rows:
            if isinstance(r, MessageRow):
                real.add((r.agent, r.message_class, r.role, r.text, r.record_type, r.record_origin, r.agent_id != ""))
    cases = SYNTHETIC_MESSAGES + sorted(real, key=repr)
    python = [eff_message(*c) for c in cases]
    with psycopg.connect(corpus_db.dsn) as conn:
        sql = _sql_messages(conn, cases)
    assert [(c[:3], p, s) for c, p, s in zip(cases, python, sql, strict=True) if p != s] == []
    by_agent = {a: {p for c, p in zip(cases, python, strict=True) if c[0] == a} for a in ("claude", "codex", "pi")}
    assert by_agent["claude"] == {"user", "agent_msg", "event", None}
    assert by_agent["codex"] == {"user", "agent_msg", None}
    assert by_agent["pi"] == {"user", "event", None}


def test_stored_triggers_equal_python_attribution_on_the_corpus(corpus_db, corpus_files):  # noqa: F811
    expected = {}
    for (agent, _uid, _aid), calls in thread_triggers(corpus_files).items():
        for call_uid, trig in calls:
            expected[(agent, call_uid)] = trig
    with psycopg.connect(corpus_db.dsn) as conn:
        stored = {
            (a, u): t
            for a, u, t in conn.execute(
                "SELECT agent, call_uid, trigger FROM ah.model_call WHERE NOT coalesce(is_api_error, false)"
            )
        }
    assert stored == expected
    assert len(stored) > 1000


def test_thread_states_and_activity_figures_python_equal_sql_on_every_corpus_thread(corpus_db):  # noqa: F811
    """classify.activity.thread_figures (thread states, waits, polls, spawns, gates, CI waits,
    reviews, failures, interventions) ≡ ah.agent_efficiency on every thread of the corpus."""
    from agent_history.telemetry.activity import read_threads

    with psycopg.connect(corpus_db.dsn) as conn:
        threads = {
            sid: (agent, worker)
            for sid, agent, worker in conn.execute(
                "SELECT id, agent, coalesce(is_subagent, agent_id <> '') FROM ah.session"
            )
        }
        python = {sid: figures for sid, (figures, _bad) in read_threads(conn, threads).items()}
        sql: dict[int, Counter] = {sid: Counter() for sid in threads}
        for sid, family, labels, value in conn.execute("SELECT * FROM ah.agent_efficiency()"):
            sql[sid][(family, tuple(sorted(labels.items())))] += value
    diffs = [
        (sid, key, python[sid].get(key), sql[sid].get(key))
        for sid in threads
        for key in set(python[sid]) | set(sql[sid])
        if python[sid].get(key) is None or sql[sid].get(key) is None or abs(python[sid][key] - sql[sid][key]) > 1e-6
    ]
    assert diffs == []
    states = Counter()
    for figures in python.values():
        for (family, labels), v in figures.items():
            if family == "thread_state_seconds":
                states[labels[0][1]] += v
    assert set(states) == {"working", "waiting_tool", "waiting_subagent", "polling", "idle", "waiting_human"}
