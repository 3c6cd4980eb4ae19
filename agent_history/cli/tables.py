"""Tables that stay legible on an 80-column terminal.

What identifies a row — a session uid, a namespace, an issue kind, a file path — is never cut
mid-word by the renderer. When a command's table fits the console at its natural width it is
drawn as a rich table; when it does not, `print_records` draws each row as a *record*: one line
of short, aligned fields under a header line, then indented lines for the long values (a title,
file paths, a detail). Fields that do not fit beside the first ones follow on indented
``header value`` lines, wrapped between fields, never inside one. Paths too long for a line are
shortened in the middle (`shorten_middle`), keeping the root and the file name; ``--json``
always has them whole. `flow` prints a line of parts (a search hit's score, time, agent, uid)
breaking between parts only, so a uid or a date never wraps in the middle.

Widths are measured on the text as the console will show it (`shown`: a `TerminalConsole`
escapes control characters, which makes them wider).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

ELLIPSIS = "…"
INDENT = "  "
GAP = " "  # between the aligned fields of a record's first line


def shorten_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters: unchanged if it fits, else its head and tail around
    ``…`` — two thirds of the room for the tail, or more to keep a path's file name (from the
    last ``/``) whole when that fits."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = (width - 1) * 2 // 3
    name = len(text) - text.rfind("/") if "/" in text else 0
    if tail < name <= width - 2:  # keep "/<file name>", and at least one character of the head
        tail = name
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


def shown(console: Console, text: str) -> str:
    """`text` as `console` prints it as plain text (a `TerminalConsole` escapes control
    characters: ``^[``), for measuring; no markup is interpreted."""
    return console.render_str(text, markup=False, emoji=False, highlight=False).plain


def pack(items: Sequence[str], width: int, sep: str = "  ") -> list[str]:
    """`items` joined by `sep` into lines of at most `width` characters, breaking only between
    items (an item longer than `width` gets a line of its own, whole)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(sep) + len(item) <= width:
            lines[-1] += sep + item
        else:
            lines.append(item)
    return lines


def flow(console: Console, parts: Sequence[Text | str], *, sep: str = "  ", indent: str = INDENT) -> None:
    """Print `parts` (styled `Text` or plain strings) on as few lines as fit `console`'s width,
    breaking only between parts, never inside one (a uid, a date, a path stay whole); lines
    after the first start with `indent`. A part longer than a line gets a line of its own."""
    lines: list[Text] = []
    for part in parts:
        piece = part if isinstance(part, Text) else Text(part)
        if not piece.plain:
            continue
        width = len(shown(console, piece.plain))
        if lines and len(shown(console, lines[-1].plain)) + len(sep) + width <= console.width:
            lines[-1].append(sep)
            lines[-1].append_text(piece)
        else:
            lines.append((Text(indent) if lines else Text()) + piece)
    for line in lines:
        console.print(line, soft_wrap=True)


def path_line(console: Console, path: str, suffix: str = "", *, indent: str = INDENT, style: str = "dim") -> None:
    """Print `path` + `suffix` (``:12 (byte 3456)``) on a line of its own after `indent`,
    the path shortened in the middle only if the line would be longer than the console."""
    path, suffix = shown(console, path), shown(console, suffix)
    room = max(console.width - len(indent) - len(suffix), 20)
    console.print(Text(indent + shorten_middle(path, room) + suffix, style=style), soft_wrap=True)


class Indented:
    """A renderable: `renderable` wrapped to the console's width minus `indent` columns (words
    kept whole where they fit), each line after `indent` spaces, with no padding or trailing
    blanks (rich's `Padding` pads every line to the widest)."""

    def __init__(self, renderable: RenderableType, indent: int) -> None:
        self.renderable, self.indent = renderable, indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        inner = options.update_width(max(options.max_width - self.indent, 1))
        for line in console.render_lines(self.renderable, inner, pad=False):
            while line and not line[-1].control and not line[-1].text.rstrip():
                line.pop()  # blank segments at the end of the line
            if line and not line[-1].control:
                line[-1] = Segment(line[-1].text.rstrip(), line[-1].style)
            if self.indent and line:  # an empty line stays empty
                yield Segment(" " * self.indent)
            yield from line
            yield Segment.line()


def print_table_or_records(
    console: Console,
    table: Table,
    headers: Sequence[str],
    records: Sequence[Record],
    *,
    wrapped: dict[int, int] | None = None,
    first_line: int | None = None,
) -> None:
    """Print `table` when it `fits` the console (`wrapped` as for `fits`), else `records`
    under `headers` (`print_records`, `first_line` as there): the same rows either way."""
    if fits(console, table, wrapped):
        console.print(table)
    else:
        print_records(console, headers, records, first_line=first_line)


def print_records(
    console: Console, headers: Sequence[str], records: Sequence[Record], *, first_line: int | None = None
) -> None:
    """Print `records` for a narrow console: a header line, then per record its aligned fields
    and its indented lines (each one line: text cut at the end, paths in the middle). Fields that
    do not fit the width after the first (which identify the record), or come after the first
    `first_line` fields, move to indented ``header value`` lines, wrapped between fields."""
    records = [
        Record(
            [shown(console, f) for f in r.fields],
            [shown(console, x) for x in r.lines],
            [shown(console, x) for x in r.paths],
            r.styles,
        )
        for r in records
    ]
    widths = [len(h) for h in headers]
    for r in records:
        widths = [max(w, len(f)) for w, f in zip(widths, r.fields, strict=True)]
    n_shown, used = 1, widths[0]
    most = len(widths) if first_line is None else max(first_line, 1)
    while n_shown < most and used + len(GAP) + widths[n_shown] <= console.width:
        used += len(GAP) + widths[n_shown]
        n_shown += 1
    room = max(console.width - len(INDENT), 8)

    def aligned(cells: Sequence[str], styles: Sequence[str | None]) -> Text:
        line = Text()
        for i, (cell, w) in enumerate(zip(cells, widths[:n_shown], strict=False)):
            last = i == len(cells) - 1
            line.append(cell if last else cell.ljust(w), style=styles[i] if i < len(styles) else None)
            if not last:
                line.append(GAP)
        return line

    console.print(aligned(headers[:n_shown], ["bold"] * n_shown), soft_wrap=True)
    for r in records:
        console.print(aligned(r.fields[:n_shown], r.styles), soft_wrap=True)
        moved = [f"{h} {f}" for h, f in zip(headers[n_shown:], r.fields[n_shown:], strict=True)]
        for line in pack(moved, room):
            console.print(Text(INDENT + line), soft_wrap=True)
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
