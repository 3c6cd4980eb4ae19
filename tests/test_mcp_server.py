"""The MCP server over stdio against a catalogue indexed from ../shared/corpus/home plus a small
synthetic "ops" home (a Claude Code session, happening now, that runs ssh/rsync/scp).

One catalogue is built per module (indexing takes seconds); every test starts its own server
process with the SDK's stdio client and asserts values that are in the transcripts.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import Loader
from tests.conftest import TestDatabase, clone_database, drop_database
from tests.mcp_client import call, call_tools, server_env

OPS_SESSION = "5b0e7c1e-0b6f-4f1e-9d55-0a11ce0ff1ce"
TOOLS = {
    "search", "find_sessions", "search_summaries", "session", "why", "touched", "active_sessions", "infra_actions", "loops", "task", "blame", "schema", "sql",
    "efficiency", "thread_recall", "recent_sessions", "index_stats", "sessions", "usage",
}  # fmt: skip
SUBAGENT_ROOT = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"  # corpus: a Claude session with an Explore sub-agent


def _ops_lines(now: datetime) -> list[dict]:
    """A Claude Code transcript: a prompt, three Bash tool calls against hosts, a reply; minutes ago."""
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/srv/ops",
        "sessionId": OPS_SESSION,
        "version": "2.0.28",
        "gitBranch": "main",
    }
    lines, parent = [], None

    def add(offset_s: int, kind: str, message: dict, **extra) -> None:
        nonlocal parent
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"ops-{len(lines)}"))
        ts = (now - timedelta(seconds=offset_s)).isoformat().replace("+00:00", "Z")
        lines.append(
            {**base, "parentUuid": parent, "type": kind, "message": message, "uuid": uid, "timestamp": ts, **extra}
        )
        parent = uid

    def tool_use(i: int, offset_s: int, command: str) -> None:
        add(
            offset_s,
            "assistant",
            {
                "model": "claude-sonnet-4-5-20250929",
                "id": f"msg_ops_{i}",
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_ops_{i}", "name": "Bash", "input": {"command": command}}
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
            requestId=f"req_ops_{i}",
        )
        add(
            offset_s - 5,
            "user",
            {"role": "user", "content": [{"tool_use_id": f"toolu_ops_{i}", "type": "tool_result", "content": "done"}]},
            toolUseResult={"stdout": "done", "stderr": "", "interrupted": False},
        )

    add(600, "user", {"role": "user", "content": "Restart the app on web1 and ship the new build"})
    tool_use(1, 590, "ssh deploy@web1.example.net 'sudo systemctl restart app'")
    tool_use(2, 560, "rsync -av -e 'ssh -p 2222' dist/ deploy@web1.example.net:/srv/www/")
    tool_use(3, 530, "scp backup.sql ops@db2.example.net:/var/backups/")
    add(
        500,
        "assistant",
        {
            "model": "claude-sonnet-4-5-20250929",
            "id": "msg_ops_done",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "Restarted the app on web1 and synced the build."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 12},
        },
        requestId="req_ops_done",
    )
    return lines


@pytest.fixture(scope="module")
def catalogue(pg_server, corpus_template, tmp_path_factory):
    """A database with the corpus (claude-local, codex-local, pi-local; a clone of the session's
    corpus catalogue) and the ops home (claude-ops) indexed on top."""
    ops_home = tmp_path_factory.mktemp("ops-home")
    project = ops_home / ".claude" / "projects" / "-srv-ops"
    project.mkdir(parents=True)
    (project / f"{OPS_SESSION}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in _ops_lines(datetime.now(UTC)))
    )
    db = clone_database(pg_server, corpus_template, "t_mcp")
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = Loader(conn).run([Source("claude-ops", "claude", ops_home / ".claude")])
    assert summary.files_failed == 0 and summary.files_changed == 1
    yield db
    drop_database(db)


@pytest.fixture
def env(catalogue, own_tmp):
    (own_tmp / "config.toml").write_text('[contexts]\nops = ["claude-ops"]\ncorpus = ["claude-local", "codex-local"]\n')
    return server_env(catalogue.dsn, catalogue.reader_dsn, own_tmp)


def owner_rows(db: TestDatabase, query: str, *params) -> list[tuple]:
    with db.connect() as conn:
        return conn.execute(query, params).fetchall()


def test_lists_every_tool_with_a_json_schema_and_read_only_hint(env):
    tools, _ = call_tools(env, [])
    assert {t.name for t in tools} == TOOLS
    by_name = {t.name: t for t in tools}
    for tool in tools:
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.annotations.read_only_hint is True
    assert by_name["search"].input_schema["required"] == ["query"]
    assert by_name["search"].input_schema["properties"]["in"]["enum"] == ["messages", "tools", "all"]
    # no schema pattern: `read.requests.why_request` refuses a bad sha in the CLI's and the web's words
    # (tests/test_front_end_parity.py)
    assert "pattern" not in by_name["why"].input_schema["properties"]["sha"]
    assert "context" in by_name["touched"].input_schema["properties"]
    assert "context" not in by_name["sql"].input_schema["properties"]


def test_search_finds_the_corpus_message_with_provenance_and_names_the_scope(env):
    data = call(env, "search", {"query": "tokenizer submodule", "limit": 3}).data
    assert data["scope"] == {"context": "all", "namespaces": ["claude-local", "claude-ops", "codex-local", "pi-local"]}
    top = data["hits"][0]
    assert top["session_uid"] == "9e953218-585f-4692-89df-9e0747a31c68"
    assert top["namespace"] == "claude-local" and top["agent"] == "claude"
    assert top["source_path"].endswith("9e953218-585f-4692-89df-9e0747a31c68.jsonl")
    assert isinstance(top["byte_offset"], int)
    assert top["cite"] == f"{top['session_uid']} {top['source_path']}@{top['byte_offset']}"
    assert "submodule" in top["snippet"].lower()


def test_search_in_tools_finds_the_command_and_a_context_limits_the_scope(env):
    data = call(env, "search", {"query": "systemctl restart", "in": "tools", "context": "ops"}).data
    assert data["scope"] == {"context": "ops", "namespaces": ["claude-ops"]}
    assert data["hits"] and {h["session_uid"] for h in data["hits"]} == {OPS_SESSION}
    assert data["hits"][0]["label"] == "Bash"


def test_an_unknown_context_is_an_error_listing_the_known_ones(env):
    result = call(env, "search", {"query": "anything", "context": "nope"})
    assert result.is_error
    assert "unknown context 'nope'" in result.text and "corpus, ops" in result.text


def test_invalid_arguments_are_refused_with_the_schema_message(env):
    _, (bad_in, missing) = call_tools(env, [("search", {"query": "x", "in": "files"}), ("why", {})])
    assert bad_in.is_error and "invalid in for search" in bad_in.text
    assert missing.is_error and "'sha' is a required property" in missing.text


def test_hybrid_mode_without_embeddings_answers_keyword_with_a_note(env):
    data = call(env, "search", {"query": "tokenizer submodule", "mode": "hybrid", "limit": 1}).data
    assert data["hits"]
    if data["mode"] == "keyword":
        assert "keyword" in data["note"]


def test_find_sessions_groups_subagent_hits_under_the_root_to_resume(env):
    data = call(env, "find_sessions", {"query": "comprehensive overview code organization claude-code-log"}).data
    top = data["sessions"][0]
    assert top["session_uid"] == SUBAGENT_ROOT
    assert top["subagent_matches"] > 0 and "a2271d1" in top["threads"]
    assert top["resume"] == {
        "session_uid": SUBAGENT_ROOT,
        "agent": "claude",
        "cwd": top["cwd"],
        "cwd_exists": os.path.isdir(top["cwd"]),
        "command": f"claude --resume {SUBAGENT_ROOT}",
        "fork_command": f"claude --resume {SUBAGENT_ROOT} --fork-session",
    }
    assert top["matches"] == sum(top["threads"].values())


def test_session_returns_a_numbered_slice_and_where_to_continue(env, catalogue):
    uid = "5ed31c36-bca8-40fd-8d24-f1a1f0af7901"
    data = call(env, "session", {"uid": uid, "from": 2, "to": 4}).data
    assert data["session"]["session_uid"] == uid
    assert [e["seq"] for e in data["events"]] == [2, 3, 4]
    assert data["total"] > 4 and data["next_from"] == 5
    assert data["events"][0]["kind"] in {"message", "tool_call"}


def test_why_on_a_corpus_commit_returns_its_session(env, catalogue):
    sha, session_uid = owner_rows(
        catalogue,
        """
        SELECT g.sha, s.session_uid FROM ah.git_event g JOIN ah.session s ON s.id = g.session_id
        WHERE g.op = 'commit' AND g.sha IS NOT NULL ORDER BY g.id LIMIT 1""",
    )[0]
    data = call(env, "why", {"sha": sha}).data
    assert data["origins"], data
    commit = data["origins"][0]
    assert commit["op"] == "commit" and commit["sha"] == sha
    assert commit["session"]["session_uid"] == session_uid
    assert commit["subject"]


def test_touched_finds_the_sessions_that_edited_a_file(env, catalogue):
    expected = {
        r[0]
        for r in owner_rows(
            catalogue,
            """
        SELECT DISTINCT s.session_uid FROM ah.file_touch f JOIN ah.session s ON s.id = f.session_id
        WHERE f.path LIKE '%%/src/App.tsx' AND f.op = 'edit'""",
        )
    }
    assert expected
    data = call(env, "touched", {"pattern": "src/App.tsx", "ops": ["edit"]}).data
    assert {s["session"]["session_uid"] for s in data["sessions"]} == expected
    assert all(s["ops"].get("edit") for s in data["sessions"])


def test_active_sessions_sees_the_ops_session_running_now(env):
    data = call(env, "active_sessions", {"minutes": 30}).data
    ops = [s for s in data["sessions"] if s["session_uid"] == OPS_SESSION]
    assert ops and ops[0]["namespace"] == "claude-ops"
    assert ops[0]["last_prompt"] == "Restart the app on web1 and ship the new build"
    assert ops[0]["events_in_window"] >= 2
    assert all(s["session_uid"] != "9e953218-585f-4692-89df-9e0747a31c68" for s in data["sessions"])


def test_active_sessions_at_a_past_time(env):
    data = call(env, "active_sessions", {"minutes": 15, "at": "2025-10-04T12:40:00Z"}).data
    assert [s["session_uid"] for s in data["sessions"]] == ["9e953218-585f-4692-89df-9e0747a31c68"]
    assert data["window"]["minutes"] == 15


def test_infra_actions_lists_commands_run_against_a_host(env):
    data = call(env, "infra_actions", {"host": "web1", "since": "1d"}).data
    assert [a["remotes"][0]["program"] for a in data["actions"]] == ["rsync", "ssh"]  # newest first
    assert {(r["host"], r["user"]) for a in data["actions"] for r in a["remotes"]} == {("web1.example.net", "deploy")}
    assert data["hosts"] == {"web1.example.net": 2}
    assert all(a["session_uid"] == OPS_SESSION and a["cite"].startswith(OPS_SESSION) for a in data["actions"])
    every_host = call(env, "infra_actions", {"since": "1d"}).data
    assert every_host["hosts"] == {"web1.example.net": 2, "db2.example.net": 1}


def test_schema_lists_tables_columns_and_functions(env):
    data = call(env, "schema", {}).data
    tables = {t["name"]: t for t in data["tables"]}
    assert "session_uid text!" in tables["ah.session"]["columns"]
    assert "byte_offset bigint" in tables["ah.message"]["columns"]
    assert any(f["name"] == "ah.utf8_sha256" for f in data["functions"])
    detail = call(env, "schema", {"table": "git_event"}).data["tables"][0]
    assert {"name": "sha", "type": "text"} in detail["columns"]
    assert any("git_event_sha_idx" in i for i in detail["indexes"])


def test_sql_reads_the_catalogue_as_the_reader(env, catalogue):
    expected = owner_rows(catalogue, "SELECT count(*) FROM ah.session")[0][0]
    data = call(env, "sql", {"statement": "SELECT count(*) AS n, current_user AS who FROM ah.session"}).data
    assert data["rows"] == [[expected, "ah_reader"]]


def test_a_large_result_is_capped_and_says_so(env):
    text = call(env, "search", {"query": "the file code error test", "in": "all", "limit": 50}).text
    assert len(text) <= 30_000
    data = json.loads(text)
    assert len(data["hits"]) == 50 or "truncated" in data


def test_the_mcp_command_is_on_the_cli():
    from typer.testing import CliRunner

    from agent_history.cli.app import _register, app

    _register()
    result = CliRunner().invoke(app, ["mcp", "--help"])
    assert result.exit_code == 0 and "Usage: agent-history mcp" in result.output


def test_times_out_of_range_are_one_line_errors_naming_the_argument(env, capfd):
    # issue 10: the tools answered "date value out of range" without context and logged a traceback
    relative = "a relative time reaches back at most 100 years (36525d, 876600h or 5217w)"
    _, results = call_tools(
        env,
        [
            ("search", {"query": "build", "since": "1000000d"}),
            ("find_sessions", {"query": "build", "until": "9999-12-31"}),
            ("touched", {"pattern": "*", "since": "1000000000h"}),
            ("infra_actions", {"since": "1000000d"}),
            ("active_sessions", {"at": "0001-01-02", "minutes": 43_200}),
        ],
    )
    assert [(r.is_error, r.text) for r in results] == [
        (True, f"since 1000000d is out of range: {relative}"),
        (True, "until 9999-12-31 is out of range: dates and timestamps go from 0001-01-02 to 9999-12-30"),
        (True, f"since 1000000000h is out of range: {relative}"),
        (True, f"since 1000000d is out of range: {relative}"),
        (True, "at 0001-01-02 is out of range: the window would start before 0001-01-01"),
    ]
    assert "Traceback" not in capfd.readouterr().err


def test_a_context_naming_a_namespace_without_files_says_so_in_the_scope(env):
    # issue 10: a context naming an unknown namespace just found nothing
    Path(env["AGENT_HISTORY_CONFIG"]).write_text('[contexts]\ntypo = ["claude-local", "codex-wrok"]\n')
    data = call(env, "search", {"query": "tokenizer submodule", "context": "typo", "limit": 1}).data
    assert data["scope"] == {
        "context": "typo",
        "namespaces": ["claude-local", "codex-wrok"],
        "warning": "no files in the catalogue for namespace 'codex-wrok'",
    }
    assert data["hits"][0]["session_uid"] == "9e953218-585f-4692-89df-9e0747a31c68"


def test_agent_arguments_take_the_product_names_the_cli_takes(env):
    _, (by_product, by_harness, recall, bad) = call_tools(
        env,
        [
            ("search", {"query": "tokenizer submodule", "limit": 3, "agents": ["claude-code"]}),
            ("search", {"query": "tokenizer submodule", "limit": 3, "agents": ["claude"]}),
            ("recent_sessions", {"agent": "claude-code", "n": 50}),
            ("search", {"query": "x", "agents": ["claude-desktop"]}),
        ],
    )
    assert not by_product.is_error and by_product.data["hits"] == by_harness.data["hits"]
    assert {h["agent"] for h in by_product.data["hits"]} == {"claude"}
    assert not recall.is_error, recall.text
    assert recall.data["sessions"] and {s["agent"] for s in recall.data["sessions"]} == {"claude"}
    assert bad.is_error and "claude-desktop" in bad.text
