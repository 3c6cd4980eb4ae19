"""A real Claude Code transcript and a resume's copies of its records, for the tests of rows two
sessions share (tests/test_uid_owner.py: who owns them; tests/test_touch_keys.py: file touches
keyed by digest): where the transcript is, how a resume's later record is timed, and a fixture
making fresh catalogues (each a clone of the migrated template, dropped after the test)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest

from tests.conftest import clone_database, drop_database

PROJECT = ".claude/projects/-Users-user1-workspace-JSSoundRecorder"
"""The project folder of the shared corpus's home holding `REAL`."""
REAL = f"{PROJECT}/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
"""A real Claude Code transcript (relative to the corpus home): prompts, replies, tool calls and
file touches."""


def later(ts: str, hours: int) -> str:
    """Transcript timestamp `ts` (``…Z``, milliseconds) moved `hours` later, written the same way."""
    t = datetime.fromisoformat(ts.replace("Z", "+00:00")) + timedelta(hours=hours)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture
def fresh(pg_server) -> Iterator[Callable[[], str]]:
    """``fresh()`` → the DSN of a new catalogue (a clone of the migrated template); every one made
    is dropped after the test."""
    made: list[str] = []

    def make() -> str:
        made.append(clone_database(pg_server))
        return made[-1]

    yield make
    for d in made:
        drop_database(d)
