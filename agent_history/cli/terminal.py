"""What reaches a terminal: transcript text is shown, never obeyed.

Transcripts hold whatever an agent, a tool or a person wrote — escape sequences included
(``ESC ] 0 ; title BEL`` sets the window title, ``ESC ] 52`` writes the clipboard, ``ESC ] 8``
makes a link, ``ESC [ 2 J`` clears the screen, U+202E reverses the text after it). Printed raw,
they act on the reader's terminal. Every character that can do so is shown instead, visibly,
as ``cat -v`` and ``less`` show it (`escape_controls`, the one rule, in `agent_history.bidi`):

- C0 controls except newline and tab, in caret notation: ESC ``^[``, BEL ``^G``, NUL ``^@``,
  CR ``^M`` (a CR before a newline is part of the newline and is dropped);
- DEL ``^?``;
- C1 controls (U+0080–U+009F; U+009B is a one-character CSI) and the bidirectional embeddings,
  overrides and isolates (U+202A–U+202E, U+2066–U+2069) as ``<U+009B>``, ``<U+202E>``.

`TerminalConsole` is the rich console every command prints through (`cli.output.console`,
`err_console`); it applies the rule where text enters rendering, so tables are laid out with
the escaped widths, and once more on every segment it writes (anything built some other way).
It interprets no rich markup and no ``:emoji:`` codes and highlights nothing by default:
``[bold]`` in a prompt is text, and a uid or a number in it is not coloured. Commands style their
own words with `rich.text.Text` spans, never markup around data.

`escape_json` does the same for JSON text: JSON allows DEL, C1 and the bidi characters raw
inside strings, so they are written as ``\\u`` escapes (orjson already escapes C0).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Span, Text

from agent_history.bidi import CONTROLS, escape_controls, visible

_JSON_RAW = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Of `CONTROLS`, those a JSON encoder may leave raw inside a string (C0 must be escaped)."""


def escape_json(serialized: str) -> str:
    """JSON text with DEL, C1 and bidi characters written as ``\\uXXXX`` escapes. Valid for any
    JSON text: outside strings JSON holds only ASCII punctuation, digits, letters and blanks."""
    if not _JSON_RAW.search(serialized):
        return serialized
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", serialized)


def escape_text(text: Text) -> Text:
    """A copy of rich `text` with `escape_controls` applied to its characters and its style
    spans moved to match (unchanged `text` is returned when it holds none)."""
    plain = text.plain
    if not CONTROLS.search(plain):
        return text
    pieces: list[str] = []
    starts = [0] * (len(plain) + 1)  # old offset → new offset
    at = 0
    for i, char in enumerate(plain):
        starts[i] = at
        piece = visible(char) if CONTROLS.match(char) else char
        pieces.append(piece)
        at += len(piece)
    starts[len(plain)] = at
    out = text.blank_copy("".join(pieces))
    out._spans[:] = [Span(starts[s.start], starts[min(s.end, len(plain))], s.style) for s in text.spans]
    return out


EXIT_PIPE = 141
"""Exit code when the reader of stdout went away (``agent-history sql … | head -1``): 128 +
SIGPIPE, what the shell reports for ``git log`` or ``cat`` ended by SIGPIPE — not 1, which says
a lookup found nothing. rich ends with 1 (`TerminalConsole.on_broken_pipe` overrides it); click turns the
BrokenPipeError into exit 1 too and wraps stdout in its ``PacifyFlushWrapper``, which
`app.run` tells apart."""


class TerminalConsole(Console):
    """A rich `Console` that never lets printed text control the terminal (module docstring).
    Markup, emoji codes and highlighting are off unless a caller turns them on."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    def on_broken_pipe(self) -> None:
        """The reader of stdout went away (``| head -1``): as rich, stdout goes to /dev/null and
        the command ends — with `EXIT_PIPE` (141, SIGPIPE's code), not rich's 1, which says
        a lookup found nothing."""
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_PIPE)

    def render_str(self, text: str, **kwargs) -> Text:
        """Strings (printed, or table cells) are escaped before they are measured and laid out."""
        return super().render_str(escape_controls(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Render as rich does, with `Text` escaped before layout and every written segment
        escaped (control segments — rich's own cursor movements — excepted)."""
        if isinstance(renderable, Text):
            renderable = escape_text(renderable)
        for segment in super().render(renderable, options):
            if segment.control is None and CONTROLS.search(segment.text):
                segment = Segment(escape_controls(segment.text), segment.style)
            yield segment
