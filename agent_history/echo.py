"""Values echoed in one-line errors and warnings, capped (pure: no I/O, imports only `re`).

An error names the value it refuses (``unknown namespace 'x'``, ``--since: not a time: 'x'``),
and that value is whatever the user or a harness's payload gave: a 1 MB argument was printed
whole, a megabyte on stderr for one line. `clip_echoes` cuts every quoted value and every run of
non-blank characters longer than `ECHO_LIMIT` characters to its first `ECHO_LIMIT`, then ``…``,
the closing quote when it was quoted, and its size in UTF-8 bytes (inside the quotes): ``'xxx…' (1,048,576 bytes)``.
Every front door's error line passes through it: `cli.output.print_error` (every CLI error
line), the status line's errors, typer's/click's own usage errors (`cli.app`) and the MCP
server's error results (`mcp.server`); warnings and events, which name files the command met
rather than what it was given, do not.
"""

from __future__ import annotations

import re

ECHO_LIMIT = 200
"""Characters of one echoed value kept in a message line."""

_VALUE = re.compile(r"""'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*"|\S+""")
"""A quoted value (a Python repr's quotes and escapes) or a run of non-blank characters."""
_TRAILING = ":;,."
"""Punctuation ending a blank-free run that belongs to the sentence, not to the value (as does a
closing parenthesis the run did not open)."""


def _closes_sentence(run: str) -> bool:
    """True when `run` ends with a ``)`` it never opened: the sentence's parenthesis."""
    return run.endswith(")") and run.count(")") > run.count("(")


def _clip(match: re.Match[str]) -> str:
    value = match.group(0)
    if len(value) <= ECHO_LIMIT:
        return value
    quote = value[0] if value[0] in "'\"" and len(value) > 1 and value[-1] == value[0] else ""
    end = len(value)
    while not quote and end and (value[end - 1] in _TRAILING or _closes_sentence(value[:end])):
        end -= 1  # "NAME:" is NAME, then the colon; "(extra NAME)" is NAME, then the parenthesis
    value, trail = value[:end], value[end:]
    inner = value[1:-1] if quote else value  # the size of the value, not of its quotes
    return f"{value[:ECHO_LIMIT]}…{quote} ({len(inner.encode('utf-8', 'surrogatepass')):,} bytes){trail}"


def clip_echoes(message: str) -> str:
    """`message` with each quoted value or blank-free run longer than `ECHO_LIMIT` characters cut
    to that many, marked ``…`` and followed by its full size in bytes (module docstring); a
    message with nothing that long is returned unchanged."""
    if len(message) <= ECHO_LIMIT:
        return message
    return _VALUE.sub(_clip, message)
