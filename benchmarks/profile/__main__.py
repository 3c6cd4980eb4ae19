"""`python -m benchmarks.profile` (see the package docstring)."""

from benchmarks.profile.cli import main

main()
