"""The `agent-history` command: a thin typer app; each command group lives in its own module."""

from __future__ import annotations

import sys

import psycopg
import typer

from agent_history import __version__
from agent_history.cli import db as db_cli
from agent_history.cli.context import set_dsn
from agent_history.cli.output import err_console, print_error
from agent_history.config import ConfigError
from agent_history.db.errors import DatabaseError

app = typer.Typer(
    name="agent-history",
    help="A PostgreSQL catalogue of coding-agent transcripts.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Usage errors as click's plain "Error: …" line, not a rich panel wrapped at 80 columns, when
    # stderr is a pipe or a log file (one event, one line); rich panels only on a terminal.
    rich_markup_mode="rich" if sys.stderr.isatty() else None,
)
app.add_typer(db_cli.app, name="db")


def _version(value: bool) -> None:
    if value:
        print(f"agent-history {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    dsn: str = typer.Option(None, "--dsn", help="PostgreSQL DSN (default: AGENT_HISTORY_DSN, config, embedded)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    set_dsn(dsn)


def _register() -> None:
    """Import command modules that attach themselves to `app`."""
    import importlib

    for name in (
        "parse", "index", "read", "mcp", "connect", "embed", "efficiency", "loops", "journal", "web", "recall", "usage",
    ):
        try:
            importlib.import_module(f"agent_history.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"agent_history.cli.{name}":
                raise


def main() -> None:
    """Entry point: run the app, turning known failures into one-line errors."""
    _register()
    try:
        app()
    except (DatabaseError, ConfigError) as exc:
        print_error(str(exc))
        sys.exit(2)
    except psycopg.ProgrammingError as exc:  # e.g. a malformed DSN
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print_error(first)
        sys.exit(2)
    except OSError as exc:  # a data dir or file the user cannot read or write
        print_error(str(exc))
        sys.exit(2)
    except psycopg.OperationalError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print_error(f"database connection lost: {first}")
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
