"""Kilo Code (legacy extension) task folders: the Cline-family reader, see `parser`."""
