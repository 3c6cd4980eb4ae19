"""Bidirectional formatting characters (and terminal controls) shown, never obeyed (pure).

The explicit embeddings, overrides and isolates of Unicode UAX #9 (U+202A–U+202E,
U+2066–U+2069) reorder the text after them: a U+202E (RIGHT-TO-LEFT OVERRIDE) in a title makes a
browser or an editor show the rest reversed. Where transcript text becomes a title, a heading or
a link (export md/html, the web UI) each one is written as ``<U+202E>``, as the terminal shows it
(`agent_history.cli.terminal`, which applies the same rule together with the C0/C1 controls:
`CONTROLS` and `escape_controls`, defined here so that code printing without rich — the status
line — applies the one rule too).
"""

from __future__ import annotations

import re

BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""The bidirectional embeddings, overrides and isolates (source: Unicode UAX #9, section 2)."""


def show_bidi(text: str) -> str:
    """`text` with every `BIDI` character written as ``<U+XXXX>`` (returned as it is when it
    holds none)."""
    if not BIDI.search(text):
        return text
    return BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters that can act on a terminal (C0 but newline and tab, DEL, C1, bidi overrides and
isolates). Sources: ECMA-48 (C0/C1), Unicode UAX #9 (explicit directional formatting)."""


def visible(char: str) -> str:
    """How one character of `CONTROLS` is shown: ``^[`` (caret notation) for C0 and DEL, else
    ``<U+XXXX>``."""
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def escape_controls(text: str) -> str:
    """`text` with every character of `CONTROLS` shown visibly (`visible`); CR LF becomes a
    newline. Text without such characters is returned as it is (the common case, one scan)."""
    if not CONTROLS.search(text):
        return text
    return CONTROLS.sub(lambda m: visible(m.group()), text.replace("\r\n", "\n"))
