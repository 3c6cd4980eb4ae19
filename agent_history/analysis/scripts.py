"""Scripts and symbols the keyword index treats specially (pure data and predicates).

PostgreSQL's text-search parser keeps a run of CJK characters as one word and takes emoji and
other symbols for blanks, so migration 0004_search_i18n adds, per document and per query term,
CJK bigrams and one lexeme per symbol character (``ah.script_lexemes``). The same Unicode blocks
are declared here for the query side — a query of ``🚀`` or ``✅`` must not be dropped as
punctuation — and for snippet highlighting. tests/test_search_scripts.py checks that these
ranges and the migration's regular-expression classes agree.

Source of the block boundaries: Unicode 15.1 Blocks.txt
(https://www.unicode.org/Public/15.1.0/ucd/Blocks.txt). The CJK scripts are those Lucene's
CJKBigramFilter bigrams (Han, Hiragana, Katakana, Hangul).
"""

from __future__ import annotations

CJK_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x1100, 0x11FF, "Hangul Jamo"),
    (0x3040, 0x309F, "Hiragana"),
    (0x30A0, 0x30FF, "Katakana"),
    (0x3130, 0x318F, "Hangul Compatibility Jamo"),
    (0x31F0, 0x31FF, "Katakana Phonetic Extensions"),
    (0x3400, 0x4DBF, "CJK Unified Ideographs Extension A"),
    (0x4E00, 0x9FFF, "CJK Unified Ideographs"),
    (0xAC00, 0xD7AF, "Hangul Syllables"),
    (0xF900, 0xFAFF, "CJK Compatibility Ideographs"),
    (0xFF66, 0xFF9F, "Halfwidth Katakana (of Halfwidth and Fullwidth Forms)"),
    (0x20000, 0x2FA1F, "CJK Unified Ideographs Extension B … CJK Compatibility Ideographs Supplement"),
)
"""Characters bigrammed as CJK (inclusive code point ranges, block name)."""

SYMBOL_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x20A0, 0x20CF, "Currency Symbols"),
    (0x2190, 0x23FF, "Arrows, Mathematical Operators, Miscellaneous Technical"),
    (0x25A0, 0x27BF, "Geometric Shapes, Miscellaneous Symbols, Dingbats"),
    (0x2B00, 0x2BFF, "Miscellaneous Symbols and Arrows"),
    (0x1F000, 0x1F3FA, "Mahjong Tiles … Miscellaneous Symbols and Pictographs (before the skin tones)"),
    (0x1F400, 0x1FAFF, "… Symbols and Pictographs Extended-A"),
)
"""Characters indexed one lexeme each. Left out on purpose: Box Drawing (U+2500–257F), Block
Elements (U+2580–259F) and Braille (U+2800–28FF) — tables, progress bars and spinners in tool
output, layout rather than content — and the skin-tone modifiers U+1F3FB–1F3FF (``👍🏽`` is found
by ``👍``)."""


def _in(ch: str, ranges: tuple[tuple[int, int, str], ...]) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi, _ in ranges)


def is_cjk(ch: str) -> bool:
    """True for one character of a CJK script (see `CJK_RANGES`)."""
    return _in(ch, CJK_RANGES)


def is_symbol(ch: str) -> bool:
    """True for one character indexed as a symbol lexeme (see `SYMBOL_RANGES`)."""
    return _in(ch, SYMBOL_RANGES)


def has_symbol(text: str) -> bool:
    """True when `text` holds at least one indexed symbol character."""
    return any(is_symbol(c) for c in text)


def has_script(text: str) -> bool:
    """True when `text` holds a CJK character or an indexed symbol: the parts of a query the
    PostgreSQL parser (and ParadeDB's source-code tokenizer) do not see as words."""
    return any(is_cjk(c) or is_symbol(c) for c in text)


def cjk_bigrams(text: str) -> list[str]:
    """The CJK bigrams of `text` in order (duplicates kept): the overlapping character pairs of
    each run of CJK characters; a run of one character gives that character. Twin of the
    bigrams ``ah.script_lexemes`` indexes (which leaves runs of ≤ 2 to the parser, as whole words)."""
    out: list[str] = []
    run = ""
    for ch in text + " ":
        if is_cjk(ch):
            run += ch
            continue
        if len(run) == 1:
            out.append(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
        run = ""
    return out


def regex_class(ranges: tuple[tuple[int, int, str], ...]) -> str:
    """A PostgreSQL ARE bracket expression matching `ranges` (``\\uXXXX`` / ``\\UXXXXXXXX``)."""

    def esc(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"

    return "[" + "".join(f"{esc(lo)}-{esc(hi)}" for lo, hi, _ in ranges) + "]"
