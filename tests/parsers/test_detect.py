"""Harness detection from path and content (`agent_history.parsers.detect_agent`)."""

from __future__ import annotations

import pytest

from agent_history.parsers import detect_agent

UNDETECTABLE = {
    # not transcripts of a known shape: hand-written drift fixtures and a workflow journal
    "iansherr-claude-code-log__test__test_data__workflow_basic__11110000-0000-4000-8000-000000000001"
    "__subagents__workflows__wf_demo01__journal.jsonl",
    "agent-sessions__Resources__Fixtures__session_branch.jsonl",
    "agent-sessions__Resources__Fixtures__stage0__agents__codex__schema_drift.jsonl",
}


@pytest.mark.parametrize(("fmt", "agent"), [("claude-code", "claude"), ("codex", "codex"), ("pi", "pi")])
def test_every_sample_of_a_supported_format_is_detected_from_content_alone(corpus_home, fmt, agent):
    samples = sorted((corpus_home.parent / "samples" / fmt).glob("*.jsonl"))
    assert samples
    got = {p.name: detect_agent("x.jsonl", p.read_bytes()[:65536]) for p in samples}
    assert {k: v for k, v in got.items() if v != agent} == {k: None for k in got if k in UNDETECTABLE}


def test_every_corpus_home_file_is_detected_as_its_harness(corpus_home):
    expected = {".claude": "claude", ".codex": "codex", ".pi": "pi"}
    for p in corpus_home.rglob("*.jsonl"):
        top = p.relative_to(corpus_home).parts[0]
        assert detect_agent(str(p), p.read_bytes()[:65536]) == expected[top], p


def test_bookkeeping_first_claude_file_is_claude(field_dir):
    assert detect_agent("x.jsonl", (field_dir / "E09.jsonl").read_bytes()) == "claude"


def test_legacy_codex_header_without_type_is_codex():
    head = b'{"id":"44","timestamp":"2026-01-04T05:06:07.000Z"}\n{"type":"message","role":"user","content":[]}\n'
    assert detect_agent("x.jsonl", head) == "codex"
