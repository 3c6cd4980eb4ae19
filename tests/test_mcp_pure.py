"""Pure pieces of the MCP server and `connect`: no database, no process."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agent_history.connect import edit, note
from agent_history.mcp.remote_commands import Remote, command_of_input, remote_invocations
from agent_history.mcp.render import to_json
from agent_history.mcp.tools.search import group_by_root, session_score
from agent_history.search.request import SearchHit


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ssh deploy@web1.example.net 'systemctl restart app'", [("ssh", "web1.example.net", "deploy")]),
        ("ssh -p 2222 -i ~/.ssh/id_ed25519 web1 uptime", [("ssh", "web1", None)]),
        ("sudo ssh -l root db1 ls /", [("ssh", "db1", "root")]),
        ("timeout 10 ssh -o ConnectTimeout=5 web1 true", [("ssh", "web1", None)]),
        ("ssh ssh://alice@h3:22", [("ssh", "h3", "alice")]),
        ("scp build.tgz web1.example.net:/srv/", [("scp", "web1.example.net", None)]),
        ("scp -P 2222 ops@db2:/var/backups/x.sql .", [("scp", "db2", "ops")]),
        ("rsync -av -e 'ssh -p 2' dist/ deploy@web2:/srv/www/", [("rsync", "web2", "deploy")]),
        ("cd site && rsync -a --exclude .git ./ backup::module", [("rsync", "backup", None)]),
        ("rsync -a rsync://mirror.example.org/pub/ ./pub/", [("rsync", "mirror.example.org", None)]),
        ("sftp ops@files.example.net:/upload", [("sftp", "files.example.net", "ops")]),
        ('bash -lc "ssh ops@db2 df -h | tail -1"', [("ssh", "db2", "ops")]),
        ("ssh a@h1 true && scp f h2:/tmp/", [("ssh", "h1", "a"), ("scp", "h2", None)]),
        ("scp -P 22 a b", []),
        ("cat notes.txt | grep ssh", []),
        ("echo ssh me", []),
        ("ssh -v", []),
        ("git rm -f public/tokenizer", []),
    ],
)
def test_remote_invocations(command, expected):
    assert remote_invocations(command) == [Remote(*e) for e in expected]


def test_command_of_input_reads_claude_codex_and_raw_inputs():
    assert command_of_input('{"command": "ssh h1 ls", "description": "list"}') == "ssh h1 ls"
    assert command_of_input('{"command": ["bash", "-lc", "ssh a@b ls"]}') == "bash -lc 'ssh a@b ls'"
    assert command_of_input('{"cmd": "rsync a h:/b"}') == "rsync a h:/b"
    assert command_of_input("ssh raw") == "ssh raw"


def _hit(uid: str, agent_id: str, score: float, root: str | None = None) -> SearchHit:
    return SearchHit(
        "message",
        1,
        score,
        uid,
        agent_id,
        "claude",
        "claude-local",
        datetime(2026, 1, 1, tzinfo=UTC),
        "assistant_text",
        None,
        None,
        None,
        0,
        1,
        "s",
        root_session_uid=root or uid,
    )


def test_subagent_hits_are_grouped_under_their_root():
    hits = [
        _hit("root-1", "a1", 5.0),
        _hit("root-1", "", 3.0),
        _hit("child-9", "", 2.0, root="root-1"),
        _hit("other", "", 4.0),
    ]
    groups = group_by_root(hits)
    assert [g.root_uid for g in groups] == ["root-1", "other"]
    assert groups[0].threads == {"a1": 1, "main": 1, "child-9": 1}
    assert groups[0].best.agent_id == "a1"


def test_one_strong_session_outranks_many_weak_hits():
    assert session_score([10.0]) > session_score([3.0] * 40)
    assert session_score([10.0, 10.0]) == 15.0


def test_results_over_the_cap_drop_items_and_say_so():
    result = {"scope": {"context": "all"}, "hits": [{"snippet": "x" * 1000} for _ in range(100)]}
    text = to_json(result, max_chars=20_000)
    data = json.loads(text)
    assert len(text) <= 20_000
    assert 0 < len(data["hits"]) < 100
    assert data["truncated"].startswith(f"showing {len(data['hits'])} of 100 hits")


def test_note_section_is_replaced_in_place_and_removed_cleanly():
    original = "# Mine\n\nKeep this.\n"
    once = note.with_section(original, "v1")
    assert once.startswith(original) and "v1" in once
    twice = note.with_section(once + "\nMore of mine.\n", "v2")
    assert "v1" not in twice and "v2" in twice and twice.endswith("More of mine.\n")
    assert note.without_section(once) == original
    assert note.without_section(original) == original


def test_skill_file_has_front_matter_and_owner_mark():
    text = note.skill_text("body")
    assert text.startswith("---\nname: agent-history\ndescription: ")
    assert note.is_ours(text) and not note.is_ours("---\nname: agent-history\n---\n")


def test_json_edits_keep_other_keys_in_order():
    text = json.dumps({"b": 1, "mcpServers": {"x": {"command": "y"}}, "a": 2})
    added = edit.json_set(text, ("mcpServers", "agent-history"), {"command": "/bin/ah"})
    assert list(json.loads(added)) == ["b", "mcpServers", "a"]
    assert list(json.loads(added)["mcpServers"]) == ["x", "agent-history"]
    assert json.loads(edit.json_remove(added, ("mcpServers", "agent-history"))) == json.loads(text)


def test_toml_table_under_an_inline_parent_is_refused():
    with pytest.raises(edit.EditError):
        edit.toml_set('mcp_servers = { x = { command = "y" } }\n', ("mcp_servers", "agent-history"), {"command": "z"})
