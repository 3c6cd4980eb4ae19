"""Database errors the CLI turns into one clear line (never a traceback)."""

from __future__ import annotations


class DatabaseError(Exception):
    """A database problem with a one-line, user-facing message."""


class ServerUnreachable(DatabaseError):
    """The server cannot be reached (down, wrong host/socket, refused)."""


class AuthFailed(DatabaseError):
    """The server refused the credentials."""


class DataDirNotWritable(DatabaseError):
    """The embedded server's data directory cannot be created or written."""


class SchemaTooNew(DatabaseError):
    """The database schema was migrated by a newer agent-history than this one."""
