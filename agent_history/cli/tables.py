"""Tables that stay legible on an 80-column terminal.

What identifies a row — a session uid, a namespace, an issue kind, a file path — is never cut
mid-word by the renderer. When a command's table fits the console at its natural width it is
drawn as a rich table; when it does not, `print_records` draws each row as a *record*: one line
of short, aligned fields under a header line, then indented lines for the long values (a title,
file paths, a detail). Paths too long for a line are shortened in the middle (`shorten_middle`),
keeping the root and the file name; ``--json`` always has them whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

ELLIPSIS = "…"
INDENT = "  "
GAP = " "  # between the aligned fields of a record's first line


def shorten_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters: unchanged if it fits, else its head and tail around
    ``…`` — two thirds of the room for the tail, so a path keeps its file name."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = (width - 1) * 2 // 3
    head = width - 1 - tail
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def shorten_end(text: str, width: int) -> str:
    """`text` cut to `width` characters with a trailing ``…`` when it is longer."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS[: max(width, 0)]


NATURAL = 1_000_000  # a width no table reaches: measuring at it gives the natural width


def compact_table(*headers: str) -> Table:
    """A rich table without vertical rules (two spaces between cells, a rule under the header):
    the most room for values."""
    return Table(*headers, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1, 0, 0))


def fits(console: Console, table: Table, wrapped: dict[int, int] | None = None) -> bool:
    """Whether `table` fits `console`'s width with every column at its natural width — or at
    its set width, for columns given one (nothing cut). `wrapped` maps column indexes to the
    narrowest width at which that column may wrap (a title: ``{3: 30}``); those columns are
    measured at that width and left free to grow again."""
    saved = {i: table.columns[i].width for i in wrapped or {}}
    for i, width in (wrapped or {}).items():
        table.columns[i].width = width
    try:
        unbounded = console.options.update(width=NATURAL, max_width=NATURAL)
        return Measurement.get(console, unbounded, table).maximum <= console.width
    finally:
        for i, width in saved.items():
            table.columns[i].width = width


@dataclass
class Record:
    """One row of a record listing: short `fields` (aligned under the header) and the long
    `lines` printed below them, indented. `paths` are lines shortened in the middle to fit."""

    fields: Sequence[str]
    lines: Sequence[str] = ()
    paths: Sequence[str] = ()
    styles: Sequence[str | None] = field(default_factory=tuple)


def print_records(console: Console, headers: Sequence[str], records: Sequence[Record]) -> None:
    """Print `records` for a narrow console: a header line, then per record its aligned fields
    and its indented lines (each one line: text cut at the end, paths in the middle). Fields that
    do not fit the width after the first (which identify the record) move to an indented
    ``header value`` line."""
    widths = [len(h) for h in headers]
    for r in records:
        widths = [max(w, len(f)) for w, f in zip(widths, r.fields, strict=True)]
    shown, used = 1, widths[0]
    while shown < len(widths) and used + len(GAP) + widths[shown] <= console.width:
        used += len(GAP) + widths[shown]
        shown += 1
    room = max(console.width - len(INDENT), 8)

    def aligned(cells: Sequence[str], styles: Sequence[str | None]) -> Text:
        line = Text()
        for i, (cell, w) in enumerate(zip(cells, widths[:shown], strict=False)):
            last = i == len(cells) - 1
            line.append(cell if last else cell.ljust(w), style=styles[i] if i < len(styles) else None)
            if not last:
                line.append(GAP)
        return line

    console.print(aligned(headers[:shown], ["bold"] * shown), soft_wrap=True)
    for r in records:
        console.print(aligned(r.fields[:shown], r.styles), soft_wrap=True)
        moved = "  ".join(f"{h} {f}" for h, f in zip(headers[shown:], r.fields[shown:], strict=True))
        if moved:
            console.print(Text(INDENT + shorten_end(moved, room)), soft_wrap=True)
        for line in r.lines:
            console.print(Text(INDENT + shorten_end(line, room), style="italic"), soft_wrap=True)
        for path in r.paths:
            console.print(Text(INDENT + shorten_middle(path, room), style="dim"), soft_wrap=True)


def wrap_headers_to_fit(console: Console, table: Table) -> None:
    """When `table` is too wide, narrow each wrappable column to its longest word (of the header
    and the values): headers and multi-word values wrap at spaces, no word is cut. Call after
    adding rows; columns marked ``no_wrap`` are left alone."""
    if fits(console, table):
        return
    for column in table.columns:
        if not column.no_wrap:
            words = [w for text in (column.header, *column.cells) for w in str(text).split()]
            column.width = max(map(len, words), default=1)
