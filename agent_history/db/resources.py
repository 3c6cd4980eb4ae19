"""Locate the project's SQL resources: `migrations/` and `sql/` (source tree or installed wheel)."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]


def _find(repo_name: str, wheel_name: str) -> Path:
    for candidate in (_PKG / wheel_name, _PKG.parent / repo_name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"agent-history is installed without its {repo_name}/ directory")


def migrations_dir() -> Path:
    """The alembic script directory."""
    return _find("migrations", "_migrations")


def sql_dir() -> Path:
    """The directory of re-applied `sql/*.sql` files (functions, views)."""
    return _find("sql", "_sql")
