"""Heredocs cut out of a shell command before it is tokenised (`split_heredocs`), so that their
body lines are never read as commands; each operator becomes a ``<< __ah_heredoc_N__`` reference
(`HEREDOC_REF`) to the N-th body. Comments are dropped on the way. Pure."""

from __future__ import annotations

import re

_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z0-9_.-]+))")
HEREDOC_REF = re.compile(r"^__ah_heredoc_(\d+)__$")
"""A redirect target standing for a heredoc body: group 1 is its index in the bodies."""


def _read_bodies(command: str, i: int, pending: list[tuple[str, bool]], bodies: list[str]) -> int:
    """Cut the bodies of `pending` heredocs from `command` starting at line offset `i`."""
    for delim, strip_tabs in pending:
        body: list[str] = []
        while i < len(command):
            nl = command.find("\n", i)
            line = command[i:] if nl < 0 else command[i:nl]
            i = len(command) if nl < 0 else nl + 1
            if (line.lstrip("\t") if strip_tabs else line) == delim:
                break
            body.append(line)
        bodies.append("\n".join(body))
    return i


_UNREMARKABLE: dict[str | None, re.Pattern[str]] = {
    None: re.compile(r"[^'\"\\#<\n]+"),
    "'": re.compile(r"[^']+"),
    '"': re.compile(r'[^"\\]+'),
}
"""Quote state of `split_heredocs` → a run of characters it copies unchanged in that state (no
quote, escape, comment, heredoc or newline can start inside it)."""


def split_heredocs(command: str) -> tuple[str, list[str]]:
    """Replace each heredoc operator by a ``<< __ah_heredoc_N__`` reference and cut its body out.

    Quote-aware: a ``<<`` inside quotes (``bash -lc 'cat <<EOF …'``, ``"$(cat <<'EOF' …)"``) is
    left alone; the quoted script is parsed on its own when it is run by ``bash -c``.
    """
    if "#" not in command and "<<" not in command:  # no comment, no heredoc: nothing to cut
        return command, []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []
    out: list[str] = []
    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        plain = _UNREMARKABLE[quote].match(command, i)
        if plain is not None:  # a run of characters the steps below would copy one by one
            out.append(plain.group())
            i = plain.end()
            continue
        c = command[i]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\" and i + 1 < n:
            out.append(command[i : i + 2])
            i += 2
            continue
        elif quote == '"':
            quote = None if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1] in " \t\n;&|("):
            nl = command.find("\n", i)
            i = n if nl < 0 else nl
            continue
        elif c == "<" and command.startswith("<<", i) and not command.startswith("<<<", i):
            m = _HEREDOC.match(command, i)
            if m is not None:
                pending.append((m.group(2) or m.group(3) or m.group(4) or "", m.group(1) == "-"))
                out.append(f"<< __ah_heredoc_{len(bodies) + len(pending) - 1}__")
                i = m.end()
                continue
        elif c == "\n" and pending:
            out.append(c)
            i = _read_bodies(command, i + 1, pending, bodies)
            pending = []
            continue
        out.append(c)
        i += 1
    if pending:  # heredoc without body lines
        bodies.extend("" for _ in pending)
    return "".join(out), bodies
