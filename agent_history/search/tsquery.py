"""tsquery texts for the keyword search's candidate scans (pure: no I/O, no database).

The FTS backend (`search.fts`) matches documents with tsquery texts made of quoted lexemes,
``&``, ``|`` and parentheses: any of some lexemes (`tsquery_any`), at least k of them
(`tsquery_at_least`, an OR of k-subsets). A term-id corpus (tool calls: ``terms int4[]``,
migration 0028_term_ids) is matched with the same text, each lexeme replaced by its
``ah.search_term.id``: the intarray ``query_int`` (`query_int`), or ORed ``@>`` clauses where the
``intarray`` extension is absent (`array_match`). A lexeme's quoting is PostgreSQL's (``'`` doubled,
a backslash escapes), the twin of SQL ``ah.tsquery_literal``; `unquote_literal` undoes it.
"""

from __future__ import annotations

import re
from itertools import combinations


def tsquery_literal(lexeme: str) -> str:
    """A tsquery operand matching exactly `lexeme` (twin of SQL ``ah.tsquery_literal``)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsquery_any(lexemes: list[str]) -> str:
    """tsquery text: any of `lexemes`."""
    return " | ".join(tsquery_literal(x) for x in lexemes)


def tsquery_at_least(lexemes: list[str], k: int) -> str:
    """tsquery text: documents containing at least `k` of `lexemes` (OR of k-subsets)."""
    if k <= 1:
        return tsquery_any(lexemes)
    return " | ".join("(" + " & ".join(tsquery_literal(x) for x in combo) + ")" for combo in combinations(lexemes, k))


_LITERAL = re.compile(r"'((?:[^'\\]|''|\\.)*)'")
"""A quoted operand of a tsquery text as `tsquery_literal` writes it (its body in group 1)."""


def unquote_literal(body: str) -> str:
    """The lexeme of a tsquery operand's body (the text between its quotes), undoing
    `tsquery_literal`'s escapes (``''`` → ``'``, a backslash-escaped character)."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        elif c == "'" and body[i + 1 : i + 2] == "'":
            out.append("'")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def query_int(tsquery: str, ids: dict[str, int]) -> str:
    """The intarray ``query_int`` text of a tsquery text made of quoted lexemes, ``&``, ``|`` and
    parentheses (what `tsquery_any` / `tsquery_at_least` write): each lexeme replaced by its term
    id (``'pool' | ('py' & 'x')`` → ``7 | (9 & 12)``). KeyError for a lexeme without an id (the
    search drops lexemes of df 0 first)."""
    return _LITERAL.sub(lambda m: str(ids[unquote_literal(m.group(1))]), tsquery)


def array_match(tsquery: str, ids: dict[str, int], column: str = "d.terms") -> str:
    """`query_int`'s condition as SQL over the built-in array operators (a catalogue without the
    ``intarray`` extension: GIN ``array_ops``): each lexeme becomes ``column @> '{id}'``, ``&``
    ``AND``, ``|`` ``OR``. The ids are integers, so the text is safe to inline. KeyError as
    `query_int`."""
    body = _LITERAL.sub(lambda m: f"{column} @> '{{{ids[unquote_literal(m.group(1))]}}}'::int4[]", tsquery)
    return "(" + body.replace(" & ", " AND ").replace(" | ", " OR ") + ")"
