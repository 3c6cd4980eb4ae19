"""Rendering helpers shared by CLI commands: JSON for machines, rich for people."""

from __future__ import annotations

import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.markup import escape

console = Console()
err_console = Console(stderr=True)


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

    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)
