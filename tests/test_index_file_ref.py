"""`index --file` (`discovery.file_ref`) names exactly the FileRef discovery gives, for every
source kind: JSONL transcripts (Cursor, Copilot, VS Code), Gemini and OpenCode documents, the
OpenCode database, claude.ai exports, Copilot legacy / VS Code chat documents and memories.
Pure over a home built from the corpus samples (no database), plus one CLI round trip."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_history.ingest.discovery import Source, agent_of_namespace, file_ref, home_layout, iter_files
from tests.new_formats_home import claude_ai_layout
from tests.test_home_all_harnesses import build_home


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return build_home(tmp_path_factory.mktemp("gaps-file-ref"))


def _sources(home):
    sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
    export = claude_ai_layout(home / "export")
    return [
        *sources,
        Source("claude-ai-export", "claude-ai", export),
        Source("codex-notes", "codex", home / "notes", memory_root=True),
    ]


def test_file_ref_equals_what_discovery_yields_for_every_file(home):
    notes = home / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "deploy.md").write_text("# Deploy\n\nblue/green\n")
    sources = _sources(home)
    refs = [ref for source in sources for ref in iter_files(source)]
    kinds = {(r.source.agent, r.kind, r.doc_kind) for r in refs}
    assert kinds >= {
        ("cursor", "jsonl", None),
        ("copilot", "jsonl", None),
        ("copilot-vscode", "jsonl", None),
        ("gemini", "jsonl", None),
        ("gemini", "document", None),
        ("opencode", "document", None),
        ("claude-ai", "document", None),
        ("copilot", "document", "copilot-legacy"),
        ("copilot-vscode", "document", "copilot-vscode-chat"),
        ("codex", "document", "memory"),
        ("claude", "document", "memory"),
    }
    assert [file_ref(sources, r.path) for r in refs] == refs
    assert {r.role for r in refs if r.source.agent == "cursor"} == {"main", "subagent"}


def test_file_ref_refuses_what_discovery_passes_over(home):
    sources = _sources(home)
    for rel in (
        ".codex/memories/AGENTS.md",  # an instruction file, not a memory
        ".claude/projects/-srv-app/memory/CLAUDE.md",
        ".codex/AGENTS.md",  # outside memories/
        "export/users.json",  # beside conversations.json, not it
    ):
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text("[]")
        assert file_ref(sources, path) is None, rel
    assert file_ref(sources, home / "no-such.jsonl") is None


def test_index_file_loads_a_gemini_document(home, cli_env):
    chat = next(r.path for r in iter_files(Source("gemini-local", "gemini", home / ".gemini")) if r.kind == "document")
    out = subprocess.run(
        [sys.executable, "-m", "agent_history", "index", "--home", str(home), "--file", chat, "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert (summary["files_scanned"], summary["files_changed"], summary["files_failed"]) == (1, 1, 0), summary
    assert summary["rows_new"] == {"session": 1, "turn": 1, "message": 3, "model_call": 1, "record_type_seen": 3}
