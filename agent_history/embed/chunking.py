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

KIND_MESSAGE = "message"
KIND_TOOL_ERROR = "tool_error"
KIND_TOOL_OUTPUT = "tool_output"


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


def split_spans(text: str, chunk_chars: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans of `text` of at most `chunk_chars`, overlapping by about `overlap`."""
    if len(text) <= chunk_chars:
        stripped = text.strip()
        if not stripped:
            return []
        start = text.index(stripped)
        return [(start, start + len(stripped))]
    return [(off, off + len(piece)) for off, piece in _splitter(chunk_chars, overlap).chunk_indices(text) if piece]


def chunk_text(text: str, label: str, cwd: str | None, *, chunk_chars: int, overlap: int) -> list[Chunk]:
    """Chunks of one source text (see the module docstring). Empty for blank text."""
    spans = split_spans(text, chunk_chars, overlap)
    if not spans:
        return []
    secrets = find_secrets(text)
    head = header(label, cwd)
    out = []
    for seq, (start, end) in enumerate(spans):
        body, n = apply_spans(text, secrets, start, end)
        full = f"{head}\n{body}"
        out.append(Chunk(seq, start, end, full, sha256(full), n))
    return out


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
