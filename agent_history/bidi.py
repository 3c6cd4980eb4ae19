"""Bidirectional formatting characters shown, never obeyed (pure).

The explicit embeddings, overrides and isolates of Unicode UAX #9 (U+202A–U+202E,
U+2066–U+2069) reorder the text after them: a U+202E (RIGHT-TO-LEFT OVERRIDE) in a title makes a
browser or an editor show the rest reversed. Where transcript text becomes a title, a heading or
a link (export md/html, the web UI) each one is written as ``<U+202E>``, as the terminal shows it
(`agent_history.cli.terminal`, which applies the same rule together with the C0/C1 controls).
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
