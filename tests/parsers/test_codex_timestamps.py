"""Codex records without their own timestamp (legacy rollouts) date their point-in-time rows by
the last timestamp seen — the header's (issue 10: search showed `-` for them). Real files."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_history.model.rows import FileTouchRow, MessageRow, SessionRow, ToolCallRow, TurnRow
from agent_history.parsers.codex.parser import PARSER
from tests.parsers.codex_records import assert_batch_independent
from tests.parsers.util import parse_file, rows_of

LEGACY_HOME = "rollout-2025-09-10T18-58-38-cf4def41-21e0-4b91-adb4-5397c1492084.jsonl"
LEGACY_SAMPLE = (
    "someuser-claude-code-log__test__test_data__codex__sessions__rollout-44444444-4444-4444-8444-444444444444.jsonl"
)


@pytest.fixture(scope="module")
def legacy_home(corpus_home) -> Path:
    return next(corpus_home.rglob(LEGACY_HOME))


def test_every_message_of_the_legacy_home_rollout_takes_the_header_timestamp(legacy_home):
    folded = parse_file(PARSER, legacy_home)
    header = datetime(2025, 9, 10, 18, 58, 38, 331000, tzinfo=UTC)  # the only timestamp in the file
    msgs = rows_of(folded, MessageRow)
    assert len(msgs) == 350  # 45 prompts, 59 answers, 244 reasoning, 2 context (test_codex_tools_corpus)
    assert {m.ts for m in msgs} == {header}
    touches = rows_of(folded, FileTouchRow)
    assert len(touches) == 164 and {t.ts for t in touches} == {header}
    # intervals keep only records' own times: an inherited one would make a zero duration
    calls = rows_of(folded, ToolCallRow)
    assert len(calls) == 246 and {(c.started_at, c.ended_at) for c in calls} == {(None, None)}
    turns = rows_of(folded, TurnRow)
    assert len(turns) == 45 and {(t.started_at, t.ended_at) for t in turns} == {(None, None)}
    (session,) = rows_of(folded, SessionRow)
    assert (session.started_at, session.ended_at) == (header, header)


def test_a_legacy_sample_dates_both_messages_by_its_header(shared_dir):
    folded = parse_file(PARSER, shared_dir / "corpus" / "samples" / "codex" / LEGACY_SAMPLE)
    header = datetime(2026, 1, 4, 5, 6, 7, tzinfo=UTC)
    assert [(m.message_class, m.text, m.ts) for m in rows_of(folded, MessageRow)] == [
        ("human_prompt", "Open the synthetic legacy session.", header),
        ("assistant_text", "The synthetic legacy session is open.", header),
    ]


def test_inherited_timestamps_do_not_depend_on_batches(legacy_home):
    data = legacy_home.read_bytes()
    cut = data.index(b"\n", 200_000) + 1
    assert_batch_independent(data[:cut], str(legacy_home))
