"""The search-text analysis of a document, computed in Python: the twin of the SQL functions
``ah.search_text`` and ``ah.script_lexemes`` (migrations 0002_search, 0004_search_i18n).

A document's vector is ``to_tsvector('ah.search', ah.search_text(doc)) || ah.script_lexemes(doc)``
(``ah.search_tsv``). The two preprocessing functions are regular-expression work that cost the
server more CPU than ``to_tsvector`` itself (docs/performance.md, "search-text analysis"), so the
loader computes them here — in the process that parsed the rows — and sends them ready:
``ah.search_tsv_ready(text, symbols)`` turns them into the same vector. The SQL functions stay the
definition (the query side and every row written without ready text use them);
tests/test_search_text.py checks that both give identical strings on the shared corpus and on
generated text.

The rules, as the SQL states them (see 0002_search for why):

- ``search_text(t)``: CJK runs set apart by spaces, then ``code_aware_text``: the text, and when
  it holds *compound* tokens a newline and ``concat_ws(' ', joined, bases, parts)`` of them.
- A compound token is a maximal run of ``[A-Za-z0-9_./:-]`` holding a boundary (``[a-z][A-Z]``,
  ``[A-Z][A-Z][a-z]``, letter/digit, digit/letter, or ``_ . / :`` between alphanumerics) that is
  not a hex id (``^[0-9a-fA-F]*[0-9][0-9a-fA-F]*([.:-][0-9a-fA-F]+)*$``). PostgreSQL's regular
  expressions match leftmost-longest; for this pattern that is exactly the whole run, which is
  how it is found here (a backtracking ``[…]*(?:…)[…]*`` would be quadratic in a long run).
  Runs repeat (words, paths, identifiers), so each distinct run is judged — and its identifier
  parts computed — once per process (`_COMPOUNDS`); the SQL's replacements over the joined
  compounds never match across the joining space, so per token gives the same line.
- ``script_lexemes(t)``: every CJK run of ≥ 3 characters gives its overlapping bigrams and every
  symbol character one lexeme, numbered in document order, as tsvector text
  (``'lexeme':pos,pos …``); the server's ``::tsvector`` applies the same limits (positions ≤ 16383,
  ≤ 256 per lexeme) as it does to the SQL function's text.

Character classes come from `agent_history.analysis.scripts` (checked against the migration).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agent_history.analysis.scripts import CJK_RANGES, SYMBOL_RANGES

MESSAGE_CHARS = 131_072
"""Characters of a message's text that are analysed (``ah.message_tsv``, 0002_search)."""
INPUT_HEAD, OUTPUT_HEAD, OUTPUT_TAIL = 4096, 8192, 2048
"""Characters of a tool call's input head, output head and output tail (``ah.tool_call_doc``,
0015_store)."""


def _char_class(ranges: tuple[tuple[int, int, str], ...]) -> str:
    return "[" + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi, _ in ranges) + "]"


_CJK = _char_class(CJK_RANGES)
_SYMBOL = _char_class(SYMBOL_RANGES)
_CJK_RUN = re.compile(f"{_CJK}+")
_SCRIPT_TOKEN = re.compile(f"{_CJK}{{3,}}|{_SYMBOL}")
_RUN = re.compile(r"[A-Za-z0-9_./:-]+")
_BOUNDARY = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Za-z0-9][_./:][A-Za-z0-9]")
_HEX_ID = re.compile(r"(?>[0-9a-fA-F]*[0-9][0-9a-fA-F]*)(?:[.:-][0-9a-fA-F]+)*+")
_SNAKE = re.compile(r"[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)*")
_BASE_SEP = re.compile(r"[._-]")
_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_LETTER_DIGIT = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_SINGLE = re.compile(r"(^| )[A-Za-z0-9](?= |$)")


class _Compound(NamedTuple):
    """What one compound token adds to the identifier line (the SQL computes these over the
    space-joined compounds; none of its patterns matches across a space, so per token is the same)."""

    split: str
    """The token with its camelCase, acronym and letter/digit splits spaced."""
    joined: tuple[str, ...]
    """Its snake_case words (``[A-Za-z0-9]+(_+[A-Za-z0-9]+)*`` holding an ``_``), underscores dropped."""
    base: str | None
    """The part after its last ``/`` when that holds ``. _ -`` (a file name), else None."""


_COMPOUNDS: dict[str, _Compound | None] = {}
"""Run of `_RUN` → its `_Compound`, or None when it is not a compound token. Runs repeat (words,
paths, identifiers: 430,549 runs of 27,690 distinct strings in the shared corpus's documents), so
each distinct run is judged once; bounded by `_COMPOUNDS_MAX` entries (≈ 160 bytes each: ≤ 16 MB): when full, a
new empty dict takes its place (a dict is never emptied in place, so a call running in another
thread keeps a complete one). Deterministic values: threads can at worst compute one twice."""
_COMPOUNDS_MAX = 100_000


def _spaced_pair(m: re.Match) -> str:
    pair = m.group()
    return pair[0] + " " + pair[1]


def _compound(run: str) -> _Compound | None:
    """`run` as a compound token (it has a boundary and is not a hex id:
    ``^[0-9a-fA-F]*[0-9][0-9a-fA-F]*([.:-][0-9a-fA-F]+)*$``, atomic so it does not backtrack),
    or None.

    The SQL's replacements, rewritten to be cheaper with the same output: camelCase and acronym
    splits are one pass inserting a space at the zero-width positions (their matches never
    overlap, so consuming them as the SQL does changes nothing); the letter/digit split keeps
    consuming matches (``a1b`` → ``a 1b``, as PostgreSQL's ``regexp_replace(…, 'g')`` does)."""
    if not _BOUNDARY.search(run) or _HEX_ID.fullmatch(run):
        return None
    joined = tuple(m.replace("_", "") for m in _SNAKE.findall(run) if "_" in m) if "_" in run else ()
    base = run.rsplit("/", 1)[1] if "/" in run else None
    return _Compound(
        _LETTER_DIGIT.sub(_spaced_pair, _CASE.sub(" ", run)),
        joined,
        base if base is not None and _BASE_SEP.search(base) else None,
    )


def _compounds(t: str) -> list[_Compound]:
    """The compound tokens of `t` in order: its runs of ``[A-Za-z0-9_./:-]``, each distinct
    run judged once (`_COMPOUNDS`)."""
    global _COMPOUNDS
    runs = _RUN.findall(t)
    cache = _COMPOUNDS  # this call's dict: another thread may put a new one in its place
    unseen = set(runs).difference(cache)
    if unseen:
        if len(cache) + len(unseen) > _COMPOUNDS_MAX:
            cache = _COMPOUNDS = {}
            unseen = set(runs)
        for run in unseen:
            cache[run] = _compound(run)
    return [c for c in map(cache.__getitem__, runs) if c is not None]


def code_aware_text(t: str) -> str:
    """Twin of ``ah.code_aware_text``: `t`, then a line of identifier parts when `t` holds
    compound tokens (see the module docstring)."""
    compounds = _compounds(t)
    if not compounds:
        return t
    joined = [j for c in compounds for j in c.joined]
    bases = [c.base for c in compounds if c.base is not None]
    parts = _NON_ALNUM.sub(" ", " ".join(c.split for c in compounds))
    parts = _SINGLE.sub(" ", parts)
    line = [
        x for x in (" ".join(joined) if joined else None, " ".join(bases) if bases else None, parts) if x is not None
    ]
    return t + "\n" + " ".join(line)


def _spaced_run(m: re.Match) -> str:
    return " " + m.group() + " "


def search_text(t: str) -> str:
    """Twin of ``ah.search_text``: CJK runs spaced, then `code_aware_text` (an ASCII text —
    ``str.isascii`` is O(1) — has no CJK run to space)."""
    return code_aware_text(t if t.isascii() else _CJK_RUN.sub(_spaced_run, t))


def script_lexemes(t: str) -> str:
    """Twin of ``ah.script_lexemes`` as tsvector text: CJK bigrams and symbols with their
    positions in document order ('' when there are none; always for an ASCII text)."""
    if t.isascii():
        return ""
    positions: dict[str, list[int]] = {}
    pos = 0
    for m in _SCRIPT_TOKEN.finditer(t):
        a = m.group(0)
        tokens = [a] if len(a) == 1 else [a[i : i + 2] for i in range(len(a) - 1)]
        for tok in tokens:
            pos += 1
            positions.setdefault(tok, []).append(pos)
    return " ".join(f"'{lx}':{','.join(map(str, ps))}" for lx, ps in positions.items())


def ready(doc: str) -> tuple[str, str]:
    """(search text, symbol lexemes) of a document: what ``ah.search_tsv_ready`` takes."""
    return search_text(doc), script_lexemes(doc)


def message_doc(text: str | None) -> str:
    """The text a message is searched by (twin of the argument ``ah.message_tsv`` analyses)."""
    return (text or "")[:MESSAGE_CHARS]


def tool_call_doc(name: str | None, input: str | None, output: str | None) -> str:
    """Twin of ``ah.tool_call_doc``: name, input head, output head and tail (0015_store)."""
    output = output or ""
    if len(output) > OUTPUT_HEAD + OUTPUT_TAIL:
        output = output[:OUTPUT_HEAD] + "\n" + output[-OUTPUT_TAIL:]
    return (name or "") + "\n" + (input or "")[:INPUT_HEAD] + "\n" + output
