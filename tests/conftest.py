"""Shared fixtures: where `../shared` lives (skip cleanly when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: these tests need ../shared beside the repository")
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """`../shared` (DESIGN, corpus, field cases)."""
    return _need(SHARED)


@pytest.fixture(scope="session")
def corpus_home() -> Path:
    """`../shared/corpus/home`: real agent homes laid out like `~`."""
    return _need(SHARED / "corpus" / "home")


@pytest.fixture(scope="session")
def field_dir() -> Path:
    """`../shared/field`: field cases Exx.jsonl with EXPECTED.md."""
    return _need(SHARED / "field")
