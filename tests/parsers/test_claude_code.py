"""Claude Code parser: every corpus/home transcript, every sample, and the format rules one by one."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import orjson
import pytest

from agent_history.model import classes
from agent_history.model.merge import fold
from agent_history.model.rows import (
    CompactionRow,
    FileTouchRow,
    GitEventRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Pos
from agent_history.parsers.claude_code.parser import MAX_SEEN_UUIDS, PARSER, SEEN_DIGEST_BYTES, uuid_digest
from agent_history.parsers.claude_code.tools import MAX_PENDING
from agent_history.parsers.common.lines import iter_lines
from agent_history.parsers.driver import parse_bytes
from tests.parsers.util import parse_file, parse_in_batches, parse_resumed, rows_of

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
PROJECTS = CORPUS / "home" / ".claude" / "projects"
SAMPLES = CORPUS / "samples" / "claude-code"

# (file under projects/, records, sessions, messages, prompts, model calls, tool calls,
#  tokens (input_uncached, cache_read, cache_write_5m, cache_write_1h, output)).
# Prompt and message classes of every file were reviewed by hand.
CORPUS_COUNTS = [
    ("-Users-user1-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl", 211, 1, 59, 5, 36, 71, (1804, 1502915, 182937, 0, 20797)),
    ("-Users-user1-workspace-JSSoundRecorder/agent-3430b97e.jsonl", 1, 1, 1, 0, 1, 0, (3, 0, 1135, 0, 166)),
    ("-Users-user1-workspace-claude-code-log-sample/07f2e15c-a38b-454b-9148-60edc06de401.jsonl", 57, 1, 17, 1, 20, 20, (48, 691169, 48669, 0, 328)),
    ("-Users-user1-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl", 68, 1, 40, 4, 15, 14, (138, 348985, 85100, 0, 5057)),
    ("-Users-user1-workspace-claude-code-log-sample/12a546d1-83a7-49a6-abba-5400db340b43.jsonl", 113, 1, 43, 1, 36, 35, (206, 1167066, 29126, 0, 6064)),
    ("-Users-user1-workspace-claude-code-log-sample/326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl", 54, 1, 26, 1, 15, 14, (43, 299222, 25577, 0, 487)),
    ("-Users-user1-workspace-claude-code-log-sample/4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl", 1, 1, 1, 0, 0, 0, (0, 0, 0, 0, 0)),
    ("-Users-user1-workspace-claude-code-log-sample/4fe49c7c-ff82-4ac7-b3f2-79c22036bd58.jsonl", 0, 0, 0, 0, 0, 0, (0, 0, 0, 0, 0)),
    ("-Users-user1-workspace-claude-code-log-sample/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl", 15, 1, 11, 1, 3, 2, (14, 36713, 19749, 0, 643)),
    ("-Users-user1-workspace-claude-code-log-sample/agent-41be4aa9.jsonl", 2, 1, 2, 0, 1, 0, (3, 3810, 0, 0, 133)),
    ("-Users-user1-workspace-claude-code-log-sample/b45ad5d8-81fb-4bcb-baba-19d9f503d731.jsonl", 28, 1, 12, 1, 9, 8, (57, 226035, 34345, 0, 1931)),
    ("-Users-user1-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl", 111, 1, 47, 2, 34, 32, (279, 1164952, 83966, 0, 2201)),
    ("-Users-user1-workspace-coderabbit-review-helper/agent-659acfed.jsonl", 1, 1, 1, 0, 1, 0, (1400, 0, 0, 0, 1)),
    ("-Users-user1-workspace-coderabbit-review-helper/agent-668b5ac2.jsonl", 20, 1, 6, 0, 5, 7, (68, 101298, 39024, 0, 2143)),
    ("-Users-user1-workspace-example-site-dev-next/3680252d-d4e3-4416-bddd-8f5b5b4fdb7f.jsonl", 6, 1, 6, 0, 0, 0, (0, 0, 0, 0, 0)),
    ("-Users-user1-workspace-example-site-dev-next/5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl", 12, 1, 5, 1, 3, 4, (43, 44742, 4330, 0, 3)),
    ("-Users-user1-workspace-example-site-dev-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl", 248, 1, 71, 11, 101, 92, (419, 4775345, 330302, 0, 3195)),
    ("-Users-user1-workspace-example-site-dev-next/agent-3ea04571.jsonl", 2, 1, 2, 0, 1, 0, (1366, 0, 0, 0, 146)),
    ("-Users-user1-workspace-example-site-dev-next/b25638d7-b104-4f06-a797-70ac33d069ed.jsonl", 46, 1, 12, 1, 18, 17, (64, 371268, 23631, 0, 759)),
    ("-Users-user4-proj/c097049f-347e-4312-8542-ed2489378a8b.jsonl", 10, 1, 4, 2, 3, 1, (7, 48518, 14307, 0, 3)),
    ("-Users-user9-work-app/0fae0449-64d3-4788-8622-d3a47d82c14b.jsonl", 460, 1, 156, 21, 170, 152, (360, 66925567, 2395354, 0, 22976)),
    ("-Users-user9-work-app/67a8478e-78dc-44ab-82ea-f65c8ead85f6.jsonl", 7, 1, 5, 2, 3, 1, (14, 76406, 483, 0, 3)),
    ("-Users-user9-work-app/982581eb-41b9-46da-86c1-ac34168117a8.jsonl", 3, 1, 3, 1, 1, 0, (4, 16999, 0, 0, 1)),
    ("-Users-user9-work-app/medium-conversation.jsonl", 23, 1, 1, 0, 0, 0, (0, 0, 0, 0, 0)),
    ("-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl", 61, 1, 24, 7, 9, 2, (23, 239606, 0, 9036, 88)),
    ("-experiments-ideas/a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl", 4, 0, 0, 0, 0, 0, (0, 0, 0, 0, 0)),
    ("-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl", 59, 1, 11, 0, 10, 24, (4466, 236968, 42768, 0, 18)),
    ("-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl", 6, 2, 3, 1, 2, 1, (2, 36009, 7996, 0, 2)),
    ("-src-experiments-claude_p/94604a7b-062f-4369-bdf0-da948381c3e5.jsonl", 4, 1, 2, 1, 1, 0, (2, 13794, 6198, 0, 1)),
]  # fmt: skip

SAMPLE_UNKNOWN_TYPES = {
    "agent-sessions__Resources__Fixtures__stage0__agents__claude__schema_drift.jsonl": {
        "tool_use": 1,
        "tool_result": 1,
    },
    "ccusage__apps__ccusage__test__fixtures__claude__projects__project-alpha__session-alpha__chat.jsonl": {"": 3},
    "iansherr-claude-code-log__test__test_data__edge_cases.jsonl": {"": 1},
}
"""Record types the samples hold that Claude Code never wrote (hand-written drift, other tools)."""


def corpus_files() -> list[Path]:
    return sorted(PROJECTS.rglob("*.jsonl")) if PROJECTS.exists() else []


def sample_files() -> list[Path]:
    return sorted(SAMPLES.glob("*.jsonl")) if SAMPLES.exists() else []


def _id(p: Path) -> str:
    return str(p.relative_to(PROJECTS)) if PROJECTS in p.parents else p.name


def sample_ctx_path(p: Path) -> str:
    """Sample names flatten the original path with ``__``; rebuild it under a projects dir."""
    return "/home/user/.claude/projects/" + p.name.replace("__", "/")


def parse_records(records: list, path: str = "/home/user/.claude/projects/-p/sess-1.jsonl") -> dict:
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    return fold(parse_bytes(PARSER, ParseContext(path=path), data))


def user(uuid: str, content, parent: str | None = None, **extra) -> dict:
    rec = {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "sess-1", "cwd": "/w"}
    rec.update(timestamp="2025-10-14T10:00:00.000Z", message={"role": "user", "content": content}, **extra)
    return rec


def assistant(uuid: str, blocks: list, msg_id: str = "msg_1", usage: dict | None = None, **extra) -> dict:
    msg = {"id": msg_id, "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks, "stop_reason": None}
    msg["usage"] = usage or {"input_tokens": 1, "output_tokens": 2}
    rec = {"type": "assistant", "uuid": uuid, "parentUuid": None, "sessionId": "sess-1", "message": msg}
    rec.update(timestamp="2025-10-14T10:00:01.000Z", **extra)
    return rec


def tool_use(tid: str, name: str, **inp) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def tool_result(tid: str, content, is_error: bool = False) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}


# -- corpus/home -------------------------------------------------------------------------------


def test_corpus_table_covers_every_claude_file() -> None:
    if not PROJECTS.exists():
        pytest.skip(f"{PROJECTS} is absent")
    assert sorted(_id(p) for p in corpus_files()) == sorted(row[0] for row in CORPUS_COUNTS)


@pytest.mark.parametrize("row", CORPUS_COUNTS, ids=[r[0].rsplit("/", 1)[-1] for r in CORPUS_COUNTS])
def test_corpus_file_counts(corpus_home: Path, row: tuple) -> None:
    name, records, sessions, msgs, prompts, calls, tools, toks = row
    f = parse_file(PARSER, PROJECTS / name)
    got_msgs = rows_of(f, MessageRow)
    got_calls = rows_of(f, ModelCallRow)
    buckets = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output")
    assert (
        sum(r.count for r in rows_of(f, RecordTypeRow)),
        len(rows_of(f, SessionRow)),
        len(got_msgs),
        sum(m.message_class in classes.PROMPTS for m in got_msgs),
        len(got_calls),
        len(rows_of(f, ToolCallRow)),
        tuple(sum(getattr(c, b) or 0 for c in got_calls) for b in buckets),
    ) == (records, sessions, msgs, prompts, calls, tools, toks)


@pytest.mark.parametrize("path", corpus_files(), ids=_id)
def test_corpus_file_has_no_unknown_record_types_and_no_issues(path: Path) -> None:
    f = parse_file(PARSER, path)
    assert [r.record_type for r in rows_of(f, RecordTypeRow) if not r.known] == []
    assert [(i.kind, i.line_number, i.detail) for i in rows_of(f, ParseIssueRow)] == []


def independent_session_tokens(path: Path) -> dict[tuple[str, str], list[int]]:
    """Per (sessionId, agent id): distinct message.id → its last line's usage, <synthetic> excluded."""
    last: dict[str, tuple] = {}
    path_agent = path.stem[len("agent-") :] if path.stem.startswith("agent-") else ""
    for line in path.read_bytes().splitlines():
        r = json.loads(line)
        m = r.get("message") or {}
        if r.get("type") != "assistant" or m.get("model") == "<synthetic>" or r.get("isApiErrorMessage"):
            continue
        u = m.get("usage") or {}
        last[m["id"]] = (r["sessionId"], path_agent, u)
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for sid, agent, u in last.values():
        t = totals[(sid, agent)]
        t[0] += u.get("input_tokens") or 0
        t[1] += u.get("cache_read_input_tokens") or 0
        t[2] += u.get("cache_creation_input_tokens") or 0
        t[3] += u.get("output_tokens") or 0
    return dict(totals)


@pytest.mark.parametrize("path", corpus_files(), ids=_id)
def test_corpus_session_tokens_match_an_independent_count_by_response_id(path: Path) -> None:
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for c in rows_of(parse_file(PARSER, path), ModelCallRow):
        t = totals[(c.session_uid, c.agent_id)]
        t[0] += c.input_uncached or 0
        t[1] += c.cache_read or 0
        t[2] += (c.cache_write_5m or 0) + (c.cache_write_1h or 0)
        t[3] += c.output or 0
    assert dict(totals) == independent_session_tokens(path)


@pytest.mark.parametrize("path", corpus_files(), ids=_id)
def test_corpus_file_parses_the_same_whole_batched_and_resumed(path: Path) -> None:
    data = path.read_bytes()
    ctx = ParseContext(path=str(path), namespace="test")
    whole = parse_file(PARSER, path)
    for batch in (1, 2, 3, 7):
        assert parse_in_batches(PARSER, data, batch, ctx) == whole, f"batches of {batch}"
    n = len(list(iter_lines(data)))
    assert parse_resumed(PARSER, data, [n // 4, n // 2, (3 * n) // 4], ctx) == whole


def test_corpus_task_result_links_the_subagent_transcript(corpus_home: Path) -> None:
    f = parse_file(PARSER, PROJECTS / "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl")
    (spawn,) = rows_of(f, SubagentSpawnRow)
    assert (spawn.spawn_uid, spawn.subagent_type, spawn.child_session_uid, spawn.child_agent_id) == (
        "toolu_01SXaWzD5YZ73zGwchbcxeWi",
        "Explore",
        "29ccd257-68b1-427f-ae5f-6524b7cb6f20",
        "a2271d1",
    )
    parent_view = {(r.session_uid, r.agent_id): r for r in rows_of(f, SessionRow)}[(spawn.child_session_uid, "a2271d1")]
    assert (parent_view.is_subagent, parent_view.spawn_uid, parent_view.subagent_type, parent_view.parent_agent_id) == (
        True,
        "toolu_01SXaWzD5YZ73zGwchbcxeWi",
        "Explore",
        "",
    )
    child = parse_file(
        PARSER,
        PROJECTS / "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl",
    )
    assert [(s.session_uid, s.agent_id) for s in rows_of(child, SessionRow)] == [(spawn.child_session_uid, "a2271d1")]
    brief = next(m for m in rows_of(child, MessageRow) if m.message_class == classes.SUBAGENT_BRIEF)
    assert brief.text == spawn.brief
    (report,) = [m for m in rows_of(f, MessageRow) if m.message_class == classes.SUBAGENT_REPORT]
    assert (report.role, report.line_number) == ("tool", 5)
    assert report.text.startswith("Perfect! Now I have a comprehensive understanding.")


def test_corpus_copied_record_of_a_resumed_session_keeps_its_first_session(corpus_home: Path) -> None:
    d = PROJECTS / "-Users-user1-workspace-claude-code-log-sample"
    rows = []
    for name in ("b45ad5d8-81fb-4bcb-baba-19d9f503d731.jsonl", "71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl"):
        rows += parse_bytes(PARSER, ParseContext(path=str(d / name)), (d / name).read_bytes())
    copied = fold(rows)[MessageRow][("claude", "cc67b20e-4350-4a71-bc4f-8b64f2adb806")]
    assert copied.session_uid == "b45ad5d8-81fb-4bcb-baba-19d9f503d731"


def test_corpus_git_commits_and_pushes_are_seen_in_bash_output(corpus_home: Path) -> None:
    f = parse_file(PARSER, PROJECTS / "-Users-user9-work-app/0fae0449-64d3-4788-8622-d3a47d82c14b.jsonl")
    ops = Counter(g.op for g in rows_of(f, GitEventRow))
    assert ops == Counter({"commit": 15, "push": 11})
    push = next(g for g in rows_of(f, GitEventRow) if g.op == "push")
    assert (push.old_sha, push.sha, push.branch) == ("98b484b", "04ef02a", "streaming")


# -- corpus/samples -------------------------------------------------------------------------


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name[:60])
def test_sample_parses_and_counts_its_unknown_record_types(path: Path) -> None:
    f = parse_file(PARSER, path, ctx_path=sample_ctx_path(path))
    unknown = Counter()
    for r in rows_of(f, RecordTypeRow):
        if not r.known:
            unknown[r.record_type] += r.count
    assert dict(unknown) == SAMPLE_UNKNOWN_TYPES.get(path.name, {})
    assert sum(i.kind == "unknown_record_type" for i in rows_of(f, ParseIssueRow)) == sum(unknown.values())


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name[:60])
def test_sample_parses_the_same_in_batches(path: Path) -> None:
    ctx = ParseContext(path=sample_ctx_path(path), namespace="test")
    whole = parse_file(PARSER, path, ctx_path=ctx.path)
    assert parse_in_batches(PARSER, path.read_bytes(), 1, ctx) == whole


# -- format rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "extra", "expected"),
    [
        ("Fix the bug", {}, classes.HUMAN_PROMPT),
        ("<command-name>/model</command-name>", {}, classes.COMMAND_EXPANSION),
        ("<bash-input>ls</bash-input>", {}, classes.COMMAND_EXPANSION),
        ("<local-command-stdout>ok</local-command-stdout>", {}, classes.LOCAL_COMMAND_OUTPUT),
        ("<bash-stdout>x</bash-stdout><bash-stderr></bash-stderr>", {}, classes.LOCAL_COMMAND_OUTPUT),
        ("<system-reminder>be brief</system-reminder>", {}, classes.SYSTEM_REMINDER),
        (
            "Caveat: The messages below were generated by the user while running local commands.",
            {},
            classes.CONTEXT_INJECTION,
        ),
        ("<ide_opened_file>a.py</ide_opened_file>", {}, classes.CONTEXT_INJECTION),
        ("Please analyze this codebase", {"isMeta": True}, classes.CONTEXT_INJECTION),
        ("x <system-reminder>y</system-reminder>", {"isMeta": True}, classes.SYSTEM_REMINDER),
        (
            "This session is being continued from a previous conversation",
            {"isCompactSummary": True},
            classes.COMPACTION_SUMMARY,
        ),
        ("[Request interrupted by user]", {}, classes.INTERRUPT_MARKER),
        ("<task-notification><result>done</result></task-notification>", {}, classes.SUBAGENT_REPORT),
        ('<teammate-message teammate_id="a">hi</teammate-message>', {}, classes.AGENT_MESSAGE),
        ("<user-prompt-submit-hook>ok</user-prompt-submit-hook>", {}, classes.HOOK_OUTPUT),
        ("Base directory for this skill: /s", {}, classes.SKILL_BODY),
        ("List files", {"origin": {"kind": "task-notification"}}, classes.AGENT_MESSAGE),
        ("Search for TODOs", {"isSidechain": True, "agentId": "ab12"}, classes.SUBAGENT_BRIEF),
    ],
)
def test_user_text_is_classified(content: str, extra: dict, expected: str) -> None:
    (m,) = rows_of(parse_records([user("u1", content, **extra)]), MessageRow)
    assert m.message_class == expected


def test_text_blocks_of_one_record_are_separate_messages_keyed_by_index() -> None:
    rec = user("u1", [{"type": "text", "text": "<ide_opened_file>a</ide_opened_file>"}, {"type": "text", "text": "Go"}])
    got = [(m.message_uid, m.message_class) for m in rows_of(parse_records([rec]), MessageRow)]
    assert got == [("u1", classes.CONTEXT_INJECTION), ("u1:1", classes.HUMAN_PROMPT)]


def test_tool_result_is_output_not_a_message_and_pairs_even_when_it_comes_first() -> None:
    f = parse_records(
        [
            user("u2", [tool_result("toolu_1", [{"type": "text", "text": "done"}])]),
            assistant("a1", [tool_use("toolu_1", "Glob", pattern="*")]),
        ]
    )
    assert rows_of(f, MessageRow) == []
    (call,) = rows_of(f, ToolCallRow)
    assert (call.name, call.output, call.outcome, call.is_error, call.line_number) == ("Glob", "done", "ok", False, 1)


def test_bash_failure_reads_the_exit_code_header() -> None:
    f = parse_records(
        [
            assistant("a1", [tool_use("toolu_1", "Bash", command="pytest")]),
            user("u2", [tool_result("toolu_1", "Exit code 2\n2 failed, 40 passed", True)]),
        ]
    )
    (call,) = rows_of(f, ToolCallRow)
    assert (call.exit_code, call.is_error, call.outcome, call.error_class) == (2, True, "error", "nonzero_exit")


def test_file_tools_touch_their_path() -> None:
    f = parse_records(
        [
            assistant(
                "a1",
                [
                    tool_use("t1", "Read", file_path="/w/a.py"),
                    tool_use("t2", "Write", file_path="/w/b.py", content="x"),
                ],
            ),
            assistant("a2", [tool_use("t3", "MultiEdit", file_path="/w/a.py", edits=[])], msg_id="msg_2"),
        ]
    )
    assert [(t.tool_call_uid, t.op, t.path) for t in rows_of(f, FileTouchRow)] == [
        ("t1", "read", "/w/a.py"),
        ("t2", "create", "/w/b.py"),
        ("t3", "edit", "/w/a.py"),
    ]


def test_bash_command_touches_come_from_the_shell_helper() -> None:
    f = parse_records([assistant("a1", [tool_use("t1", "Bash", command="rm /w/old.log")])])
    assert [(t.op, t.path) for t in rows_of(f, FileTouchRow)] == [("delete", "/w/old.log")]


def test_commit_in_bash_output_is_a_git_event() -> None:
    f = parse_records(
        [
            assistant("a1", [tool_use("t1", "Bash", command="git commit -m 'Add x'")]),
            user("u2", [tool_result("t1", "[main abc1234] Add x\n 1 file changed")]),
        ]
    )
    (g,) = rows_of(f, GitEventRow)
    assert (g.op, g.sha, g.branch, g.subject, g.tool_call_uid) == ("commit", "abc1234", "main", "Add x", "t1")


def test_compaction_boundary_and_summary_make_one_compaction() -> None:
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b1",
        "parentUuid": None,
        "sessionId": "sess-1",
        "timestamp": "2025-10-14T11:00:00.000Z",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "auto", "preTokens": 167199, "postTokens": 5547},
    }
    summary = user("s1", "This session is being continued from a previous conversation…", "b1", isCompactSummary=True)
    f = parse_records([boundary, summary])
    (c,) = rows_of(f, CompactionRow)
    assert (c.compaction_uid, c.trigger, c.tokens_before, c.tokens_after, c.summary_message_uid) == (
        "b1",
        "auto",
        167199,
        5547,
        "s1",
    )
    assert [m.message_class for m in rows_of(f, MessageRow)] == [classes.COMPACTION_SUMMARY]
    assert rows_of(f, TurnRow) == []


def test_summary_record_names_its_leaf_for_the_loader() -> None:
    f = parse_records([{"type": "summary", "summary": "CSS Details Margin Styling", "leafUuid": "leaf-1"}])
    (m,) = rows_of(f, MessageRow)
    assert (m.message_uid, m.parent_uid, m.message_class, m.text) == (
        "summary:leaf-1",
        "leaf-1",
        classes.COMPACTION_SUMMARY,
        "CSS Details Margin Styling",
    )
    assert rows_of(f, SessionRow)[0].ai_title is None


def test_summary_whose_leaf_is_in_the_same_file_sets_the_ai_title() -> None:
    f = parse_records([user("u1", "Go"), {"type": "summary", "summary": "Go session", "leafUuid": "u1"}])
    assert rows_of(f, SessionRow)[0].ai_title == "Go session"


def _summary_after_a_resume(state: dict, leaf: str) -> list[str | None]:
    """The ``ai_title`` of the session rows a summary of `leaf` gives, read by a parser resumed
    from `state` (a JSON round trip, as the loader saves it)."""
    parser = PARSER(ParseContext(path="/home/user/.claude/projects/-p/sess-1.jsonl"), json.loads(json.dumps(state)))
    rows = parser.feed({"type": "summary", "summary": "Go session", "leafUuid": leaf}, Pos(900, 60, 9))
    return [r.ai_title for r in rows if isinstance(r, SessionRow)]


def test_a_summary_after_a_resume_finds_its_leaf_in_the_digests_of_the_saved_state() -> None:
    parser = PARSER(ParseContext(path="/home/user/.claude/projects/-p/sess-1.jsonl"), None)
    list(parser.feed(user("u1", "Go"), Pos(0, 100, 1)))
    list(parser.feed(assistant("a1", [{"type": "text", "text": "On it"}]), Pos(100, 100, 2)))
    state = parser.state()
    assert base64.b64decode(state["seen_digests"]) == uuid_digest("u1") + uuid_digest("a1")
    assert _summary_after_a_resume(state, "a1") == ["Go session"]
    assert _summary_after_a_resume(state, "elsewhere") == [None]


def test_a_state_saved_before_digests_resumes_with_the_same_leaves() -> None:
    old_state = {"sid": "sess-1", "turns": {}, "pending": {}, "bounds": [], "seen": ["u1", "a1", 7]}
    assert _summary_after_a_resume(old_state, "u1") == ["Go session"]
    assert _summary_after_a_resume(old_state, "a2") == [None]
    # saved again, it is in the digest form, in the same order (non-strings were never uuids)
    resumed = PARSER(ParseContext(path="/home/user/.claude/projects/-p/sess-1.jsonl"), old_state).state()
    assert (resumed["seen_digests"], "seen" in resumed) == (
        base64.b64encode(uuid_digest("u1") + uuid_digest("a1")).decode(),
        False,
    )


def test_a_damaged_digest_list_is_no_memory_not_an_error() -> None:
    for damaged in ("not base64 ✗", "QUJD", 17):
        assert _summary_after_a_resume({"seen_digests": damaged}, "u1") == [None]


def test_queued_command_attachment_is_a_queued_prompt_but_notifications_are_not() -> None:
    def att(uid: str, prompt: str) -> dict:
        a = {"type": "queued_command", "commandMode": "prompt", "prompt": prompt}
        return {"type": "attachment", "uuid": uid, "sessionId": "sess-1", "attachment": a}

    f = parse_records([att("q1", "also fix the docs"), att("q2", "<task-notification>\n</task-notification>")])
    assert [m.message_class for m in rows_of(f, MessageRow)] == [classes.QUEUED_PROMPT, classes.CONTEXT_INJECTION]


def test_cache_creation_without_split_goes_to_the_5m_bucket() -> None:
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 700, "output_tokens": 9}
    (c,) = rows_of(parse_records([assistant("a1", [], usage=usage)]), ModelCallRow)
    assert (c.cache_write_5m, c.cache_write_1h, c.cache_read) == (700, None, None)


def test_cache_creation_split_that_does_not_add_up_keeps_the_total() -> None:
    usage = {
        "cache_creation_input_tokens": 900,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 400},
    }
    (c,) = rows_of(parse_records([assistant("a1", [], usage=usage)]), ModelCallRow)
    assert (c.cache_write_5m, c.cache_write_1h) == (500, 400)


def test_records_without_session_id_take_the_file_name() -> None:
    f = parse_records(
        [{"type": "user", "uuid": "u1", "message": {"content": "hi"}}], "/x/.claude/projects/-p/abc.jsonl"
    )
    assert [s.session_uid for s in rows_of(f, SessionRow)] == ["abc"]


def test_old_layout_agent_file_is_a_subagent_of_its_session_id() -> None:
    f = parse_records([user("u1", "Warmup", isSidechain=True)], "/x/.claude/projects/-p/agent-77aa.jsonl")
    (s,) = rows_of(f, SessionRow)
    assert (s.session_uid, s.agent_id, s.is_subagent, s.parent_session_uid) == ("sess-1", "77aa", True, "sess-1")


def test_known_record_with_a_broken_message_is_a_bad_record() -> None:
    f = parse_records([{"type": "user", "uuid": "u1", "sessionId": "s", "message": "error"}])
    assert [i.kind for i in rows_of(f, ParseIssueRow)] == ["bad_record"]
    assert rows_of(f, MessageRow) == []


def test_unknown_record_type_is_counted_and_reported() -> None:
    f = parse_records([{"type": "hologram", "sessionId": "s"}])
    (rt,) = rows_of(f, RecordTypeRow)
    assert (rt.record_type, rt.known) == ("hologram", False)
    assert [i.kind for i in rows_of(f, ParseIssueRow)] == ["unknown_record_type"]


_ODD_VALUES = (None, 0, -1, 1.5, True, "", "x", [], [None, 1, "s", {}], {}, {"type": 1, "text": None})


def _mutations(record: dict):
    for key in list(record):
        for odd in _ODD_VALUES:
            r = copy.deepcopy(record)
            r[key] = odd
            yield r
    for key in ("message", "toolUseResult", "attachment", "compactMetadata"):
        inner = record.get(key)
        if isinstance(inner, dict):
            for k in list(inner):
                for odd in _ODD_VALUES:
                    r = copy.deepcopy(record)
                    r[key][k] = odd
                    yield r


def test_feed_never_raises_whatever_the_fields_hold(field_dir: Path) -> None:
    records = []
    for case in ("E01", "E02", "E06", "E09", "E10", "E11", "E18"):
        records += [json.loads(line) for line in (field_dir / f"{case}.jsonl").read_text().splitlines()]
    records.append({"type": "system", "subtype": "compact_boundary", "uuid": "b", "compactMetadata": {"preTokens": 5}})
    records.append({"type": "attachment", "uuid": "t", "attachment": {"type": "queued_command", "prompt": "p"}})
    parser = PARSER(ParseContext(path="/x/.claude/projects/-p/s.jsonl"), None)
    fed = 0
    for record in records:
        for mutated in _mutations(record):
            list(parser.feed(mutated, Pos(0, 1, 1)))
            fed += 1
    json.dumps(parser.state())
    assert fed > 1000


def test_state_stays_bounded_on_a_long_file() -> None:
    parser = PARSER(ParseContext(path="/x/.claude/projects/-p/s.jsonl"), None)
    for i in range(MAX_SEEN_UUIDS + MAX_PENDING + 500):
        rec = assistant(f"a{i}", [tool_use(f"toolu_{i}", "Bash", command="ls")], msg_id=f"m{i}")
        list(parser.feed(rec, Pos(i * 100, 100, i + 1)))
    state = json.loads(json.dumps(parser.state()))
    seen = base64.b64decode(state["seen_digests"])
    assert (len(seen), len(state["pending"])) == (MAX_SEEN_UUIDS * SEEN_DIGEST_BYTES, MAX_PENDING)
    # the newest record's uuid last, as 8 bytes of its SHA-256, not its text
    assert seen[-8:] == hashlib.sha256(f"a{MAX_SEEN_UUIDS + MAX_PENDING + 499}".encode()).digest()[:8]
    assert "seen" not in state


def test_interrupt_marker_ends_the_open_turn_and_opens_none() -> None:
    marker = user("u3", [{"type": "text", "text": "[Request interrupted by user]"}], "a1")
    marker["timestamp"] = "2025-10-14T10:00:09.000Z"
    f = parse_records([user("u1", "Go"), assistant("a1", [{"type": "text", "text": "On it"}]), marker])
    (turn,) = rows_of(f, TurnRow)
    assert (turn.turn_uid, turn.ended_at.isoformat()) == ("u1", "2025-10-14T10:00:09+00:00")
    assert rows_of(parse_records([marker]), TurnRow) == []


def test_prompt_typed_while_busy_does_not_open_a_turn() -> None:
    queued = {
        "type": "attachment",
        "uuid": "q1",
        "sessionId": "sess-1",
        "attachment": {"type": "queued_command", "commandMode": "prompt", "prompt": "also the docs"},
    }
    f = parse_records([user("u1", "Go"), queued])
    assert [t.turn_uid for t in rows_of(f, TurnRow)] == ["u1"]
    assert [(m.message_uid, m.turn_uid) for m in rows_of(f, MessageRow)] == [("u1", "u1"), ("q1", "u1")]
