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
- ``script_lexemes(t)``: every CJK run of ≥ 3 characters gives its overlapping bigrams and every
  symbol character one lexeme, numbered in document order, as tsvector text
  (``'lexeme':pos,pos …``); the server's ``::tsvector`` applies the same limits (positions ≤ 16383,
  ≤ 256 per lexeme) as it does to the SQL function's text.

Character classes come from `agent_history.analysis.scripts` (checked against the migration).
"""

from __future__ import annotations

import re

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
_CJK_RUN = re.compile(f"({_CJK}+)")
_SCRIPT_TOKEN = re.compile(f"{_CJK}{{3,}}|{_SYMBOL}")
_RUN = re.compile(r"[A-Za-z0-9_./:-]+")
_BOUNDARY = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Za-z0-9][_./:][A-Za-z0-9]")
_HEX = re.compile(r"[0-9a-fA-F]+")
_HEX_SEP = re.compile(r"[.:-]")
_DIGIT = re.compile(r"[0-9]")
_SNAKE = re.compile(r"[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)*")
_BASE_SEP = re.compile(r"[._-]")
_CAMEL = re.compile(r"([a-z])([A-Z])")
_ACRONYM = re.compile(r"([A-Z])([A-Z][a-z])")
_LETTER_DIGIT = re.compile(r"([A-Za-z])([0-9])|([0-9])([A-Za-z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_SINGLE = re.compile(r"(^| )[A-Za-z0-9](?= |$)")


def _is_hex_id(token: str) -> bool:
    """``^[0-9a-fA-F]*[0-9][0-9a-fA-F]*([.:-][0-9a-fA-F]+)*$`` without backtracking: hex groups
    split by ``. : -``, none empty, the first holding a digit."""
    groups = _HEX_SEP.split(token)
    return all(_HEX.fullmatch(g) for g in groups) and _DIGIT.search(groups[0]) is not None


def _letter_digit(m: re.Match) -> str:
    return (m.group(1) or m.group(3)) + " " + (m.group(2) or m.group(4))


def code_aware_text(t: str) -> str:
    """Twin of ``ah.code_aware_text``: `t`, then a line of identifier parts when `t` holds
    compound tokens (see the module docstring)."""
    compounds = [r for r in _RUN.findall(t) if _BOUNDARY.search(r) and not _is_hex_id(r)]
    if not compounds:
        return t
    compound = " ".join(compounds)
    joined = [m.replace("_", "") for m in _SNAKE.findall(compound) if "_" in m]
    bases = [c.rsplit("/", 1)[1] for c in compounds if "/" in c and _BASE_SEP.search(c.rsplit("/", 1)[1])]
    parts = _CAMEL.sub(r"\1 \2", compound)
    parts = _ACRONYM.sub(r"\1 \2", parts)
    parts = _LETTER_DIGIT.sub(_letter_digit, parts)
    parts = _NON_ALNUM.sub(" ", parts)
    parts = _SINGLE.sub(" ", parts)
    line = [
        x for x in (" ".join(joined) if joined else None, " ".join(bases) if bases else None, parts) if x is not None
    ]
    return t + "\n" + " ".join(line)


def search_text(t: str) -> str:
    """Twin of ``ah.search_text``: CJK runs spaced, then `code_aware_text`."""
    return code_aware_text(_CJK_RUN.sub(r" \1 ", t))


def script_lexemes(t: str) -> str:
    """Twin of ``ah.script_lexemes`` as tsvector text: CJK bigrams and symbols with their
    positions in document order ('' when there are none)."""
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
