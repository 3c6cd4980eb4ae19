"""Rendering helpers shared by CLI commands: JSON for machines, rich for people.

Everything a command prints goes through here: `console` / `err_console` are
`cli.terminal.TerminalConsole`s (transcript text shown, never obeyed: control characters
escaped visibly, no rich markup or emoji codes interpreted in data); `print_json` writes JSON
with every control character escaped; `write_document` writes a plain-text document (CSV,
Markdown, a config snippet).

stderr carries events (errors, warnings, retries) that service logs and scripts read: each is
one line, never wrapped — `err_console` soft-wraps (rich leaves line breaking to the terminal,
and does not wrap at 80 columns when stderr is a pipe or file) and `one_line` folds any line
breaks inside a message. Colour only on a terminal (rich's default).
"""

from __future__ import annotations

import os
import re
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
from rich.text import Text

from agent_history.cli.terminal import TerminalConsole, escape_controls, escape_json, output_closed
from agent_history.echo import clip_echoes

PIPE_WIDTH = 400
"""Columns `console` lays out for when stdout is not a terminal (a pipe or file) and COLUMNS is
unset: rich would assume 80 and cut table cells (``248,7…``, ``s…`` headers), so a generous
fixed width instead — tables do not expand to it, they only stop being squeezed."""


def _stdout_width() -> int | None:
    """None (rich decides: the terminal's size, or COLUMNS) unless stdout is a pipe or file with
    no COLUMNS set — then `PIPE_WIDTH`."""
    if "COLUMNS" in os.environ:
        return None
    try:
        return None if sys.stdout.isatty() else PIPE_WIDTH
    except (AttributeError, ValueError):  # a replaced or closed stdout
        return PIPE_WIDTH


console = TerminalConsole(width=_stdout_width())
err_console = TerminalConsole(stderr=True, soft_wrap=True)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 call"``, ``"2 calls"``, ``"1,234 calls"``: `n` (thousands-separated) and `noun` in the
    singular for exactly one, else `plural` (default `noun` + ``s``)."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def reset_consoles() -> None:
    """Re-create `console` and `err_console` in place (every module holds these two objects) for
    this process's stdout/stderr and environment: terminal or not, width, colours. The resident
    query process (`cli.resident_server`) calls it in each forked child."""
    console.__init__(width=_stdout_width())
    err_console.__init__(stderr=True, soft_wrap=True)


TEXT_WIDTH = 80
"""Columns a line of prose (`print_wrapped`) wraps at when stdout is not a terminal and COLUMNS is
unset (tables lay out for `PIPE_WIDTH` there, so no cell is cut; prose reads at 80)."""


def wrapped(text: str, width: int, indent: str = "  ") -> list[str]:
    """`text` (one line, controls already shown) broken between words into lines of at most
    `width` terminal cells, every line after the first starting with `indent`; a word wider than
    that (a long path) stays whole on a line of its own rather than being cut."""
    from rich.cells import cell_len

    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if current.strip() and cell_len(candidate) > width:
            lines.append(current)
            current = indent + word
        else:
            current = candidate
    lines.append(current)
    return lines


def print_wrapped(text: str, *, indent: str = "  ") -> None:
    """Print a line of prose to `console` wrapped between words (`wrapped`) at the terminal's
    width (or COLUMNS), else at `TEXT_WIDTH`; `text` is text, never markup, its controls shown."""
    width = console.width if "COLUMNS" in os.environ or console.is_terminal else TEXT_WIDTH
    for line in wrapped(escape_controls(text), width, indent):
        console.print(line, highlight=False, soft_wrap=True, markup=False)


def one_line(message: str) -> str:
    """`message` with its line breaks (and the blanks around them) folded into single spaces."""
    return re.sub(r"\s*[\r\n]+\s*", " ", message.strip())


def print_error(message: str) -> None:
    """Write ``error: <message>`` to stderr as one line (`message` is text, never markup); a value
    it echoes longer than `echo.ECHO_LIMIT` characters is cut, saying its size (`echo.clip_echoes`)."""
    err_console.print(Text.assemble(("error:", "bold red"), " ", clip_echoes(one_line(message))), highlight=False)


def print_warning(message: str) -> None:
    """Write ``warning: <message>`` to stderr as one line (`message` is text, never markup)."""
    err_console.print(Text.assemble(("warning:", "yellow"), " ", one_line(message)), highlight=False)


def print_event(message: str) -> None:
    """Write a plain event line (a retry, a skipped path) to stderr, unstyled, one line."""
    err_console.print(one_line(message), highlight=False)


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(type(value).__name__)


def json_text(data: Any) -> str:
    """`data` as indented JSON text (Decimal as a number, dates ISO 8601, paths as strings),
    every control character escaped (`cli.terminal.escape_json`)."""
    return escape_json(
        orjson.dumps(data, default=_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    )


def write_stdout(text: str) -> None:
    """Write `text` to stdout and flush; a reader gone (``| head``) ends the command quietly with
    exit 141 (`cli.terminal.output_closed`), as the consoles do. Written through the binary
    buffer until every byte is taken: a pipe whose reader leaves mid-write takes part of a large
    write, and the text layer would drop the rest without an error (CPython 3.11: the
    buffered writer returns the short count, the text wrapper ignores it) — exit 0 with the
    output cut."""
    try:
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a replaced stdout (a test's, click's wrapper): its own write
            sys.stdout.write(text)
        else:
            sys.stdout.flush()
            data = memoryview(text.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"))
            while data:
                data = data[buffer.write(data) or 0 :]
            buffer.flush()
        sys.stdout.flush()
    except BrokenPipeError:
        output_closed()


def print_json(data: Any) -> None:
    """Write `data` as indented JSON to stdout (`json_text`; a closed output: `write_stdout`)."""
    write_stdout(json_text(data) + "\n")


def write_document(text: str) -> None:
    """Write a plain-text document (CSV, Markdown, a config snippet) to stdout as it is — to a
    terminal with its control characters escaped (`cli.terminal.escape_controls`), to a file
    or pipe byte for byte (it is data there, and CSV has no escape of its own)."""
    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, ValueError):
        terminal = False
    write_stdout(escape_controls(text) if terminal else text)


def fail(message: str, code: int = 1) -> None:
    """Print a one-line error to stderr and exit with `code`."""
    import typer

    print_error(message)
    raise typer.Exit(code)


def path_option(value: str | None, option: str, give: str = "a file or directory") -> Path | None:
    """The path a path option or argument (`option`, e.g. ``--file``, ``PATHS``) names; None when
    it was not given. An empty value is a usage error (exit 2, one line, saying to `give` what it
    takes): ``Path("")`` is the current directory, never what an empty argument (an unset shell
    variable) meant. Every path parameter of the CLI is read as text and passes through here (a
    typer ``Path`` parameter turns ``""`` into ``.`` before any check could see it)."""
    if value is None:
        return None
    if not value:
        fail(f"{option}: an empty path (give {give})", 2)
    return Path(value)


def path_arguments(values: list[str] | None, argument: str) -> list[Path]:
    """`path_option` over each value of a repeatable path argument (e.g. ``PATHS``); [] when none."""
    return [path_option(value, argument) for value in values or ()]  # type: ignore[misc] - never None


def check_limit(value: int | None, option: str = "--limit", *, high: int | None = None) -> None:
    """Exit 2 (usage) unless the limit-like option `option` (a count of rows to list or inputs to
    send) is within 1–`high` (default `search.request.MAX_LIMIT`, 1000; ``high=0``: no upper
    bound). None (not given) passes. The one check every command's ``--limit``/``-n`` goes
    through: 0 or a negative count would otherwise list nothing (a false "none found") or reach
    PostgreSQL as ``LIMIT -1`` (an error)."""
    if value is None:
        return
    if high is None:
        from agent_history.search.request import MAX_LIMIT

        high = MAX_LIMIT
    if high and not 1 <= value <= high:
        fail(f"{option} must be between 1 and {high} (got {value})", 2)
    if not high and value < 1:
        fail(f"{option} must be 1 or more (got {value})", 2)


def nothing_found_line(what: str, verb: str, homes: list, missing: int) -> str:
    """The one line a pass that found no transcript prints (`index`, `archive`): where it looked
    (`homes`: the sources that are homes, not project searches; `missing` of them do not exist)
    and what to do. `what` names the result ("no transcripts found"), `verb` the action ("index")."""
    where = ", ".join(str(s.home) for s in homes) or "no agent home configured"
    state = (
        "none of them exists"
        if homes and missing == len(homes)
        else (f"{missing} of them do not exist, the others hold no transcript" if missing else "no transcript there")
    )
    return (
        f"{what} (looked in {where}: {state}): {verb} a copy with --home DIR (laid out like ~) "
        "or add homes under [sources] in the config file"
    )
