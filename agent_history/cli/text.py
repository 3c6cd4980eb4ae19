"""The read commands' text pieces: a time to the minute, a snippet with its matched words
highlighted, a title's first line, an indented body the console wraps."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from agent_history.cli.output import console
from agent_history.cli.tables import Indented, shorten_end, shown
from agent_history.search.request import HL_END, HL_START
from agent_history.timestamps import minute


def _short_ts(ts: datetime | None) -> str:
    return minute(ts) if ts else "-"


def _snippet_text(snippet: str) -> Text:
    text, bold = Text(), False
    buf = ""
    for ch in snippet:
        if ch in (HL_START, HL_END):
            if buf:
                text.append(buf, style="bold yellow" if bold else None)
            buf, bold = "", ch == HL_START
        else:
            buf += ch
    if buf:
        text.append(buf, style="bold yellow" if bold else None)
    return text


def _first_line(text: str, width: int) -> str:
    """The first line of `text` as the console shows it (`tables.shown`), cut at the end to
    `width` characters."""
    return shorten_end(shown(console, text.splitlines()[0]) if text else "", width)


def _body(text: str | Text, indent: int, style: str | None = None) -> Indented:
    """`text` indented by `indent` columns, wrapped by the console at its width (words kept
    whole where possible)."""
    body = text if isinstance(text, Text) else console.render_str(text, style=style or "", highlight=False)
    return Indented(body, indent)
