"""Per-invocation state shared by commands: the resolved settings and database."""

from __future__ import annotations

from agent_history.config import load_settings
from agent_history.db.connection import Database

_state: dict = {"dsn": None}


def set_dsn(dsn: str | None) -> None:
    """Record the global ``--dsn`` flag."""
    _state["dsn"] = dsn


def database() -> Database:
    """The Database for this invocation (DSN flag → env → config → embedded). Nothing is started
    or connected until its `dsn` is first used."""
    return Database(load_settings(_state["dsn"]))
