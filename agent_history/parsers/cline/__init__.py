"""Cline-family task folders (Cline, Roo Code, Kilo Code legacy): see `parser`."""
