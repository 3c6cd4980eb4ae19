"""Aider chat histories (append-only Markdown): see `parser`."""
