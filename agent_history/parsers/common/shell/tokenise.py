"""A shell command's words as POSIX `shlex` gives them (``punctuation_chars`` `PUNCT`,
whitespace space, tab and carriage return, no comments: they went with the heredocs), and the
simple commands they make. Without quotes or backslashes one regular expression gives `shlex`'s
tokens; with them one regular-expression pass (`quoted_tokens`); `shlex` itself runs only where
it would raise, and on unbalanced quotes a plain regex split is the fallback (issues 18 and 27:
`shlex` was the top parsing hot spot). Pure."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

PUNCT = "();<>|&\n"
"""The characters `shlex` makes operator tokens of."""
_REDIRECT = re.compile(r"^(?:&>>|&>|>>|>\||>|<>|<<<|<<-|<<|<|>&|<&)$")
_FALLBACK_TOKENS = re.compile(r"&&|\|\||;;|&>>|&>|>>|>\||<<<|<<|>&|<&|[;|&()<>\n]|[^\s;|&()<>]+")


_PLAIN_TOKENS = re.compile(r"[();<>|&\n]+|[^();<>|&\n \t\r]+")
"""`tokens` without quotes or backslashes: runs of `PUNCT` and runs of other non-blank characters
— what `shlex` (POSIX, ``punctuation_chars=PUNCT``, whitespace ``" \t\r"``) yields then, at a
fraction of its cost (issue 18: `shlex` was the top parsing hot spot)."""


_SHELL_TOKEN = re.compile(
    r"""[ \t\r]+|([();<>|&\n]+)|((?:[^();<>|&\n \t\r'"\\]+|'[^']*'|"(?:[^"\\]|\\[\s\S])*"|\\[\s\S])+)|([\s\S])"""
)
"""One token of `shlex`'s POSIX grammar as `tokens` configures it: blanks, a run of `PUNCT`
(group 1), or a word (group 2) of plain characters, ``'…'``, ``"…"`` (a backslash escaping the
next character) and ``\\x``; group 3 is what no token takes (an unclosed quote, a backslash at
the end), left to `shlex` itself."""
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\[\s\S])*)"|\\([\s\S])""")
_ESCAPED_IN_DOUBLE = re.compile(r"""\\(["\\])""")


def _unquoted(m: re.Match) -> str:
    """A quoted part of a word as POSIX `shlex` reads it: single quotes literal; inside double
    quotes a backslash escapes only ``"`` and ``\\``; outside, it escapes any character."""
    single, double, escaped = m.groups()
    if single is not None:
        return single
    if double is not None:
        return _ESCAPED_IN_DOUBLE.sub(r"\1", double) if "\\" in double else double
    return escaped


def quoted_tokens(command: str) -> list[str] | None:
    """`shlex`'s tokens of `command` (quotes and backslashes resolved, ``''`` an empty word) by
    one regular-expression pass, or None when `shlex` would raise (left to it)."""
    out: list[str] = []
    for m in _SHELL_TOKEN.finditer(command):
        punct, word, stray = m.groups()
        if punct is not None:
            out.append(punct)
        elif word is not None:
            plain = "'" not in word and '"' not in word and "\\" not in word
            out.append(word if plain else _QUOTED.sub(_unquoted, word))
        elif stray is not None:
            return None
    return out


def tokens(command: str) -> list[str]:
    """The words and operators of `command` as POSIX `shlex` gives them (module docstring)."""
    if "'" not in command and '"' not in command and "\\" not in command:
        return _PLAIN_TOKENS.findall(command)
    fast = quoted_tokens(command)
    if fast is not None:
        return fast
    lex = shlex.shlex(command, posix=True, punctuation_chars=PUNCT)
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    lex.commenters = ""  # comments were removed with the heredocs
    try:
        return list(lex)
    except ValueError:  # unbalanced quotes: best effort
        return [t.strip("'\"") for t in _FALLBACK_TOKENS.findall(command)]


def _is_operator(tok: str) -> bool:
    return bool(tok) and not tok.strip(PUNCT)  # every character one of `PUNCT`


@dataclass
class SimpleCommand:
    """One simple command: its words and its redirects ((operator, target); target "" when none)."""

    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)


def simple_commands(tokens: list[str]) -> list[SimpleCommand]:
    """`tokens` cut into simple commands at the operators (``; && || | & ( )``, newlines);
    redirects (an fd number before ``>``/``<`` included) are taken out of the words."""
    cmds: list[SimpleCommand] = [SimpleCommand()]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if _is_operator(tok) and _REDIRECT.match(tok):
            cur = cmds[-1]
            if cur.words and cur.words[-1].isdigit() and tok[0] in "<>":  # `2>` : fd number, not an argument
                cur.words.pop()
            target = tokens[i + 1] if i + 1 < len(tokens) and not _is_operator(tokens[i + 1]) else ""
            cur.redirects.append((tok, target))
            i += 2 if target else 1
            continue
        if _is_operator(tok):
            if cmds[-1].words or cmds[-1].redirects:
                cmds.append(SimpleCommand())
            i += 1
            continue
        cmds[-1].words.append(tok)
        i += 1
    return [c for c in cmds if c.words or c.redirects]
