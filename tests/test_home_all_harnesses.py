"""Issue 16 end to end: a home with Cursor, Copilot CLI, VS Code Copilot and memory files laid out
in their real directories (built from the corpus samples) indexes through the CLI with no load
error; `status` shows each namespace; edited documents hold exactly their new content."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import repo_sample_homes as repo
from tests import repo_sample_homes_b as repo_b
from tests.new_formats_home import SAMPLES, claude_ai_layout, gemini_layout, opencode_layout

PY = sys.executable

MEMORY = """---
title: Release checklist
project_path: /srv/app
session_id: 0199a-session
date: 2026-03-04
tags: [release, ci]
---

# Release

Bump the version, tag, push; CI publishes.
"""
CLAUDE_TOPIC = """---
name: debugging
description: how this project is debugged
type: project
---

Run `just test -k name` first; the flaky suite is `tests/slow`.
"""
LEGACY_COPILOT = {
    "sessionId": "legacy-1",
    "startTime": "2025-09-01T10:00:00.000Z",
    "chatMessages": [
        {"role": "system", "content": "You are Copilot."},
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "Two files."},
    ],
    "timeline": [],
}


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=300)


def _copy(fmt: str, name: str, dst: Path) -> None:
    src = SAMPLES / fmt / name
    if not src.is_file():
        pytest.skip(f"sample {src} missing")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def build_home(root: Path) -> Path:
    """The samples where each harness writes them (Linux layout for VS Code)."""
    home = root / "home16"
    transcripts = home / ".cursor" / "projects" / "-tmp-repo" / "agent-transcripts"
    for name, rel in {
        "agent-sessions__AgentSessionsTests__Fixtures__Cursor__test-session.jsonl": "test-session.jsonl",
        "agent-sessions__Resources__Fixtures__stage0__agents__cursor__large.jsonl": "large.jsonl",
        "agent-sessions__Resources__Fixtures__stage0__agents__cursor__small.jsonl": "small.jsonl",
        "agent-sessions__Resources__Fixtures__stage0__agents__cursor__subagent__parent.jsonl": "c0ffee/c0ffee.jsonl",
        "agent-sessions__Resources__Fixtures__stage0__agents__cursor__subagent__subagents__child.jsonl": "c0ffee/subagents/kid.jsonl",
        "claude-mem__tests__fixtures__cursor-session.jsonl": "claude-mem.jsonl",
        "code-session-memory__tests__fixtures__cursor-transcript.jsonl": "transcript.jsonl",
    }.items():
        _copy("cursor", name, transcripts / rel)
    state = home / ".copilot" / "session-state"
    for name, rel in {
        "agent-sessions__Resources__Fixtures__stage0__agents__copilot__small.jsonl": "copilot_stage0_small/events.jsonl",
        "agent-sessions__Resources__Fixtures__stage0__agents__copilot__subdir_v1__aaaabbbb-1111-2222-3333-ccccddddeeee__events.jsonl": "aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl",
        "cass__tests__fixtures__copilot__cli_prompt_output_unicode.events.jsonl": "cli-session-001.jsonl",
        "cass__tests__fixtures__copilot__cli_truncated_resume.events.jsonl": "cli-session-truncated.jsonl",
    }.items():
        _copy("copilot-cli", name, state / rel)
    legacy = home / ".copilot" / "history-session-state" / "legacy-1.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps(LEGACY_COPILOT))
    ws = home / ".config" / "Code" / "User" / "workspaceStorage" / "4f1c2a"
    _copy(
        "vscode-copilot",
        "copilot-token-usage__test-data__chatSessions__sample-session-2.json",
        ws / "chatSessions" / "test-session-002.json",
    )
    _copy(
        "vscode-copilot",
        "copilot-token-usage__vscode-extension__test__fixtures__sample-session-data__chatSessions__session-01-today.json",
        ws / "chatSessions" / "today.json",
    )
    _copy(
        "vscode-copilot",
        "code-session-memory__tests__fixtures__vscode-session.jsonl",
        ws / "GitHub.copilot-chat" / "vscode-test-session-001" / "events.jsonl",
    )
    mem = home / ".codex" / "memories"
    (mem / "2026").mkdir(parents=True)
    (mem / "release.md").write_text(MEMORY)
    (mem / "2026" / "notes.md").write_text("# Notes\n\nThe CI cache key includes the lockfile hash.\n")
    (mem / "AGENTS.md").write_text("# Instructions\n\nnot a memory\n")
    (home / ".codex" / "AGENTS.md").write_text("# Global instructions\n")
    cmem = home / ".claude" / "projects" / "-srv-app" / "memory"
    cmem.mkdir(parents=True)
    (cmem / "MEMORY.md").write_text("- [debugging](debugging.md): how this project is debugged\n")
    (cmem / "debugging.md").write_text(CLAUDE_TOPIC)
    (cmem / "CLAUDE.md").write_text("# Project instructions\n")
    gemini_layout(home)  # the issue-16 part-1 harnesses too, so the home holds all eight
    opencode_layout(home)
    repo.build_sample_home(home)  # Cline, Roo Code, Kilo Code, Continue, Amp (fixtures/samples)
    repo_b.build_sample_home_b(home)  # Aider and Crush projects under src/, Goose, Qwen Code, Droid, Kimi, OpenHands
    return home


EXPECTED = {
    # files, sessions, messages, model calls, tokens (input + cache + output), issues
    "cursor-local": ({"ok": 7}, 7, 31, 0, None, {}),
    # bad_value: the small sample's 16 timestamps read "[trimmed for fixture]"
    "copilot-local": ({"ok": 5}, 6, 21, 8, 146, {"bad_value": 16, "invalid_json": 1}),
    "copilot-vscode-local": ({"ok": 3}, 3, 20, 5, 2209, {}),
    "codex-local": ({"ok": 2}, 2, 2, 0, None, {}),
    "claude-local": ({"ok": 2}, 2, 2, 0, None, {}),
    # part 1 (tests/test_source_kinds.py counts these off the samples): Gemini's own token totals;
    # OpenCode storage messages 160 (output 50 + reasoning 10: OpenCode's output excludes
    # reasoning) + 136 (storage step-finish parts give no rows), the part file naming no session
    # is the bad_record; claude.ai records no usage (NULL); Gemini messages include the 4 replies
    # that only call tools (content "": field case E31)
    "gemini-local": ({"ok": 7}, 7, 30, 14, 24597, {}),
    "opencode-local": ({"ok": 16}, 4, 5, 3, 296, {"bad_record": 1}),
    "claude-ai-export": ({"ok": 1}, 2, 4, 1, None, {}),
}


def _expected_repo_samples(home: Path, continue_user2: Path, chatgpt: Path) -> dict:
    """The fixtures/samples harnesses' namespaces: files, sessions, model calls and tokens counted
    from the raw files (tests/repo_sample_homes.py); messages as read off the samples."""
    messages = {
        # real excerpt 5 (task, environment, reminder, reasoning, reply; the tool call has no
        # result there, and results are never messages) + hand-written XML task 16 (4 prompts, 9
        # environment blocks, 1 resumption notice, 1 <thinking>, 1 reply) + 2 UI error notices
        "cline-local": 5 + 16 + 2,
        # parent 11 + 1 subtask report, child 2, deja-vu's 2
        "roo-code-local": 11 + 1 + 2 + 2,
        "kilo-code-local": 5,
        "continue-local": 2 + 3,  # user1: "hi!" + answer; prompt + reasoning + answer
        "continue-user2": 2,
        "amp-local": 5 + 2,  # prompt, thinking, 3 replies; two prompts
        # real: custom instructions, prompt, answer; tree: 2 prompts, 3 answers (one on the
        # abandoned branch), 1 thought (code cells are tool calls, not messages)
        "chatgpt-export": 3 + 6,
    }
    out = {}
    for ns, (files, sessions, calls, tokens) in {
        "cline-local": repo.task_folder_status(repo.home_of("cline", home)),
        "roo-code-local": repo.task_folder_status(repo.home_of("roo-code", home)),
        "kilo-code-local": repo.task_folder_status(repo.home_of("kilo-code", home)),
        "continue-local": repo.continue_status(repo.home_of("continue", home)),
        "continue-user2": repo.continue_status(continue_user2),
        "amp-local": repo.amp_status(repo.home_of("amp", home)),
        "chatgpt-export": repo.chatgpt_status(chatgpt),
    }.items():
        out[ns] = (files, sessions, messages[ns], calls, tokens, {})
    # counted from the raw files by tests/repo_sample_homes_b.py (messages included)
    out["aider-local"] = (*repo_b.aider_status(sorted(home.glob("src/*/.aider.chat.history.md"))), {})
    out["goose-local"] = (*repo_b.goose_status(sorted((repo_b.home_of("goose", home) / "sessions").iterdir())), {})
    out["qwen-code-local"] = (*repo_b.qwen_status(next(repo_b.home_of("qwen-code", home).rglob("*.jsonl"))), {})
    droid = sorted(p for p in (repo_b.home_of("droid", home) / "sessions").rglob("*") if p.is_file())
    out["droid-local"] = (*repo_b.droid_status(droid), {})
    kimi = sorted(p for p in (repo_b.home_of("kimi", home) / "sessions").rglob("*") if p.is_file())
    out["kimi-local"] = (*repo_b.kimi_status(kimi), {})
    out["crush-local"] = (*repo_b.crush_status(home / repo_b.CRUSH_PROJECT / ".crush" / "crush.db"), {})
    openhands = sorted((repo_b.home_of("openhands", home) / "conversations").rglob("*.json"))
    out["openhands-local"] = (*repo_b.openhands_status(openhands), {})
    return out


def _web_status(env: dict) -> str:
    """The HTML of the web UI's status page, from a real `agent-history web` process."""
    import httpx

    proc = subprocess.Popen(
        [PY, "-m", "agent_history", "web", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # "serving http://127.0.0.1:<port>/ …" once the socket is bound
        assert line.startswith("serving "), (line, proc.stderr.read() if proc.poll() is not None else "")
        r = httpx.get(line.split()[1].rstrip("/") + "/status", timeout=60)
        assert r.status_code == 200
        return r.text
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_home_with_the_new_harnesses_indexes_and_status_shows_each(cli_env, db, own_tmp):
    home = build_home(own_tmp)
    export = claude_ai_layout(own_tmp / "export")
    user2 = repo.continue_layout(own_tmp / "user2", "user2")
    chatgpt = repo.chatgpt_export(own_tmp / "chatgpt")
    out = cli(
        "index",
        "--home",
        str(home),
        "--claude-export",
        str(export),
        "--source",
        f"continue-user2={user2}",
        "--source",
        f"chatgpt-export={chatgpt}",
        "--json",
        env=cli_env,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["issues"].get("load_error", 0) == 0 and summary["files_failed"] == 0
    assert summary["skipped_homes"] == [f"pi-local: {home.resolve() / '.pi' / 'agent'} does not exist"]
    status = json.loads(cli("status", "--json", env=cli_env).stdout)
    got = {
        ns: (d["files"], d["sessions"], d["messages"], d["model_calls"], d["tokens"], d["issues"])
        for ns, d in status["namespaces"].items()
    }
    assert got == EXPECTED | _expected_repo_samples(home, user2, chatgpt)
    assert status["last_pass"]["status"] == "ok"
    page = _web_status(cli_env)
    assert all(f">{ns}<" in page for ns in got), [ns for ns in got if f">{ns}<" not in page]
    with db.connect() as conn:
        agents = dict(
            conn.execute("SELECT namespace, string_agg(DISTINCT agent, ',') FROM ah.session GROUP BY 1").fetchall()
        )
        memories = conn.execute(
            "SELECT s.agent, s.custom_title, s.cwd, m.message_class FROM ah.session s JOIN ah.message m ON m.session_id = s.id "
            "WHERE s.source_type = 'memory' ORDER BY 1, 2"
        ).fetchall()
        cursor_tokens = conn.execute(
            "SELECT count(*) FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id WHERE s.agent = 'cursor'"
        ).fetchone()[0]
    assert agents == {
        "cursor-local": "cursor",
        "copilot-local": "copilot",
        "copilot-vscode-local": "copilot-vscode",
        "codex-local": "codex",
        "claude-local": "claude",
        "gemini-local": "gemini",
        "opencode-local": "opencode",
        "claude-ai-export": "claude-ai",
        "cline-local": "cline",
        "roo-code-local": "roo-code",
        "kilo-code-local": "kilo-code",
        "continue-local": "continue",
        "continue-user2": "continue",
        "amp-local": "amp",
        "chatgpt-export": "chatgpt",
        "aider-local": "aider",
        "goose-local": "goose",
        "qwen-code-local": "qwen-code",
        "droid-local": "droid",
        "kimi-local": "kimi",
        "crush-local": "crush",
        "openhands-local": "openhands",
    }
    assert memories == [
        ("claude", "MEMORY", None, "memory"),
        ("claude", "debugging", None, "memory"),
        ("codex", "Notes", None, "memory"),
        ("codex", "Release checklist", "/srv/app", "memory"),
    ]
    assert cursor_tokens == 0  # Cursor records no usage: no model calls, NULL tokens (not 0)

    # unchanged: nothing read; then edit one document (a request removed, one added) and a memory
    again = json.loads(cli("index", "--home", str(home), "--json", env=cli_env).stdout)
    assert (again["bytes_read"], again["files_changed"]) == (0, 0)
    doc_path = (
        home / ".config" / "Code" / "User" / "workspaceStorage" / "4f1c2a" / "chatSessions" / "test-session-002.json"
    )
    doc = json.loads(doc_path.read_text())
    doc["requests"] = doc["requests"][1:] + [
        {
            "requestId": "req-new",
            "message": {"text": "and now?"},
            "response": [{"kind": "markdownContent", "value": "Done."}],
        }
    ]
    doc_path.write_text(json.dumps(doc))
    (home / ".codex" / "memories" / "release.md").write_text(
        MEMORY.replace("CI publishes", "the release job publishes")
    )
    third = json.loads(cli("index", "--home", str(home), "--json", env=cli_env).stdout)
    assert third["files_changed"] == 2 and third["issues"].get("load_error", 0) == 0
    with db.connect() as conn:
        prompts = [
            r[0]
            for r in conn.execute(
                "SELECT m.text FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
                "WHERE s.session_uid = 'test-session-002' AND m.message_class = 'human_prompt' ORDER BY m.byte_offset"
            )
        ]
        memory_text = conn.execute(
            "SELECT m.text FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
            "WHERE s.session_uid = 'memory:memories/release.md'"
        ).fetchall()
    assert prompts == [
        "Add memoization to optimize the recursive version",
        "Add unit tests for the fibonacci function",
        "and now?",
    ]
    assert memory_text == [("# Release\n\nBump the version, tag, push; the release job publishes.",)]


def test_configured_memory_root_is_its_own_namespace(cli_env, own_tmp):
    notes = own_tmp / "notes"
    (notes / "rules").mkdir(parents=True)
    (notes / "deploy.md").write_text("# Deploy\n\nUse the blue/green switch.\n")
    (notes / "rules" / "style.md").write_text("# Style rules\n")  # a rules directory: not a memory
    (notes / "CLAUDE.md").write_text("# instructions\n")
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[memories]\ncodex-notes = "{notes}"\n')
    out = cli("index", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    status = json.loads(cli("status", "--json", env=cli_env).stdout)
    assert {ns: (d["files"], d["sessions"], d["messages"]) for ns, d in status["namespaces"].items()} == {
        "codex-notes": ({"ok": 1}, 1, 1)
    }
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(f'[memories]\nnotes = "{notes}"\n')
    bad = cli("index", env=cli_env)
    assert bad.returncode == 2 and bad.stderr.startswith(
        "error: config [memories] namespace 'notes' must start with one of"
    )


def test_cursor_title_and_model_come_from_state_vscdb(cli_env, db, own_tmp):
    """The composer row of the cass KV-export fixture, written into a real SQLite state.vscdb."""
    import sqlite3

    fixture = json.loads(
        (SAMPLES / "cursor" / "cass__tests__fixtures__cursor__headers_only_workspace_project_dir.json").read_text()
    )
    composer_id = fixture["composer_key"].split(":", 1)[1]
    home = own_tmp / "home-cursor"
    _copy(
        "cursor",
        "claude-mem__tests__fixtures__cursor-session.jsonl",
        home / ".cursor" / "projects" / "p" / "agent-transcripts" / f"{composer_id}.jsonl",
    )
    _copy(
        "cursor",
        "code-session-memory__tests__fixtures__cursor-transcript.jsonl",
        home / ".cursor" / "projects" / "p" / "agent-transcripts" / "no-such-composer.jsonl",
    )
    state = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    if sys.platform == "darwin":
        state = home / "Library" / "Application Support" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    state.parent.mkdir(parents=True)
    with sqlite3.connect(state) as conn:
        conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        conn.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)", (fixture["composer_key"], json.dumps(fixture["composer_data"]))
        )
        for row in fixture["bubble_rows"]:
            conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (row["key"], json.dumps(row["value"])))
    conn.close()
    out = cli("index", "--home", str(home), "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT session_uid, ai_title, model FROM ah.session WHERE agent = 'cursor' ORDER BY 1"
        ).fetchall()
    assert rows == [
        ("comp-fixture-headers", fixture["expected_title"], "claude-3.5-sonnet"),
        ("no-such-composer", None, None),
    ]
