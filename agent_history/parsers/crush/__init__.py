"""Crush project databases (.crush/crush.db): see `parser`."""
