"""Rendering helpers shared by CLI commands: JSON for machines, rich for people.

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
from rich.console import Console
from rich.markup import escape

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


console = Console(width=_stdout_width())
err_console = Console(stderr=True, soft_wrap=True)


def one_line(message: str) -> str:
    """`message` with its line breaks (and the blanks around them) folded into single spaces."""
    return re.sub(r"\s*[\r\n]+\s*", " ", message.strip())


def print_error(message: str) -> None:
    """Write ``error: <message>`` to stderr as one line (no markup interpreted in `message`)."""
    err_console.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False)


def print_warning(message: str) -> None:
    """Write ``warning: <message>`` to stderr as one line (no markup interpreted in `message`)."""
    err_console.print(f"[yellow]warning:[/] {escape(one_line(message))}", highlight=False)


def print_event(message: str) -> None:
    """Write a plain event line (a retry, a skipped path) to stderr, unstyled, one line."""
    err_console.print(one_line(message), highlight=False, markup=False)


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


def print_json(data: Any) -> None:
    """Write `data` as indented JSON to stdout."""
    sys.stdout.write(
        orjson.dumps(data, default=_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    )
    sys.stdout.write("\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> None:
    """Print a one-line error to stderr and exit with `code`."""
    import typer

    print_error(message)
    raise typer.Exit(code)
