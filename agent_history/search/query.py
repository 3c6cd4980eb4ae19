"""Query analysis (pure): what a person typed → weighted search terms, phrases and its shape.

Handled shapes, in the order they are recognised:
- ``"quoted phrases"`` — kept as phrases (ranked up when they occur verbatim) and their words
  also join the OR-matched terms;
- identifiers and code tokens, never dropped as stop words: paths (``src/db/pool.py``,
  ``pool.py``), git shas (7–40 hex with a digit), ``snake_case``, ``camelCase``/``PascalCase``
  with an inner capital, ``kebab-case`` flags (``--dry-run``), dotted names (``os.path.join``),
  ``Foo::bar``, error codes (``ECONNRESET``, ``E0425``, ``TypeError``, HTTP-ish numbers);
- plain words — lowercased English stop words are dropped (the list mirrors PostgreSQL's
  ``english.stop``, which the database applies as well); a word of CJK characters is one term
  (the database splits it into bigrams), and a token made of emoji or other symbols
  (`analysis.scripts.SYMBOL_RANGES`: ``🚀``, ``✅``, ``→``) is a term, not punctuation;
- natural-language questions (a question word or auxiliary first, or a trailing ``?``, and at
  least three words): conversational filler (``please``, ``remember``, ``happened`` …) is kept
  with a low weight instead of being dropped, so it can still break ties.

The database turns each term into lexemes exactly as it does documents (``ah.search`` config over
``ah.code_aware_text``), so stemming and identifier splitting agree on both sides; this module
decides only *which* terms and how much each counts. `identifier_shaped` feeds the hybrid
weights (docs/design.md §8: vector weight is lowered for ≤ 3-word or identifier-shaped queries).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agent_history.analysis.scripts import has_symbol

STOP_WORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did doing
    a an the and but if or because as until while of at by for with about against between into
    through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now
    would could shall may might must let lets i'm i've we've we're it's that's what's there's
    """.split()
)
"""English stop words (PostgreSQL's ``english.stop`` plus a few contractions)."""

FILLER_WORDS: frozenset[str] = frozenset(
    """
    please remember recall find show tell know anything something everything thing things stuff
    happened happen earlier ago last time talked discussed mentioned said say get got look
    looked see saw go went way also still ever really actually maybe kind sort about around
    """.split()
)
"""Conversational filler in questions: kept with `FILLER_WEIGHT`, not dropped."""

FILLER_WEIGHT = 0.3
QUESTION_OPENERS: frozenset[str] = frozenset(
    "what which who whom whose when where why how did do does is are was were can could should "
    "would will have has had any anything".split()
)


class TermKind(StrEnum):
    """What a query term looks like (identifier-shaped kinds are everything but WORD)."""

    WORD = "word"
    PATH = "path"
    SHA = "sha"
    IDENTIFIER = "identifier"
    ERROR = "error"
    NUMBER = "number"


@dataclass(frozen=True, slots=True)
class Term:
    """One OR-matched query term: its text as typed (edge punctuation trimmed), kind, weight."""

    text: str
    kind: TermKind
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """The analysed query. `terms` are unique by lowercased text, in query order."""

    raw: str
    terms: tuple[Term, ...]
    phrases: tuple[str, ...]
    is_question: bool
    word_count: int

    @property
    def identifier_shaped(self) -> bool:
        """True when any term is a path, sha, identifier, error code or number."""
        return any(t.kind is not TermKind.WORD for t in self.terms)

    @property
    def is_empty(self) -> bool:
        """Nothing searchable is left (only stop words or punctuation)."""
        return not self.terms and not self.phrases

    def empty_note(self) -> str | None:
        """Why nothing can match, for the person, or None when the query has a searchable term:
        a blank query, or one of stop words and punctuation only (a quoted phrase of stop words
        included: its words are not indexed)."""
        if self.terms:
            return None
        if not self.raw.strip():
            return "the query is empty: nothing to search for"
        words = [w.strip(_EDGE).lower() for w in self.raw.replace('"', " ").split()]
        stop = list(dict.fromkeys(w for w in words if w in STOP_WORDS))
        if stop:
            shown = ", ".join(stop[:6]) + (" …" if len(stop) > 6 else "")
            return f"the query has no searchable terms: stop words ({shown}) and punctuation are not indexed"
        return "the query has no searchable terms: punctuation is not indexed"

    def term_texts(self) -> list[str]:
        """Term texts, aligned with `term_weights()`."""
        return [t.text for t in self.terms]

    def term_weights(self) -> list[float]:
        """Term weights, aligned with `term_texts()`."""
        return [t.weight for t in self.terms]


_PHRASE = re.compile(r'"([^"]+)"|“([^”]+)”')
_EDGE = "\"'`“”‘’()[]{}<>,;:!?.…*"
_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
_ERROR = re.compile(
    r"^(E[A-Z0-9]{3,}|[A-Z][A-Za-z]*(Error|Exception|Warning|Fault)|[A-Z]{1,3}\d{3,5}|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$"
)
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_PATHISH = re.compile(r"/|^~|^\.{1,2}/|^[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5}$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(\(\))?$")
_NUMBER = re.compile(r"^\d+([.:]\d+)*$")
_WORDCHAR = re.compile(r"\w", re.UNICODE)


def classify(token: str) -> TermKind:
    """The kind of one token (already trimmed of edge punctuation)."""
    if _SHA.match(token) and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
        return TermKind.SHA
    if _ERROR.match(token):
        return TermKind.ERROR
    if _NUMBER.match(token):
        return TermKind.NUMBER
    if _PATHISH.search(token) and not token.startswith("http"):
        return TermKind.PATH
    if (
        "_" in token.strip("_")
        or "::" in token
        or token.startswith("--")
        or _CAMEL.search(token)
        or _DOTTED.match(token)
        or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
        or (token.isupper() and len(token) >= 4)
    ):
        return TermKind.IDENTIFIER
    return TermKind.WORD


def _trim(token: str) -> str:
    token = token.strip(_EDGE)
    # a trailing "()" or "?" glued to an identifier: useEffect() → useEffect
    return token[:-2] if token.endswith("()") else token


def _is_question(words: list[str], raw: str) -> bool:
    if len(words) < 3:
        return False
    return raw.rstrip().endswith("?") or words[0].lower().strip(_EDGE) in QUESTION_OPENERS


def analyze(raw: str) -> QueryAnalysis:
    """Analyse a query string; never raises (an unusable query yields an empty analysis)."""
    phrases: list[str] = []

    def _take(m: re.Match) -> str:
        phrase = " ".join((m.group(1) or m.group(2) or "").split())
        if phrase:
            phrases.append(phrase)
        return " " + phrase + " "

    rest = _PHRASE.sub(_take, raw)
    words = rest.split()
    question = _is_question(words, raw)
    terms: list[Term] = []
    seen: set[str] = set()
    for word in words:
        token = _trim(word)
        if not token or not (_WORDCHAR.search(token) or has_symbol(token)):
            continue
        kind = classify(token)
        key = token.lower()
        if kind is TermKind.WORD:
            if key in STOP_WORDS:
                continue
            weight = FILLER_WEIGHT if question and key in FILLER_WORDS else 1.0
            token = key
        else:
            weight = 1.0
        if key in seen:
            continue
        seen.add(key)
        terms.append(Term(token, kind, weight))
    return QueryAnalysis(
        raw=raw, terms=tuple(terms), phrases=tuple(phrases), is_question=question, word_count=len(words)
    )
