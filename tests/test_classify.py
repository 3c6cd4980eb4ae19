"""The efficiency classifier's pure rules (agent_history.classify): commands, tool results,
messages, attribution, roles and poll share. No database."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from agent_history.classify import Event, attribute, command_trigger, eff_message, eff_result, poll_share, thread_role
from agent_history.classify.threads import thread_triggers
from agent_history.model.merge import fold
from agent_history.parsers import parser_class
from agent_history.parsers.base import ParseContext
from agent_history.parsers.driver import parse_bytes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "efficiency"
sys.path.insert(0, str(FIXTURES))
from make_fixtures import EXPECTED, HOME  # noqa: E402


@pytest.mark.parametrize(
    ("command", "trigger"),
    [
        ("git status", "status"),
        ("cd /repo && git log --oneline -5", "status"),
        ("git -C ../other fetch origin", "status"),
        ("git rev-parse HEAD", "status"),
        ("gh run list --limit 3", "status"),
        ("gh pr checks 12", "status"),
        ("backlog task list --plain", "status"),
        ("ps aux | grep pytest", "status"),
        ("cat runs/loop-3/STATE.md", "status"),
        ("cat > STATE.md <<'EOF'\nstatus: green\nEOF", "work"),
        ("sleep 30", "wait"),
        ("sleep 60 && gh run view 123", "wait"),
        ("until gh run view 1 | grep -q completed; do sleep 10; done", "wait"),
        ("gh run watch 99", "wait"),
        ("gh pr checks 12 --watch", "wait"),
        ("echo done", "noop"),
        ("true", "noop"),
        ("", "noop"),
        ("   ", "noop"),
        (None, "noop"),
        ("echo hi > out.txt", "work"),
        ("git add -A && git commit -m x", "work"),
        ("npm test 2>&1 | tail -5", "work"),
        ("pnpm dev & sleep 2", "work"),
        ("git status && npm test", "work"),
        ("(cd a && git fetch)", "status"),
        ("FOO=1 git log | head", "status"),
        ("git show HEAD", "work"),
        ("done_script.sh", "work"),
    ],
)
def test_command_trigger(command, trigger):
    assert command_trigger(command) == trigger


@pytest.mark.parametrize(
    ("agent", "name", "args", "output", "is_error", "trigger"),
    [
        ("claude", "Bash", {"command": "git status"}, "On branch main", False, "status"),
        ("claude", "Bash", {"command": "pytest -q"}, "3 passed", False, "work"),
        ("claude", "BashOutput", {"bash_id": "dce0af"}, "<status>running</status>", False, "wait"),
        ("claude", "BashOutput", {"bash_id": "dce0af"}, "<status>completed</status>", False, "event"),
        ("claude", "TaskOutput", {"task_id": "x"}, "<retrieval_status>timeout</retrieval_status>", False, "wait"),
        ("claude", "Task", {"prompt": "explore"}, "report", False, "orchestrate"),
        ("claude", "Agent", {"prompt": "explore"}, "Async agent launched", False, "orchestrate"),
        ("claude", "SendMessage", {"to": "lane-2"}, "sent", False, "orchestrate"),
        ("claude", "Read", {"file_path": "/w/docs/STATE.md"}, "state", False, "status"),
        ("claude", "Read", {"file_path": "/w/src/app.py"}, "code", False, "work"),
        ("claude", "Edit", {"file_path": "/w/STATE.md"}, "ok", False, "work"),
        ("codex", "shell", {"command": ["bash", "-lc", "git status"]}, "clean", False, "status"),
        ("codex", "shell", {"command": ["rg", "-n", "foo"]}, "x", False, "work"),
        ("codex", "exec_command", {"cmd": "sleep 120"}, "", False, "wait"),
        ("codex", "write_stdin", {"session_id": 3, "chars": ""}, "Process running with session ID 3", False, "wait"),
        ("codex", "write_stdin", {"session_id": 3, "chars": ""}, "Process exited with code 0", False, "event"),
        ("codex", "write_stdin", {"session_id": 3, "chars": "y\n"}, "ok", False, "work"),
        ("codex", "wait_agent", {"ids": ["a"]}, '{"status": {}, "timed_out": true}', False, "wait"),
        (
            "codex",
            "wait_agent",
            {"ids": ["a"]},
            '{"status": {"a": {"completed": "x"}}, "timed_out": false}',
            False,
            "event",
        ),
        ("codex", "wait", {"ids": ["a"]}, "unknown agent", True, "work"),
        ("codex", "spawn_agent", {"message": "go"}, '{"agent_id": "t2"}', False, "orchestrate"),
        ("codex", "list_agents", {}, "[]", False, "status"),
        ("codex", "update_plan", {"plan": []}, "ok", False, "work"),
        ("pi", "bash", {"command": "git status --short"}, "", False, "status"),
        ("pi", "bash", {"command": "sleep 5"}, "", False, "wait"),
        ("pi", "subagent", {"agent": "scout", "task": "x"}, "done", False, "orchestrate"),
        ("pi", "subagent", {"action": "list"}, "[]", False, "status"),
        ("pi", "read", {"path": "progress.json"}, "{}", False, "status"),
        ("pi", "edit", {"path": "a.ts"}, "ok", False, "work"),
        ("gemini", "run_shell_command", {"command": "git status"}, "", False, "work"),
    ],
)
def test_eff_result(agent, name, args, output, is_error, trigger):
    assert eff_result(agent, name, json.dumps(args), output, is_error) == trigger


def test_shell_input_that_is_not_json_is_the_command_itself():
    assert eff_result("codex", "local_shell", "git status", "", False) == "status"
    assert eff_result("claude", "Bash", None, None, None) == "noop"


@pytest.mark.parametrize(
    ("args", "trigger"),
    [
        (("claude", "human_prompt", "user", "fix it", "user", None, False), "user"),
        (("claude", "queued_prompt", "user", "also docs", "attachment", None, False), "user"),
        (("claude", "subagent_brief", "user", "explore", "user", None, True), "user"),
        (("claude", "agent_message", "user", "next step", "user", None, True), "user"),
        (("claude", "agent_message", "user", "<teammate-message>", "user", None, False), "agent_msg"),
        (("claude", "agent_message", "user", "List files", "user", "task-notification", False), "event"),
        (("claude", "subagent_report", "user", "<task-notification>…<result>", "user", None, False), "agent_msg"),
        (("claude", "subagent_report", "tool", "report", "user", None, False), None),
        (
            ("claude", "context_injection", "user", "<task-notification>\n<status>completed", "user", None, False),
            "event",
        ),
        (("claude", "context_injection", "user", "Caveat: …", "user", None, False), None),
        (("claude", "assistant_text", "assistant", "hi", "assistant", None, False), None),
        (
            ("codex", "agent_message", "user", "<subagent_notification>", "response_item/message", "user", False),
            "agent_msg",
        ),
        (("pi", "subagent_brief", "assistant", "map the repo", "message", "assistant", False), None),
        (("pi", "hook_output", "user", "wake", "custom_message", "loop-watch", False), "event"),
        (("pi", "hook_output", "user", "note", "custom_message", "todo", False), None),
    ],
)
def test_eff_message(args, trigger):
    assert eff_message(*args) == trigger


def test_attribution_follows_position_not_input_order():
    events = [
        Event("call", (0, 300), uid="c3"),
        Event("result", (0, 250), "status", "r2"),
        Event("call", (0, 100), uid="c1"),
        Event("message", (0, 0), "user", "m"),
        Event("call", (0, 200), uid="c2"),
        Event("call", (0, 400), uid="c4"),
        Event("message", (0, 350), None, "text"),  # not a state change
    ]
    assert attribute(events) == {"c1": "user", "c2": "model", "c3": "status", "c4": "model"}


def test_first_call_without_anything_before_is_user():
    assert attribute([Event("call", (1, 5), uid="only")]) == {"only": "user"}


def test_poll_share_is_none_when_nothing_is_classified_and_rounds_to_4_decimals():
    assert poll_share({}) is None
    assert poll_share({"user": 0}) is None
    assert poll_share({"user": 1, "work": 2}) == Decimal("0")
    assert poll_share({"wait": 1, "status": 1, "work": 1}) == Decimal("0.6667")


def test_thread_roles():
    assert thread_role(is_subagent=True, has_children=True) == "worker"
    assert thread_role(is_subagent=False, has_children=True) == "root"
    assert thread_role(is_subagent=False, has_children=False) == "solo"


def _fixture_rows(rewrite=None) -> list[tuple[int, list]]:
    files = []
    for order, path in enumerate(sorted(HOME.rglob("*.jsonl"))):
        text = str(path)
        agent = "claude" if "/.claude/" in text else "codex" if "/.codex/" in text else "pi"
        data = path.read_bytes() if rewrite is None else rewrite(path)
        rows = parse_bytes(parser_class(agent), ParseContext(path=text), data)
        files.append((order, [r for by_key in fold(rows).values() for r in by_key.values()]))
    return files


def test_fixture_transcripts_give_the_expected_trigger_sequences():
    got = {k: [t for _, t in v] for k, v in thread_triggers(_fixture_rows()).items()}
    assert got == EXPECTED


def test_position_decides_not_timestamps():
    """Every tool result's timestamp set to 2000-01-01, and separately all results tied to one
    millisecond: the attribution is the same."""

    def retime(stamp: str):
        def rewrite(path: Path) -> bytes:
            out = []
            for line in path.read_text().splitlines():
                rec = json.loads(line)
                payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
                message = rec.get("message") if isinstance(rec.get("message"), dict) else {}
                content = message.get("content")
                is_result = (
                    payload.get("type") == "function_call_output"
                    or message.get("role") == "toolResult"
                    or (isinstance(content, list) and any(b.get("type") == "tool_result" for b in content))
                )
                if is_result and "timestamp" in rec:
                    rec["timestamp"] = stamp
                out.append(json.dumps(rec))
            return ("\n".join(out) + "\n").encode()

        return rewrite

    expected = thread_triggers(_fixture_rows())
    assert thread_triggers(_fixture_rows(retime("2000-01-01T00:00:00.000Z"))) == expected
    assert thread_triggers(_fixture_rows(retime("2026-01-05T10:00:00.123Z"))) == expected
