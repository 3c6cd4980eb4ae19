"""Goose legacy session files: see `parser`."""
