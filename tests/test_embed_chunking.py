"""Chunking (pure): spans, overlap, bounded size, context header, redaction across boundaries."""

from __future__ import annotations

import time

import pytest

from agent_history.embed.chunking import (
    CONTEXT_CHARS,
    HEAD_CHARS,
    KIND_MESSAGE,
    KIND_TOOL_ERROR,
    KIND_TOOL_OUTPUT,
    MAX_SOURCE_CHARS,
    TAIL_CHARS,
    chunk_text,
    header,
    is_prose,
    sha256,
    split_spans,
    worth_embedding,
)
from agent_history.embed.redact import REDACTED

PARAGRAPH = (
    "The loader reads only complete lines and resumes from the saved offset after checking two prefix hashes. "
    "When the hashes differ the file was rewritten, so every row it contributed is purged and parsed again. "
)


def test_short_text_is_one_chunk_with_a_context_header():
    [c] = chunk_text(
        "  Why is the cache TTL five minutes?  ", "human_prompt", "/work/api", chunk_chars=1500, overlap=200
    )
    assert (c.seq, c.start, c.end) == (0, 2, 36)
    assert c.input == "human_prompt · api\nWhy is the cache TTL five minutes?"
    assert c.input_sha256 == sha256(c.input) and c.redactions == 0


def test_long_text_is_split_into_bounded_overlapping_spans_of_the_source():
    text = PARAGRAPH * 12 + "\n\n" + PARAGRAPH * 6
    chunks = chunk_text(text, "assistant_text", None, chunk_chars=600, overlap=150)
    assert len(chunks) > 5
    for c in chunks:
        assert c.end - c.start <= 600
        assert c.input == "assistant_text\n" + text[c.start : c.end]
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    assert chunks[0].start == 0 and chunks[-1].end == len(text.rstrip())
    # consecutive spans overlap or are separated by whitespace only: no text is skipped
    assert all(text[a.end : b.start].strip() == "" for a, b in zip(chunks, chunks[1:], strict=False))
    overlaps = [a.end - b.start for a, b in zip(chunks, chunks[1:], strict=False) if b.start < a.end]
    assert overlaps and max(overlaps) <= 150  # whole sentences, up to `overlap` characters


def test_spans_are_character_offsets_for_non_ascii_text():
    text = ("Größe überprüfen – naïve café résumé. " * 60).strip()
    for start, end in split_spans(text, 300, 50):
        assert 0 <= start < end <= len(text) and text[start:end] == text[start:end].strip()


def test_a_secret_cut_by_a_chunk_boundary_is_redacted_on_both_sides():
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    text = ("word " * 110) + secret + (" word" * 110)
    chunks = chunk_text(text, "human_prompt", None, chunk_chars=560, overlap=0)
    joined = "".join(c.input for c in chunks)
    assert secret not in joined and secret[:12] not in joined and secret[-12:] not in joined
    assert sum(c.redactions for c in chunks) >= 1 and REDACTED in joined


def test_header_uses_the_last_directory_of_the_cwd():
    assert header("subagent_report", "/Users/user9/work/app/") == "subagent_report · app"
    assert header("Bash error", None) == "Bash error"


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (KIND_MESSAGE, "ok", False),
        (KIND_MESSAGE, "continue please", False),
        (KIND_MESSAGE, "Please add a retry to the pool.", True),
        (KIND_TOOL_ERROR, "Error: ENOENT: no such file or directory, open 'x.json'", True),
        (KIND_TOOL_OUTPUT, "short output", False),
        (KIND_TOOL_OUTPUT, PARAGRAPH * 2, True),
        (KIND_TOOL_OUTPUT, '{"a": [1, 2, 3], "b": {"c": null}}' * 20, False),
        (KIND_TOOL_OUTPUT, "def f(x):\n    return {k: v for k, v in x.items() if v}\n" * 10, False),
    ],
)
def test_what_is_worth_embedding(kind, text, expected):
    assert worth_embedding(kind, text) is expected


def test_prose_detector_rejects_hex_dumps():
    assert not is_prose("0f 3a 9c 1b 7e 8d 4f 60 a1 b2 c3 d4 e5 f6 07 18 29 3a 4b 5c " * 20)


def _cpu_seconds(fn, text, repeat=3) -> float:
    """The least CPU time of `repeat` runs (process time: other processes on the machine do not count)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return best


# Texts with few split points are the splitter's worst case (issue 10: 0.5 MB without spaces took
# 4.8 s, 2 MB of words 18 s): no paragraph, line or sentence boundary to cut at.
WORST_CASES = {
    "no whitespace": lambda n: "x" * n,
    "words, no sentences": lambda n: ("word " * (n // 5 + 1))[:n],
}


@pytest.mark.parametrize("make", WORST_CASES.values(), ids=WORST_CASES.keys())
def test_splitting_is_linear_four_times_the_text_at_most_six_times_the_time(make):
    small, big = make(500_000), make(2_000_000)
    split = lambda t: split_spans(t, 1500, 200)  # noqa: E731
    spans = split(big)
    assert all(0 < e - s <= 1500 for s, e in spans)
    assert all(big[a[1] : b[0]].strip() == "" for a, b in zip(spans, spans[1:], strict=False))  # nothing skipped
    assert spans[0][0] == 0 and spans[-1][1] == len(big.rstrip())
    assert _cpu_seconds(split, big) <= 6 * _cpu_seconds(split, small)


def test_a_two_megabyte_message_is_embedded_by_its_head_and_tail():
    middle = "MIDDLE-ONLY "
    text = "Opening request. " * 3_000 + middle * 170_000 + "Final verdict. " * 2_000  # 2,121,000 chars
    assert len(text) > 2_000_000
    chunk = lambda t: chunk_text(t, "human_prompt", "/work/api", chunk_chars=1500, overlap=200)  # noqa: E731
    chunks = chunk(text)
    head = [c for c in chunks if c.end <= HEAD_CHARS]
    tail = [c for c in chunks if c.start >= len(text) - TAIL_CHARS]
    assert head and tail and len(head) + len(tail) == len(chunks)  # nothing from the middle
    assert not any(middle in c.input for c in chunks)
    assert head[0].start == 0 and tail[-1].end == len(text.rstrip())
    assert HEAD_CHARS - 20 <= head[-1].end and tail[0].start <= len(text) - TAIL_CHARS + 20  # cut at a space
    assert head[-1].seq + 1 == tail[0].seq
    assert (head[-1].end - head[0].start) + (tail[-1].end - tail[0].start) <= HEAD_CHARS + TAIL_CHARS
    assert chunks[0].input.startswith("human_prompt · api\nOpening request.")
    assert chunks[-1].input.endswith("Final verdict.")
    # bounded: chunking 4× the text costs about the same (it reads only the head and the tail)
    assert _cpu_seconds(chunk, text) <= 6 * _cpu_seconds(chunk, text[: len(text) // 4])


def test_a_text_at_the_bound_is_embedded_whole():
    text = ("A sentence of prose about the loader. " * 2_000)[:MAX_SOURCE_CHARS]
    chunks = chunk_text(text, "assistant_text", None, chunk_chars=1500, overlap=200)
    assert chunks[0].start == 0 and chunks[-1].end == len(text.rstrip())
    assert all(text[a.end : b.start].strip() == "" for a, b in zip(chunks, chunks[1:], strict=False))


def test_a_secret_straddling_the_head_cut_is_redacted():
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    text = "x" * (HEAD_CHARS - 10) + secret + " tail words" * 20_000  # no space before the cut
    chunks = chunk_text(text, "human_prompt", None, chunk_chars=1500, overlap=200)
    joined = "".join(c.input for c in chunks)
    assert secret[:8] not in joined and REDACTED in joined
    assert max(c.end for c in chunks if c.start < HEAD_CHARS) == HEAD_CHARS  # hard cut through the secret
    assert CONTEXT_CHARS > len(secret)
