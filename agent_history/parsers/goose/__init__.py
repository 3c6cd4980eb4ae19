"""Goose legacy session files and sessions.db: see `parser` and `database`."""
