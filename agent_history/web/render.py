"""The Jinja2 environment of the web UI and its filters (pure).

Autoescape is on for every template; no filter here marks transcript text safe without escaping
it first. `highlight` escapes a search snippet, then turns the search layer's HL_START/HL_END
markers (U+0002/U+0003, `agent_history.search.request`) into ``<mark>``; `visible` shows the C0
control characters transcripts carry (terminal escapes, NULs) as Unicode control pictures
instead of passing them to the browser.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup, escape

from agent_history.bidi import BIDI, show_bidi
from agent_history.search.request import HL_END, HL_START
from agent_history.timestamps import second

TEMPLATES = Path(__file__).parent / "templates"

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: str | None) -> str:
    """`text` with C0 controls (except tab and newline; and the highlight markers' own job is
    done before this) replaced by their control pictures (U+2400 + code; DEL → U+2421)."""
    if text is None:
        return ""
    return _CONTROLS.sub(lambda m: "\u2421" if m.group(0) == "\x7f" else chr(0x2400 + ord(m.group(0))), text)


def highlight(snippet: str | None) -> Markup:
    """A snippet as HTML: escaped, controls made visible, matched words in ``<mark>``. Unbalanced
    markers cannot open an element: each marker becomes a complete tag of its own."""
    if not snippet:
        return Markup("")
    parts = re.split(f"([{HL_START}{HL_END}])", snippet)
    out, open_ = [], False
    for part in parts:
        if part == HL_START:
            if not open_:
                out.append("<mark>")
                open_ = True
        elif part == HL_END:
            if open_:
                out.append("</mark>")
                open_ = False
        else:
            out.append(str(escape(visible(part))))
    if open_:
        out.append("</mark>")
    return Markup("".join(out))


def number(value: int | float | Decimal | None) -> str:
    """Thousands-separated integer; "—" for unknown (None), never 0."""
    return "—" if value is None else f"{int(value):,}"


def usd(value: Decimal | float | None) -> str:
    """USD with cents (4 decimals under a dollar); "—" for unknown."""
    if value is None:
        return "—"
    v = float(value)
    return f"${v:,.4f}" if abs(v) < 1 else f"${v:,.2f}"


def duration(value: int | timedelta | None) -> str:
    """Milliseconds or a timedelta as ``1h 02m``, ``3m 05s``, ``4.2s``; "—" for unknown."""
    if value is None:
        return "—"
    ms = value.total_seconds() * 1000 if isinstance(value, timedelta) else float(value)
    s = ms / 1000
    if s < 60:
        return f"{s:.1f}s"
    m, s = divmod(int(s), 60)
    if m < 60:
        return f"{m}m {s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m"


def when(value: datetime | None) -> str:
    """A timestamp in UTC as ``YYYY-MM-DD HH:MM:SS UTC`` (naive means UTC); "—" for unknown."""
    if value is None:
        return "—"
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return f"{second(value.astimezone(UTC))} UTC"


def query(params: dict, **changes) -> str:
    """`params` (the page's filters) with `changes` applied, as a query string (empty values
    dropped)."""
    merged = {**params, **changes}
    return urlencode({k: v for k, v in merged.items() if v not in (None, "", [])}, doseq=True)


_SHOWN_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""C0 controls but tab, newline and carriage return (text layout, kept), and DEL."""


def _finalize(value):
    """Every ``{{ … }}`` output: bidi overrides shown as ``<U+XXXX>`` (`agent_history.bidi`) and
    other controls (ESC, BEL …) as their control pictures, as `visible` shows them in snippets —
    in titles, link text and everything else — escaped as the value is (Markup stays Markup)."""
    if isinstance(value, Markup):
        return Markup(BIDI.sub(lambda m: f"&lt;U+{ord(m.group()):04X}&gt;", str(value)))
    if isinstance(value, str):
        return show_bidi(_SHOWN_CONTROLS.sub(lambda m: visible(m.group(0)), value))
    return value


def environment() -> jinja2.Environment:
    """The templates' environment: autoescape on (every template, whatever its name)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters.update(highlight=highlight, visible=visible, number=number, usd=usd, duration=duration, when=when)
    env.globals.update(query=query)
    return env
