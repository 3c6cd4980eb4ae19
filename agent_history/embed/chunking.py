"""Chunking (pure): source text → bounded, overlapping, redacted embedding inputs with spans.

What is embedded (`SOURCES`, rules as data):

- **messages** of the conversational classes (`model.classes.CONVERSATIONAL`: prompts, replies,
  sub-agent briefs and reports, compaction summaries, agent messages) with at least
  `MIN_CHARS` non-blank characters ("ok", "continue" carry no meaning of their own);
- **failed tool calls**: their ``error_excerpt`` (the parser's most informative ~500
  characters), when it has at least `MIN_CHARS`;
- **tool output worth embedding**: prose-like output (`is_prose`) of at least
  `TOOL_OUTPUT_MIN_CHARS`, first `TOOL_OUTPUT_MAX_CHARS` characters only — web pages, search
  results, test and build logs read as text; code listings, JSON and binary-ish dumps do not.

Each source text is split with semantic-text-splitter (``TextSplitter``, character capacity
2/3 to 1 × ``chunk_chars``; splits at paragraph, then sentence, then word boundaries, trimmed)
into spans of at most ``chunk_chars`` characters; neighbours within a paragraph share up to
``chunk_overlap`` characters of whole sentences or words (the library overlaps at the level it
splits at, and not across a paragraph break, where the text changes subject anyway). Secrets
are found once on the whole text (`redact.find_secrets`), so a secret cut by a chunk boundary
is still replaced on both sides. The embedding input is a one-line context header —
``<class> · <project>`` (project = the last path component of the session's cwd) — then the
redacted chunk text; its sha256 is the cache key (with the model).

**Bounded work per source.** The splitter's boundary search is superlinear on text with few
boundaries (measured: 0.5 MB without spaces 4.8 s, 4× the text ≈ 16× the time), so it only
ever sees windows of `WINDOW_CHUNKS` × ``chunk_chars`` characters, cut at the last paragraph
break, line break or space of the window (`split_spans` is linear in the text). A source
longer than `MAX_SOURCE_CHARS` is embedded by its **head** (first `HEAD_CHARS`: what was asked
or stated) and **tail** (last `TAIL_CHARS`: the conclusion, the final error), each cut at a
space; the chunk spans record exactly what was embedded (the gap between the head's last span
and the tail's first is what was left out), and `is_elided` says a source was. Secrets are
looked for `CONTEXT_CHARS` beyond each cut, so a secret that straddles it is still replaced.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

from agent_history.embed.redact import apply_spans, find_secrets, redact
from agent_history.model import classes

MIN_CHARS = 20
"""Sources with fewer non-blank characters are not embedded."""
TOOL_OUTPUT_MIN_CHARS = 200
TOOL_OUTPUT_MAX_CHARS = 4_000
"""Tool output: only the first this-many characters are chunked (bounded cost per call)."""

MESSAGE_CLASSES: tuple[str, ...] = classes.CONVERSATIONAL
"""Message classes whose text is embedded."""

MAX_SOURCE_CHARS = 60_000
"""A longer source text is embedded by its head and tail only (≈ 15 k tokens per source at most)."""
HEAD_CHARS = 40_000
TAIL_CHARS = 20_000
CONTEXT_CHARS = 8_000
"""Characters beyond a head/tail cut read for secrets crossing it (a 4096-bit PEM key is ≈ 3.3 k), never embedded."""
WINDOW_CHUNKS = 16
"""The splitter sees at most this many chunks' worth of text at a time (bounded cost per window)."""

KIND_MESSAGE = "message"
KIND_TOOL_ERROR = "tool_error"
KIND_TOOL_OUTPUT = "tool_output"
KIND_SUMMARY = "summary"
"""A journal session summary (title, objective, narrative, outcomes; migration 0013_summary_chunks)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One embedding input: ``seq`` within its source, the span ``[start, end)`` of the source
    text, the exact input string, its sha256 and how many secret spans were replaced."""

    seq: int
    start: int
    end: int
    input: str
    input_sha256: bytes
    redactions: int


def sha256(text: str) -> bytes:
    """sha256 of `text` as UTF-8 (same as SQL ``ah.utf8_sha256``)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def is_prose(text: str) -> bool:
    """Prose-like text: mostly letters and spaces, few code/JSON punctuation marks, words of
    ordinary length. Cheap, deterministic heuristic for tool output."""
    sample = text[:2000]
    if not sample.strip():
        return False
    letters = sum(c.isalpha() for c in sample)
    spaces = sum(c.isspace() for c in sample)
    code = sum(c in "{}[]();=<>\\|`$#*_" for c in sample)
    words = sample.split()
    avg_word = sum(map(len, words)) / len(words) if words else 0
    return (letters + spaces) / len(sample) >= 0.8 and code / len(sample) <= 0.03 and 2.5 <= avg_word <= 9


def project_name(cwd: str | None) -> str:
    """The last component of a session's working directory ('' when unknown)."""
    if not cwd:
        return ""
    return cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]


def header(label: str, cwd: str | None) -> str:
    """The context header line: ``<label> · <project>`` (redacted, like the text)."""
    project = project_name(cwd)
    return redact(f"{label} · {project}" if project else label)


@cache
def _splitter(capacity: int, overlap: int):
    from semantic_text_splitter import TextSplitter

    return TextSplitter((max(1, capacity * 2 // 3), capacity), overlap=overlap, trim=True)


def _window_end(text: str, start: int, limit: int) -> int:
    """Where a splitter window starting at `start` ends: after the last paragraph break, line
    break or whitespace in the second half of ``text[start:limit]``, else at `limit`."""
    floor = start + (limit - start) // 2
    for sep in ("\n\n", "\n"):
        at = text.rfind(sep, floor, limit)
        if at >= 0:
            return at + len(sep)
    for at in range(limit - 1, floor - 1, -1):  # bounded: half a window
        if text[at].isspace():
            return at + 1
    return limit


def split_spans(text: str, chunk_chars: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of `text`, each at most `chunk_chars` long and stripped,
    overlapping by about `overlap` within a window; linear in ``len(text)`` (see above)."""
    if len(text) <= chunk_chars:
        stripped = text.strip()
        if not stripped:
            return []
        start = text.index(stripped)
        return [(start, start + len(stripped))]
    splitter = _splitter(chunk_chars, overlap)
    window = chunk_chars * WINDOW_CHUNKS
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = len(text) if len(text) - start <= window else _window_end(text, start, start + window)
        spans.extend(
            (start + off, start + off + len(piece)) for off, piece in splitter.chunk_indices(text[start:end]) if piece
        )
        start = end
    return spans


@dataclass(frozen=True, slots=True)
class Window:
    """A part of a source text to chunk: `text` holds the source's characters from `offset`;
    only ``text[lo:hi]`` is chunked, the rest is context read for secrets crossing the cut."""

    offset: int
    text: str
    lo: int
    hi: int


def head_tail(head: str, tail: str, length: int) -> list[Window]:
    """The two windows of a long source of `length` characters, given its first
    ``HEAD_CHARS + CONTEXT_CHARS`` characters (`head`) and its last ``TAIL_CHARS + CONTEXT_CHARS``
    (`tail`): the head cut at its last whitespace within the final quarter of `HEAD_CHARS`, the
    tail starting after its first whitespace within its first quarter (else cut hard)."""
    cut = HEAD_CHARS
    for at in range(HEAD_CHARS - 1, HEAD_CHARS * 3 // 4, -1):
        if head[at].isspace():
            cut = at
            break
    lo = len(tail) - TAIL_CHARS
    for at in range(lo, lo + TAIL_CHARS // 4):
        if tail[at].isspace():
            lo = at + 1
            break
    return [Window(0, head, 0, cut), Window(length - len(tail), tail, lo, len(tail))]


def windows(text: str) -> list[Window]:
    """What of `text` is chunked: all of it up to `MAX_SOURCE_CHARS`, else its head and tail."""
    if len(text) <= MAX_SOURCE_CHARS:
        return [Window(0, text, 0, len(text))]
    return head_tail(text[: HEAD_CHARS + CONTEXT_CHARS], text[-(TAIL_CHARS + CONTEXT_CHARS) :], len(text))


def is_elided(length: int) -> bool:
    """Whether a source text of `length` characters is embedded by its head and tail only."""
    return length > MAX_SOURCE_CHARS


def chunk_windows(parts: list[Window], label: str, cwd: str | None, *, chunk_chars: int, overlap: int) -> list[Chunk]:
    """Chunks of the `parts` of one source, numbered in order, spans in source characters."""
    head = header(label, cwd)
    out: list[Chunk] = []
    for part in parts:
        spans = split_spans(part.text[part.lo : part.hi], chunk_chars, overlap)
        if not spans:
            continue
        secrets = find_secrets(part.text)
        for start, end in spans:
            body, n = apply_spans(part.text, secrets, part.lo + start, part.lo + end)
            full = f"{head}\n{body}"
            a, b = part.offset + part.lo + start, part.offset + part.lo + end
            out.append(Chunk(len(out), a, b, full, sha256(full), n))
    return out


def chunk_text(text: str, label: str, cwd: str | None, *, chunk_chars: int, overlap: int) -> list[Chunk]:
    """Chunks of one source text (see the module docstring). Empty for blank text."""
    return chunk_windows(windows(text), label, cwd, chunk_chars=chunk_chars, overlap=overlap)


def worth_embedding(kind: str, text: str | None) -> bool:
    """Whether a source text of `kind` is embedded at all (length and prose rules above)."""
    if not text:
        return False
    if kind == KIND_TOOL_OUTPUT:
        return len(text) >= TOOL_OUTPUT_MIN_CHARS and is_prose(text)
    return sum(not c.isspace() for c in text[: MIN_CHARS * 4]) >= MIN_CHARS


def source_text(kind: str, text: str) -> str:
    """The part of a source that is chunked (tool output: its first `TOOL_OUTPUT_MAX_CHARS`)."""
    return text[:TOOL_OUTPUT_MAX_CHARS] if kind == KIND_TOOL_OUTPUT else text
