"""Factory Droid session files: see `parser`."""
