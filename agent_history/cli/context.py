"""Per-invocation state shared by commands: the resolved settings and database."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_history.cli.output import err_console, print_warning
from agent_history.config import config_path, load_settings

if TYPE_CHECKING:
    import psycopg

    from agent_history.db.connection import Database

_state: dict = {"dsn": None}


def set_dsn(dsn: str | None) -> None:
    """Record the global ``--dsn`` flag."""
    _state["dsn"] = dsn


def _starting(pgdata) -> None:
    if err_console.is_terminal:  # the first start takes seconds; on a terminal, say why it waits
        err_console.print(f"starting the embedded PostgreSQL in {pgdata} …", highlight=False, markup=False)


def database() -> Database:
    """The Database for this invocation (DSN flag → env → config → embedded). Nothing is started
    or connected until its `dsn` is first used. Config warnings go to stderr, one line each."""
    from agent_history.db.connection import Database

    settings = load_settings(_state["dsn"])
    for warning in settings.warnings:
        print_warning(warning)
    return Database(settings, on_start=_starting)


def warn_empty_contexts(conn: psycopg.Connection, names: list[str] | None, contexts: dict[str, list[str]]) -> None:
    """One warning line per namespace that a used context (`names`) lists but the catalogue has no
    files for — the search or listing would otherwise silently find nothing there."""
    from agent_history.read.common import empty_namespaces

    for name in names or ():
        for namespace in empty_namespaces(conn, contexts.get(name, [])):
            print_warning(
                f"config {config_path()}: contexts.{name} names namespace {namespace!r}, "
                "which has no files in the catalogue"
            )
