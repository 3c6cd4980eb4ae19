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
_CJK_RUN = re.compile(f"{_CJK}+")
_SCRIPT_TOKEN = re.compile(f"{_CJK}{{3,}}|{_SYMBOL}")
_CHARS = "[A-Za-z0-9_./:-]"
_RUN = re.compile(f"(?:[a-z]++|[A-Z][a-z]*+|[A-Z]++|[0-9]++)(?!{_CHARS})|({_CHARS}+)")
_BOUNDARY = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Za-z0-9][_./:][A-Za-z0-9]")
_HEX_ID = re.compile(r"(?>[0-9a-fA-F]*[0-9][0-9a-fA-F]*)(?:[.:-][0-9a-fA-F]+)*+")
_SNAKE = re.compile(r"[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)*")
_BASE_SEP = re.compile(r"[._-]")
_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_LETTER_DIGIT = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_SINGLE = re.compile(r"(^| )[A-Za-z0-9](?= |$)")


def _compound_runs(t: str) -> list[str]:
    """The compound tokens of `t` in order: runs of ``[A-Za-z0-9_./:-]`` with a boundary that
    are not hex ids. One pass of `_RUN` hands back a run only when it is not a plain word (one
    case of letters after an optional capital, or digits only — no boundary possible: the
    alternative before the group, possessive so a long run costs one scan); the boundary and
    the hex-id test (``^[0-9a-fA-F]*[0-9][0-9a-fA-F]*([.:-][0-9a-fA-F]+)*$``, atomic so it does
    not backtrack) run on those few."""
    return [r for r in _RUN.findall(t) if r and _BOUNDARY.search(r) and not _HEX_ID.fullmatch(r)]


def _spaced_pair(m: re.Match) -> str:
    pair = m.group()
    return pair[0] + " " + pair[1]


def code_aware_text(t: str) -> str:
    """Twin of ``ah.code_aware_text``: `t`, then a line of identifier parts when `t` holds
    compound tokens (see the module docstring).

    The SQL's replacements, rewritten to be cheaper with the same output: camelCase and acronym
    splits are one pass inserting a space at the zero-width positions (their matches never
    overlap, so consuming them as the SQL does changes nothing); the letter/digit split keeps
    consuming matches (``a1b`` → ``a 1b``, as PostgreSQL's ``regexp_replace(…, 'g')`` does)."""
    compounds = _compound_runs(t)
    if not compounds:
        return t
    compound = " ".join(compounds)
    joined = [m.replace("_", "") for m in _SNAKE.findall(compound) if "_" in m] if "_" in compound else []
    bases = [c.rsplit("/", 1)[1] for c in compounds if "/" in c and _BASE_SEP.search(c.rsplit("/", 1)[1])]
    parts = _CASE.sub(" ", compound)
    parts = _LETTER_DIGIT.sub(_spaced_pair, parts)
    parts = _NON_ALNUM.sub(" ", parts)
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
