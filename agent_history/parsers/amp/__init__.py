"""Amp thread documents: see `parser`."""
