"""Roo Code task folders: the Cline-family reader (`parsers.cline`), see `parser`."""
